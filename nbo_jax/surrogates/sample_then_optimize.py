"""Sample-then-optimize with an NTK-parameterized network (Paria, Poczos, Ravikumar, Schneider
& Suggala 2022, "Be Greedy", Algorithms 2-3; the name from Matthews, Hron, Turner &
Ghahramani 2017, "Sample-then-optimize posterior sampling for Bayesian linear models") as a
:class:`~nbo_jax.base.Surrogate`.

A posterior draw is a network trained from a fresh random initialization on the targets ``y``
(e.g. standardized), at inputs ``z = 2u - 1``::

    y'_i = y_i + nu eps_i,   eps_i ~ N(0, sigma2)                   (Alg. 2, line 1)
    theta_0 ~ NTK-init(gamma)                                        (Alg. 2, line 2)
    simple:     theta_t = argmin sum_i (y'_i - nu f(z_i; theta))^2
                                 + sigma2 nu^2 ||theta - theta_0||^2           (Alg. 2, line 3)
                f~ = nu f(.; theta_t)                                          (Alg. 2, line 4)
    posterior:  theta~_0 ~ NTK-init(gamma) with a zero last layer              (Alg. 3, 2-3)
                delta(z) = <grad_theta f(z; theta_0), theta~_0>   (a jvp)       (Alg. 3, 4)
                theta_t = argmin sum_i (y'_i - nu f(z_i; theta) - nu delta(z_i))^2
                                 + sigma2 nu^2 ||theta - theta_0||^2           (Alg. 3, line 5)
                f~ = nu (f(.; theta_t) + delta)                                 (Alg. 3, line 6)

In the linearized (infinite-width) regime ``f~`` is a draw of the GP with the empirical NTK
conditioned on the data (Paria et al. 2022, Propositions 1-2), so a draw is one function of
``x`` (pathwise: it can be climbed). The fit is full-batch Adam (or any optax optimizer) on
the masked rows (:func:`fit_smb`). The posterior at ``u`` is the mean and standard deviation
of ``samples`` draws whose keys depend on the state only (``fold_in(key, n)``, ``n`` the rows in
the mask): it costs
``samples`` fits, for plots and diagnostics. ``update`` only keeps the targets: every draw
fits from scratch. The preset (:func:`nbo_jax.algorithms.neural_greedy.neural_greedy`) holds
the settings.
"""

from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp
import optax

from ..base import Surrogate, SurrogatePosterior
from ..dataset import Dataset
from ..features import predict
from ..networks import Network, last_layer_name
from ..training import TrainConfig, train_regression

Array = jax.Array
Params = Any

VARIANTS = ("simple", "posterior")


def zero_last_layer(params: Params, depth: int) -> Params:
    """``params`` with the output layer (weights and bias) set to 0: ``theta~_0`` of Paria et
    al. 2022, Algorithm 3, line 3 (``depth`` weight layers, :func:`nbo_jax.networks.ntk_mlp`)."""
    out = dict(params)
    name = last_layer_name(depth)
    out[name] = jax.tree.map(jnp.zeros_like, params[name])
    return out


def perturbation(apply: Callable, params0: Params, params_tilde: Params, z: Array) -> Array:
    """``delta(z_i) = <grad_theta f(z_i; theta_0), theta~_0>`` for ``z (n, d)`` -> ``(n,)``
    (Paria et al. 2022, Algorithm 3, line 4), as a forward-mode jvp: no Jacobian is formed."""

    def one(zi):
        return jax.jvp(lambda th: apply(th, zi), (params0,), (params_tilde,))[1]

    return jax.vmap(one)(z)


def linearize(apply: Callable, params0: Params) -> Callable[[Params, Array], Array]:
    """The linearized network ``f_lin(theta, z) = f(z; theta_0) + <grad f(z; theta_0),
    theta - theta_0>`` for one point ``z (d,)`` -> ``()``."""

    def f_lin(params: Params, z: Array) -> Array:
        diff = jax.tree.map(lambda a, b: a - b, params, params0)
        f0, df = jax.jvp(lambda th: apply(th, z), (params0,), (diff,))
        return f0 + df

    return f_lin


def smb_loss(apply: Callable, params: Params, params0: Params, z: Array, y_pert: Array, mask: Array,
             *, nu: float, sigma2: float, delta: Optional[Array] = None) -> Array:
    """The SimpleSMB / PosteriorSMB objective (Paria et al. 2022, Alg. 2 line 3 / Alg. 3 line 5)::

        sum_{i: mask_i} (y'_i - nu f(z_i; theta) - nu delta_i)^2 + sigma2 nu^2 ||theta - theta_0||^2

    Args: ``z (cap, d)``, ``y_pert (cap,)`` = ``y'``, ``mask (cap,)`` bool, ``delta (cap,)`` or
    ``None`` (SimpleSMB). Returns a scalar.
    """
    pred = predict(apply, params, z)
    if delta is not None:
        pred = pred + delta
    data = jnp.sum(jnp.where(mask, (y_pert - nu * pred) ** 2, 0.0))
    sq = sum(jnp.sum((a - b) ** 2) for a, b in zip(jax.tree.leaves(params), jax.tree.leaves(params0)))
    return data + sigma2 * nu ** 2 * sq


