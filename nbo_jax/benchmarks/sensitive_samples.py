"""Sensitive samples for detecting a tampered classifier (Phan-Trong 2024, PhD thesis, Sections
3.5.3.1 and 4.3.5; Phan-Trong et al. 2023, Section 7.2.1), after He, Zhang & Lee 2018
("VeriDeep": sensitive-sample fingerprinting).

A model owner keeps a few inputs ``v`` whose outputs change as much as possible when the
weights ``theta`` of a trained classifier ``f_theta`` are changed, i.e. maximizers of
``||d f_theta(v) / d theta||_F``; a copy of the model is declared *tampered* when one of
these samples gets another top-1 label from it than from the original. The search space is
a 7 x 7 image ``x in [0, 1]^49``, shown to the classifier through a fixed bilinear upscale
operator ``U`` (:func:`nbo_jax.benchmarks.digits.upscale_matrix`): ``v = U x``.

- :func:`sensitivity` / the objective ``-sensitivity`` (minimized), a pure jnp function.
- :func:`tampered_params`, :func:`calibrate_tampering`: Gaussian noise on the weights, with
  the scale that makes the copies lose the thesis' share of accuracy (93 % -> 87.73 %).
- :func:`flips`, :func:`detects`, :func:`detection_rates`: the thesis' metric (Figures 3.3
  and 4.2): the share of tampered copies detected by the ``N_S`` best samples of a run.
- :func:`sensitive_samples`, :func:`sensitive_samples_realism`: the two :class:`Problem` s
  (the second with a learned realism constraint replacing the thesis' human ratings).

Data, classifier and autoencoder: :mod:`nbo_jax.benchmarks.digits`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, Optional

import jax
import jax.numpy as jnp
import numpy as np

from .._checks import check_int, check_positive
from ..types import Problem, TaskMetric, make_bounds
from . import digits
from .synthetic import _as_float

Array = jax.Array

THESIS_ACCURACY = 0.93
"""Top-1 accuracy of the thesis' MNIST model (Phan-Trong 2024, PhD thesis, Section 3.5.3.1)."""
THESIS_TAMPERED_ACCURACY = 0.8773
"""Mean accuracy of the thesis' tampered copies (same section; +- 0.08 %)."""
REALISM_QUANTILE = 0.95
"""Quantile of the held-out real digits' reconstruction errors used as the realism threshold."""
REALISM_RADIUS = 0.2
"""Half-width (pixel intensity units) of the realism task's search box around a real digit."""
N_MAX = 10
_SOURCE = ("Phan-Trong 2024, PhD thesis, Sections 3.5.3.1 and 4.3.5; Phan-Trong et al. 2023, Section 7.2.1; "
           "He, Zhang & Lee 2018")


# --------------------------------------------------------------------------- sensitivity


def sensitivity(params, x: Array) -> Array:
    """``||d softmax(f_theta(U x)) / d theta||_F``: the Frobenius norm of the Jacobian
    ``(classes, p)`` of the classifier's class probabilities with respect to all its ``p``
    parameters (He, Zhang & Lee 2018, Section 4; Phan-Trong 2024, PhD thesis, Section 3.5.3.1).

    The softmax output (not the logits) is differentiated: He et al. differentiate the model's
    output, here the probability vector, and a label flips only where the probabilities can
    change order. The logits' Jacobian with respect to the last layer is the hidden activation
    itself, so it grows with any bright image, including ones far from every decision boundary
    that no small tampering flips; the softmax Jacobian is largest near the boundaries.

    Args:
        params: :class:`~nbo_jax.benchmarks.digits.DigitClassifier` parameters whose input is
            a ``side x side`` image (``side^2`` inputs).
        x: ``(49,)`` 7 x 7 image (row-major) in ``[0, 1]``.

    Returns:
        ``()`` in ``x``'s float dtype (integers promote to the default float). Pure jnp:
        jit/vmap compatible.
    """
    x = _as_float(x)
    module = digits.classifier_for(params)
    side = math.isqrt(int(params["hidden"]["kernel"].shape[0]))
    image = jnp.asarray(digits.upscale_matrix(side), x.dtype) @ x
    jac = jax.jacrev(lambda p: jax.nn.softmax(module.apply({"params": p}, image)))(params)
    return jnp.sqrt(sum(jnp.sum(leaf.astype(x.dtype) ** 2) for leaf in jax.tree_util.tree_leaves(jac)))


