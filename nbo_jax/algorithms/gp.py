"""GP-EI, GP-UCB and GP-TS, and the constrained GP-cEI / GP-LCB-C: the Gaussian-process
baselines.

The model (:mod:`nbo_jax.gp_model`) is an exact GP with a learned constant mean on unit-cube
inputs ``u = (x - lower)/(upper - lower)``, fitted to standardized targets
(``Dataset.standardized()``). Per iteration (minimization form)::

    theta_t = argmax_theta log p(y | U, theta) + log p(theta)     L-BFGS-B (MAP; default)
    (mu_t, sigma_t) = GP posterior of the latent f                (GPML Algorithm 2.1)
    EI : x_t = argmax  log EI(x),  EI = sigma (z Phi(z) + phi(z)),  z = (y_best - mu)/sigma
         (Jones et al. 1998; maximized in the log form of Ament et al. 2023, BoTorch's LogEI)
    UCB: x_t = argmin  mu - sqrt(beta) sigma                       (Srinivas et al. 2010)
    TS : x_t = argmin  f~,  f~ ~ GP posterior jointly over the raw samples
         (Chowdhury & Gopalan 2017)

The arg-max runs through the one acquisition optimizer :func:`nbo_jax.optimize.optimize_acqf`
(raw samples -> restarts -> box-constrained L-BFGS), configured by ``acq_optimizer``. As in
Srinivas et al. (2010) and BoTorch, ``beta`` enters through its square root.

**Library defaults** (``preset="default"``): BoTorch's ``SingleTaskGP`` + ``fit_gpytorch_mll``
+ ``optimize_acqf`` (BoTorch 0.12 and later; Hvarfner, Hellsten & Nardi 2024): ARD RBF
kernel, constant mean, dimension-scaled lengthscale prior, MAP fit by L-BFGS-B, LogEI, UCB
with ``beta = 2``. **Paper preset** (``preset="paper"``): SE kernel with a learned
outputscale, ML-II fit by Adam, zero mean, uniform raw samples without a climb (Phan-Trong
et al. 2023, Section 7; Phan-Trong et al. 2024, Appendix F).

**Constrained baselines** (``acquisition="cei"`` or ``"lcb-c"``; the Neural-CBO
comparisons). The problem has black-box constraints ``c_k(x) <= 0`` (``k = 1..K``, feasible
when all hold); the returned algorithm is ``constrained=True``: ``init`` needs ``c0 (n0, K)``
and ``tell`` needs ``c (K,)`` or ``(n, K)``, as :mod:`nbo_jax.algorithms.neural_cbo`. One
independent GP per function (objective first, fitted in one batched call); the objective is
standardized, each constraint divided by its root mean square (not centred)::

    cEI   (Gardner et al. 2014, ICML, "Bayesian optimization with inequality constraints",
           eqs. 5-6):  x_t = argmax  EI(x; y_best) * prod_k Phi(-mu_k(x) / sigma_k(x)),
           y_best = best observed feasible standardized objective value; with no feasible
           observation yet the utility is the probability of feasibility alone (Section 3).
    LCB-C (ConfigOpt, Xu et al. 2023; UCB-C, Nguyen et al. 2023; minimization form):
           x_t = argmin  mu_f(x) - sqrt(beta) sigma_f(x)
                 over  {x : mu_k(x) - sqrt(beta_c) sigma_k(x) <= 0 for every k};
           no candidate passes: argmin sum_k [mu_k(x) - sqrt(beta_c) sigma_k(x)]^+.

**Neural-BO at infinite width** (``kernel="ntk"``; registry ``"gp-ntk"``): the kernel is the
analytic NTK of Neural-BO's own network (``ntk_depth``, ``ntk_activation``, ``ntk_use_bias``;
defaults: Neural-BO's default network, depth 2, ReLU, biases), normalized to mean prior
variance ``s_f^2`` over the cube (:class:`nbo_jax.gp_model.NTKKernel`). It has no
lengthscales; ``s_f^2`` is learned (unless ``learn_outputscale=False``), the noise as usual.
Compared with ``neural-bo`` it shows what finite width (and training) buys.

The full settings of both presets, the TS draw, the cost, the constrained targets and the
decisions where the papers are silent are on the documentation site's page "The GP
baselines" (``docs/gp.md``).
"""

from __future__ import annotations

from typing import Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp

from .. import gp_model as gpm
from .._checks import (
    BATCH_SIZE_IS_Q,
    check_beta_count,
    check_betas,
    check_bool,
    check_choice,
    check_int,
    check_refit_every,
    check_scale,
    outcome_transform_of,
    refuse_renamed,
    resolve_preset,
)
from ..acquisition import SurrogatePosterior, lcb, lcb_feasible, log_cei, log_ei
from ..bo import make_algorithm, records_config, refit_due
from ..observations import (
    constrained_transform,
    feasibility_ranked,
    initial_data,
    observed_feasible,
    told_rows,
)
from ..optimize import AcqOptimizer, as_acq_optimizer, optimize_acqf
from ..outcome import AFFINE_OUTCOME_TRANSFORMS
from ..outcome import targets as outcome_targets
from ..types import BOAlgorithm, Bounds, Dataset

