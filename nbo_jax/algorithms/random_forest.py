"""Random-forest BO: SMAC's surrogate (Hutter, Hoos & Leyton-Brown 2011, "Sequential
model-based optimization for general algorithm configuration", LION 5, Section 4) with
expected improvement; the "RF" baseline of Phan-Trong (2024), PhD thesis, Table 3.2. The preset
of :func:`nbo_jax.bo.bo_algorithm` over the forest surrogate
(:func:`nbo_jax.surrogates.random_forest.random_forest`)::

    init : data <- the initial rows; forest's random_state drawn from the key
    ask  : (mu, sigma)(u) = mean and spread over the trees of a scikit-learn forest fitted on the
           valid rows (targets standardized over them; a failed evaluation counts at its
           imputed worst value, Dataset)
           u* = argmax over the raw samples of acq(mu, sigma)      (default: log EI)
    tell : data <- data + rows; a new random_state

The acquisition (default EI in minimization form over the best standardized finite
observation, ranked by its logarithm, :func:`nbo_jax.acquisition.log_expected_improvement`:
the same argmax wherever EI is representable, and no ties where it underflows to 0; any
function of the posterior's mean and std) is scored on the raw samples of the shared
acquisition optimizer (:func:`nbo_jax.optimize.optimize_acqf` with ``steps = 0``: scrambled
Sobol points plus points around the best observations, inside the search region an ``ask`` is given (a trust region's); on
a finite domain the unevaluated choices) and the argmax is taken: there is no gradient climb,
a forest is piecewise constant. SMAC's own optimizer (a local search from the best
configurations interleaved with random ones) is not reproduced. The forest has no posterior
draw, so Thompson sampling is refused.
"""

from __future__ import annotations

from typing import Callable, Optional

from .._checks import check_bool, check_int
from ..acquisition import log_ei
from ..bo import bo_algorithm, records_config
from ..optimize import AcqOptimizer, as_acq_optimizer
from ..surrogates.random_forest import (MAX_SEED, VARIANCES, ForestSettings, RandomForestState, fit_forest,
                                        forest_mean_std, forest_posterior, forest_settings, random_forest,
                                        require_sklearn)
from ..types import BOAlgorithm

DEFAULT_ACQ = AcqOptimizer(raw_samples=2048, steps=0)
"""The raw samples: 2048 scrambled Sobol points, a quarter around the 5 best observations; no climb."""


