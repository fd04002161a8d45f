"""Handwritten digits for :mod:`nbo_jax.benchmarks.sensitive_samples`: the data (scikit-learn's
digits or MNIST IDX files), a small classifier and an autoencoder trained on them, and the
fixed linear resize operators between the 7 x 7 search space and the images.

- :func:`load_digits_images`: scikit-learn's bundled 8 x 8 digits (Alpaydin & Kaynak 1998;
  ``sklearn.datasets.load_digits``), values ``0..16`` scaled to ``[0, 1]``.
- :func:`read_idx` / :func:`load_mnist`: MNIST in its IDX files (LeCun et al. 1998).
- :func:`digit_split`: the dataset's stratified train/test split for a seed.
- :class:`DigitClassifier` / :func:`train_classifier`: a one-hidden-layer ReLU MLP (width 10,
  like the authors' MNIST model ``784-10-10`` of Phan-Trong et al. 2023, Section 7.2.1),
  trained with Adam (optax) on the train split.
- :func:`upscale_matrix` / :func:`downscale`: bilinear resizing (``jax.image.resize``).
- :class:`Autoencoder` / :func:`train_autoencoder`: an MLP autoencoder of the 7 x 7 images.

Everything trains in float32 (also under ``jax_enable_x64``), deterministically for a seed,
in a few seconds on one CPU core, and is cached per settings.
"""

from __future__ import annotations

import functools
import gzip
import pathlib

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax

from .synthetic import _as_float

Array = jax.Array

SEARCH_SIDE = 7
"""Side of the search-space image: ``7 x 7 = 49`` pixels (Phan-Trong 2024, PhD thesis,
Section 3.5.3.1: MNIST images downscaled 28 x 28 -> 7 x 7)."""

_IDX_DTYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
_MNIST_NAMES = {"images": ("train-images-idx3-ubyte", "train-images.idx3-ubyte"),
                "labels": ("train-labels-idx1-ubyte", "train-labels.idx1-ubyte")}


# --------------------------------------------------------------------------- data


