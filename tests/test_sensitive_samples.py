"""Tests of nbo_jax.benchmarks.sensitive_samples and nbo_jax.benchmarks.digits (float32 unless
a test takes the x64 fixture)."""

import gzip
import struct

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

from nbo_jax.benchmarks import digits
from nbo_jax.benchmarks import sensitive_samples as ss
from nbo_jax.types import Problem, make_bounds


@pytest.fixture(scope="module")
def problem():
    return ss.sensitive_samples()


@pytest.fixture(scope="module")
def realism():
    return ss.sensitive_samples_realism()


def _write_idx(path, array, code):
    """IDX writer of the test, from the format's description (big-endian, magic 0 0 code ndim)."""
    fmt = {0x08: ">u1", 0x0D: ">f4"}[code]
    body = struct.pack(">BBBB", 0, 0, code, array.ndim) + struct.pack(f">{array.ndim}I", *array.shape)
    body += np.asarray(array, fmt).tobytes()
    path.write_bytes(gzip.compress(body) if str(path).endswith(".gz") else body)


# --------------------------------------------------------------------------- data


def test_idx_round_trip_plain_gzip_and_float(tmp_path):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(3, 4, 5), dtype=np.uint8)
    _write_idx(tmp_path / "a", images, 0x08)
    _write_idx(tmp_path / "b.gz", images, 0x08)
    floats = rng.normal(size=(2, 3)).astype(np.float32)
    _write_idx(tmp_path / "c", floats, 0x0D)
    np.testing.assert_array_equal(digits.read_idx(tmp_path / "a"), images)
    np.testing.assert_array_equal(digits.read_idx(tmp_path / "b.gz"), images)
    out = digits.read_idx(tmp_path / "c")
    assert out.dtype == np.float32 and out.dtype.isnative
    np.testing.assert_array_equal(out, floats)


def test_idx_header_errors_name_the_file(tmp_path):
    bad_magic = tmp_path / "bad_magic"
    bad_magic.write_bytes(b"\x01\x00\x08\x01" + struct.pack(">I", 1) + b"\x00")
    bad_code = tmp_path / "bad_code"
    bad_code.write_bytes(b"\x00\x00\x07\x01" + struct.pack(">I", 1) + b"\x00")
    short = tmp_path / "short"
    short.write_bytes(b"\x00\x00\x08\x02" + struct.pack(">II", 2, 3) + b"\x00" * 5)
    for path, words in ((bad_magic, "bad magic"), (bad_code, "dtype code 0x07"), (short, "(2, 3)")):
        with pytest.raises(ValueError, match=words) as err:
            digits.read_idx(path)
        assert str(path) in str(err.value)


def test_load_mnist_reads_idx_directory(tmp_path):
    rng = np.random.default_rng(1)
    images = rng.integers(0, 256, size=(6, 28, 28), dtype=np.uint8)
    labels = np.array([0, 1, 2, 3, 9, 5], np.uint8)
    _write_idx(tmp_path / "train-images-idx3-ubyte.gz", images, 0x08)
    _write_idx(tmp_path / "train-labels-idx1-ubyte", labels, 0x08)
    x, y = digits.load_mnist(tmp_path)
    np.testing.assert_allclose(x, images / 255.0, rtol=1e-6)
    np.testing.assert_array_equal(y, labels)
    (tmp_path / "train-labels-idx1-ubyte").unlink()
    with pytest.raises(ValueError, match="mnist_dir .*train-labels"):
        digits.load_mnist(tmp_path)


def test_digits_data_and_split():
    images, _labels = digits.load_digits_images()
    assert images.shape == (1797, 8, 8) and images.min() == 0.0 and images.max() == 1.0
    x_tr, _y_tr, x_te, y_te = digits.digit_split("digits", None, 0)
    assert len(x_tr) + len(x_te) == 1797 and len(x_te) == 450
    assert set(np.unique(y_te)) == set(range(10))


# --------------------------------------------------------------------------- resize operators


def test_upscale_matrix_is_bilinear_resize_and_keeps_constants():
    rng = np.random.default_rng(2)
    for side in (8, 28):
        u = digits.upscale_matrix(side)
        assert u.shape == (side * side, 49)
        assert u.min() >= 0.0
        np.testing.assert_allclose(u @ np.full(49, 0.37), np.full(side * side, 0.37), rtol=1e-6)
        x = rng.uniform(size=49).astype(np.float32)
        direct = jax.image.resize(jnp.asarray(x).reshape(7, 7), (side, side), "linear").reshape(-1)
        np.testing.assert_allclose(u @ x, np.asarray(direct), atol=1e-6)
        y = rng.uniform(size=49)
        np.testing.assert_allclose(u @ (2.0 * x - 3.0 * y), 2.0 * (u @ x) - 3.0 * (u @ y), atol=1e-12)
    np.testing.assert_allclose(digits.downscale(np.full((2, 8, 8), 0.6)), 0.6, rtol=1e-6)