def _raw_samples(raw_samples: Optional[int], acq_optimizer, q: int) -> AcqOptimizer:
    """The checked acquisition optimizer of :func:`rf_bo` (``steps = 0``), with
    ``raw_samples`` laid over it when given.

    Raises:
        ValueError: ``raw_samples`` disagrees with an ``acq_optimizer`` that sets it, or is
        below ``q``; as :func:`nbo_jax.optimize.as_acq_optimizer`."""
    aopt = as_acq_optimizer(acq_optimizer, default=DEFAULT_ACQ, no_gradient="a forest is piecewise constant",
                            mean_rank=True)
    if raw_samples is not None:
        raw_samples = check_int("raw_samples", raw_samples, 1)
        explicit = (acq_optimizer.get("raw_samples") if isinstance(acq_optimizer, dict)
                    else acq_optimizer.raw_samples if isinstance(acq_optimizer, AcqOptimizer) else None)
        if explicit is not None and explicit != raw_samples:
            raise ValueError(f"raw_samples={raw_samples} and acq_optimizer.raw_samples={explicit} disagree; "
                             "give one of them")
        aopt = as_acq_optimizer({**aopt._asdict(), "raw_samples": raw_samples}, mean_rank=True)
    if aopt.raw_samples < q:
        raise ValueError(f"raw_samples ({aopt.raw_samples}) must be >= q ({q})")
    return aopt


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
    acquisition: Optional[Callable] = None,
    standardize: bool = True,
    q: int = 1,
) -> BOAlgorithm:
    """Random-forest BO with expected improvement (SMAC's surrogate, Hutter, Hoos &
    Leyton-Brown 2011; the RF baseline of Phan-Trong 2024, Table 3.2) as a
    :class:`~nbo_jax.types.BOAlgorithm` (module doc). Needs scikit-learn (the ``tasks``
    extra).

    Args:
        n_estimators: trees in the forest (``>= 1``).
        min_samples_split: scikit-learn's (an int ``>= 2``; SMAC3's default 3).
        min_samples_leaf: scikit-learn's (an int ``>= 1``; SMAC3's default 3).
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
            arguments laid over :data:`DEFAULT_ACQ`: 2048 scrambled Sobol points, a quarter of
            them around the 5 best observations); ``steps`` must be 0 (no climb).
        acquisition: ``acq(SurrogatePosterior, key) -> (N,)`` utility to maximize, any
            function of the posterior's mean and std (:mod:`nbo_jax.acquisition`;
            standardized units); ``None``: EI ranked by log EI (module doc). One that reads a
            posterior draw (Thompson sampling) is refused: the forest has none.
        standardize: fit on targets standardized over the valid rows (mean 0, std 1); a
            forest's ranking of points does not depend on it, the posterior's units do.
        q: points per ask (``ask`` returns ``(q, d)`` when ``q > 1``); batches are the
            constant liar (``batch_rule = "fantasy"``, :mod:`nbo_jax.transforms.batch`): each chosen
            point is told to a copy of the state at the mean observed value and the forest
            refitted before the next is chosen (``q`` fits per ask).

    Returns:
        :class:`~nbo_jax.types.BOAlgorithm` named ``"rf-ei"`` (``"rf"`` for an acquisition
        function), built by :func:`nbo_jax.bo.bo_algorithm`:
        ``init(key, x0 (n0, d), y0 (n0,), c0=None, *, bounds, capacity) -> BOState``
        (``c0`` and ``c`` are accepted and ignored; ``state.model`` a
        :class:`~nbo_jax.surrogates.random_forest.RandomForestState`), ``ask(state, key) ->
        (d,) or (q, d)`` in the box, float dtype of the state, ``tell(state, x (d,) | (n, d),
        y () | (n,), c=None)``, ``surrogate(state, u (N, d)) -> SurrogatePosterior`` (the
        forest of the state's ``random_state``, standardized units).

    Raises:
        ImportError: scikit-learn is not installed (the message gives ``pip install
            'nbo-jax[tasks]'``).
        TypeError: an argument of the wrong type (e.g. ``n_estimators=2.5``,
            ``bootstrap=1``, ``acquisition`` not callable).
        ValueError: an argument out of range or unknown (``n_estimators=0``,
            ``max_features=1.5``, ``variance="x"``, ``raw_samples < q``, ``acq_optimizer``
            with ``steps > 0`` or with a ``raw_samples`` other than ``raw_samples``); an
            acquisition that reads a posterior draw or the constraints.
        Every message names the argument.
    """
    settings = forest_settings(n_estimators, min_samples_split, min_samples_leaf, max_features, bootstrap, variance)
    q = check_int("q", q, 1)
    standardize = check_bool("standardize", standardize)
    if acquisition is not None and not callable(acquisition):
        raise TypeError(f"acquisition must be callable (posterior, key) -> (N,), got {type(acquisition).__name__}")
    aopt = _raw_samples(raw_samples, acq_optimizer, q)
    require_sklearn("rf_bo")
    acq, name = (log_ei(), "rf-ei") if acquisition is None else (acquisition, "rf")
    # refit_every=1: a new random_state at every tell (a new forest per ask)
    return bo_algorithm(random_forest(settings), acq, acq_optimizer=aopt, name=name, q=q, refit_every=1,
                        outcome_transform="standardize" if standardize else "none")


__all__ = ["rf_bo", "RandomForestState", "ForestSettings", "forest_posterior", "fit_forest", "forest_mean_std",
           "VARIANCES", "MAX_SEED"]