def load_digits_images() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's digits (1797 images, 10 classes): ``(images (N, 8, 8) float32 in
    [0, 1], labels (N,) int32)``; pixel values ``0..16`` divided by 16."""
    from sklearn.datasets import load_digits

    data = load_digits()
    return (data.images / 16.0).astype(np.float32), data.target.astype(np.int32)


def read_idx(path) -> np.ndarray:
    """Read one IDX file (the MNIST format; ``.gz``-compressed files are read too).

    Layout (LeCun et al., the MNIST page): 4 magic bytes ``0, 0, dtype code, ndim``; ``ndim``
    big-endian uint32 sizes; then the data, big-endian, row-major. Dtype codes: ``0x08``
    uint8, ``0x09`` int8, ``0x0B`` int16, ``0x0C`` int32, ``0x0D`` float32, ``0x0E`` float64.

    Returns:
        the array, shape the stored sizes, native byte order.

    Raises:
        ValueError (naming the file): a bad magic number, an unknown dtype code, or a data
        length that disagrees with the header. FileNotFoundError: no such file.
    """
    path = pathlib.Path(path)
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise ValueError(f"IDX file {str(path)!r}: bad magic number {raw[:4].hex()} (expected 0000 <dtype> <ndim>)")
    code, ndim = raw[2], raw[3]
    if code not in _IDX_DTYPES:
        raise ValueError(f"IDX file {str(path)!r}: unknown dtype code 0x{code:02x} "
                         f"(known: {[hex(c) for c in _IDX_DTYPES]})")
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise ValueError(f"IDX file {str(path)!r}: header of {ndim} sizes is truncated")
    dims = tuple(int(v) for v in np.frombuffer(raw, ">u4", count=ndim, offset=4))
    dtype = np.dtype(_IDX_DTYPES[code])
    expected = int(np.prod(dims, dtype=np.int64)) * dtype.itemsize
    if len(raw) - header != expected:
        raise ValueError(f"IDX file {str(path)!r}: header says shape {dims} ({expected} data bytes), "
                         f"file holds {len(raw) - header}")
    return np.frombuffer(raw, dtype, offset=header).reshape(dims).astype(dtype.newbyteorder("="))


def _find(directory: pathlib.Path, names) -> pathlib.Path:
    for name in names:
        for candidate in (directory / name, directory / (name + ".gz")):
            if candidate.is_file():
                return candidate
    raise ValueError(f"mnist_dir {str(directory)!r} holds none of {[n + '[.gz]' for n in names]}")


def load_mnist(mnist_dir) -> tuple[np.ndarray, np.ndarray]:
    """MNIST's training set from its IDX files in ``mnist_dir`` (``train-images-idx3-ubyte``
    and ``train-labels-idx1-ubyte``, or with ``.`` for the last ``-``, optionally ``.gz``).

    Returns:
        ``(images (N, H, W) float32 in [0, 1], labels (N,) int32)``; uint8 pixels are
        divided by 255.

    Raises:
        ValueError: ``mnist_dir`` is not a directory or lacks a file, the errors of
        :func:`read_idx`, images not ``(N, H, W)`` with ``H == W``, labels not ``(N,)`` in
        ``0..9``.
    """
    directory = pathlib.Path(mnist_dir)
    if not directory.is_dir():
        raise ValueError(f"mnist_dir {str(directory)!r} is not a directory")
    images = read_idx(_find(directory, _MNIST_NAMES["images"]))
    labels = read_idx(_find(directory, _MNIST_NAMES["labels"]))
    if images.ndim != 3 or images.shape[1] != images.shape[2]:
        raise ValueError(f"mnist_dir {str(directory)!r}: images must be (N, H, H), got {images.shape}")
    if labels.shape != images.shape[:1]:
        raise ValueError(f"mnist_dir {str(directory)!r}: labels must be ({images.shape[0]},), got {labels.shape}")
    if labels.size and (labels.min() < 0 or labels.max() > 9):
        raise ValueError(f"mnist_dir {str(directory)!r}: labels must lie in 0..9")
    scale = 255.0 if images.dtype == np.uint8 else 1.0
    return (images / scale).astype(np.float32), labels.astype(np.int32)


@functools.lru_cache(maxsize=8)
def digit_split(dataset: str = "digits", mnist_dir: str | None = None, seed: int = 0):
    """The stratified 75 % / 25 % train/test split of a dataset for ``seed``
    (``sklearn.model_selection.train_test_split``).

    Returns:
        ``(x_train (n, H, H), y_train (n,), x_test (m, H, H), y_test (m,))`` numpy arrays
        (float32 images in ``[0, 1]``, int32 labels); ``H = 8`` for ``"digits"``.

    Raises:
        ValueError: an unknown ``dataset``, ``"mnist"`` without ``mnist_dir`` or
        ``mnist_dir`` with ``"digits"``, and the errors of :func:`load_mnist`.
    """
    from sklearn.model_selection import train_test_split

    if dataset == "digits":
        if mnist_dir is not None:
            raise ValueError("mnist_dir is given but dataset='digits'; pass dataset='mnist' to use MNIST")
        images, labels = load_digits_images()
    elif dataset == "mnist":
        if mnist_dir is None:
            raise ValueError("dataset='mnist' needs mnist_dir, the directory of the MNIST IDX files")
        images, labels = load_mnist(mnist_dir)
    else:
        raise ValueError(f"dataset must be 'digits' or 'mnist', got {dataset!r}")
    x_train, x_test, y_train, y_test = train_test_split(images, labels, test_size=0.25, random_state=seed,
                                                        stratify=labels)
    return x_train, y_train, x_test, y_test


# --------------------------------------------------------------------------- resize operators


def _resize_matrix(side_in: int, side_out: int, antialias: bool) -> np.ndarray:
    basis = jnp.eye(side_in * side_in, dtype=jnp.float32).reshape(-1, side_in, side_in)
    out = jax.vmap(lambda b: jax.image.resize(b, (side_out, side_out), "linear", antialias=antialias))(basis)
    return np.asarray(out, np.float64).reshape(side_in * side_in, side_out * side_out).T


@functools.cache
def upscale_matrix(side: int) -> np.ndarray:
    """The fixed upscale operator ``U (side^2, 49)``: ``U @ x`` is the 7 x 7 image ``x``
    (row-major) resized bilinearly to ``side x side`` (``jax.image.resize(..., "linear")``:
    half-pixel centres, weights renormalized at the border), i.e. the "upscale operator" that
    restores the resolution (Phan-Trong 2024, PhD thesis, Section 3.5.3.1; the authors' code
    uses OpenCV's bilinear ``cv2.resize``). Built once from the resized unit basis images.
    Entries are >= 0 and every row sums to 1, so a constant image stays constant and
    ``[0, 1]^49`` maps into ``[0, 1]^(side^2)``.

    Returns: float64 numpy ``(side^2, 49)``. Raises: ValueError if ``side < 1``."""
    if int(side) < 1:
        raise ValueError(f"side must be >= 1, got {side}")
    return _resize_matrix(SEARCH_SIDE, int(side), antialias=False)


def downscale(images) -> np.ndarray:
    """Images ``(N, H, H)`` resized to 7 x 7 and flattened: ``(N, 49)`` float32 (bilinear
    with antialiasing, ``jax.image.resize(..., "linear", antialias=True)``; a constant image
    stays constant). The realism model is trained on these."""
    images = np.asarray(images, np.float32)
    if images.ndim != 3 or images.shape[1] != images.shape[2]:
        raise ValueError(f"images must be (N, H, H), got shape {images.shape}")
    down = _resize_matrix(images.shape[1], SEARCH_SIDE, antialias=True).astype(np.float32)
    return images.reshape(images.shape[0], -1) @ down.T


# --------------------------------------------------------------------------- models


class DigitClassifier(nn.Module):
    """``logits = W_2 relu(W_1 x + b_1) + b_2``: flattened image ``x (..., H*W)`` to ``(..., classes)``;
    parameters ``{"hidden": {"kernel" (H*W, hidden), "bias"}, "output": {"kernel" (hidden, classes), "bias"}}``."""

    hidden: int = 10
    classes: int = 10

    @nn.compact
    def __call__(self, x: Array) -> Array:
        return nn.Dense(self.classes, name="output")(nn.relu(nn.Dense(self.hidden, name="hidden")(x)))


class Autoencoder(nn.Module):
    """``x (..., 49) -> sigmoid(decoder(encoder(x)))``: ReLU MLP ``49-32-latent-32-49``."""

    latent: int = 6
    hidden: int = 32

    @nn.compact
    def __call__(self, x: Array) -> Array:
        h = nn.relu(nn.Dense(self.hidden)(x))
        h = nn.relu(nn.Dense(self.latent)(h))
        h = nn.relu(nn.Dense(self.hidden)(h))
        return nn.sigmoid(nn.Dense(x.shape[-1])(h))


def classifier_for(params) -> DigitClassifier:
    """The :class:`DigitClassifier` whose parameters ``params`` are (widths read off the
    kernels, so hand-made parameter sets of any size work)."""
    try:
        return DigitClassifier(hidden=int(params["hidden"]["kernel"].shape[1]),
                               classes=int(params["output"]["kernel"].shape[1]))
    except (KeyError, TypeError, IndexError, AttributeError):
        raise TypeError("params must be DigitClassifier parameters {'hidden': {'kernel', 'bias'}, "
                        "'output': {'kernel', 'bias'}}") from None


def _fit(module, loss, x, target, key, steps, batch, lr):
    """Adam on minibatches drawn with replacement (``lax.scan``); float32."""
    x = jnp.asarray(x, jnp.float32)
    init_key, batch_key = jax.random.split(key)
    params = module.init(init_key, x[:1])["params"]
    opt = optax.adam(lr)

    def step(carry, idx):
        p, state = carry
        grads = jax.grad(lambda q: loss(module.apply({"params": q}, x[idx]), target[idx]))(p)
        updates, state = opt.update(grads, state, p)
        return (optax.apply_updates(p, updates), state), None

    idx = jax.random.randint(batch_key, (steps, min(batch, x.shape[0])), 0, x.shape[0])
    (params, _), _ = jax.jit(lambda c, i: jax.lax.scan(step, c, i))((params, opt.init(params)), idx)
    return params


@functools.lru_cache(maxsize=8)
def train_classifier(dataset: str = "digits", mnist_dir: str | None = None, seed: int = 0,
                     hidden: int = 10, steps: int = 2000):
    """Train the :class:`DigitClassifier` on the train split of :func:`digit_split` (Adam,
    learning rate 1e-2, minibatches of 128, cross-entropy on the logits), deterministically
    for ``seed``.

    Returns:
        ``(params, test_accuracy)``: flax parameters (float32) and the top-1 accuracy on the
        test split (a float in ``[0, 1]``).
    """
    x_tr, y_tr, x_te, y_te = digit_split(dataset, mnist_dir, seed)
    module = DigitClassifier(hidden=hidden)
    params = _fit(module, lambda logits, y: optax.softmax_cross_entropy_with_integer_labels(logits, y).mean(),
                  x_tr.reshape(len(x_tr), -1), jnp.asarray(y_tr), jax.random.key(seed), steps, 128, 1e-2)
    return params, accuracy(params, x_te.reshape(len(x_te), -1), y_te)


def accuracy(params, x, y) -> float:
    """Top-1 accuracy of the classifier ``params`` on flattened images ``x (n, H*W)`` with
    labels ``y (n,)``, a float in ``[0, 1]``."""
    logits = classifier_for(params).apply({"params": params}, jnp.asarray(x))
    return float(jnp.mean(jnp.argmax(logits, -1) == jnp.asarray(y)))


@functools.lru_cache(maxsize=8)
def train_autoencoder(dataset: str = "digits", mnist_dir: str | None = None, seed: int = 0,
                      steps: int = 2000):
    """Train the :class:`Autoencoder` on the 7 x 7 downscaled train split (:func:`downscale`;
    Adam, learning rate 3e-3, minibatches of 128, mean squared error), deterministically.

    Returns:
        ``(params, heldout_errors)``: flax parameters and the reconstruction errors
        (:func:`reconstruction_error`) of the downscaled test split, float64 numpy ``(m,)``.
    """
    x_tr, _, x_te, _ = digit_split(dataset, mnist_dir, seed)
    module = Autoencoder()
    params = _fit(module, lambda rec, x: jnp.mean((rec - x) ** 2), downscale(x_tr), jnp.asarray(downscale(x_tr)),
                  jax.random.fold_in(jax.random.key(seed), 1), steps, 128, 3e-3)
    errors = jax.vmap(lambda v: reconstruction_error(params, v))(jnp.asarray(downscale(x_te)))
    return params, np.asarray(errors, np.float64)


def reconstruction_error(params, x: Array) -> Array:
    """``mean((AE(x) - x)^2)`` over the 49 pixels of ``x (49,)``, ``()`` in ``x``'s float dtype
    (pure jnp)."""
    x = _as_float(x)
    return jnp.mean((Autoencoder().apply({"params": params}, x) - x) ** 2)


__all__ = [
    "SEARCH_SIDE",
    "Autoencoder",
    "DigitClassifier",
    "accuracy",
    "classifier_for",
    "digit_split",
    "downscale",
    "load_digits_images",
    "load_mnist",
    "read_idx",
    "reconstruction_error",
    "train_autoencoder",
    "train_classifier",
    "upscale_matrix",
]