def fit_smb(apply: Callable, params0: Params, z: Array, y_pert: Array, mask: Array, key: Array, *,
            nu: float, sigma2: float, steps: int, optimizer: optax.GradientTransformation,
            delta: Optional[Array] = None) -> Params:
    """Minimize :func:`smb_loss` from ``theta_0 = params0`` by ``steps`` full-batch steps of
    ``optimizer`` on the masked rows (Paria et al. 2022, Alg. 2 line 3 / Alg. 3 line 5).

    Runs :func:`nbo_jax.training.train_regression` with the whole buffer as one batch, targets
    ``y'/nu - delta`` and ``reg = sigma2``: its objective is ``smb_loss / (2 n nu^2)`` (``n`` =
    valid rows), which has the same minimizer. ``key`` only feeds the (irrelevant) shuffle.
    Returns the fitted parameters (``params0`` when no row is valid).
    """
    targets = y_pert / nu
    if delta is not None:
        targets = targets - delta
    targets = jnp.where(mask, targets, 0.0)
    cfg = TrainConfig(epochs=int(steps), batch_size=int(y_pert.shape[0]), optimizer=optimizer, reg=float(sigma2))
    return train_regression(apply, params0, params0, z, targets, mask, key, cfg)


class SampleThenOptimizeState(NamedTuple):
    """The surrogate's state (a pytree; fixed shapes).

    Attributes:
        data: the :class:`~nbo_jax.dataset.Dataset` of targets last told (unit-cube inputs;
            ``y (cap,)`` the targets); every draw is fitted to it.
        key: PRNG key of ``init``; the posterior's draws use ``fold_in(key, n)`` with ``n`` the
            rows in ``data.mask``.
    """

    data: Dataset
    key: Array


def sample_then_optimize(network: Callable[[int, Any], Network], *, variant: str, nu, sigma2: float, steps: int,
                         optimizer: optax.GradientTransformation, samples: int) -> Surrogate:
    """Sample-then-optimize (module doc) with ``network(d, dtype)`` (an NTK-parameterized
    network, :func:`nbo_jax.networks.ntk_mlp`): SimpleSMB draws (``variant="simple"``, Paria
    et al. 2022, Algorithm 2) or PosteriorSMB draws (``"posterior"``, Algorithm 3), each fitted
    by ``steps`` full-batch steps of ``optimizer`` with scale ``nu`` (a float or a scalar array)
    and target noise and regularization ``sigma2``; the posterior from ``samples`` draws.
    Arguments are checked by the preset (:func:`nbo_jax.algorithms.neural_greedy.neural_greedy`).

    Returns:
        :class:`~nbo_jax.base.Surrogate` with a :class:`SampleThenOptimizeState`:
        ``sample(state, key)`` the draw ``f~: u (N, d) -> (N,)`` fitted from ``key`` (split
        into ``theta_0``, ``theta~_0``, ``eps`` and the fit's keys); ``posterior(state, u (N,
        d))`` the mean and standard deviation ``(N,)`` of ``samples`` draws.
    """
    randomized = variant == "posterior"

    def init(key: Array, data: Dataset, rows: Array) -> SampleThenOptimizeState:
        return SampleThenOptimizeState(data, key)

    def update(state: SampleThenOptimizeState, data: Dataset, rows: Array, refit) -> SampleThenOptimizeState:
        return state._replace(data=data)

    def sample(state: SampleThenOptimizeState, key: Array) -> Callable[[Array], Array]:
        data = state.data
        net = network(data.u.shape[1], data.u.dtype)
        k_init, k_tilde, k_eps, k_train = jax.random.split(key, 4)
        y = data.y
        if sigma2 > 0:
            y = y + nu * math.sqrt(sigma2) * jax.random.normal(k_eps, y.shape, y.dtype)
        z = 2.0 * data.u - 1.0
        params0 = net.init(k_init)
        tilde, delta = None, None
        if randomized:
            tilde = zero_last_layer(net.init(k_tilde), net.depth)
            delta = perturbation(net.apply, params0, tilde, z)
        params = fit_smb(net.apply, params0, z, y, data.mask, k_train, nu=nu, sigma2=sigma2,
                         steps=steps, optimizer=optimizer, delta=delta)

        def one(zi: Array) -> Array:
            out = net.apply(params, zi)
            if randomized:
                out = out + jax.jvp(lambda th: net.apply(th, zi), (params0,), (tilde,))[1]
            return nu * out

        return lambda u: jax.vmap(one)(2.0 * u - 1.0)

    def posterior(state: SampleThenOptimizeState, u: Array) -> SurrogatePosterior:
        trained = jnp.sum(state.data.mask).astype(state.data.count.dtype)  # the rows the draws fit
        keys = jax.random.split(jax.random.fold_in(state.key, trained), samples)
        draws = jax.vmap(lambda k: sample(state, k)(u))(keys)
        return SurrogatePosterior(u, jnp.mean(draws, 0), jnp.std(draws, 0), None)

    return Surrogate(init, update, posterior, sample, pathwise=True, name="sample-then-optimize")


__all__ = ["VARIANTS", "SampleThenOptimizeState", "fit_smb", "linearize", "perturbation", "sample_then_optimize",
           "smb_loss", "zero_last_layer"]