Array = jax.Array

ACQUISITIONS = ("ei", "ucb", "ts", "cei", "lcb-c")
CONSTRAINED_ACQUISITIONS = ("cei", "lcb-c")

PRIORS = ("botorch", "none")
MEANS = ("constant", "zero")

_EI_UCB_OPT = AcqOptimizer(raw_samples=512, num_restarts=10, steps=200)
_TS_OPT = AcqOptimizer(raw_samples=512, num_restarts=1, steps=0, local_fraction=0.25)
PRESETS = {
    "default": dict(
        kernel="rbf", prior="botorch", mean="constant", learn_outputscale=False, fit_optimizer="lbfgs",
        fit_steps=200, n_restarts=2, noise_floor=1e-4, lengthscale_bounds=(2.5e-2, 1e3), refit_every="auto",
        acq_optimizer={"ei": _EI_UCB_OPT, "ucb": _EI_UCB_OPT, "ts": _TS_OPT,
                       "cei": _EI_UCB_OPT,
                       "lcb-c": AcqOptimizer(raw_samples=2048, num_restarts=1, steps=0, local_fraction=0.25)},
    ),
    "paper": dict(
        kernel="rbf", prior="none", mean="zero", learn_outputscale=True, fit_optimizer="adam", fit_steps=100,
        n_restarts=4, noise_floor=1e-6, lengthscale_bounds=(1e-2, 1e1), refit_every=1,
        acq_optimizer={a: AcqOptimizer(raw_samples=512 if a == "ts" else 2048, num_restarts=1, steps=0,
                                       local_fraction=0.0, raw_sampler="uniform")
                       for a in ("ei", "ucb", "ts", "cei", "lcb-c")},
    ),
}
"""Per preset: the GP model, its fit and the acquisition optimizer per acquisition (module doc)."""


class GPState(NamedTuple):
    """GP-BO state (a pytree; fixed shapes).

    Attributes:
        data: :class:`~nbo_jax.dataset.Dataset` (unit-cube inputs, observations ``y (cap,)``;
            failed evaluations imputed with the worst value, see the Dataset).
        params: fitted :class:`~nbo_jax.gp_model.GPParams` (standardized-target units).
        posterior: :class:`~nbo_jax.gp_model.GPPosterior` conditioned on ``data`` with
            ``params`` (the Cholesky factor is kept, so ``ask`` does not refactorize).
        lml: ``()`` log marginal likelihood of the fit (standardized targets).
        bounds: the box (:class:`~nbo_jax.domains.Bounds`, ``(d,)`` arrays).
        key: PRNG key for the random restarts.
        tells: ``()`` int32, the number of ``tell`` calls (the refit schedule; it depends on
            no data, so under ``vmap`` it stays unbatched and the schedule a real branch).
        rows_told: ``()`` int32, the rows received: the initial design's and every tell's,
            failed evaluations included (the ``"auto"`` refit schedule; unbatched as ``tells``).
    """

    data: Dataset
    params: gpm.GPParams
    posterior: gpm.GPPosterior
    lml: Array
    bounds: Bounds
    key: Array
    tells: Array
    rows_told: Array


class GPConstrainedState(NamedTuple):
    """State of the constrained GP baselines (a pytree; fixed shapes; ``J = K + 1``
    functions, objective first).

    Attributes:
        data: :class:`~nbo_jax.dataset.Dataset` with ``y``/``mask`` ``(cap, J)``: column 0 the
            objective, columns ``1..K`` the constraints (``c <= 0`` feasible).
        params: :class:`~nbo_jax.gp_model.GPParams` stacked over the ``J`` functions
            (leading axis ``J``; transformed-target units).
        posterior: :class:`~nbo_jax.gp_model.GPPosterior` stacked over ``J`` (each
            conditioned on its own column's rows in ``data.mask``).
        lml: ``(J,)`` log marginal likelihoods of the fits.
        shift, scale: ``(J,)`` target transform ``(y - shift) / scale`` (objective:
            mean/std; constraints: 0/root mean square).
        bounds: the box (:class:`~nbo_jax.domains.Bounds`). key: PRNG key for the random restarts.
        tells, rows_told: ``()`` int32, the refit schedule's counters, as :class:`GPState`.
    """

    data: Dataset
    params: gpm.GPParams
    posterior: gpm.GPPosterior
    lml: Array
    shift: Array
    scale: Array
    bounds: Bounds
    key: Array
    tells: Array
    rows_told: Array


