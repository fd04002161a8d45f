"""Random-forest BO: SMAC's surrogate (Hutter, Hoos & Leyton-Brown 2011, "Sequential
model-based optimization for general algorithm configuration", LION 5, Section 4) with
expected improvement; the "RF" baseline of Phan-Trong (2024), PhD thesis, Table 3.2.

At every ask a scikit-learn ``RandomForestRegressor`` of ``B = n_estimators`` trees is fitted
on the dataset's valid rows (unit-cube inputs, targets standardized over those rows; a failed
evaluation counts at its imputed worst value, :class:`~nbo_jax.dataset.Dataset`), and its
predictive mean and variance at a point ``x`` are those over the trees' predictions
``T_b(x)`` (``estimator.predict`` of each tree)::

    mu(x)      = (1/B) sum_b T_b(x)
    sigma^2(x) = (1/B) sum_b (T_b(x) - mu(x))^2                 variance="trees" (default)
    sigma^2(x) = the above + (1/B) sum_b v_b(x)                  variance="total"

``v_b(x)`` is the variance of the training targets (bootstrap-weighted) in the leaf of tree
``b`` that ``x`` falls in (``tree_.impurity``): ``"total"`` is the law of total variance over
the trees, ``"trees"`` the spread of the trees' means, which is what SMAC3 computes (its
pyrfr forest runs with ``compute_law_of_total_variance = False``). The forest's defaults are
SMAC3's ``RandomForest`` (``min_samples_split = 3``, ``min_samples_leaf = 3``, a ``5/6``
fraction of the features per split, bootstrap) with scikit-learn's 100 trees (SMAC3: 10).

The acquisition (EI in minimization form over the best standardized finite observation,
ranked by its logarithm, :func:`nbo_jax.acquisition.log_expected_improvement`: the same
argmax wherever EI is representable, and no ties where it underflows to 0) is scored on the
raw samples of the shared acquisition optimizer (:func:`nbo_jax.optimize.optimize_acqf` with
``steps = 0``: scrambled Sobol points plus points around the best observations, inside
``Dataset.region`` when set; on a finite domain the unevaluated choices) and the argmax is
taken: there is no gradient climb, a forest is piecewise constant. SMAC's own optimizer (a
local search from the best configurations interleaved with random ones) is not reproduced.

**Host code inside JAX.** Fitting and prediction run on the host through
:func:`jax.pure_callback` (``vmap_method="broadcast_all"``): ``run_bo`` stays one jit-compiled
scan and vmaps over seeds, the callback receiving every seed's arrays at once and fitting one
forest per seed, each from that seed's rows only, so a vmapped seed gives the seed run alone.
The forest's ``random_state`` is an integer drawn with :mod:`jax.random` from the ask's key:
a seed is deterministic, and nothing lives on the host between calls. The callback runs in
the calling process (scikit-learn's ``n_jobs=None``).
"""

from __future__ import annotations

import importlib.util
from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from .._checks import check_bool, check_choice, check_int, check_positive
from ..acquisition import AcquisitionFn, SurrogatePosterior, log_ei
from ..bo import make_algorithm, records_config
from ..observations import initial_data, told_rows
from ..optimize import AcqOptimizer, as_acq_optimizer, optimize_acqf
from ..types import BOAlgorithm, Bounds, Dataset

Array = jax.Array

VARIANCES = ("trees", "total")
MAX_SEED = 2**31 - 1
"""The forest's ``random_state`` is drawn uniformly from ``[0, MAX_SEED)``."""
DEFAULT_ACQ = AcqOptimizer(raw_samples=2048, steps=0)
INSTALL_HINT = "pip install 'nbo-jax[tasks]'"


class ForestSettings(NamedTuple):
    """The forest's hyperparameters (static; scikit-learn's ``RandomForestRegressor``
    arguments, and :data:`VARIANCES` for the predictive variance)."""

    n_estimators: int = 100
    min_samples_split: int = 3
    min_samples_leaf: int = 3
    max_features: float = 5.0 / 6.0
    bootstrap: bool = True
    variance: str = "trees"


