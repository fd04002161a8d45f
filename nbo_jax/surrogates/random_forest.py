"""SMAC's random forest (Hutter, Hoos & Leyton-Brown 2011, "Sequential model-based
optimization for general algorithm configuration", LION 5, Section 4) as a
:class:`~nbo_jax.base.Surrogate`: scikit-learn's ``RandomForestRegressor`` run on the host
through :func:`jax.pure_callback`.

A forest of ``B = n_estimators`` trees is fitted on the rows in the dataset's mask (unit-cube
inputs, the targets as given) with ``random_state = seed``, and its posterior at a point ``x``
is the mean and spread of the trees' predictions ``T_b(x)`` (``estimator.predict`` of each
tree)::

    mu(x)      = (1/B) sum_b T_b(x)
    sigma^2(x) = (1/B) sum_b (T_b(x) - mu(x))^2                 variance="trees" (default)
    sigma^2(x) = the above + (1/B) sum_b v_b(x)                  variance="total"

``v_b(x)`` is the variance of the training targets (bootstrap-weighted) in the leaf of tree
``b`` that ``x`` falls in (``tree_.impurity``): ``"total"`` is the law of total variance over
the trees, ``"trees"`` the spread of the trees' means, which is what SMAC3 computes (its
pyrfr forest runs with ``compute_law_of_total_variance = False``). The defaults are SMAC3's
``RandomForest`` (``min_samples_split = 3``, ``min_samples_leaf = 3``, a ``5/6`` fraction of
the features per split, bootstrap) with scikit-learn's 100 trees (SMAC3: 10).

**Host code inside JAX.** Nothing lives on the host between calls: the state holds the fitted
targets and the forest's ``random_state``, and every ``posterior`` fits the forest again from
them (the same forest for the same state) and predicts. The callback uses
``vmap_method="broadcast_all"``: under ``vmap`` over seeds it receives every seed's arrays at
once and fits one forest per seed from that seed's rows only, so a vmapped seed gives the
seed run alone. The ``random_state`` is drawn with :mod:`jax.random` (at ``init``, and again
at each ``update`` told to refit). The forest has no posterior draw (``sample`` is ``None``)
and is piecewise constant, so an acquisition on it is scored on raw samples, not climbed.
"""

from __future__ import annotations

import importlib.util
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .._checks import check_bool, check_choice, check_int, check_positive
from ..base import Surrogate, SurrogatePosterior
from ..dataset import Dataset

Array = jax.Array

VARIANCES = ("trees", "total")
MAX_SEED = 2**31 - 1
"""The forest's ``random_state`` is drawn uniformly from ``[0, MAX_SEED)``."""
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


def forest_settings(n_estimators=100, min_samples_split=3, min_samples_leaf=3, max_features=5.0 / 6.0,
                    bootstrap=True, variance="trees") -> ForestSettings:
    """Checked :class:`ForestSettings`: ``n_estimators`` int ``>= 1``, ``min_samples_split``
    int ``>= 2``, ``min_samples_leaf`` int ``>= 1``, ``max_features`` a fraction in ``(0, 1]``,
    ``bootstrap`` a bool, ``variance`` one of :data:`VARIANCES`.

    Raises:
        TypeError / ValueError: an argument of the wrong type, out of range or unknown (the
        message names it)."""
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
    return settings


def require_sklearn(who: str) -> None:
    """Raises ImportError, naming the extra to install, when scikit-learn is missing."""
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
    """The forest surrogate's state (a pytree; fixed shapes). The forest itself is fitted
    again by each ``posterior`` (host code keeps nothing).

    Attributes:
        data: the :class:`~nbo_jax.dataset.Dataset` fitted (unit-cube inputs, ``y (cap,)``
            the targets; only rows in ``data.mask`` are seen by the forest).
        seed: ``()`` int32, the forest's ``random_state``, in ``[0, MAX_SEED)``.
        key: PRNG key of the next ``random_state``.
    """

    data: Dataset
    seed: Array
    key: Array


def _draw_seed(key: Array) -> Array:
    return jax.random.randint(key, (), 0, MAX_SEED, dtype=jnp.int32)


def random_forest(settings: ForestSettings = DEFAULT_SETTINGS) -> Surrogate:
    """SMAC's random forest (module doc) as a :class:`~nbo_jax.base.Surrogate` whose state is
    a :class:`RandomForestState`. Needs scikit-learn (the ``tasks`` extra).

    ``init`` keeps the data and draws the ``random_state``; ``update`` keeps the new data and,
    when ``refit``, draws a new ``random_state`` (otherwise the forest of the same
    ``random_state`` sees the new rows); ``posterior(state, u (N, d))`` fits the forest and
    returns the trees' mean and standard deviation ``(N,)`` each (in ``u``'s state dtype;
    mean 0 and std 1 while no row is in the mask). No posterior draw (``sample=None``):
    Thompson sampling on it is refused (:func:`nbo_jax.bo.check_pairing`).

    Args:
        settings: :class:`ForestSettings` (:func:`forest_settings` checks them).

    Raises:
        ImportError: scikit-learn is not installed (the message gives ``pip install
            'nbo-jax[tasks]'``).
    """
    require_sklearn("the random-forest surrogate")

    def init(key: Array, data: Dataset, rows: Array) -> RandomForestState:
        k_seed, key = jax.random.split(key)
        return RandomForestState(data, _draw_seed(k_seed), key)

    def update(state: RandomForestState, data: Dataset, rows: Array, refit) -> RandomForestState:
        key, k_seed = jax.random.split(state.key)
        return RandomForestState(data, jnp.where(refit, _draw_seed(k_seed), state.seed), key)

    def posterior(state: RandomForestState, u: Array) -> SurrogatePosterior:
        data = state.data
        u = u.astype(data.u.dtype)
        mean, std = forest_posterior(data.u, data.y, data.mask, state.seed, u, settings)
        return SurrogatePosterior(u, mean, std, None)

    return Surrogate(init, update, posterior, name="random_forest")


__all__ = ["DEFAULT_SETTINGS", "ForestSettings", "MAX_SEED", "RandomForestState", "VARIANCES", "fit_forest",
           "forest_mean_std", "forest_posterior", "forest_settings", "random_forest", "require_sklearn"]
