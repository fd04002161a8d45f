"""NeuralUCB and NeuralTS as BO baselines (Zhou, Li & Gu 2020, "Neural contextual bandits
with UCB-based exploration", Algorithm 1; Zhang, Zhou, Li & Gu 2021, "Neural Thompson
sampling", Algorithm 1).

Both are Neural-BO's machinery with the bandit papers' choices: gradient features at the
*current* weights ``g(x; theta_t) / sqrt(m)`` (``feature_params="current"``), the exact
``U`` by default (``posterior="auto"``: full or dual) and the papers' diagonal ``U`` as
``posterior="diagonal"`` (the exact matrix did better on Branin: "Benchmarks",
``docs/benchmarks.md``). And

- NeuralUCB: the optimistic rule ``h + nu sigma`` of the maximization papers, written for
  minimization as the lower confidence bound ``argmin_x h(x) - nu sigma(x)``;
- NeuralTS: Thompson sampling ``f~(x) ~ N(h(x), nu^2 sigma^2(x))`` per candidate.

Both keep the papers' fixed exploration scale (``scales="fixed"``: ``lam`` and ``nu`` as given,
not fitted) unless ``scales="fit"`` is passed, and the papers' inputs (``input_embedding="linear"``,
``z = 2u - 1``; Neural-BO's default below ``d = 20`` is the quarter circle) unless another
``input_embedding`` is passed, and the papers' standardized targets (``outcome_transform=
"standardize"``; Neural-BO's default half-ranks them on a space with an integer or
categorical parameter) unless another ``outcome_transform`` is passed. NeuralTS draws independently per raw sample
(as the paper), so its acquisition optimizer takes no gradient steps; NeuralUCB's bound is
differentiable and is climbed by :func:`nbo_jax.optimize.optimize_acqf`. ``nu`` multiplies
``sigma`` directly (the papers' ``gamma`` / ``nu``), i.e. the bound is ``lcb(nu ** 2)`` in GP-UCB's ``beta``.

Batches (``q > 1``, :mod:`nbo_jax.transforms.batch`): NeuralUCB's bound is deterministic given the
state, so its ``q`` points come from the constant liar (``batch_rule="fantasy"``); NeuralTS
asks ``q`` independent Thompson draws (``batch_rule="independent"``; Kandasamy et al. 2018).
All other arguments are those of :func:`nbo_jax.algorithms.neural_bo.neural_bo`.
"""

from __future__ import annotations

from typing import Optional

from .._checks import BATCH_SIZE_RENAMED, check_scale, refuse_renamed, resolve_preset
from ..acquisition import lcb, thompson
from ..transforms.batch import batched
from ..bo import records_config
from ..optimize import as_acq_optimizer
from ..types import BOAlgorithm
from .neural_bo import PRESETS, neural_bo

_FIXED = ("acquisition", "feature_params", "thompson", "categorical_acquisition")


def _neural_bo_as(who: str, nu, posterior: str, acquisition, q: int, kwargs: dict,
                  no_gradient: Optional[str] = None) -> BOAlgorithm:
    """:func:`neural_bo` with the bandit papers' settings (``kwargs`` checked for the fixed
    and renamed arguments first). ``no_gradient``: why the acquisition cannot be climbed;
    then ``acq_optimizer`` is laid over the preset's with ``steps = 0`` and ``steps > 0`` is
    refused (:func:`nbo_jax.optimize.as_acq_optimizer`)."""
    refuse_renamed({k: kwargs[k] for k in BATCH_SIZE_RENAMED if k in kwargs}, BATCH_SIZE_RENAMED, who)
    for fixed in _FIXED:
        if fixed in kwargs:
            raise ValueError(f"{fixed} is fixed by {who}; use neural_bo(...) to change it")
    kwargs = dict(kwargs)
    kwargs.setdefault("scales", "fixed")
    kwargs.setdefault("input_embedding", "linear")  # the bandit papers' inputs (Neural-BO's "auto" unmeasured here)
    if kwargs.get("standardize", True):  # the papers' standardized targets (Neural-BO's half-rank unmeasured here)
        kwargs.setdefault("outcome_transform", "standardize")
    if no_gradient is not None:
        preset = resolve_preset(PRESETS, kwargs.get("preset", "default"))
        kwargs["acq_optimizer"] = as_acq_optimizer(kwargs.get("acq_optimizer"), default=preset["acq_optimizer"],
                                                   no_gradient=no_gradient)
    return neural_bo(posterior=posterior, feature_params="current", acquisition=acquisition(check_scale("nu", nu)),
                     q=q, **kwargs)


@records_config
def neural_ucb(nu: float = 1.0, *, posterior: str = "auto", q: int = 1, **kwargs) -> BOAlgorithm:
    """NeuralUCB in minimization form (Zhou et al. 2020, Algorithm 1): ``x_t = argmin_x
    h(x; theta_{t-1}) - nu sigma_t(x)`` over the candidate set; ``sigma_t`` from features at
    the current weights and the exact ``U`` (``posterior="diagonal"`` for the papers'
    approximation).

    Args:
        nu: exploration scale ``>= 0`` (float or scalar array). posterior: as
            :func:`neural_bo`. q: points per ask (constant-liar batches,
            ``batch_rule="fantasy"``). kwargs: any other argument of :func:`neural_bo`.

    Returns:
        ``BOAlgorithm`` named ``"neural-ucb"`` with :func:`neural_bo`'s signatures.

    Raises:
        TypeError: ``nu`` not a number, ``batch_size=`` (renamed ``minibatch_size``), or
        any type error of :func:`neural_bo`.
        ValueError: ``nu`` negative or NaN, ``acquisition``, ``feature_params``, ``thompson`` or
        ``categorical_acquisition`` passed (they are fixed here), or any error of :func:`neural_bo`.
    """
    algo = _neural_bo_as("neural_ucb", nu, posterior, lambda v: lcb(v ** 2), q, kwargs)
    return algo._replace(name="neural-ucb")


@records_config
def neural_ts(nu: float = 1.0, *, posterior: str = "auto", q: int = 1, **kwargs) -> BOAlgorithm:
    """NeuralTS (Zhang et al. 2021, Algorithm 1): Thompson sampling with ``N(h(x), nu^2
    sigma^2(x))`` per candidate, features at the current weights, exact ``U`` by default.

    Args:
        nu: the exploration scale, as :func:`neural_ucb`'s.
        posterior: as :func:`neural_ucb`'s.
        q: points per ask, ``q`` independent Thompson draws (``batch_rule="independent"``).
        **kwargs: as :func:`neural_ucb`'s.

    Returns:
        ``BOAlgorithm`` named ``"neural-ts"`` with :func:`neural_bo`'s signatures.

    Raises:
        TypeError / ValueError: as :func:`neural_ucb`; ValueError also for
        ``acq_optimizer`` with ``steps > 0`` (the draws are independent per point: nothing
        to climb; a dict ``acq_optimizer`` is laid over the preset's with ``steps = 0``).
    """
    # built with q = 1 (neural_bo takes a user acquisition for a deterministic rule), then
    # batched as the Thompson sampler it is
    algo = _neural_bo_as("neural_ts", nu, posterior, thompson, 1, kwargs,
                         no_gradient="NeuralTS draws independently per point; there is no gradient to climb")
    return batched(algo._replace(name="neural-ts", batch_rule="independent"), q)
