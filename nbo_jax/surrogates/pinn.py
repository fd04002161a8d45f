"""The physics-informed network with its NTK-PINN posterior (PINN-BO; Phan-Trong 2024, PhD
thesis, Ch. 5, eq. 5.1, Lemmas 5.3.4 and 5.3.6) as a :class:`~nbo_jax.base.Surrogate`::

    theta_t = argmin_theta sum_i (y_i - nu h(x_i))^2 + sum_j (g(z_j) - N[f_hat](z_j))^2 / s^2   (eq. 5.1)
    f_hat(x) = offset + scale nu h(x)          (the network in the objective's units, box coordinates)
    mean(x)  = nu h(x; theta_t),   std(x) = sigma_t(x)   (NTK-PINN posterior at theta_0, Lemma 5.3.4)

``h`` sees ``z = 2u - 1``; the PDE ``N[f](x) = g(x)`` is stated in box coordinates ``x`` and
imposed on ``f_hat`` (:func:`nbo_jax.pinn.box_surrogate`), so an operator is applied exactly
as written for ``f``, linear or not. ``offset``/``scale`` map the targets the surrogate is
fitted to back to the objective's units (the outcome transform's: the mean and standard
deviation of the observations when they are standardized); ``s`` is the residual scale. The
network is trained by the given optax optimizer from the previous weights (or a fresh draw),
``epochs`` steps each time ``retrain_every`` more observations arrived, each step on all data
and a batch of the ``N_r`` residual points. With features (``features=True``) the state
keeps the NTK-PINN kernel blocks at ``theta_0`` (:mod:`nbo_jax.pinn`) for the posterior
variance and the interaction information ``I(f; Y_t; U_r)``. The preset
(:func:`nbo_jax.algorithms.pinn_bo.pinn_bo`) holds the settings and their sources.
"""

from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np
import optax

from .. import pde
from .. import pinn as pinn_lib
from ..base import Surrogate, SurrogatePosterior
from ..dataset import Dataset
from ..domains import Bounds
from ..features import gradient_features, predict
from ..networks import Network
from ..posterior import solve_lower

Array = jax.Array

RESIDUAL_POINTS = ("fixed", "resample")


class PINNInfoState(NamedTuple):
    """NTK-PINN features at ``theta_0`` for the posterior variance and the interaction
    information (a pytree).

    Attributes:
        params0: ``theta_0``.
        z: ``(r / k, d)`` the residual points of the kernel (box coordinates).
        phi: ``(cap, p)`` rows ``grad_theta h(x_i; theta_0)`` (zero rows not yet observed).
        a: ``(r, p)`` ``L^{-1} Omega`` with ``L L^T = K_rr + lambda2 I``.
        k_uu: ``(cap, cap)`` ``Phi Phi^T``; w: ``(r, cap)`` ``L^{-1} K_ru``.
    """

    params0: Any
    z: Array
    phi: Array
    a: Array
    k_uu: Array
    w: Array


class PINNState(NamedTuple):
    """The physics-informed network's state (a pytree; fixed shapes).

    Attributes:
        params: current weights ``theta_t``.
        residual_x: ``(N_r, d)`` residual (collocation) points in box coordinates.
        bounds: the box the PDE is stated in (:class:`~nbo_jax.domains.Bounds`, ``(d,)`` arrays).
        key: PRNG key of ``init`` (residual draws, shuffles).
        n_initial: ``()`` int32, rows of the initial fit (the retraining schedule counts from it).
        count: ``()`` int32, rows of the dataset at the last fit.
        losses: ``(2,)`` mean squared data error and mean squared residual of the last
            training step (target units; the residual is 0 without a PDE).
        residual_scale: ``()`` the residual is divided by this (``0``: by the targets' scale).
        mask: ``(cap,)`` bool, rows fitted (``Dataset.mask`` at the last fit).
        observed: ``(cap,)`` bool, finite observations among them (``Dataset.observed()``).
        info: :class:`PINNInfoState`, or ``None`` without features.
    """

    params: Any
    residual_x: Array
    bounds: Bounds
    key: Array
    n_initial: Array
    count: Array
    losses: Array
    residual_scale: Array
    mask: Array
    observed: Array
    info: Optional[PINNInfoState]