# --------------------------------------------------------------------------- classifier, sensitivity


def test_classifier_accuracy_and_determinism(problem):
    _params, acc = digits.train_classifier("digits", None, 0)
    assert acc > 0.9 and problem.metadata["accuracy"] == acc
    x_tr, y_tr, _, _ = digits.digit_split("digits", None, 0)
    fit = lambda: digits._fit(digits.DigitClassifier(), lambda z, t: jnp.mean((z - 1.0) ** 2),
                              x_tr[:64].reshape(64, -1), jnp.asarray(y_tr[:64]), jax.random.key(5), 20, 16, 1e-2)
    for a, b in zip(jax.tree_util.tree_leaves(fit()), jax.tree_util.tree_leaves(fit())):
        np.testing.assert_array_equal(a, b)


def _direct_sensitivity(params, x):
    flat, unravel = ravel_pytree(params)
    side = round(np.sqrt(params["hidden"]["kernel"].shape[0]))
    image = jnp.asarray(digits.upscale_matrix(side), x.dtype) @ x

    def probs(w):
        return jax.nn.softmax(digits.DigitClassifier().apply({"params": unravel(w)}, image))

    jac = jax.jacrev(probs)(flat.astype(x.dtype))
    assert jac.shape == (10, 64 * 10 + 10 + 10 * 10 + 10)
    return jnp.linalg.norm(jac)


def test_sensitivity_equals_direct_jacobian_norm_and_vmaps(problem):
    params = problem.metadata["task"].params
    x = jax.random.uniform(jax.random.key(3), (6, 49))
    got = jax.vmap(problem.objective)(x)
    want = jnp.stack([-_direct_sensitivity(params, xi) for xi in x])
    np.testing.assert_allclose(got, want, rtol=2e-5)
    assert np.all(np.asarray(got) < 0)


def test_sensitivity_in_float64(problem, x64):
    params = problem.metadata["task"].params
    params64 = jax.tree_util.tree_map(lambda a: jnp.asarray(a, jnp.float64), params)
    cands = np.random.default_rng(4).uniform(size=(20, 49))
    x = cands[np.argmin(np.asarray(problem(jnp.asarray(cands, jnp.float32))))]  # not saturated: f32 is accurate
    # compiled, the reference too (op by op: hundreds of small compilations)
    s64 = jax.jit(ss.sensitivity)(params64, jnp.asarray(x, jnp.float64))
    assert s64.dtype == jnp.float64
    np.testing.assert_allclose(s64, jax.jit(_direct_sensitivity)(params64, jnp.asarray(x, jnp.float64)), rtol=1e-10)
    np.testing.assert_allclose(s64, jax.jit(ss.sensitivity)(params, jnp.asarray(x, jnp.float32)), rtol=1e-4)


# --------------------------------------------------------------------------- tampering, detection


def test_tampered_params_noise_on_kernels_only(problem):
    params = problem.metadata["task"].params
    copies = ss.tampered_params(params, jax.random.key(7), 200, 0.3)
    for layer in ("hidden", "output"):
        np.testing.assert_array_equal(copies[layer]["bias"], np.broadcast_to(params[layer]["bias"],
                                                                               copies[layer]["bias"].shape))
    noise = np.asarray(copies["hidden"]["kernel"] - params["hidden"]["kernel"][None])
    assert noise.shape == (200, 64, 10)
    assert abs(noise.std() / 0.3 - 1) < 0.01 and abs(noise.mean()) < 0.01
    for bad, match in (({"n": 0, "scale": 1.0}, "n must"), ({"n": 2, "scale": -1.0}, "scale must")):
        with pytest.raises(ValueError, match=match):
            ss.tampered_params(params, jax.random.key(0), **bad)


def test_tampering_keeps_the_thesis_share_of_accuracy(problem):
    meta = problem.metadata
    ratio = meta["tampered_accuracy_mean"] / meta["accuracy"]
    assert meta["accuracy_ratio_target"] == pytest.approx(0.8773 / 0.93)
    assert abs(ratio - 0.8773 / 0.93) < 0.01  # calibrated on 100 other copies
    assert meta["tampered_accuracy_std"] > 0 and meta["tampering_scale"] > 0
    assert jax.tree_util.tree_leaves(meta["task"].tampered)[0].shape[0] == 1000