DEFAULT_SETTINGS = ForestSettings()


def _require_sklearn(who: str) -> None:
    if importlib.util.find_spec("sklearn") is None:
        raise ImportError(f"{who} needs scikit-learn (the 'tasks' extra): {INSTALL_HINT}")


def fit_forest(u: np.ndarray, y: np.ndarray, seed: int, settings: ForestSettings):
    """A fitted scikit-learn ``RandomForestRegressor`` (host code, NumPy in and out).

    Args:
        u: ``(n, d)`` inputs, ``n >= 1``. y: ``(n,)`` targets.
        seed: the forest's ``random_state`` (an int in ``[0, 2**32)``).
        settings: :class:`ForestSettings`.
    """
    from sklearn.ensemble import RandomForestRegressor

    forest = RandomForestRegressor(
        n_estimators=settings.n_estimators, min_samples_split=settings.min_samples_split,
        min_samples_leaf=settings.min_samples_leaf, max_features=settings.max_features,
        bootstrap=settings.bootstrap, random_state=int(seed))
    return forest.fit(np.asarray(u, np.float64), np.asarray(y, np.float64))


def forest_mean_std(forest, x: np.ndarray, variance: str = "trees") -> tuple[np.ndarray, np.ndarray]:
    """``(mean (N,), std (N,))`` float64 of a fitted forest at ``x (N, d)`` over its trees
    (module doc; host code). ``mean`` is the forest's own prediction (the mean of the trees')."""
    X = np.ascontiguousarray(x, np.float32)  # what scikit-learn's trees compare on
    preds = np.stack([tree.predict(X, check_input=False) for tree in forest.estimators_])
    mean = preds.mean(axis=0)
    var = preds.var(axis=0)
    if variance == "total":
        var = var + np.mean([tree.tree_.impurity[tree.apply(X, check_input=False)]
                             for tree in forest.estimators_], axis=0)
    return mean, np.sqrt(np.maximum(var, 0.0))


def _host_mean_std(settings: ForestSettings, u, y, mask, seed, x):
    """The callback: any leading batch axes (``broadcast_all``), one forest per index."""
    u, y, mask, seed, x = (np.asarray(a) for a in (u, y, mask, seed, x))
    batch = seed.shape
    mean = np.zeros(batch + x.shape[-2:-1], x.dtype)
    std = np.ones(batch + x.shape[-2:-1], x.dtype)
    for i in np.ndindex(*batch):
        rows = mask[i].astype(bool)
        if not rows.any():  # nothing to fit on: the prior N(0, 1) of standardized targets
            continue
        forest = fit_forest(u[i][rows], y[i][rows], int(seed[i]), settings)
        m, s = forest_mean_std(forest, x[i], settings.variance)
        mean[i], std[i] = m, s
    return mean, std


def forest_posterior(u: Array, y: Array, mask: Array, seed: Array, x: Array,
                     settings: ForestSettings = DEFAULT_SETTINGS) -> tuple[Array, Array]:
    """Fit a random forest on the rows of ``(u, y)`` where ``mask`` and predict at ``x``: the
    mean and standard deviation over the trees (module doc), computed on the host through
    :func:`jax.pure_callback` (works under ``jit`` and ``vmap``; not differentiable).

    Args:
        u: ``(cap, d)`` inputs. y: ``(cap,)`` targets. mask: ``(cap,)`` bool, the rows fitted
            (the others, whatever their values, are never seen by the forest).
        seed: ``()`` integer, the forest's ``random_state`` (``>= 0``).
        x: ``(N, d)`` points to predict at, floating dtype.
        settings: :class:`ForestSettings` (static).

    Returns:
        ``(mean (N,), std (N,))`` in ``x``'s dtype (computed in float64 on the host). With no
        row in ``mask``: mean 0, std 1.
    """
    shape = jax.ShapeDtypeStruct(x.shape[:-1], x.dtype)
    return jax.pure_callback(lambda *a: _host_mean_std(settings, *a), (shape, shape), u, y, mask, seed, x,
                             vmap_method="broadcast_all")