# --------------------------------------------------------------------------- tampering


def _is_kernel(path) -> bool:
    return getattr(path[-1], "key", None) == "kernel"


def tampered_params(params, key: Array, n: int, scale: float):
    """``n`` tampered copies of ``params``: independent ``N(0, scale^2)`` noise added to every
    weight (the kernels; biases stay, as in the authors' code for Phan-Trong et al. 2023,
    Section 7.2.1).

    Returns:
        the parameter pytree with a leading axis ``n`` on every leaf (vmap over it).

    Raises:
        ValueError: ``n < 1`` or ``scale`` negative / not finite. TypeError: ``n`` not an int,
        ``scale`` not a number.
    """
    n = check_int("n", n, 1)
    scale = check_positive("scale", scale, allow_zero=True)
    return _add_noise(params, _unit_noise(params, key, n), scale)


@functools.partial(jax.jit, static_argnums=2)
def _unit_noise(params, key, n):
    """Standard normal noise shaped like ``n`` copies of the kernels of ``params`` (zeros
    for the biases)."""
    leaves, treedef = jax.tree_util.tree_flatten_with_path(params)
    keys = jax.random.split(key, len(leaves))
    noise = [jax.random.normal(k, (n,) + leaf.shape, leaf.dtype) if _is_kernel(path)
             else jnp.zeros((n,) + leaf.shape, leaf.dtype) for k, (path, leaf) in zip(keys, leaves)]
    return jax.tree_util.tree_unflatten(treedef, noise)


def _add_noise(params, noise, scale):
    return jax.tree_util.tree_map(lambda p, z: p[None] + jnp.asarray(scale, p.dtype) * z, params, noise)


@jax.jit
def _accuracies(params, copies, x, y):
    """``(n,)`` top-1 accuracies of the copies (leading axis ``n``) of ``params`` on ``x, y``."""
    module = digits.classifier_for(params)
    labels = jax.vmap(lambda p: jnp.argmax(module.apply({"params": p}, x), -1))(copies)
    return jnp.mean(labels == y, axis=1)


def calibrate_tampering(params, x, y, ratio: float, *, key: Array, n: int = 100, iterations: int = 40) -> float:
    """The noise scale of :func:`tampered_params` at which the mean accuracy of ``n`` copies
    (fixed by ``key``) on ``x (m, H*W)``, ``y (m,)`` is ``ratio`` times the original accuracy;
    bisection on ``log10(scale)`` in ``[-4, 1]`` (the mean accuracy falls as the scale grows).

    The thesis' share is ``ratio = 0.8773 / 0.93 = 0.9433`` (Phan-Trong 2024, PhD thesis,
    Section 3.5.3.1). Returns the scale (float). Raises ValueError: ``ratio`` not in (0, 1)."""
    if not 0 < ratio < 1:
        raise ValueError(f"ratio must lie in (0, 1), got {ratio}")
    x, y = jnp.asarray(x, jnp.float32), jnp.asarray(y)
    target = ratio * digits.accuracy(params, x, y)
    return float(10.0 ** _bisect(params, _unit_noise(params, key, int(n)), x, y, target, int(iterations)))


@functools.partial(jax.jit, static_argnums=5)
def _bisect(params, noise, x, y, target, iterations):
    def step(_, bracket):
        lo, hi = bracket
        mid = 0.5 * (lo + hi)
        above = jnp.mean(_accuracies(params, _add_noise(params, noise, 10.0**mid), x, y)) > target
        return jnp.where(above, mid, lo), jnp.where(above, hi, mid)

    lo, hi = jax.lax.fori_loop(0, iterations, step, (jnp.float32(-4.0), jnp.float32(1.0)))
    return 0.5 * (lo + hi)


