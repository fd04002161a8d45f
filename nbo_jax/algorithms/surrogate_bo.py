"""BO with any surrogate of :mod:`nbo_jax.surrogates` by name and any acquisition function:
the preset of :func:`nbo_jax.bo.bo_algorithm` for the models that have no factory of their own
(the deep ensemble, VBLL). A new surrogate is one module in ``surrogates/`` defining
``DEFAULTS`` and ``from_options(**options) -> Surrogate`` (:func:`surrogate_names` finds it)
and one line in :mod:`nbo_jax.registry`."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Callable, Optional

from .. import surrogates
from .._checks import check_choice, check_scale
from ..acquisition import lcb, log_ei, thompson_sampling
from ..bo import bo_algorithm, records_config
from ..optimize import AcqOptimizer, as_acq_optimizer
from ..types import BOAlgorithm

ACQUISITIONS = ("ei", "ucb", "ts")


def surrogate_names() -> tuple[str, ...]:
    """The surrogates :func:`surrogate_bo` builds by name: the modules of
    :mod:`nbo_jax.surrogates` that define ``DEFAULTS`` and ``from_options``."""
    names = []
    for info in pkgutil.iter_modules(surrogates.__path__):
        module = importlib.import_module(f"{surrogates.__name__}.{info.name}")
        if hasattr(module, "from_options") and hasattr(module, "DEFAULTS"):
            names.append(info.name)
    return tuple(sorted(names))


@records_config
def surrogate_bo(
    surrogate: str = "ensemble",
    acquisition: str | Callable = "ts",
    *,
    beta: float = 2.0,
    acq_optimizer: Optional[AcqOptimizer | dict] = None,
    outcome_transform: str = "standardize",
    q: int = 1,
    **options,
) -> BOAlgorithm:
    """BO with the surrogate named ``surrogate`` and ``acquisition`` (module doc).

    Args:
        surrogate: a name of :func:`surrogate_names`: ``"ensemble"`` (a deep ensemble,
            :mod:`nbo_jax.surrogates.ensemble`) or ``"vbll"`` (variational Bayesian last
            layers, :mod:`nbo_jax.surrogates.vbll`).
        acquisition: ``"ts"`` (Thompson sampling on the surrogate's pathwise posterior draw,
            :func:`nbo_jax.acquisition.thompson_sampling`), ``"ei"`` (log EI, Ament et al.
            2023), ``"ucb"`` (``mean - sqrt(beta) std`` minimized, Srinivas et al. 2010) or a
            function ``acq(SurrogatePosterior, key) -> (N,)`` (:mod:`nbo_jax.acquisition`).
        beta: ``"ucb"``'s confidence parameter (float ``>= 0`` or a scalar array).
        acq_optimizer: :func:`nbo_jax.optimize.acq_optimizer` settings or a dict of some of
            them; default BoTorch's (512 raw samples, a quarter around the best observations,
            10 restarts, L-BFGS-B of at most 200 iterations); every acquisition here is
            climbed (the draws are pathwise).
        outcome_transform: what the surrogate fits (:data:`nbo_jax.outcome.OUTCOME_TRANSFORMS`).
        q: points per ask; Thompson sampling asks ``q`` independent draws, the others the
            constant liar (:mod:`nbo_jax.transforms.batch`).
        **options: the surrogate's options, over its module's ``DEFAULTS``:
            ``"ensemble"``: ``members`` (int >= 2), ``width``, ``depth`` (weight layers, >= 2),
            ``activation``, ``optimizer`` (``"adam"``/``"sgd"``), ``learning_rate``,
            ``epochs``, ``minibatch_size``, ``lam`` (the pull toward each member's
            initialization is ``lam * width``), ``warm_start``, ``input_embedding``;
            ``"vbll"``: ``width``, ``depth`` (the last layer included), ``activation``,
            ``prior_scale``, ``learning_rate``, ``steps`` (Adam steps per update),
            ``init_steps``, ``noise_floor``, ``input_embedding``.

    Returns:
        :class:`~nbo_jax.base.BOAlgorithm` named ``"<surrogate>-<acquisition>"`` (``"<surrogate>"``
        for a function), state :class:`~nbo_jax.bo.BOState`.

    Raises:
        ValueError: unknown ``surrogate``, ``acquisition`` or ``outcome_transform``, an option
            out of range (the message names it). TypeError: an option the surrogate does not
            have, or of the wrong type.
    """
    check_choice("surrogate", surrogate, surrogate_names())
    module = importlib.import_module(f"{surrogates.__name__}.{surrogate}")
    build, defaults = module.from_options, module.DEFAULTS
    unknown = sorted(set(options) - set(defaults))
    if unknown:
        raise TypeError(f"surrogate={surrogate!r} has no option(s) {unknown}; its options: {sorted(defaults)}")
    model = build(**{**defaults, **options})
    if callable(acquisition):
        acq, name = acquisition, surrogate
    else:
        check_choice("acquisition", acquisition, ACQUISITIONS)
        acq = {"ei": log_ei(), "ucb": lcb(check_scale("beta", beta)), "ts": thompson_sampling()}[acquisition]
        name = f"{surrogate}-{acquisition}"
    aopt = as_acq_optimizer(acq_optimizer, mean_rank=True)
    return bo_algorithm(model, acq, acq_optimizer=aopt, name=name, q=q, refit_every=1,
                        outcome_transform=outcome_transform)


__all__ = ["ACQUISITIONS", "surrogate_bo", "surrogate_names"]