def _toy():
    """Input ``(a, b)``; hidden = relu(identity); the original labels ``argmax(a, b)``. Copy 0
    scales class 1 by 1.2 (flips (0.5, 0.45) only), copy 1 is the original, copy 2 swaps the
    classes (flips every input without a tie)."""
    eye = jnp.eye(2)
    params = {"hidden": {"kernel": eye, "bias": jnp.zeros(2)}, "output": {"kernel": eye, "bias": jnp.zeros(2)}}
    out = jnp.stack([jnp.diag(jnp.array([1.0, 1.2])), eye, eye[::-1]])
    tampered = {"hidden": {"kernel": jnp.stack([eye] * 3), "bias": jnp.zeros((3, 2))},
                "output": {"kernel": out, "bias": jnp.zeros((3, 2))}}
    return params, tampered


def test_detects_on_hand_made_models():
    params, tampered = _toy()
    far, near = jnp.array([[1.0, 0.0]]), jnp.array([[0.5, 0.45]])
    np.testing.assert_array_equal(ss.detects(params, tampered, far), [False, False, True])
    np.testing.assert_array_equal(ss.detects(params, tampered, near), [True, False, True])
    np.testing.assert_array_equal(ss.detects(params, tampered, jnp.concatenate([far, near])), [True, False, True])
    np.testing.assert_array_equal(ss.flips(params, tampered, jnp.concatenate([far, near])),
                                  [[False, True], [False, False], [True, True]])


def test_detection_rates_hand_made_task():
    params, tampered = _toy()
    up = np.zeros((2, 49))
    up[0, 0] = up[1, 1] = 1.0  # the toy model sees pixels 0 and 1
    toy = Problem("toy", 49, make_bounds(0.0, 1.0, 49), lambda x: jnp.sum(x),
                  metadata={"task": ss.SensitiveSamplesTask(params, tampered, up, 3)})
    x = np.zeros((4, 49))
    x[0, :2], x[1, :2], x[2, :2], x[3, :2] = (1.0, 0.0), (1.0, 0.0), (0.5, 0.45), (0.2, 0.9)
    f = np.array([-3.0, -3.0, -2.0, np.nan])  # row 1 repeats row 0; row 3 is not finite
    # N_S = 1: (1, 0) detects copy 2; N_S = 2: + (0.5, 0.45) detects copy 0; no third sample.
    np.testing.assert_allclose(ss.detection_rates(toy, x, f, n_max=4), [1 / 3, 2 / 3, 2 / 3, 2 / 3])
    np.testing.assert_allclose(ss.detection_rates(toy, x, f, n_max=2, feasible=[False, False, True, True]),
                               [2 / 3, 2 / 3])
    np.testing.assert_array_equal(ss.detection_rates(toy, x, f, n_max=3, feasible=np.zeros(4, bool)), np.zeros(3))
    np.testing.assert_array_equal(ss.best_distinct(x, f, 10), [0, 2])
    with pytest.raises(ValueError, match="x must be"):
        ss.detection_rates(toy, x[:, :5], f)
    with pytest.raises(ValueError, match="built by sensitive_samples"):
        ss.detection_rates(Problem("p", 49, make_bounds(0.0, 1.0, 49), jnp.sum), x, f)


def test_detection_rates_match_detects_on_the_problem(problem):
    task = problem.metadata["task"]
    x = np.asarray(jax.random.uniform(jax.random.key(8), (30, 49)))
    f = np.asarray(problem(jnp.asarray(x)))
    rates = ss.detection_rates(problem, x, f)
    assert rates.shape == (10,) and np.all(np.diff(rates) >= 0)
    order = np.argsort(f)
    for n_s in (1, 4, 10):
        samples = jnp.asarray(x[order[:n_s]] @ task.upscale.T, jnp.float32)
        assert rates[n_s - 1] == pytest.approx(float(np.mean(ss.detects(task.params, task.tampered, samples))))
    hist = {"x": np.stack([x, x[::-1]]), "f": np.stack([f, f[::-1]])}
    np.testing.assert_allclose(problem.metric.final(hist), [rates[-1], rates[-1]])


# --------------------------------------------------------------------------- realism, builders