# --------------------------------------------------------------------------- detection


@jax.jit
def flips(params, tampered, samples: Array) -> Array:
    """``(n_tampered, m)`` bool: whether tampered copy ``j`` gives sample ``i`` another top-1
    label than ``params`` (ties of the logits go to the lowest class, ``argmax``).

    Args:
        params: classifier parameters; tampered: the same pytree with a leading axis
            ``n_tampered``; samples: ``(m, D)`` classifier inputs (flattened images, ``D``
            the classifier's input size).
    """
    module = digits.classifier_for(params)
    label = jnp.argmax(module.apply({"params": params}, samples), -1)
    return jax.vmap(lambda p: jnp.argmax(module.apply({"params": p}, samples), -1) != label)(tampered)


def detects(params, tampered, samples: Array) -> Array:
    """``(n_tampered,)`` bool: a copy is detected when at least one of the samples ``(m, D)``
    gets another top-1 label from it than from ``params`` (He, Zhang & Lee 2018; Phan-Trong
    2024, PhD thesis, Section 3.5.3.1). See :func:`flips`."""
    return jnp.any(flips(params, tampered, samples), axis=1)


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class SensitiveSamplesTask:
    """What the metric needs: the classifier ``params``, its ``tampered`` copies (leading axis
    ``n_tampered``) and the upscale operator ``upscale (D, 49)``. Short repr (no arrays)."""

    params: Any
    tampered: Any
    upscale: np.ndarray
    n_tampered: int

    def __repr__(self) -> str:
        return f"SensitiveSamplesTask(inputs={self.upscale.shape[0]}, n_tampered={self.n_tampered})"


def best_distinct(x, f, n_max: int = N_MAX, feasible=None) -> np.ndarray:
    """Rows of the ``n_max`` smallest finite ``f`` among distinct rows of ``x (n, d)`` (feasible
    rows only when ``feasible (n,)`` is given); fewer when fewer qualify. ``(k,)`` int."""
    x, f = np.asarray(x), np.asarray(f, np.float64)
    ok = np.isfinite(f) & np.all(np.isfinite(x), axis=1)
    if feasible is not None:
        ok &= np.asarray(feasible, bool)
    chosen, seen = [], set()
    for i in np.argsort(np.where(ok, f, np.inf), kind="stable"):
        if not ok[i] or len(chosen) == n_max:
            break
        if x[i].tobytes() not in seen:
            seen.add(x[i].tobytes())
            chosen.append(int(i))
    return np.asarray(chosen, dtype=np.int64)


def _task(problem) -> SensitiveSamplesTask:
    task = getattr(problem, "metadata", {}).get("task")
    if not isinstance(task, SensitiveSamplesTask):
        raise ValueError(f"problem must be built by sensitive_samples(...) or sensitive_samples_realism(...), "
                         f"got {getattr(problem, 'name', type(problem).__name__)!r}")
    return task