def check_pde(operator: Optional[Callable], source: Any) -> None:
    """Refuse an ``operator`` that is not callable and a ``source`` that is neither a function
    nor a finite number.

    Raises:
        TypeError: ``operator`` not callable, ``source`` neither callable nor a number/array.
        ValueError: a constant ``source`` that is not finite."""
    if operator is not None and not callable(operator):
        raise TypeError(f"operator must be a callable u -> N[u] (see nbo_jax.pde), got {type(operator).__name__}")
    if callable(source):
        return
    if isinstance(source, (str, bool, np.bool_)) or not isinstance(source, (int, float, np.number, np.ndarray,
                                                                            jax.Array)):
        raise TypeError(f"source must be a function g(x) or a number, got {type(source).__name__}")
    if not isinstance(source, jax.core.Tracer) and not np.all(np.isfinite(np.asarray(source, np.float64))):
        raise ValueError(f"source must be finite, got {source!r}")


def pinn(network: Callable[[int, Any], Network], operator: Optional[Callable] = None, source: Any = 0.0, *,
         optimizer: optax.GradientTransformation, nu=1.0, n_residual: int, residual_batch: int, epochs: int,
         init_epochs: int, retrain_every: int = 1, residual_points: str = "fixed", warm_start: bool = True,
         residual_weight: Any = 1.0, residual_scale: Any = "auto", features: bool = True, info: bool = True,
         info_points: int = 256, lambda1=1.0, lambda2=1.0) -> Surrogate:
    """The physics-informed network (module doc) of ``network(d, dtype)`` (an NTK-parameterized
    MLP, :func:`nbo_jax.networks.ntk_mlp`) constrained by ``N[f] = g`` (``operator``, ``source``;
    ``operator=None``: the same network on the data alone). Arguments are checked by the
    preset (:func:`nbo_jax.algorithms.pinn_bo.pinn_bo`, which documents each); ``operator`` and
    ``source`` by :func:`check_pde`.

    ``init(key, data, rows, *, bounds=None, units=None)`` and ``update(state, data, rows,
    refit, *, units=None)`` take two optional keywords beside the seam's: ``bounds``, the box
    the PDE is stated in (default the unit cube), and ``units = (offset, scale)``, ``()`` each,
    the objective being ``offset + scale * data.y`` (default ``(0, 1)``: the targets are the
    objective). ``update`` retrains (``epochs`` steps, after resampling the residual points
    with ``residual_points="resample"``) when ``refit`` is true and the observations since
    ``init`` reached a new multiple of ``retrain_every``; the features of the new rows are
    appended in any case.

    Returns:
        :class:`~nbo_jax.base.Surrogate` named ``"pinn"`` with a :class:`PINNState`: posterior
        mean ``nu h(x; theta_t)`` and std the NTK-PINN ``sigma_t(x)`` (0 without
        ``features``) at ``u (N, d)``; ``info``: ``data_loss``, ``residual_loss`` and, with
        ``info`` and an operator, ``interaction_information`` and ``information_gain`` (nats,
        over the finite observations).

    Raises:
        TypeError / ValueError: as :func:`check_pde`; ``init`` raises ValueError naming
        ``operator/source`` when they cannot be applied to a function of ``d`` inputs or
        their shapes disagree.
    """
    check_pde(operator, source)
    use_pde = operator is not None
    use_info = info and use_pde
    features = features or use_info

    def residual_rows(d: int, dtype) -> int:
        """``k``: entries of the residual per point; checks operator and source."""
        net = network(d, dtype)
        x = jax.ShapeDtypeStruct((d,), dtype)
        try:
            params = jax.eval_shape(net.init, jax.random.key(0))
            shape = jax.eval_shape(lambda p, xi: pde.residual(operator, 0.0)(
                pinn_lib.box_surrogate(net.apply, p, jnp.zeros(d, dtype), jnp.ones(d, dtype)))(xi), params, x).shape
            g_shape = jax.eval_shape(lambda xi: pde.constant(source)(xi), x).shape
        except Exception as err:  # noqa: BLE001 (re-raised with the argument named)
            raise ValueError(f"operator/source: cannot evaluate N[u](x) - g(x) for a function of d={d} inputs "
                             f"({type(err).__name__}: {err})") from err
        if g_shape not in ((), shape):
            raise ValueError(f"operator/source: N[u](x) has shape {shape} but g(x) has shape {g_shape}")
        return int(math.prod(shape))

    def uniform_box(key: Array, n: int, box: Bounds) -> Array:
        return box.from_unit(jax.random.uniform(key, (n, box.lower.shape[0]), box.lower.dtype))

    def train(state: PINNState, data: Dataset, params, key: Array, steps, units) -> tuple[Any, Array]:
        """``steps`` optimizer steps on eq. 5.1 from ``params``; returns ``(params, losses)``."""
        net = network(data.u.shape[1], data.u.dtype)
        offset, scale = units
        y = jnp.where(data.mask, data.y, 0.0)
        z = 2.0 * data.u - 1.0

        def loss_fn(p, x_res):
            data_sq = (y - nu * predict(net.apply, p, z)) ** 2
            n = jnp.maximum(jnp.sum(data.mask), 1)
            data_mse = jnp.sum(jnp.where(data.mask, data_sq, 0.0)) / n
            if not use_pde:
                losses = jnp.stack([data_mse, 0.0 * data_mse])
                return pinn_lib.pinn_loss(data_sq, data.mask, None, residual_weight), losses
            f_hat = pinn_lib.box_surrogate(net.apply, p, state.bounds.lower, state.bounds.upper, offset=offset,
                                           scale=scale * nu)
            s = jnp.where(state.residual_scale > 0, state.residual_scale, scale)
            res_sq = (pinn_lib.residual_values(operator, source, f_hat, x_res) / s) ** 2
            loss = pinn_lib.pinn_loss(data_sq, data.mask, res_sq, residual_weight)
            return loss, jnp.stack([data_mse, jnp.mean(res_sq)])

        grad_fn = jax.grad(loss_fn, has_aux=True)

        def step(i, carry):
            p, s, _ = carry
            if residual_batch < n_residual:
                idx = jax.random.randint(jax.random.fold_in(key, i), (residual_batch,), 0, n_residual)
                x_res = state.residual_x[idx]
            else:
                x_res = state.residual_x
            g, losses = grad_fn(p, x_res)
            upd, s = optimizer.update(g, s, p)
            return optax.apply_updates(p, upd), s, losses

        p, _, losses = jax.lax.fori_loop(0, steps, step, (params, optimizer.init(params), state.losses))
        return p, losses

    def row_features(data: Dataset, params0, rows: Array) -> tuple[Array, Array]:
        """``(index (n,), grad_theta h(u_j; theta_0) (n, p))`` of the dataset rows ``rows``;
        a row not written (``>= data.count``) gets index ``capacity`` (dropped by scatters)."""
        u = jnp.take(data.u, rows, axis=0, mode="clip")
        index = jnp.where(rows < data.count, rows, data.capacity)
        return index, gradient_features(network(data.u.shape[1], data.u.dtype).apply, params0, 2.0 * u - 1.0)

    def init(key: Array, data: Dataset, rows: Array, *, bounds: Optional[Bounds] = None, units=None) -> PINNState:
        d, dtype = data.u.shape[1], data.u.dtype
        box = Bounds(jnp.zeros(d, dtype), jnp.ones(d, dtype)) if bounds is None else bounds
        k_rows = residual_rows(d, dtype) if use_pde else 1
        net = network(d, dtype)
        k_net, k_res, k_train, k_info, k_state = jax.random.split(key, 5)
        params0 = net.init(k_net)
        residual_x = uniform_box(k_res, n_residual, box)
        if isinstance(residual_scale, str) and residual_scale == "auto" and use_pde:
            g = jax.vmap(pde.constant(source))(residual_x)
            r_scale = jnp.sqrt(jnp.mean(jnp.square(g))).astype(dtype)
        else:
            r_scale = jnp.asarray(0.0 if isinstance(residual_scale, str) else residual_scale, dtype)
        count = data.count.astype(jnp.int32)
        state = PINNState(params0, residual_x, box, k_state, count, count, jnp.zeros((2,), dtype), r_scale,
                          data.mask, data.observed(), None)
        params, losses = train(state, data, params0, k_train, init_epochs, (0.0, 1.0) if units is None else units)
        state = state._replace(params=params, losses=losses)
        if not features:
            return state
        n_pts = max(1, info_points // k_rows)
        z_info = uniform_box(k_info, n_pts, box)
        index, phi0 = row_features(data, params0, rows)
        if use_pde:
            omega = pinn_lib.residual_features(net.apply, params0, operator, box.lower, box.upper, z_info)
        else:
            omega = jnp.zeros((1, phi0.shape[1]), dtype)
        a = solve_lower(pinn_lib.residual_factor(omega @ omega.T, lambda2), omega)
        phi = jnp.zeros((data.capacity, phi0.shape[1]), dtype).at[index].set(phi0, mode="drop")
        return state._replace(info=PINNInfoState(params0, z_info, phi, a, phi @ phi.T, a @ phi.T))

    def update(state: PINNState, data: Dataset, rows: Array, refit, *, units=None) -> PINNState:
        count = data.count
        due = (count - state.n_initial) // retrain_every > (state.count - state.n_initial) // retrain_every
        retrain = jnp.logical_and(refit, due)
        k_res, k_train = jax.random.split(jax.random.fold_in(state.key, count))
        if residual_points == "resample":
            fresh = uniform_box(k_res, n_residual, state.bounds)
            state = state._replace(residual_x=jnp.where(retrain, fresh, state.residual_x))
        start = state.params
        if not warm_start:
            fresh = network(data.u.shape[1], data.u.dtype).init(jax.random.fold_in(k_train, 1))
            start = jax.tree.map(lambda a, b: jnp.where(retrain, a, b), fresh, state.params)
        params, losses = train(state, data, start, k_train, jnp.where(retrain, epochs, 0),
                               (0.0, 1.0) if units is None else units)
        state = state._replace(params=params, losses=losses, count=count.astype(state.count.dtype), mask=data.mask,
                               observed=data.observed())
        if state.info is None:
            return state
        inf = state.info
        index, g = row_features(data, inf.params0, rows)
        phi = inf.phi.at[index].set(g, mode="drop")
        k_new = phi @ g.T  # (cap, n): the new rows' kernel with every row, themselves included
        k_uu = inf.k_uu.at[:, index].set(k_new, mode="drop").at[index, :].set(k_new.T, mode="drop")
        return state._replace(info=inf._replace(phi=phi, k_uu=k_uu, w=inf.w.at[:, index].set(inf.a @ g.T, mode="drop")))

    def posterior(state: PINNState, u: Array) -> SurrogatePosterior:
        apply = network(u.shape[-1], u.dtype).apply
        mean = nu * predict(apply, state.params, 2.0 * u - 1.0)
        if state.info is None:
            return SurrogatePosterior(u, mean, jnp.zeros_like(mean), None)
        inf = state.info
        phi_c = gradient_features(apply, inf.params0, 2.0 * u - 1.0)
        var = pinn_lib.posterior_variance(phi_c, inf.a, inf.phi, inf.w, inf.k_uu, lambda1, state.mask)
        return SurrogatePosterior(u, mean, jnp.sqrt(var), None)

    def info_fn(state: PINNState) -> dict:
        out = {"data_loss": state.losses[0], "residual_loss": state.losses[1]}
        if use_info:
            # information about f from the finite observations (a failed evaluation measures nothing)
            gain, conditional = pinn_lib.information_terms(state.info.k_uu, state.info.w, lambda1, state.observed)
            out.update(interaction_information=gain - conditional, information_gain=gain)
        return out

    return Surrogate(init, update, posterior, info=info_fn, name="pinn")


__all__ = ["PINNInfoState", "PINNState", "RESIDUAL_POINTS", "check_pde", "pinn"]
