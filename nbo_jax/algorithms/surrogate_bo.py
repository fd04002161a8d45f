"""BO with any surrogate of :mod:`nbo_jax.surrogates` by name and any acquisition function:
the preset of :func:`nbo_jax.bo.bo_algorithm` for the models that have no factory of their own
(the deep ensemble, VBLL). A new surrogate is one module in ``surrogates/``, one entry of
:data:`SURROGATES` below and one registry line."""

from __future__ import annotations

from typing import Callable, Optional

from .._checks import check_bool, check_choice, check_int, check_scale
from ..acquisition import lcb, log_ei, thompson_sampling
from ..bo import bo_algorithm, records_config
from ..networks import ACTIVATIONS, INPUT_EMBEDDINGS, mlp
from ..optimize import AcqOptimizer, as_acq_optimizer
from ..surrogates.ensemble import ensemble
from ..surrogates.vbll import vbll
from ..types import BOAlgorithm
from ._common import network_builder, train_config

ACQUISITIONS = ("ei", "ucb", "ts")


def _ensemble(members, width, depth, activation, optimizer, learning_rate, epochs, minibatch_size, lam, warm_start,
              input_embedding):
    network = network_builder(width, depth, activation, build=mlp, use_bias=True)
    reg = check_scale("lam", lam, allow_array=False) * float(width)
    return ensemble(network, members=check_int("members", members, 2),
                    train=train_config(optimizer, learning_rate, epochs, minibatch_size, reg),
                    embedding=check_choice("input_embedding", input_embedding, INPUT_EMBEDDINGS + ("auto",)),
                    warm_start=check_bool("warm_start", warm_start))


def _vbll(width, depth, activation, prior_scale, learning_rate, steps, init_steps, noise_floor, input_embedding):
    return vbll(width=check_int("width", width, 1), depth=check_int("depth", depth, 2),
                activation=ACTIVATIONS[check_choice("activation", activation, tuple(ACTIVATIONS))],
                prior_scale=check_scale("prior_scale", prior_scale, allow_zero=False, allow_array=False),
                learning_rate=check_scale("learning_rate", learning_rate, allow_zero=False, allow_array=False),
                steps=check_int("steps", steps, 0), init_steps=check_int("init_steps", init_steps, 0),
                noise_floor=check_scale("noise_floor", noise_floor, allow_zero=False, allow_array=False),
                embedding=check_choice("input_embedding", input_embedding, INPUT_EMBEDDINGS + ("auto",)))


SURROGATES: dict[str, tuple[Callable, dict]] = {
    # members, Neural-BO's network and training (Adam 1e-3, 50 epochs of mini-batches of 50,
    # lam = 0.01 toward each member's own initialization), input embedding "auto"
    "ensemble": (_ensemble, dict(members=5, width=64, depth=3, activation="relu", optimizer="adam",
                                 learning_rate=1e-3, epochs=50, minibatch_size=50, lam=0.01, warm_start=True,
                                 input_embedding="auto")),
    "vbll": (_vbll, dict(width=64, depth=3, activation="tanh", prior_scale=1.0, learning_rate=1e-2, steps=100,
                         init_steps=500, noise_floor=1e-4, input_embedding="auto")),
}
"""Surrogate name -> (its checked factory, its default options)."""


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
        surrogate: ``"ensemble"`` (a deep ensemble, :mod:`nbo_jax.surrogates.ensemble`) or
            ``"vbll"`` (variational Bayesian last layers, :mod:`nbo_jax.surrogates.vbll`).
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
        **options: the surrogate's options, over the defaults of :data:`SURROGATES`:
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
    check_choice("surrogate", surrogate, tuple(SURROGATES))
    build, defaults = SURROGATES[surrogate]
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


__all__ = ["ACQUISITIONS", "SURROGATES", "surrogate_bo"]