def detection_rates(problem, x, f, n_max: int = N_MAX, feasible=None) -> np.ndarray:
    """Detection rate of the ``N_S`` best distinct evaluated samples for ``N_S = 1..n_max``
    (Phan-Trong 2024, PhD thesis, Figures 3.3 and 4.2): the share of the problem's tampered
    copies that at least one of them detects (:func:`detects`).

    The samples are the distinct rows of ``x`` with the largest sensitivity (smallest ``f``),
    feasible rows only when ``feasible`` is given. With only ``k < n_max`` such rows the rates
    for ``N_S > k`` are the rate of all ``k`` (0 when ``k = 0``).

    Args:
        problem: from :func:`sensitive_samples` / :func:`sensitive_samples_realism`.
        x: ``(n, 49)`` evaluated points; f: ``(n,)`` their objective values (``-sensitivity``).
        n_max: largest ``N_S`` (int >= 1). feasible: ``(n,)`` bool or None.

    Returns:
        float64 numpy ``(n_max,)`` in ``[0, 1]``, non-decreasing.

    Raises:
        ValueError: a problem not built here, or shapes that disagree.
    """
    task = _task(problem)
    x = np.asarray(x, np.float64)
    f = np.asarray(f, np.float64)
    if x.ndim != 2 or x.shape[1] != task.upscale.shape[1] or f.shape != x.shape[:1]:
        raise ValueError(f"x must be (n, {task.upscale.shape[1]}) and f (n,), got {x.shape} and {f.shape}")
    if feasible is not None and np.shape(feasible) != f.shape:
        raise ValueError(f"feasible must be ({f.shape[0]},) bool, got shape {np.shape(feasible)}")
    n_max = check_int("n_max", n_max, 1)
    rows = best_distinct(x, f, n_max, feasible)
    if rows.size == 0:
        return np.zeros(n_max)
    samples = jnp.asarray(x[rows] @ task.upscale.T, jnp.float32)
    hit = np.logical_or.accumulate(np.asarray(flips(task.params, task.tampered, samples)), axis=1)
    rates = hit.mean(axis=0)
    return np.concatenate([rates, np.full(n_max - rates.size, rates[-1])])


def _metric(problem_box: list, constrained: bool) -> TaskMetric:
    def final(history) -> np.ndarray:
        x, f = np.asarray(history["x"]), np.asarray(history["f"])
        feas = np.asarray(history["feasible"]) if constrained else [None] * len(f)
        return np.array([detection_rates(problem_box[0], x[s], f[s], N_MAX, feas[s])[-1] for s in range(len(f))])

    return TaskMetric(f"detection rate, N_S = {N_MAX}", final, higher_is_better=True)


# --------------------------------------------------------------------------- problems


@functools.lru_cache(maxsize=8)
def _setup(dataset: str, mnist_dir: str | None, seed: int, n_tampered: int):
    params, acc = digits.train_classifier(dataset, mnist_dir, seed)
    _, _, x_te, y_te = digits.digit_split(dataset, mnist_dir, seed)
    x_te = x_te.reshape(len(x_te), -1)
    ratio = THESIS_TAMPERED_ACCURACY / THESIS_ACCURACY
    key = jax.random.key(seed)
    scale = calibrate_tampering(params, x_te, y_te, ratio, key=jax.random.fold_in(key, 2))
    tampered = tampered_params(params, jax.random.fold_in(key, 3), n_tampered, scale)
    accs = np.asarray(_accuracies(params, tampered, jnp.asarray(x_te), jnp.asarray(y_te)))
    task = SensitiveSamplesTask(params, tampered, digits.upscale_matrix(math.isqrt(x_te.shape[1])), n_tampered)
    meta = {"source": _SOURCE, "dataset": dataset, "resolution": math.isqrt(x_te.shape[1]), "output": "softmax",
                "accuracy": acc, "tampering_scale": scale, "accuracy_ratio_target": ratio, "n_tampered": n_tampered,
                "tampered_accuracy_mean": float(accs.mean()), "tampered_accuracy_std": float(accs.std()), "task": task}
    return params, meta


def _check(dataset, mnist_dir, seed, n_tampered, noise_std):
    if dataset not in ("digits", "mnist"):
        raise ValueError(f"dataset must be 'digits' or 'mnist', got {dataset!r}")
    if (dataset == "mnist") != (mnist_dir is not None):
        raise ValueError("mnist_dir must be given exactly when dataset='mnist' (the directory of the MNIST IDX "
                         f"files), got dataset={dataset!r}, mnist_dir={mnist_dir!r}")
    return (dataset, None if mnist_dir is None else str(mnist_dir), check_int("seed", seed, 0),
            check_int("n_tampered", n_tampered, 1), check_positive("noise_std", noise_std, allow_zero=True))