class RandomForestState(NamedTuple):
    """State of random-forest BO (a pytree; fixed shapes): ``data``, the observations
    (:class:`~nbo_jax.dataset.Dataset`, unit-cube inputs), and ``bounds``, the box. The forest
    itself is refitted inside each ask (host code keeps nothing), so there is no model state;
    the ask's key gives the forest's ``random_state``."""

    data: Dataset
    bounds: Bounds


@records_config
def rf_bo(
    *,
    n_estimators: int = 100,
    min_samples_split: int = 3,
    min_samples_leaf: int = 3,
    max_features: float = 5.0 / 6.0,
    bootstrap: bool = True,
    variance: str = "trees",
    raw_samples: Optional[int] = None,
    acq_optimizer: Optional[AcqOptimizer | dict] = None,
    acquisition: Optional[AcquisitionFn] = None,
    standardize: bool = True,
    q: int = 1,
) -> BOAlgorithm:
    """Random-forest BO with expected improvement (SMAC's surrogate, Hutter, Hoos &
    Leyton-Brown 2011; the RF baseline of Phan-Trong 2024, Table 3.2) as a
    :class:`~nbo_jax.types.BOAlgorithm` (module doc for the model). Needs scikit-learn (the
    ``tasks`` extra).

    Args:
        n_estimators: trees in the forest (``>= 1``).
        min_samples_split, min_samples_leaf: scikit-learn's (ints ``>= 2`` and ``>= 1``;
            SMAC3's defaults 3 and 3).
        max_features: the fraction of the ``d`` inputs tried at each split, in ``(0, 1]``
            (``max(1, int(max_features * d))`` of them; SMAC's ``5/6``).
        bootstrap: each tree sees a bootstrap sample of the rows (SMAC: yes).
        variance: ``"trees"`` (the variance of the trees' predictions, SMAC3's) or
            ``"total"`` (plus the mean of the trees' leaf variances: the law of total
            variance).
        raw_samples: points the acquisition is scored on per ask (``>= q``); ``None``: the
            ``acq_optimizer``'s (2048 by default). Not together with an ``acq_optimizer``
            that sets another value.
        acq_optimizer: the raw samples (:func:`nbo_jax.optimize.acq_optimizer` or a dict of its
            arguments laid over the default: 2048 scrambled Sobol points, a quarter of them
            around the 5 best observations); ``steps`` must be 0 (no climb).
        acquisition: ``acq(SurrogatePosterior, key) -> (N,)`` utility to maximize
            (:mod:`nbo_jax.acquisition`; standardized units); ``None``: EI ranked by log EI
            (module doc).
        standardize: fit on targets standardized over the valid rows (mean 0, std 1); a
            forest's ranking of points does not depend on it, the posterior's units do.
        q: points per ask (``ask`` returns ``(q, d)`` when ``q > 1``); batches are the
            constant liar (``batch_rule = "fantasy"``, :mod:`nbo_jax.transforms.batch`): each chosen
            point is told to a copy of the state at the mean observed value and the forest
            refitted before the next is chosen (``q`` fits per ask).

    Returns:
        :class:`~nbo_jax.types.BOAlgorithm` named ``"rf-ei"``:
        ``init(key, x0 (n0, d), y0 (n0,), c0=None, *, bounds, capacity) -> RandomForestState``
        (``c0`` and ``c`` are accepted and ignored), ``ask(state, key) -> (d,) or (q, d)`` in
        the box, float dtype of the state, ``tell(state, x (d,) | (n, d), y () | (n,),
        c=None)``, ``surrogate(state, u (N, d)) -> SurrogatePosterior`` (the forest with
        ``random_state = 0``, standardized units).

    Raises:
        ImportError: scikit-learn is not installed (the message gives ``pip install
            'nbo-jax[tasks]'``).
        TypeError: an argument of the wrong type (e.g. ``n_estimators=2.5``,
            ``bootstrap=1``, ``acquisition`` not callable).
        ValueError: an argument out of range or unknown (``n_estimators=0``,
            ``max_features=1.5``, ``variance="x"``, ``raw_samples < q``, ``acq_optimizer``
            with ``steps > 0`` or with a ``raw_samples`` other than ``raw_samples``).
        Every message names the argument.
    """
    settings = ForestSettings(
        n_estimators=check_int("n_estimators", n_estimators, 1),
        min_samples_split=check_int("min_samples_split", min_samples_split, 2),
        min_samples_leaf=check_int("min_samples_leaf", min_samples_leaf, 1),
        max_features=check_positive("max_features", max_features),
        bootstrap=check_bool("bootstrap", bootstrap),
        variance=check_choice("variance", variance, VARIANCES),
    )
    if not settings.max_features <= 1.0:
        raise ValueError(f"max_features must be a fraction in (0, 1], got {max_features}")
    q = check_int("q", q, 1)
    standardize = check_bool("standardize", standardize)
    if acquisition is not None and not callable(acquisition):
        raise TypeError(f"acquisition must be callable (posterior, key) -> (N,), got {type(acquisition).__name__}")
    aopt = as_acq_optimizer(acq_optimizer, default=DEFAULT_ACQ, no_gradient="a forest is piecewise constant")
    if raw_samples is not None:
        raw_samples = check_int("raw_samples", raw_samples, 1)
        explicit = (acq_optimizer.get("raw_samples") if isinstance(acq_optimizer, dict)
                    else acq_optimizer.raw_samples if isinstance(acq_optimizer, AcqOptimizer) else None)
        if explicit is not None and explicit != raw_samples:
            raise ValueError(f"raw_samples={raw_samples} and acq_optimizer.raw_samples={explicit} disagree; "
                             "give one of them")
        aopt = as_acq_optimizer({**aopt._asdict(), "raw_samples": raw_samples})
    if aopt.raw_samples < q:
        raise ValueError(f"raw_samples ({aopt.raw_samples}) must be >= q ({q})")
    _require_sklearn("rf_bo")
    acq = log_ei() if acquisition is None else acquisition

    def targets_of(data: Dataset) -> Array:
        return data.standardized()[0] if standardize else jnp.where(data.mask, data.y, 0.0)

    def posterior(state: RandomForestState, seed: Array, u_c: Array) -> SurrogatePosterior:
        data = state.data
        y = targets_of(data)
        mean, std = forest_posterior(data.u, y, data.mask, seed, u_c.astype(data.u.dtype), settings)
        incumbent = data.incumbent(y)  # never an imputed failure
        return SurrogatePosterior(u_c, mean, std, incumbent)

    def init(key: Array, x0: Array, y0: Array, c0=None, *, bounds, capacity: int) -> RandomForestState:
        data, box = initial_data(x0, y0, c0, bounds, capacity, constrained=False)
        return RandomForestState(data, box)

    def ask(state: RandomForestState, key: Array) -> Array:
        k_seed, k_raw, k_acq = jax.random.split(key, 3)
        seed = jax.random.randint(k_seed, (), 0, MAX_SEED, dtype=jnp.int32)
        # steps = 0: the utility is called once, on the raw samples (or a finite domain's choices)
        utility = lambda u_c: acq(posterior(state, seed, u_c), k_acq)  # noqa: E731
        return state.bounds.from_unit(optimize_acqf(utility, k_raw, state.data, aopt))

    def tell(state: RandomForestState, x: Array, y: Array, c=None) -> RandomForestState:
        u, y = told_rows(state.bounds, x, y, c, constrained=False)
        return state._replace(data=state.data.add_batch(u, y))

    def surrogate(state: RandomForestState, u: Array) -> SurrogatePosterior:
        return posterior(state, jnp.zeros((), jnp.int32), u)

    return make_algorithm(init, ask, tell, name="rf-ei", surrogate=surrogate, q=q, batch_rule="fantasy")


__all__ = ["rf_bo", "RandomForestState", "ForestSettings", "forest_posterior", "fit_forest", "forest_mean_std",
           "VARIANCES", "MAX_SEED"]