def test_realism_constraint_threshold_and_feasible_sets(realism):
    meta = realism.metadata
    _, errors = digits.train_autoencoder("digits", None, 0)
    assert meta["realism_threshold"] == pytest.approx(np.quantile(errors, 0.95))
    assert np.sum(errors <= meta["realism_threshold"]) == int(np.floor(0.95 * (errors.size - 1))) + 1
    x_tr, _, x_te, _ = digits.digit_split("digits", None, 0)
    c_te = np.asarray(realism.constraint_values(jnp.asarray(digits.downscale(x_te))))
    assert c_te.shape == (450, 1) and abs(np.mean(c_te <= 0) - 0.95) < 0.01
    assert np.mean(np.asarray(realism.constraint_values(jnp.asarray(digits.downscale(x_tr[:300])))) <= 0) > 0.9
    noise = jax.random.uniform(jax.random.key(9), (200, 49))
    assert np.all(np.asarray(realism.constraint_values(noise)) > 0)  # unstructured images are not realistic
    x = np.array(noise[:20])
    x[5] = digits.downscale(x_te[:1])[0]  # one feasible row
    f = np.asarray(realism(jnp.asarray(x)))
    feas = np.all(np.asarray(realism.constraint_values(jnp.asarray(x))) <= 0, axis=1)
    hist = {"x": x[None], "f": f[None], "feasible": feas[None]}
    want = ss.detection_rates(realism, x, f, feasible=feas)[-1]
    assert want == ss.detection_rates(realism, x[5:6], f[5:6])[-1]
    np.testing.assert_allclose(realism.metric.final(hist), [want])


def test_builders_fields_cache_and_errors(problem, realism):
    assert (problem.name, problem.dim, problem.optimal_value, problem.constraints) == ("sensitive_samples", 49,
                                                                                      None, None)
    assert realism.name == "sensitive_samples_realism" and realism.n_constraints == 1
    np.testing.assert_array_equal(problem.bounds.lower, np.zeros(49))
    np.testing.assert_array_equal(problem.bounds.upper, np.ones(49))
    for p in (problem, realism):
        assert p.metric.label == "detection rate, N_S = 10" and p.metric.higher_is_better
    assert ss.sensitive_samples() is problem and ss.sensitive_samples(seed=0, n_tampered=1000) is problem
    assert "SensitiveSamplesTask(inputs=64, n_tampered=1000)" in repr(problem) and len(repr(problem)) < 3000
    assert ss.sensitive_samples(noise_std=0.1).noise_std == 0.1
    for kwargs, name in (({"dataset": "cifar"}, "dataset"), ({"mnist_dir": "/tmp"}, "mnist_dir"),
                         ({"dataset": "mnist"}, "mnist_dir"), ({"n_tampered": 0}, "n_tampered"),
                         ({"seed": -1}, "seed"), ({"noise_std": -1.0}, "noise_std")):
        with pytest.raises(ValueError, match=name):
            ss.sensitive_samples(**kwargs)


def test_realism_search_box_around_a_real_digit(realism):
    """The realism task searches within ``radius`` of a real digit: its box, the default
    reference (lower quartile of the held-out errors), a feasible share strictly between 0 and 1
    (a real trade-off), and the argument errors."""
    meta = realism.metadata
    _, errors = digits.train_autoencoder("digits", None, 0)
    assert meta["reference"] == int(np.argsort(errors, kind="stable")[len(errors) // 4])
    _, _, x_te, y_te = digits.digit_split("digits", None, 0)
    v0 = digits.downscale(x_te[meta["reference"]:meta["reference"] + 1])[0]
    np.testing.assert_allclose(meta["reference_image"], v0)
    assert meta["reference_label"] == int(y_te[meta["reference"]]) and meta["radius"] == 0.2
    np.testing.assert_allclose(realism.bounds.lower, np.clip(v0 - 0.2, 0, 1), atol=1e-7)
    np.testing.assert_allclose(realism.bounds.upper, np.clip(v0 + 0.2, 0, 1), atol=1e-7)
    assert realism.constraint_values(jnp.asarray(v0))[0] <= 0  # the reference digit itself is realistic
    u = jax.random.uniform(jax.random.key(4), (400, 49))
    x = jnp.asarray(realism.bounds.lower) + u * jnp.asarray(realism.bounds.upper - realism.bounds.lower)
    share = float(np.mean(np.asarray(realism.constraint_values(x.astype(jnp.float32)))[:, 0] <= 0))
    assert 0.15 < share < 0.6
    with pytest.raises(ValueError, match="radius"):
        ss.sensitive_samples_realism(radius=0.0)
    with pytest.raises(ValueError, match=r"reference must be an index of the test split, in \[0, 450\)"):
        ss.sensitive_samples_realism(reference=450)