def sensitive_samples(*, dataset: str = "digits", mnist_dir=None, seed: int = 0, n_tampered: int = 1000,
                      noise_std: float = 0.0) -> Problem:
    """Sensitive samples (Phan-Trong 2024, PhD thesis, Section 3.5.3.1, Figure 3.3): minimize
    ``f(x) = -sensitivity(params, x)`` (:func:`sensitivity`) over 7 x 7 images ``x in [0, 1]^49``.

    The classifier (:func:`nbo_jax.benchmarks.digits.train_classifier`) is trained for
    ``seed``; its ``n_tampered`` copies (:func:`tampered_params`) have the noise scale that
    keeps the thesis' share of accuracy (``x 0.9433``, :func:`calibrate_tampering`).
    ``metric`` is the detection rate of the 10 best distinct samples per seed
    (:func:`detection_rates`). Cached: the same arguments give the same object.

    Args:
        dataset: ``"digits"`` (scikit-learn, 8 x 8) or ``"mnist"`` (28 x 28, needs ``mnist_dir``
            with the IDX files, :func:`nbo_jax.benchmarks.digits.load_mnist`).
        seed: data split, classifier and tampering seed. n_tampered: copies for the metric.
        noise_std: observation noise of the objective (units of the sensitivity).

    Returns:
        :class:`Problem` ``"sensitive_samples"`` (``d = 49``, ``optimal_value=None``);
        ``metadata``: ``accuracy``, ``tampered_accuracy_mean``/``_std`` (test split),
        ``tampering_scale``, ``resolution``, ``task`` (a :class:`SensitiveSamplesTask`), ...

    Raises:
        ValueError: a bad argument (named), and the data errors of
        :func:`nbo_jax.benchmarks.digits.load_mnist`. TypeError: ``seed`` / ``n_tampered``
        not an int, ``noise_std`` not a number.
    """
    return _build(*_check(dataset, mnist_dir, seed, n_tampered, noise_std), realism=False)


def sensitive_samples_realism(*, dataset: str = "digits", mnist_dir=None, seed: int = 0, n_tampered: int = 1000,
                              noise_std: float = 0.0, radius: float = REALISM_RADIUS,
                              reference: Optional[int] = None) -> Problem:
    """:func:`sensitive_samples` with a realism constraint (Phan-Trong 2024, PhD thesis, Section
    4.3.5, Figure 4.2): ``c(x) = error(x) - threshold <= 0`` (``K = 1``).

    The thesis asks people to rate realism; here a learned score stands in: ``error(x)`` is
    the reconstruction error of an autoencoder trained on the 7 x 7 downscaled real digits of
    the train split (:func:`nbo_jax.benchmarks.digits.train_autoencoder`) and ``threshold``
    the 95 % quantile of the errors of the held-out (test-split) real digits, so 95 % of real
    digits count as realistic (a 5 % false-rejection rate, the usual test level) while
    unstructured
    images do not: on digits (seed 0) the smallest error of 2000 uniform random
    images in ``[0, 1]^49`` is ~6x the threshold.

    **The search box** is therefore not ``[0, 1]^49`` but the images within ``radius`` of a
    real digit ``v0`` in every pixel, ``[v0 - radius, v0 + radius] ∩ [0, 1]`` (ours: the thesis
    states no box, and its raters judged samples that its optimizer could reach): in
    ``[0, 1]^49`` no uniform initial design holds a feasible point and no method of the
    comparison found one in 70 evaluations, so every detection rate was 0. With the default
    ``radius = 0.2`` about a third of the box is feasible (digits, seed 0: 33 % of 2000
    uniform points) and the most sensitive points of the box are not (best sensitivity 7.97
    overall, 7.47 feasible): a real trade-off for a constrained method. ``v0`` is the
    test-split digit ``reference`` (default: the one at the lower quartile of the held-out
    reconstruction errors, a clearly realistic digit), downscaled to 7 x 7.

    ``metadata`` adds ``realism_threshold``, ``realism_quantile``, ``realism_feasible_heldout``
    (share of held-out digits feasible), ``reference`` (index in the test split),
    ``reference_label``, ``reference_image`` ``(49,)`` and ``radius``. The metric uses
    feasible samples only.

    Args:
        radius: half-width of the search box around ``v0`` (``0 < radius <= 1``).
        reference: test-split index of ``v0``; ``None`` for the default above.
        dataset: as :func:`sensitive_samples`.
        mnist_dir: as :func:`sensitive_samples`.
        seed: as :func:`sensitive_samples`.
        n_tampered: as :func:`sensitive_samples`.
        noise_std: as :func:`sensitive_samples`.

    Returns:
        :class:`Problem` ``"sensitive_samples_realism"`` (``d = 49``, ``K = 1``).

    Raises:
        ValueError: as :func:`sensitive_samples`; ``radius`` outside ``(0, 1]``; ``reference``
        outside the test split.
    """
    if isinstance(radius, bool) or not isinstance(radius, (int, float, np.floating)) or not 0 < radius <= 1:
        raise ValueError(f"radius must be a number in (0, 1], got {radius!r}")
    if reference is not None and (isinstance(reference, bool) or not isinstance(reference, (int, np.integer))
                                  or reference < 0):
        raise ValueError(f"reference must be None or an int >= 0 (an index of the test split), got {reference!r}")
    return _build(*_check(dataset, mnist_dir, seed, n_tampered, noise_std), realism=True, radius=float(radius),
                  reference=None if reference is None else int(reference))


