"""GP-EI, GP-UCB and GP-TS, and the constrained GP-cEI / GP-LCB-C: the Gaussian-process
baselines.

The model (:mod:`nbo_jax.gp_model`) is an exact zero-mean GP on unit-cube inputs
``u = (x - lower)/(upper - lower)``, fitted to standardized targets
(``Dataset.standardized()``). Per iteration (minimization form)::

    theta_t = argmax_theta log p(y | U, theta) + log p(theta)     Adam (MAP; default)
    (mu_t, sigma_t) = GP posterior of the latent f                (GPML Algorithm 2.1)
    EI : x_t = argmax  log EI(x),  EI = sigma (z Phi(z) + phi(z)),  z = (y_best - mu)/sigma
         (Jones et al. 1998; maximized in the log form of Ament et al. 2023, BoTorch's LogEI)
    UCB: x_t = argmin  mu - sqrt(beta) sigma                       (Srinivas et al. 2010)
    TS : x_t = argmin  f~,  f~ ~ GP posterior jointly over the raw samples
         (Chowdhury & Gopalan 2017)

The arg-max runs through the one acquisition optimizer :func:`nbo_jax.optimize.optimize_acqf`
(raw samples -> the ``num_restarts`` best -> projected gradient steps), configured by
``acq_optimizer``.

**Library defaults** (``preset="default"``): BoTorch's ``SingleTaskGP`` +
``fit_gpytorch_mll`` + ``optimize_acqf`` (BoTorch 0.12 and later; Hvarfner, Hellsten &
Nardi 2024): ARD RBF kernel with the outputscale fixed at 1 (BoTorch has none: targets are
standardized), lengthscale prior ``LogNormal(sqrt2 + log(d)/2, sqrt3)`` with lengthscales
``>= 2.5e-2``, noise-variance prior ``LogNormal(-4, 1)`` with noise ``>= 1e-4``, MAP fit
(log marginal likelihood + log priors) by 50 Adam steps (lr 0.05 on the log parameters),
started from the prior mode (BoTorch's initialization) and from the previous fit (warm
start), refitted every iteration; EI is
maximized as LogEI, UCB with ``beta = 2`` (``mu - sqrt(2) sigma``, BoTorch's
``UpperConfidenceBound(beta=2)``); acquisition optimizer: 512 uniform raw samples, the 10
best start 100 projected Adam steps (BoTorch: 512 Sobol raw samples, 10 restarts chosen
by Boltzmann sampling, L-BFGS-B per restart). Differences that remain: our prior mean is
0 (BoTorch learns a constant), our fit runs a fixed number of Adam steps (BoTorch: scipy
L-BFGS-B to convergence), and the acquisition climb is Adam from the top raw samples.
``fit_optimizer="lbfgs"`` (``optax.lbfgs`` with a backtracking line search, early stop)
reaches scipy's L-BFGS-B optimum but measured 3-10 s per step in float32 at t = 100-200 on
Ackley-10 (2-core CPU, loaded), against 0.12-0.54 s for the Adam default (BoTorch:
0.5-1 s); optax's zoom line search was fast but deadlocked a vmapped run (two
factorizations side by side, ``gp_model._serial_note``). TS: one joint draw over 512 raw
samples (a quarter around the 5 best observations), no gradient steps.

**Paper preset** (``preset="paper"``): squared-exponential ("SE") kernel with a learned
outputscale and maximum-likelihood hyperparameters (Phan-Trong et al. 2023, Section 7:
GPyTorch/BoTorch implementations; Phan-Trong et al. 2024, Appendix F: GPflow, ML-II),
Adam fit from 4 starts, uniform raw samples scored without gradient steps (2048; TS 512).
The papers give no acquisition optimizer, no ``beta`` and no fitting schedule; those stay
at the library values. The previous library model (Matern-5/2, ML-II, box limits) is
``kernel="matern52", prior="none", fit_optimizer="adam", learn_outputscale=True``.

**One meaning of beta.** As in Srinivas et al. (2010) and BoTorch, ``beta`` enters the
confidence bound through its square root: ``mu -/+ sqrt(beta) sigma``
(:func:`nbo_jax.acquisition.lcb`). EI's incumbent is the best *observed* standardized value
(BoTorch's ``best_f = Y.max()``), and EI/UCB use the latent (noise-free) standard
deviation. A TS draw is joint over its raw samples (Cholesky of the posterior covariance
with a jitter of ``1e-6`` / float32 ``1e-4`` times the outputscale, an eigendecomposition
when that fails).

**Cost.** The Gram matrix is ``capacity x capacity`` (masked rows are identity dummies), so
each step costs ``O(capacity^3)`` for every Cholesky (about ``n_restarts * fit_steps * 2``
of them per refit) whatever the number of observations so far. ``refit_every > 1`` skips
refits in a plain (un-vmapped) run; under ``vmap`` the ``lax.cond`` becomes a select and
both branches run, so it saves nothing there.

**Constrained baselines** (``acquisition="cei"`` or ``"lcb-c"``; the Neural-CBO
comparisons). The problem has black-box constraints ``c_k(x) <= 0`` (``k = 1..K``, feasible
when all hold); the returned algorithm is ``constrained=True`` (``init(..., c0=(n0, K))``,
``tell(state, x, y, c (K,))``, as :mod:`nbo_jax.algorithms.neural_cbo`). One independent GP
per function, ``J = K + 1`` (objective first), each with its own hyperparameters fitted by
the same machinery; the ``J`` fits and factorizations run as *one* batched (vmapped over
the functions) call, never as ``J`` independent calls (the jaxlib CPU deadlock of
``gp_model._serial_note``). Targets follow Neural-CBO: the objective standardized, each
constraint divided by its root mean square over its valid rows but *not* centred, so 0
stays the feasibility threshold (the zero prior mean then sits on the threshold). NaN/inf
values are masked per function::

    cEI   (Gardner et al. 2014, ICML, "Bayesian optimization with inequality constraints",
           eqs. 5-6):  x_t = argmax  EI(x; y_best) * prod_k Phi(-mu_k(x) / sigma_k(x)),
           y_best = best observed feasible standardized objective value; with no feasible
           observation yet the utility is the probability of feasibility alone (Section 3).
    LCB-C (ConfigOpt, Xu et al. 2023; UCB-C, Nguyen et al. 2023; minimization form):
           x_t = argmin  mu_f(x) - sqrt(beta) sigma_f(x)
                 over  {x : mu_k(x) - sqrt(beta_c) sigma_k(x) <= 0 for every k};
           no candidate passes: argmin sum_k [mu_k(x) - sqrt(beta_c) sigma_k(x)]^+.

(cEI is maximized in log form, :func:`nbo_jax.acquisition.log_cei`, as BoTorch's
``LogConstrainedExpectedImprovement``; :func:`nbo_jax.acquisition.lcb_feasible`.) **Decisions**
(papers silent): "feasible observation" = every *observed* (noisy) constraint value
``<= 0`` and the objective valid (noisy feasibility is not modelled further); the sigmas
are the latent (noise-free) posterior standard deviations; ``beta_c`` defaults to ``beta``
(= 2); a quarter of the raw samples are local around the 5 best feasible observations, or
the least-violating ones (total scaled violation ``sum_k [c_k / rms_k]^+``) while none is
feasible, as in Neural-CBO (the ranked :class:`~nbo_jax.types.Dataset` is what
``optimize_acqf`` receives). cEI: 512 raw samples, 10 restarts climb ``EI * PoF``; LCB-C is a
hard filter (discontinuous), scored on 2048 raw samples, and ``acq_optimizer.steps > 0`` is
refused for it.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from .. import gp_model as gpm
from ..acquisition import SurrogatePosterior, lcb, lcb_feasible, log_cei, log_ei
from ..optimize import AcqOptimizer, as_acq_optimizer, optimize_acqf
from ..types import BOAlgorithm, Dataset
from ._common import (
    append_observations,
    check_constraint_values,
    check_initial,
    constrained_transform,
    feasibility_ranked,
    observation_rows,
)
from ._common import observed_feasible as _observed_feasible
from ._common import check_int as _check_int

Array = jax.Array


Array = jax.Array

ACQUISITIONS = ("ei", "ucb", "ts", "cei", "lcb-c")
CONSTRAINED_ACQUISITIONS = ("cei", "lcb-c")

PRIORS = ("botorch", "none")

_EI_UCB_OPT = AcqOptimizer(raw_samples=512, num_restarts=10, steps=100, learning_rate=0.01, local_fraction=0.0)
_TS_OPT = AcqOptimizer(raw_samples=512, num_restarts=1, steps=0, local_fraction=0.25)
PRESETS = {
    "default": dict(
        kernel="rbf", prior="botorch", learn_outputscale=False, fit_optimizer="adam", fit_steps=50,
        n_restarts=2, noise_floor=1e-4, lengthscale_bounds=(2.5e-2, 1e3),
        acq_optimizer={"ei": _EI_UCB_OPT, "ucb": _EI_UCB_OPT, "ts": _TS_OPT,
                       "cei": _EI_UCB_OPT._replace(local_fraction=0.25),
                       "lcb-c": AcqOptimizer(raw_samples=2048, num_restarts=1, steps=0, local_fraction=0.25)},
    ),
    "paper": dict(
        kernel="rbf", prior="none", learn_outputscale=True, fit_optimizer="adam", fit_steps=100,
        n_restarts=4, noise_floor=1e-6, lengthscale_bounds=(1e-2, 1e1),
        acq_optimizer={a: AcqOptimizer(raw_samples=512 if a == "ts" else 2048, num_restarts=1, steps=0,
                                       local_fraction=0.0) for a in ("ei", "ucb", "ts", "cei", "lcb-c")},
    ),
}
"""Per preset: the GP model, its fit and the acquisition optimizer per acquisition (module doc)."""


class GPState(NamedTuple):
    """GP-BO state (a pytree; fixed shapes).

    Attributes:
        data: :class:`~nbo_jax.types.Dataset` (unit-cube inputs, raw observations).
        params: fitted :class:`~nbo_jax.gp_model.GPParams` (standardized-target units).
        posterior: :class:`~nbo_jax.gp_model.GPPosterior` conditioned on ``data`` with
            ``params`` (the Cholesky factor is kept, so ``ask`` does not refactorize).
        lml: ``()`` log marginal likelihood of the fit (standardized targets).
        lower, upper: ``(d,)`` box bounds. key: PRNG key for the random restarts.
    """

    data: Dataset
    params: gpm.GPParams
    posterior: gpm.GPPosterior
    lml: Array
    lower: Array
    upper: Array
    key: Array


class GPConstrainedState(NamedTuple):
    """State of the constrained GP baselines (a pytree; fixed shapes; ``J = K + 1``
    functions, objective first).

    Attributes:
        u: ``(cap, d)`` inputs in the unit cube. Y: ``(cap, J)`` observed values (0 where
            masked). M: ``(cap, J)`` bool validity, per function. count: ``()`` rows written.
        params: :class:`~nbo_jax.gp_model.GPParams` stacked over the ``J`` functions
            (leading axis ``J``; transformed-target units).
        posterior: :class:`~nbo_jax.gp_model.GPPosterior` stacked over ``J`` (each
            conditioned on its own function's valid rows).
        lml: ``(J,)`` log marginal likelihoods of the fits.
        shift, scale: ``(J,)`` target transform ``(Y - shift) / scale`` (objective:
            mean/std; constraints: 0/root mean square).
        lower, upper: ``(d,)`` box bounds. key: PRNG key for the random restarts.
    """

    u: Array
    Y: Array
    M: Array
    count: Array
    params: gpm.GPParams
    posterior: gpm.GPPosterior
    lml: Array
    shift: Array
    scale: Array
    lower: Array
    upper: Array
    key: Array


def _default_jitter(jitter: Optional[float], dtype) -> float:
    """The Cholesky jitter: ``jitter`` when given, else 0 in float64 and ``1e-6`` in float32."""
    if jitter is not None:
        return jitter
    return 0.0 if dtype == jnp.float64 else 1e-6


def _check_float(name: str, value, low: float, high: float, *, low_open=False, high_open=False) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a float, got {type(value).__name__}") from None
    ok = (v > low if low_open else v >= low) and (v < high if high_open else v <= high)
    if not ok:
        lb, hb = "(" if low_open else "[", ")" if high_open else "]"
        raise ValueError(f"{name} must be in {lb}{low}, {high}{hb}, got {value}")
    return v


class _Fitter(NamedTuple):
    """The hyperparameter fit shared by the unconstrained and constrained baselines."""

    kind: str
    pb: gpm.ParamBounds
    prior: str
    optimizer: str
    n_restarts: int
    steps: int
    learning_rate: float

    def gp_prior(self, d: int) -> Optional[gpm.GPPrior]:
        return gpm.botorch_prior(d) if self.prior == "botorch" else None

    def initial(self, d: int, dtype) -> gpm.GPParams:
        """The first start: the prior mode (BoTorch's initialization) or the neutral point."""
        gp_prior = self.gp_prior(d)
        if gp_prior is None:
            return gpm.default_params(d, self.pb, dtype)
        return gpm.prior_mode(d, gp_prior, self.pb, dtype)

    def refit(self, u: Array, y: Array, mask: Array, params: gpm.GPParams, key: Array, jitter: float) -> gpm.GPParams:
        """Fit from the warm start ``params``, then the prior mode (with a prior), then
        random starts: ``n_restarts`` in all, vmapped; the best objective wins."""
        d = u.shape[1]
        starts = [params]
        if self.prior != "none" and self.n_restarts > 1:
            starts.append(self.initial(d, u.dtype))
        starts = jax.tree.map(lambda *a: jnp.stack(a), *starts)
        n_random = self.n_restarts - starts.log_noise.shape[0]
        if n_random > 0:
            rand = gpm.random_params(key, n_random, d, self.pb, u.dtype)
            starts = jax.tree.map(lambda a, b: jnp.concatenate([a, b], axis=0), starts, rand)
        return gpm.fit(self.kind, starts, u, y, mask, steps=self.steps, learning_rate=self.learning_rate,
                       bounds=self.pb, jitter=jitter, prior=self.gp_prior(d), optimizer=self.optimizer)[0]


def gp_bo(
    kernel: Optional[str] = None,
    acquisition: str = "ei",
    *,
    preset: str = "default",
    beta: float = 2.0,
    beta_c=None,
    acq_optimizer: Optional[AcqOptimizer | dict] = None,
    prior: Optional[str] = None,
    learn_outputscale: Optional[bool] = None,
    fit_optimizer: Optional[str] = None,
    n_restarts: Optional[int] = None,
    fit_steps: Optional[int] = None,
    fit_learning_rate: float = 0.05,
    refit_every: int = 1,
    noise_floor: Optional[float] = None,
    lengthscale_bounds: Optional[tuple] = None,
    outputscale_bounds: tuple = (1e-2, 1e2),
    jitter: Optional[float] = None,
    standardize: bool = True,
) -> BOAlgorithm:
    """Build GP-EI / GP-UCB / GP-TS or the constrained GP-cEI / GP-LCB-C as a
    :class:`~nbo_jax.types.BOAlgorithm`.

    Args:
        kernel: ``"rbf"`` (squared exponential) or ``"matern52"``, ARD; ``None`` takes the
            preset's (both presets: RBF).
        acquisition: ``"ei"`` (Jones et al. 1998, minimization form ``sigma (z Phi(z) +
            phi(z))``, ``z = (y_best - mu)/sigma``, maximized as log EI, Ament et al. 2023),
            ``"ucb"`` (Srinivas et al. 2010 in minimization form: minimize ``mu - sqrt(beta)
            sigma``) or ``"ts"`` (Chowdhury & Gopalan 2017: one joint posterior draw over the
            raw samples, its argmin); constrained: ``"cei"`` (Gardner et al. 2014, ICML,
            eqs. 5-6: EI over the best observed feasible value times the probability of
            feasibility; PoF alone while nothing feasible is observed) or ``"lcb-c"``
            (ConfigOpt, Xu et al. 2023; UCB-C, Nguyen et al. 2023: minimize ``mu - sqrt(beta)
            sigma`` over the points whose constraint bounds ``mu_k - sqrt(beta_c) sigma_k``
            are all ``<= 0``, else the smallest total violation); see the module doc.
        preset: ``"default"`` (BoTorch's model, fit and optimizer) or ``"paper"``; fills every
            option left ``None`` (module doc).
        beta: confidence parameter ``>= 0`` of ``"ucb"`` and ``"lcb-c"``: the bound is
            ``mu - sqrt(beta) sigma`` (Srinivas et al. 2010; BoTorch's
            ``UpperConfidenceBound(beta)``); default 2 as BoTorch users commonly set.
        beta_c: ``"lcb-c"`` only: the constraints' ``beta`` (same meaning), a float ``>= 0``
            or one per constraint (length checked against ``K`` at ``init``); ``None`` =
            ``beta``.
        acq_optimizer: :func:`nbo_jax.optimize.acq_optimizer` settings (or a dict of its
            arguments) for :func:`nbo_jax.optimize.optimize_acqf`; ``None`` = the preset's
            for this acquisition (default preset: EI/UCB 512 raw samples, 10 restarts, 100
            steps; TS 512 raw samples, no steps; cEI as EI with a quarter local samples;
            LCB-C 2048 raw samples, no steps). ``"ts"`` and ``"lcb-c"`` need ``steps = 0``
            (a joint draw over a finite set / a hard filter has no gradient to climb).
        prior: ``"botorch"`` (MAP with :func:`nbo_jax.gp_model.botorch_prior`) or ``"none"``
            (maximum marginal likelihood).
        learn_outputscale: fit ``s_f^2`` in ``outputscale_bounds``; False fixes it at 1
            (BoTorch's kernel has no outputscale).
        fit_optimizer: ``"lbfgs"`` (``optax.lbfgs``) or ``"adam"`` (``fit_learning_rate``);
            see :func:`nbo_jax.gp_model.fit`.
        n_restarts: hyperparameter starts per refit: the previous fit (warm start), then the
            prior mode (with ``prior="botorch"``), then random starts
            (:func:`nbo_jax.gp_model.random_params`), vmapped; the best objective wins.
        fit_steps: optimizer iterations per start; fit_learning_rate: Adam's step size.
        refit_every: refit the hyperparameters when the number of observations is a multiple
            of this (the posterior is always updated); 1 = every iteration.
        noise_floor: lower limit of the noise variance (standardized units), in ``(0, 1)``
            (default preset 1e-4 as BoTorch; paper 1e-6).
        lengthscale_bounds, outputscale_bounds: ``(low, high)`` box limits (lengthscales in
            unit-cube units; default preset ``(2.5e-2, 1e3)``, paper ``(1e-2, 1e1)``).
        jitter: added to the noise variance inside every Cholesky; default 0 in float64 and
            ``1e-6`` in float32.
        standardize: fit the GP to standardized targets; if False, to the raw ``y`` (then the
            outputscale bounds are in ``y``'s units). Constrained: the constraints are
            RMS-scaled when True, raw when False.

    Returns:
        ``BOAlgorithm(init, ask, tell, name="gp-ei" | "gp-ucb" | "gp-ts", surrogate)``;
        ``init(key, x0, y0, *, bounds, capacity) -> GPState``, ``ask(state, key) -> (d,)``,
        ``tell(state, x, y) -> GPState``, ``surrogate(state, u (N, d)) ->
        SurrogatePosterior`` (latent mean/std, standardized units, incumbent = best
        standardized observation).

        For ``"cei"`` / ``"lcb-c"``: ``BOAlgorithm(..., name="gp-cei" | "gp-lcb-c",
        constrained=True)`` with ``init(key, x0 (n0, d), y0 (n0,), *, bounds, capacity,
        c0 (n0, K)) -> GPConstrainedState``, ``ask(state, key) -> (d,)``,
        ``tell(state, x (d,), y (), c (K,)) -> GPConstrainedState`` (``c <= 0`` feasible,
        NaN/inf entries masked per function), ``surrogate(state, u (N, d)) ->
        SurrogatePosterior`` with ``constraint_mean``/``constraint_std`` ``(N, K)`` (RMS-scaled
        units, 0 = threshold) and ``incumbent`` = best observed feasible standardized
        objective value (``+inf`` when none).

    Raises:
        ValueError: unknown ``kernel``, ``acquisition``, ``preset``, ``prior`` or
            ``fit_optimizer``, or a number out of range (the message names the argument);
            ``beta_c`` with an acquisition other than ``"lcb-c"``; ``acq_optimizer.steps > 0``
            with ``"ts"`` or ``"lcb-c"``. At ``init`` of a constrained algorithm: ``c0``
            missing or not ``(n0, K)``, or a ``beta_c`` sequence whose length is not ``K``.
        TypeError: a count that is not an int; ``acq_optimizer`` of the wrong type.
    """
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {sorted(PRESETS)}, got {preset!r}")
    chosen = dict(PRESETS[preset])
    for k, v in dict(kernel=kernel, prior=prior, learn_outputscale=learn_outputscale, fit_optimizer=fit_optimizer,
                     n_restarts=n_restarts, fit_steps=fit_steps, noise_floor=noise_floor,
                     lengthscale_bounds=lengthscale_bounds).items():
        if v is not None:
            chosen[k] = v
    kind = chosen["kernel"]
    if not isinstance(kind, str) or kind not in gpm.KERNELS:
        raise ValueError(f"kernel must be one of {gpm.KERNELS}, got {kind!r}")
    if not isinstance(acquisition, str) or acquisition not in ACQUISITIONS:
        raise ValueError(
            f"acquisition must be one of {ACQUISITIONS}, got {acquisition!r} (for a custom "
            "acquisition function use the surrogate: algo.surrogate(state, u))"
        )
    if chosen["prior"] not in PRIORS:
        raise ValueError(f"prior must be one of {PRIORS}, got {chosen['prior']!r}")
    if chosen["fit_optimizer"] not in gpm.FIT_OPTIMIZERS:
        raise ValueError(f"fit_optimizer must be one of {gpm.FIT_OPTIMIZERS}, got {chosen['fit_optimizer']!r}")
    if not isinstance(chosen["learn_outputscale"], bool):
        raise TypeError(f"learn_outputscale must be a bool, got {type(chosen['learn_outputscale']).__name__}")
    beta = _check_float("beta", beta, 0.0, float("inf"), high_open=True)
    n_restarts = _check_int("n_restarts", chosen["n_restarts"], 1)
    fit_steps = _check_int("fit_steps", chosen["fit_steps"], 0)
    _check_int("refit_every", refit_every, 1)
    _check_float("fit_learning_rate", fit_learning_rate, 0.0, float("inf"), low_open=True, high_open=True)
    noise_floor = _check_float("noise_floor", chosen["noise_floor"], 0.0, 1.0, low_open=True, high_open=True)
    if jitter is not None:
        jitter = _check_float("jitter", jitter, 0.0, float("inf"), high_open=True)
    try:
        pb = gpm.ParamBounds(tuple(chosen["lengthscale_bounds"]), tuple(outputscale_bounds),
                             (noise_floor, 1.0)).validate()
    except (TypeError, ValueError) as e:
        raise ValueError(f"lengthscale_bounds/outputscale_bounds: {e}") from None
    if not chosen["learn_outputscale"]:
        pb = pb._replace(outputscale=(1.0, 1.0))
    if not isinstance(standardize, bool):
        raise TypeError(f"standardize must be a bool, got {type(standardize).__name__}")
    if beta_c is not None and acquisition != "lcb-c":
        raise ValueError(f"beta_c is used by acquisition='lcb-c' only, got acquisition={acquisition!r}")
    no_gradient = {"ts": "acquisition='ts': a joint posterior draw over the raw samples is not a function "
                         "to climb",
                   "lcb-c": "acquisition='lcb-c': its utility is a hard feasibility filter, with no useful "
                            "gradient"}.get(acquisition)
    aopt = as_acq_optimizer(acq_optimizer, default=chosen["acq_optimizer"][acquisition], no_gradient=no_gradient)
    if acquisition == "lcb-c":
        try:
            bc = np.asarray(beta if beta_c is None else beta_c, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"beta_c must be a float or a sequence of floats, got {beta_c!r}") from None
        if bc.ndim > 1 or bc.size == 0 or not np.all(np.isfinite(bc) & (bc >= 0)):
            raise ValueError(f"beta_c must be a float >= 0 or a sequence of them (one per constraint), "
                             f"got {beta_c!r}")
        beta_c = bc if bc.ndim else float(bc)
    fitter = _Fitter(kind, pb, chosen["prior"], chosen["fit_optimizer"], n_restarts, fit_steps,
                     float(fit_learning_rate))

    if acquisition in CONSTRAINED_ACQUISITIONS:
        return _constrained_gp_bo(
            kind, acquisition, beta=beta, beta_c=beta_c, pb=pb, fitter=fitter, aopt=aopt,
            refit_every=refit_every, jitter=jitter, standardize=standardize)

    def jit_of(dtype) -> float:
        return _default_jitter(jitter, dtype)

    def targets(data: Dataset) -> Array:
        return data.standardized()[0] if standardize else jnp.where(data.mask, data.y, 0.0)

    def refit(data: Dataset, params: gpm.GPParams, key: Array) -> gpm.GPParams:
        return fitter.refit(data.u, targets(data), data.mask, params, key, jit_of(data.u.dtype))

    def absorb(state: GPState, x_new: Array, y_new: Array, force_refit: bool) -> GPState:
        u_new = (x_new - state.lower) / (state.upper - state.lower)
        data = state.data.add_batch(u_new, y_new)
        key, k_fit = jax.random.split(state.key)
        y = targets(data)
        if force_refit or refit_every == 1:
            params = refit(data, state.params, k_fit)
        else:
            # under vmap this cond becomes a select and both branches run; the kept branch
            # does no linear algebra, so no two factorizations run side by side
            params = jax.lax.cond(data.count % refit_every == 0,
                                  lambda: refit(data, state.params, k_fit), lambda: state.params)
        post = gpm.condition(kind, params, data.u, y, data.mask, jit_of(data.u.dtype))
        lml = gpm.posterior_lml(post, y)
        return state._replace(data=data, params=params, posterior=post, lml=lml, key=key)

    def init(key: Array, x0: Array, y0: Array, *, bounds, capacity: int) -> GPState:
        x0, y0, lower, upper = check_initial(x0, y0, bounds, capacity)
        d = x0.shape[1]
        dtype = x0.dtype
        data = Dataset.empty(capacity, d, dtype)
        params = fitter.initial(d, dtype)
        post = gpm.condition(kind, params, data.u, data.y, data.mask)
        state = GPState(data, params, post, jnp.zeros((), dtype), lower, upper, key)
        return absorb(state, x0, y0, force_refit=True)

    def incumbent(state: GPState) -> Array:
        return jnp.min(jnp.where(state.data.mask, targets(state.data), jnp.inf))

    def surrogate_posterior(state: GPState, u_c: Array) -> SurrogatePosterior:
        mean, var = gpm.predict(kind, state.posterior, u_c)
        return SurrogatePosterior(u_c, mean, jnp.sqrt(var), incumbent(state))

    point_acq = log_ei() if acquisition == "ei" else lcb(beta)  # "ts" draws jointly instead

    def utility_values(state: GPState, u_c: Array, best: Array) -> Array:
        mean, var = gpm.predict(kind, state.posterior, u_c)
        # floor the variance so the gradient of sqrt stays finite at observed points
        std = jnp.sqrt(jnp.maximum(var, jnp.finfo(var.dtype).eps * 1e-3))
        return point_acq(SurrogatePosterior(u_c, mean, std, best), None)

    def ask(state: GPState, key: Array) -> Array:
        k_c, k_a = jax.random.split(key)
        if acquisition == "ts":
            # one joint draw over the raw samples (steps = 0: utility is called once, on them)
            utility = lambda u_c: -gpm.sample_joint(kind, state.posterior, u_c, k_a)
        else:
            best = incumbent(state)
            utility = lambda u_c: utility_values(state, u_c, best)
        u = optimize_acqf(utility, k_c, state.data, aopt)
        return state.lower + u * (state.upper - state.lower)

    def tell(state: GPState, x: Array, y: Array) -> GPState:
        return absorb(state, jnp.reshape(x, (1, -1)), jnp.reshape(y, (1,)), force_refit=False)

    return BOAlgorithm(init, ask, tell, f"gp-{acquisition}", surrogate_posterior)


def _constrained_gp_bo(
    kind: str,
    acquisition: str,
    *,
    beta: float,
    beta_c,
    pb: gpm.ParamBounds,
    fitter: _Fitter,
    aopt: AcqOptimizer,
    refit_every: int,
    jitter: Optional[float],
    standardize: bool,
) -> BOAlgorithm:
    """GP-cEI / GP-LCB-C (module doc, "Constrained baselines"); arguments already validated
    by :func:`gp_bo`. One GP per function, all ``J`` handled in one vmap over the functions
    (their factorizations form one batched call; ``gp_model._serial_note``)."""
    acq = log_cei() if acquisition == "cei" else lcb_feasible(beta, beta_c)
    beta_c_len = None if acquisition != "lcb-c" or np.ndim(beta_c) == 0 else int(np.shape(beta_c)[0])

    def jit_of(dtype) -> float:
        return _default_jitter(jitter, dtype)

    def transform(Y: Array, M: Array) -> tuple[Array, Array]:
        """``(shift, scale)`` per function ``(J,)``: the objective standardized over its valid
        rows (``Dataset.standardized`` rules: std 1 when fewer than two distinct values), each
        constraint divided by its root mean square (not centred: 0 stays the threshold)."""
        J = Y.shape[1]
        if not standardize:
            return jnp.zeros((J,), Y.dtype), jnp.ones((J,), Y.dtype)
        return constrained_transform(Y, M)

    def targets(Y: Array, M: Array, shift: Array, scale: Array) -> Array:
        """Transformed targets ``(cap, J)``, 0 on masked entries."""
        return jnp.where(M, (Y - shift) / scale, 0.0)

    def refit(u: Array, T: Array, M: Array, params: gpm.GPParams, key: Array) -> gpm.GPParams:
        """Fit every function's hyperparameters (:class:`_Fitter`), vmapped over the ``J``
        functions."""
        jit = jit_of(u.dtype)
        return jax.vmap(lambda p, y, m, k: fitter.refit(u, y, m, p, k, jit))(
            params, T.T, M.T, jax.random.split(key, T.shape[1]))

    def absorb(state: GPConstrainedState, x_new: Array, Y_new: Array, force_refit: bool) -> GPConstrainedState:
        u_new = (x_new - state.lower) / (state.upper - state.lower)
        u, Y, M, count = append_observations(state.u, state.Y, state.M, state.count, u_new, Y_new)
        shift, scale = transform(Y, M)
        T = targets(Y, M, shift, scale)
        key, k_fit = jax.random.split(state.key)
        if force_refit or refit_every == 1:
            params = refit(u, T, M, state.params, k_fit)
        else:
            # under vmap this cond becomes a select and both branches run; the kept branch
            # does no linear algebra, so no two factorizations run side by side
            params = jax.lax.cond(count % refit_every == 0,
                                  lambda: refit(u, T, M, state.params, k_fit), lambda: state.params)
        jit = jit_of(u.dtype)
        post = jax.vmap(lambda p, y, m: gpm.condition(kind, p, u, y, m, jit))(params, T.T, M.T)
        lml = jax.vmap(gpm.posterior_lml)(post, T.T)
        return state._replace(u=u, Y=Y, M=M, count=count, params=params, posterior=post, lml=lml,
                              shift=shift, scale=scale, key=key)

    def init(key: Array, x0: Array, y0: Array, *, bounds, capacity: int, c0=None) -> GPConstrainedState:
        x0, y0, lower, upper = check_initial(x0, y0, bounds, capacity)
        c0 = check_constraint_values(c0, x0.shape[0], x0.dtype)
        K = c0.shape[1]
        if beta_c_len is not None and beta_c_len != K:
            raise ValueError(f"beta_c has {beta_c_len} values but the problem has K = {K} constraints")
        J, d, dtype = K + 1, x0.shape[1], x0.dtype
        params = jax.tree.map(lambda a: jnp.broadcast_to(a, (J,) + a.shape), fitter.initial(d, dtype))
        u = jnp.zeros((capacity, d), dtype)
        M = jnp.zeros((capacity, J), bool)
        # placeholder posterior (replaced by absorb; built without a factorization)
        post = gpm.GPPosterior(params, jnp.broadcast_to(u, (J, capacity, d)), M.T,
                               jnp.broadcast_to(jnp.eye(capacity, dtype=dtype), (J, capacity, capacity)),
                               jnp.zeros((J, capacity), dtype))
        state = GPConstrainedState(u, jnp.zeros((capacity, J), dtype), M, jnp.zeros((), jnp.int32), params, post,
                                   jnp.zeros((J,), dtype), jnp.zeros((J,), dtype), jnp.ones((J,), dtype),
                                   lower, upper, key)
        return absorb(state, x0, observation_rows(y0, c0), force_refit=True)

    def observed_feasible(state: GPConstrainedState) -> Array:
        return _observed_feasible(state.Y, state.M)

    def incumbent(state: GPConstrainedState) -> Array:
        t0 = (state.Y[:, 0] - state.shift[0]) / state.scale[0]
        return jnp.min(jnp.where(observed_feasible(state), t0, jnp.inf))

    def posterior_at(state: GPConstrainedState, u_c: Array, floor: bool = False) -> SurrogatePosterior:
        mean, var = jax.vmap(lambda p: gpm.predict(kind, p, u_c))(state.posterior)  # (J, N) each
        if floor:  # keeps the gradient of sqrt finite at observed points (refinement only)
            var = jnp.maximum(var, jnp.finfo(var.dtype).eps * 1e-3)
        std = jnp.sqrt(var)
        return SurrogatePosterior(u_c, mean[0], std[0], incumbent(state), mean[1:].T, std[1:].T)

    def surrogate_posterior(state: GPConstrainedState, u_c: Array) -> SurrogatePosterior:
        return posterior_at(state, u_c)

    def ask(state: GPConstrainedState, key: Array) -> Array:
        k_c, k_a = jax.random.split(key)
        # local candidates around the best feasible observations, or the least violating
        # ones while none is feasible (as Neural-CBO)
        ranked = feasibility_ranked(state.u, state.Y, state.M, state.scale, state.count)
        # steps > 0 only for cEI (refused for lcb-c at factory time); the variance floor
        # keeps the gradient of sqrt finite at observed points
        u = optimize_acqf(lambda u_c: acq(posterior_at(state, u_c, floor=aopt.steps > 0), k_a), k_c, ranked, aopt)
        return state.lower + u * (state.upper - state.lower)

    def tell(state: GPConstrainedState, x: Array, y: Array, c: Array) -> GPConstrainedState:
        return absorb(state, jnp.reshape(x, (1, -1)), observation_rows(y, c).astype(state.Y.dtype),
                      force_refit=False)

    return BOAlgorithm(init, ask, tell, f"gp-{acquisition}", surrogate_posterior, constrained=True)


__all__ = ["gp_bo", "GPState", "GPConstrainedState", "ACQUISITIONS", "CONSTRAINED_ACQUISITIONS", "PRESETS", "PRIORS"]