def _check_below(name: str, value: float, high: float) -> float:
    if not value < high:
        raise ValueError(f"{name} must be < {high}, got {value}")
    return value


def _check_pair(name: str, value) -> tuple:
    """``(low, high)`` with ``0 < low <= high`` finite floats.

    Raises:
        TypeError: not a pair of numbers. ValueError: out of range. Both name ``name``."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise TypeError(f"{name} must be a (low, high) pair of floats, got {value!r}")
    low, high = (check_scale(f"{name}[{i}]", v, allow_zero=False, allow_array=False) for i, v in enumerate(value))
    if low > high:
        raise ValueError(f"{name} must satisfy low <= high, got {tuple(value)!r}")
    return low, high


class _Fitter(NamedTuple):
    """The hyperparameter fit shared by the unconstrained and constrained baselines."""

    kind: gpm.Kind
    pb: gpm.ParamBounds
    prior: str
    optimizer: str
    n_restarts: int
    steps: int
    learning_rate: float
    refit_every: int | str
    jitter: Optional[float]
    learn_constant: bool
    warm_start: bool = True

    def gp_prior(self, d: int) -> Optional[gpm.GPPrior]:
        return gpm.botorch_prior(d) if self.prior == "botorch" else None

    def jitter_of(self, dtype) -> float:
        """The Cholesky jitter: ``jitter`` when given, else 0 in float64 and ``1e-6`` in float32."""
        if self.jitter is not None:
            return self.jitter
        return 0.0 if dtype == jnp.float64 else 1e-6

    def initial(self, d: int, dtype) -> gpm.GPParams:
        """The first start: the prior mode (BoTorch's initialization) or the neutral point."""
        gp_prior = self.gp_prior(d)
        if gp_prior is None:
            return gpm.default_params(d, self.pb, dtype)
        return gpm.prior_mode(d, gp_prior, self.pb, dtype)

    def refit(self, u: Array, y: Array, mask: Array, params: gpm.GPParams, key: Array) -> gpm.GPParams:
        """Fit from the warm start ``params`` (with ``warm_start``), then the prior mode (with
        a prior; without a warm start, the neutral point when there is no prior), then random
        starts: ``n_restarts`` in all, vmapped; the best objective wins."""
        d = u.shape[1]
        starts = [params] if self.warm_start else []
        if len(starts) < self.n_restarts and (self.prior != "none" or not starts):
            starts.append(self.initial(d, u.dtype))
        starts = jax.tree.map(lambda *a: jnp.stack(a), *starts)
        n_random = self.n_restarts - starts.log_noise.shape[0]
        if n_random > 0:
            rand = gpm.random_params(key, n_random, d, self.pb, u.dtype)
            starts = jax.tree.map(lambda a, b: jnp.concatenate([a, b], axis=0), starts, rand)
        return gpm.fit(self.kind, starts, u, y, mask, steps=self.steps, learning_rate=self.learning_rate,
                       bounds=self.pb, jitter=self.jitter_of(u.dtype), prior=self.gp_prior(d),
                       optimizer=self.optimizer, learn_constant=self.learn_constant)[0]

    def scheduled(self, refit: Callable[[], gpm.GPPosterior], keep: Callable[[], gpm.GPPosterior],
                  tells: Array, rows_told: Array, force: bool) -> gpm.GPPosterior:
        """``refit()`` (new hyperparameters, a new factorization) when forced or due
        (:func:`~nbo_jax.bo.refit_due`, a real branch under ``vmap``), else
        ``keep()`` (the hyperparameters kept, the factor extended by the new rows)."""
        if force or self.refit_every == 1:
            return refit()
        return jax.lax.cond(refit_due(self.refit_every, tells, rows_told), refit, keep)


@records_config
def gp_bo(
    kernel: Optional[str] = None,
    acquisition: str = "ei",
    *,
    preset: str = "default",
    ntk_depth: Optional[int] = None,
    ntk_activation: Optional[str] = None,
    ntk_use_bias: Optional[bool] = None,
    beta: float = 2.0,
    beta_c=None,
    acq_optimizer: Optional[AcqOptimizer | dict] = None,
    prior: Optional[str] = None,
    mean: Optional[str] = None,
    learn_outputscale: Optional[bool] = None,
    fit_optimizer: Optional[str] = None,
    n_restarts: Optional[int] = None,
    fit_steps: Optional[int] = None,
    fit_learning_rate: float = 0.05,
    warm_start: bool = True,
    refit_every: Optional[int | str] = None,
    noise_floor: Optional[float] = None,
    lengthscale_bounds: Optional[tuple] = None,
    outputscale_bounds: tuple = (1e-2, 1e2),
    jitter: Optional[float] = None,
    standardize: bool = True,
    outcome_transform: Optional[str] = None,
    q: int = 1,
    **kwargs,
) -> BOAlgorithm:
    """Build GP-EI / GP-UCB / GP-TS or the constrained GP-cEI / GP-LCB-C as a
    :class:`~nbo_jax.types.BOAlgorithm`.

    Args:
        kernel: ``"rbf"`` (squared exponential) or ``"matern52"``, ARD; or ``"ntk"``, the
            infinite-width NTK of Neural-BO's network (:class:`nbo_jax.gp_model.NTKKernel`;
            needs the ``ntk`` extra, neural-tangents): no lengthscales, ``s_f^2`` learned by
            default; ``None`` takes the preset's (both presets: RBF).
        ntk_depth, ntk_activation, ntk_use_bias: ``kernel="ntk"`` only: the network whose NTK
            is the kernel, as ``neural_bo``'s ``depth`` (int >= 2), ``activation`` (one of
            :data:`nbo_jax.gp_model.NTK_ACTIVATIONS`: ``"relu"``) and ``use_bias``; ``None``
            = Neural-BO's default network (2, ``"relu"``, True; its paper preset has no
            biases: ``ntk_use_bias=False``).
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
        beta: confidence parameter ``>= 0`` of ``"ucb"`` and ``"lcb-c"`` (a float or a scalar
            JAX array, so it may be vmapped): the bound is ``mu - sqrt(beta) sigma``
            (Srinivas et al. 2010; BoTorch's ``UpperConfidenceBound(beta)``); default 2 as
            BoTorch users commonly set.
        beta_c: ``"lcb-c"`` only: the constraints' ``beta`` (same meaning), a float ``>= 0``
            or one per constraint (length checked against ``K`` at ``init``); ``None`` =
            ``beta``.
        acq_optimizer: :func:`nbo_jax.optimize.acq_optimizer` settings (or a dict of its
            arguments) for :func:`nbo_jax.optimize.optimize_acqf`; ``None`` = the preset's
            for this acquisition (default preset: EI/UCB/cEI 512 raw samples, a quarter around
            the best observations, 10 restarts, L-BFGS-B of at most 200 iterations; TS 512 raw
            samples, no climb; LCB-C 2048 raw samples, no climb). ``"ts"`` and ``"lcb-c"`` need ``steps = 0``
            (a joint draw over a finite set / a hard filter has no gradient to climb).
        prior: ``"botorch"`` (MAP with :func:`nbo_jax.gp_model.botorch_prior`) or ``"none"``
            (maximum marginal likelihood).
        mean: ``"constant"`` (a learned constant prior mean, BoTorch's ``ConstantMean``;
            default preset) or ``"zero"`` (paper preset).
        learn_outputscale: fit ``s_f^2`` in ``outputscale_bounds``; False fixes it at 1
            (BoTorch's kernel has no outputscale). ``None`` takes the preset's, except with
            ``kernel="ntk"`` (whose scale is arbitrary): True.
        fit_optimizer: ``"lbfgs"`` (box-constrained L-BFGS to scipy's tolerances; default
            preset) or ``"adam"`` (``fit_learning_rate``; paper preset); see
            :func:`nbo_jax.gp_model.fit`.
        n_restarts: hyperparameter starts per refit: the previous fit (with ``warm_start``),
            then the prior mode (with ``prior="botorch"``; the neutral point without a prior
            and without a warm start), then random starts
            (:func:`nbo_jax.gp_model.random_params`), vmapped; the best objective wins.
        warm_start: start each refit from the previous fit too (default). False with
            ``n_restarts=1`` fits from the prior mode alone, as BoTorch's loop does with a
            new ``SingleTaskGP`` per iteration (about half the step time, level optima on
            three problems: docs, Measured choices).
        fit_steps: optimizer iterations per start (the most, for L-BFGS); fit_learning_rate:
            Adam's step size.
        refit_every: refit the hyperparameters (and refactorize) at ``init`` and at every
            ``refit_every``-th ``tell``; between refits each tell appends the new rows to the
            Cholesky factor (:func:`nbo_jax.gp_model.append_rows`, ``O(n cap^2)`` instead of
            ``O(cap^3)``; the same posterior up to rounding). 1 = every tell (paper preset).
            ``"auto"`` (default preset): every ``max(1, n // 50)``-th tell for a GP holding
            ``n`` rows (every tell below 100), so the fit's ``O(n^3)`` cost is paid about
            every ``n / 50`` tells. The schedule counts tells and rows received, not data,
            so under ``vmap`` over seeds the skipped refits are skipped (a real branch, not a
            select that runs both).
        noise_floor: lower limit of the noise variance (standardized units), in ``(0, 1)``
            (default preset 1e-4 as BoTorch; paper 1e-6).
        lengthscale_bounds, outputscale_bounds: ``(low, high)`` box limits (lengthscales in
            unit-cube units; default preset ``(2.5e-2, 1e3)``, paper ``(1e-2, 1e1)``). With
            ``kernel="ntk"`` the lengthscales are fixed at 1 and unused, and
            ``lengthscale_bounds`` is refused; a ``"botorch"`` prior then acts on the noise only.
        jitter: added to the noise variance inside every Cholesky; default 0 in float64 and
            ``1e-6`` in float32.
        standardize: fit the GP to standardized targets; if False, to the raw ``y`` (then the
            outputscale bounds are in ``y``'s units). Constrained: the constraints are
            RMS-scaled when True, raw when False.
        outcome_transform: what the GP is fitted to, one of
            :data:`nbo_jax.outcome.OUTCOME_TRANSFORMS`: ``"standardize"`` (BoTorch's
            ``Standardize``), ``"power"`` (Yeo-Johnson with the maximum-likelihood exponent,
            HEBO's, Cowen-Rivers et al. 2022), ``"copula"`` (normal quantiles of the ranks),
            ``"half_rank"`` (the worse half rank-warped, OSS Vizier's, Song et al. 2024) or
            ``"none"``; default ``None``: ``"standardize"``, or ``"none"`` with
            ``standardize=False``. The transforms keep the order of the observations; EI's
            ``y_best`` and the posterior are in the transformed units. The constrained
            acquisitions take ``"standardize"`` or ``"none"`` only.
        q: points per ``ask`` (BoTorch's ``q``). ``q > 1``: GP-TS takes ``q`` independent
            joint draws (Kandasamy et al. 2018); EI, UCB, cEI and LCB-C choose the points one
            after the other, each told to a copy of the state with a constant-liar value
            (Ginsbourger et al. 2010; :mod:`nbo_jax.batch`).

    Returns:
        ``BOAlgorithm(init, ask, tell, name="gp-ei" | "gp-ucb" | "gp-ts", surrogate)``;
        ``init(key, x0 (n0, d), y0 (n0,), c0=None, *, bounds, capacity) -> GPState``,
        ``ask(state, key) -> (d,)`` (``(q, d)`` when ``q > 1``), ``tell(state, x (d,) | (n, d),
        y () | (n,), c=None) -> GPState``, ``surrogate(state, u (N, d)) -> SurrogatePosterior``
        (latent mean/std, standardized units, incumbent = best standardized finite
        observation). ``c0``/``c`` are accepted and ignored.

        For ``"cei"`` / ``"lcb-c"``: ``BOAlgorithm(..., name="gp-cei" | "gp-lcb-c",
        constrained=True)`` with the same signatures, ``c0 (n0, K)`` and ``c (K,) | (n, K)``
        required (``c <= 0`` feasible; a NaN/inf value is a failed evaluation, imputed as the
        :class:`~nbo_jax.dataset.Dataset` does), the state a :class:`GPConstrainedState`, and
        ``surrogate(state, u (N, d)) -> SurrogatePosterior`` with
        ``constraint_mean``/``constraint_std`` ``(N, K)`` (RMS-scaled units, 0 = threshold)
        and ``incumbent`` = best observed feasible standardized objective value (``+inf``
        when none).

    Raises:
        ValueError: unknown ``kernel``, ``acquisition``, ``preset``, ``prior``,
            ``fit_optimizer`` or ``ntk_activation``, or a number out of range or NaN (the
            message names the argument); ``beta_c`` with an acquisition other than ``"lcb-c"``;
            ``ntk_*`` with a kernel other than ``"ntk"``; ``lengthscale_bounds`` with ``"ntk"``;
            ``acq_optimizer.steps > 0`` with ``"ts"`` or ``"lcb-c"``; an unknown
            ``outcome_transform``, one other than ``"none"`` with ``standardize=False``, or one
            other than ``"standardize"``/``"none"`` with ``"cei"``/``"lcb-c"``. At ``init`` of a
            constrained algorithm: ``c0`` missing or not ``(n0, K)``, or a ``beta_c`` sequence
            whose length is not ``K``; at ``tell``: ``c`` missing.
        TypeError: an argument of the wrong type (a string or bool for a number, a float for
            a count, ...; the message names it); ``batch_size=`` (the points per ask are
            ``q``).
        ImportError: ``kernel="ntk"`` without neural-tangents (names the extra to install).
    """
    refuse_renamed(kwargs, BATCH_SIZE_IS_Q, "gp_bo")
    chosen = resolve_preset(
        PRESETS, preset, kernel=kernel, prior=prior, mean=mean, learn_outputscale=learn_outputscale, fit_optimizer=fit_optimizer,
        n_restarts=n_restarts, fit_steps=fit_steps, noise_floor=noise_floor, lengthscale_bounds=lengthscale_bounds,
        refit_every=refit_every)
    kind = _kernel_kind(check_choice("kernel", chosen["kernel"], gpm.KERNELS), ntk_depth, ntk_activation,
                        ntk_use_bias, lengthscale_bounds)
    if isinstance(kind, gpm.NTKKernel) and learn_outputscale is None:
        chosen["learn_outputscale"] = True  # the NTK's scale is arbitrary
    try:
        check_choice("acquisition", acquisition, ACQUISITIONS)
    except ValueError as e:
        raise ValueError(f"{e} (for a custom acquisition function use the surrogate: algo.surrogate(state, u))") \
            from None
    check_choice("prior", chosen["prior"], PRIORS)
    check_choice("mean", chosen["mean"], MEANS)
    check_choice("fit_optimizer", chosen["fit_optimizer"], gpm.FIT_OPTIMIZERS)
    learn_os = check_bool("learn_outputscale", chosen["learn_outputscale"])
    beta = check_scale("beta", beta)
    n_restarts = check_int("n_restarts", chosen["n_restarts"], 1)
    warm_start = check_bool("warm_start", warm_start)
    fit_steps = check_int("fit_steps", chosen["fit_steps"], 0)
    refit_every = check_refit_every(chosen["refit_every"])
    fit_learning_rate = check_scale("fit_learning_rate", fit_learning_rate, allow_zero=False, allow_array=False)
    noise_floor = _check_below("noise_floor", check_scale("noise_floor", chosen["noise_floor"], allow_zero=False,
                                                          allow_array=False), 1.0)
    if jitter is not None:
        jitter = check_scale("jitter", jitter, allow_array=False)
    pb = gpm.ParamBounds(_check_pair("lengthscale_bounds", chosen["lengthscale_bounds"]),
                         _check_pair("outputscale_bounds", outputscale_bounds), (noise_floor, 1.0)).validate()
    if not learn_os:
        pb = pb._replace(outputscale=(1.0, 1.0))
    if isinstance(kind, gpm.NTKKernel):
        pb = pb._replace(lengthscale=(1.0, 1.0))  # not a parameter of the NTK: fixed, unused
    transform = outcome_transform_of(outcome_transform, standardize)
    standardize = transform == "standardize"
    if acquisition in CONSTRAINED_ACQUISITIONS and transform not in AFFINE_OUTCOME_TRANSFORMS:
        raise ValueError(f"outcome_transform={transform!r} is for the unconstrained acquisitions; "
                         f"acquisition={acquisition!r} scales the objective and its constraints affinely: "
                         f"use {' or '.join(map(repr, AFFINE_OUTCOME_TRANSFORMS))}")
    if beta_c is not None:
        if acquisition != "lcb-c":
            raise ValueError(f"beta_c is used by acquisition='lcb-c' only, got acquisition={acquisition!r}")
        beta_c = check_betas("beta_c", beta_c)
    no_gradient = {"ts": "acquisition='ts': a joint posterior draw over the raw samples is not a function "
                         "to climb",
                   "lcb-c": "acquisition='lcb-c': its utility is a hard feasibility filter, with no useful "
                            "gradient"}.get(acquisition)
    aopt = as_acq_optimizer(acq_optimizer, default=chosen["acq_optimizer"][acquisition], no_gradient=no_gradient,
                            mean_rank=acquisition not in CONSTRAINED_ACQUISITIONS)
    fitter = _Fitter(kind, pb, chosen["prior"], chosen["fit_optimizer"], n_restarts, fit_steps,
                     fit_learning_rate, refit_every, jitter, chosen["mean"] == "constant", warm_start)

    if acquisition in CONSTRAINED_ACQUISITIONS:
        init, ask, tell, surrogate = _constrained_gp_bo(acquisition, beta=beta, beta_c=beta_c, fitter=fitter,
                                                        aopt=aopt, standardize=standardize)
    else:
        init, ask, tell, surrogate = _plain_gp_bo(acquisition, beta=beta, fitter=fitter, aopt=aopt,
                                                  transform=transform)
    return make_algorithm(init, ask, tell, name=f"gp-{acquisition}", surrogate=surrogate, q=q,
                          batch_rule="independent" if acquisition == "ts" else "fantasy",
                          constrained=acquisition in CONSTRAINED_ACQUISITIONS)


def _kernel_kind(kernel: str, ntk_depth, ntk_activation, ntk_use_bias, lengthscale_bounds) -> gpm.Kind:
    """The ``kind`` of :mod:`nbo_jax.gp_model` for :func:`gp_bo`'s kernel arguments:
    ``kernel`` itself, or an :class:`~nbo_jax.gp_model.NTKKernel` for ``"ntk"``.

    Raises:
        ValueError: an ``ntk_*`` argument with another kernel, ``lengthscale_bounds`` with
            ``"ntk"``, an unknown ``ntk_activation`` or ``ntk_depth < 2``. TypeError:
            ``ntk_depth`` not an int, ``ntk_use_bias`` not a bool. ImportError: ``"ntk"``
            without neural-tangents. Every message names the argument."""
    given = {"ntk_depth": ntk_depth, "ntk_activation": ntk_activation, "ntk_use_bias": ntk_use_bias}
    if kernel != "ntk":
        for name, value in given.items():
            if value is not None:
                raise ValueError(f"{name} is used by kernel='ntk' only, got kernel={kernel!r}")
        return kernel
    if lengthscale_bounds is not None:
        raise ValueError(f"lengthscale_bounds: kernel='ntk' has no lengthscales, got {lengthscale_bounds!r}")
    from .. import _compat  # noqa: F401 - fails here, naming the 'ntk' extra, without neural-tangents

    depth = check_int("ntk_depth", 2 if ntk_depth is None else ntk_depth, 2)
    activation = "relu" if ntk_activation is None else ntk_activation
    if not isinstance(activation, str) or activation not in gpm.NTK_ACTIVATIONS:
        raise ValueError(f"ntk_activation must be one of {gpm.NTK_ACTIVATIONS} (the NTK of the network's other "
                         f"activations has no closed form in neural-tangents), got {activation!r}")
    use_bias = check_bool("ntk_use_bias", True if ntk_use_bias is None else ntk_use_bias)
    return gpm.NTKKernel(depth, activation, use_bias)


def _plain_gp_bo(acquisition: str, *, beta, fitter: _Fitter, aopt: AcqOptimizer, transform: str):
    """``(init, ask, tell, surrogate)`` of GP-EI / GP-UCB / GP-TS; arguments already validated
    by :func:`gp_bo`."""
    kind = fitter.kind

    def targets(data: Dataset) -> Array:
        return outcome_targets(data, transform)

    def update(state: GPState, data: Dataset, rows: Optional[Array]) -> GPState:
        """``state`` holding ``data``: hyperparameters refitted and the posterior refactorized
        when the schedule says so (always when ``rows`` is None, at ``init``), else the
        factor extended by the new ``rows (n,)``."""
        key, k_fit = jax.random.split(state.key)
        y = targets(data)
        jit = fitter.jitter_of(data.u.dtype)

        def refit():
            params = fitter.refit(data.u, y, data.mask, state.params, k_fit)
            return gpm.condition(kind, params, data.u, y, data.mask, jit)

        post = fitter.scheduled(refit, lambda: gpm.append_rows(kind, state.posterior, data.u, y, data.mask, rows, jit),
                                state.tells, state.rows_told, rows is None)
        lml = gpm.posterior_lml(post, y)
        return state._replace(data=data, params=post.params, posterior=post, lml=lml, key=key)

    def init(key: Array, x0: Array, y0: Array, c0=None, *, bounds, capacity: int) -> GPState:
        data, box = initial_data(x0, y0, c0, bounds, capacity, constrained=False)
        d, dtype = data.u.shape[1], data.u.dtype
        params = fitter.initial(d, dtype)
        # placeholder posterior of the right shapes (no data), replaced by update
        post = gpm.condition(kind, params, data.u, data.y, jnp.zeros_like(data.mask))
        state = GPState(data, params, post, jnp.zeros((), dtype), box, key, jnp.zeros((), jnp.int32),
                        jnp.asarray(x0.shape[0], jnp.int32))
        return update(state, data, None)

    def incumbent(state: GPState) -> Array:
        """The best finite observation (standardized), never an imputed failure."""
        return state.data.incumbent(targets(state.data))

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
        data = state.data
        if aopt.local_rank == "mean":  # local raw samples around the smallest posterior means
            data = data._replace(y=jnp.where(data.observed(), gpm.predict_mean(kind, state.posterior, data.u), data.y))
        return state.bounds.from_unit(optimize_acqf(utility, k_c, data, aopt))

    def tell(state: GPState, x: Array, y: Array, c=None) -> GPState:
        u, y = told_rows(state.bounds, x, y, c, constrained=False)
        rows = state.data.count + jnp.arange(u.shape[0])
        state = state._replace(tells=state.tells + 1, rows_told=state.rows_told + u.shape[0])
        return update(state, state.data.add_batch(u, y), rows)

    return init, ask, tell, surrogate_posterior


def _constrained_gp_bo(acquisition: str, *, beta, beta_c, fitter: _Fitter, aopt: AcqOptimizer,
                       standardize: bool):
    """``(init, ask, tell, surrogate)`` of GP-cEI / GP-LCB-C (module doc, "Constrained
    baselines"); arguments already validated by :func:`gp_bo`. One GP per function, all
    ``J`` handled in one vmap over the functions (their factorizations form one batched
    call; ``gp_model._serial_note``)."""
    kind = fitter.kind
    acq = log_cei() if acquisition == "cei" else lcb_feasible(beta, beta_c)

    def transform(data: Dataset) -> tuple[Array, Array]:
        """``(shift, scale)`` per function ``(J,)``: the objective standardized over its rows
        in ``mask`` (``Dataset.standardized`` rules: std 1 when fewer than two distinct
        values), each constraint divided by its root mean square (not centred: 0 stays the
        threshold)."""
        J = data.y.shape[1]
        if not standardize:
            return jnp.zeros((J,), data.y.dtype), jnp.ones((J,), data.y.dtype)
        return constrained_transform(data.y, data.mask)

    def targets(data: Dataset, shift: Array, scale: Array) -> Array:
        """Transformed targets ``(cap, J)``, 0 outside ``mask``."""
        return jnp.where(data.mask, (data.y - shift) / scale, 0.0)

    def refit(u: Array, T: Array, M: Array, params: gpm.GPParams, key: Array) -> gpm.GPParams:
        """Fit every function's hyperparameters (:class:`_Fitter`), vmapped over the ``J``
        functions."""
        return jax.vmap(lambda p, y, m, k: fitter.refit(u, y, m, p, k))(
            params, T.T, M.T, jax.random.split(key, T.shape[1]))

    def update(state: GPConstrainedState, data: Dataset, rows: Optional[Array]) -> GPConstrainedState:
        """``state`` holding ``data``: transform, hyperparameters and factors (refitted on
        schedule, else extended by the new ``rows``; as the unconstrained ``update``)."""
        shift, scale = transform(data)
        T = targets(data, shift, scale)
        u, M = data.u, data.mask
        key, k_fit = jax.random.split(state.key)
        jit = fitter.jitter_of(u.dtype)

        def refitted():
            params = refit(u, T, M, state.params, k_fit)
            return jax.vmap(lambda p, y, m: gpm.condition(kind, p, u, y, m, jit))(params, T.T, M.T)

        def appended():
            return jax.vmap(lambda p, y, m: gpm.append_rows(kind, p, u, y, m, rows, jit))(state.posterior, T.T, M.T)

        post = fitter.scheduled(refitted, appended, state.tells, state.rows_told, rows is None)
        lml = jax.vmap(gpm.posterior_lml)(post, T.T)
        return state._replace(data=data, params=post.params, posterior=post, lml=lml, shift=shift, scale=scale,
                              key=key)

    def init(key: Array, x0: Array, y0: Array, c0=None, *, bounds, capacity: int) -> GPConstrainedState:
        data, box = initial_data(x0, y0, c0, bounds, capacity, constrained=True)
        (cap, J), d, dtype = data.y.shape, data.u.shape[1], data.u.dtype
        if beta_c is not None:
            check_beta_count("beta_c", beta_c, J - 1)
        params = jax.tree.map(lambda a: jnp.broadcast_to(a, (J,) + a.shape), fitter.initial(d, dtype))
        # placeholder posterior of the right shapes (replaced by update; no factorization)
        post = gpm.GPPosterior(params, jnp.broadcast_to(data.u, (J, cap, d)), jnp.zeros((J, cap), bool),
                               jnp.broadcast_to(jnp.eye(cap, dtype=dtype), (J, cap, cap)),
                               jnp.zeros((J, cap), dtype))
        state = GPConstrainedState(data, params, post, jnp.zeros((J,), dtype), jnp.zeros((J,), dtype),
                                   jnp.ones((J,), dtype), box, key, jnp.zeros((), jnp.int32),
                                   jnp.asarray(x0.shape[0], jnp.int32))
        return update(state, data, None)

    def incumbent(state: GPConstrainedState) -> Array:
        """The best observed feasible objective value (transformed), ``+inf`` when none."""
        t0 = (state.data.y[:, 0] - state.shift[0]) / state.scale[0]
        return jnp.min(jnp.where(observed_feasible(state.data), t0, jnp.inf))

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
        ranked = feasibility_ranked(state.data, state.scale)
        # steps > 0 only for cEI (refused for lcb-c at factory time); the variance floor
        # keeps the gradient of sqrt finite at observed points
        u = optimize_acqf(lambda u_c: acq(posterior_at(state, u_c, floor=aopt.steps > 0), k_a), k_c, ranked, aopt)
        return state.bounds.from_unit(u)

    def tell(state: GPConstrainedState, x: Array, y: Array, c=None) -> GPConstrainedState:
        u, Y = told_rows(state.bounds, x, y, c, constrained=True)
        rows = state.data.count + jnp.arange(u.shape[0])
        state = state._replace(tells=state.tells + 1, rows_told=state.rows_told + u.shape[0])
        return update(state, state.data.add_batch(u, Y), rows)

    return init, ask, tell, surrogate_posterior


__all__ = ["gp_bo", "GPState", "GPConstrainedState", "ACQUISITIONS", "CONSTRAINED_ACQUISITIONS", "PRESETS", "PRIORS"]