@functools.lru_cache(maxsize=16)
def _build(dataset, mnist_dir, seed, n_tampered, noise_std, realism, radius=REALISM_RADIUS,
           reference=None) -> Problem:
    params, meta = _setup(dataset, mnist_dir, seed, n_tampered)
    meta = dict(meta)
    bounds = make_bounds(0.0, 1.0, 49)

    def objective(x: Array) -> Array:
        return -sensitivity(params, x)

    constraints = None
    if realism:
        ae_params, errors = digits.train_autoencoder(dataset, mnist_dir, seed)
        threshold = float(np.quantile(errors, REALISM_QUANTILE))
        meta.update(realism_threshold=threshold, realism_quantile=REALISM_QUANTILE,
                    realism_feasible_heldout=float(np.mean(errors <= threshold)))
        _, _, x_te, y_te = digits.digit_split(dataset, mnist_dir, seed)
        if reference is None:
            reference = int(np.argsort(errors, kind="stable")[len(errors) // 4])
        elif reference >= len(errors):
            raise ValueError(f"reference must be an index of the test split, in [0, {len(errors)}), got {reference}")
        v0 = np.asarray(digits.downscale(x_te[reference:reference + 1])[0], np.float64)
        bounds = make_bounds(np.clip(v0 - radius, 0.0, 1.0), np.clip(v0 + radius, 0.0, 1.0), 49,
                             name="realism search box")
        meta.update(reference=reference, reference_label=int(y_te[reference]), reference_image=v0, radius=radius)

        def constraints(x: Array) -> Array:
            err = digits.reconstruction_error(ae_params, x)
            return jnp.reshape(err - jnp.asarray(threshold, err.dtype), (1,))

    box: list = []
    problem = Problem(name="sensitive_samples_realism" if realism else "sensitive_samples", dim=49,
                      bounds=bounds, objective=objective, noise_std=noise_std,
                      constraints=constraints, metadata=meta, metric=_metric(box, realism))
    box.append(problem)
    return problem


__all__ = [
    "REALISM_QUANTILE",
    "THESIS_ACCURACY",
    "THESIS_TAMPERED_ACCURACY",
    "SensitiveSamplesTask",
    "best_distinct",
    "calibrate_tampering",
    "detection_rates",
    "detects",
    "flips",
    "sensitive_samples",
    "sensitive_samples_realism",
    "sensitivity",
    "tampered_params",
]
