"""GP-EI, GP-UCB and GP-TS, the constrained GP-cEI / GP-LCB-C, and GP-EHVI / GP-ParEGO /
GP-EHVI-C for several objectives: the Gaussian-process baselines.

The model (:mod:`nbo_jax.gp_model`) is an exact GP with a learned constant mean on unit-cube
inputs ``u = (x - lower)/(upper - lower)``, fitted to standardized targets
(``Dataset.standardized()``; by default on a search space with an integer or categorical
parameter, half-rank warped after: OSS Vizier's warping of the worse half,
:func:`nbo_jax.outcome.resolved`). Per iteration
(minimization form)::

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
    EHVI-C (m >= 2 objectives; Daulton, Balandat & Bakshy 2020, NeurIPS, qEHVI with outcome
           constraints; Optuna's GPSampler's LogCEHVI): x_t = argmax  log EHVI(x; observed feasible front)
           + sum_k log Phi(-mu_k(x) / sigma_k(x)); while nothing feasible is observed the front
           is empty and EHVI is the expected hypervolume below the reference point.

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

from functools import partial
from typing import Callable, Optional

import jax
import numpy as np

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
from ..acquisition import ehvi, lcb, lcb_feasible, log_cei, log_ei, parego, thompson_sampling
from ..bo import bo_algorithm, reads_constraints, reads_objectives, records_config, requires
from ..optimize import AcqOptimizer, as_acq_optimizer
from ..outcome import AFFINE_OUTCOME_TRANSFORMS
from ..surrogates.gp import GPFit, gp_columns
from ..surrogates.gp import gp as gp_surrogate
from ..types import BOAlgorithm

Array = jax.Array

ACQUISITIONS = ("ei", "ucb", "ts", "cei", "lcb-c", "ehvi", "parego", "ehvi-c")
CONSTRAINED_ACQUISITIONS = ("cei", "lcb-c", "ehvi-c")
MULTI_OBJECTIVE_ACQUISITIONS = ("ehvi", "parego", "ehvi-c")

PRIORS = ("botorch", "none")
MEANS = ("constant", "zero")

# local_integer_std=1: on a space with integers the local raw samples move an integer by about one step
# (docs/benchmarks.md, "Local raw samples on integers"); spaces without integers are unchanged
_EI_UCB_OPT = AcqOptimizer(raw_samples=512, num_restarts=10, steps=200, local_integer_std=1.0)
_TS_OPT = AcqOptimizer(raw_samples=512, num_restarts=1, steps=0, local_fraction=0.25, local_integer_std=1.0)
PRESETS = {
    "default": dict(
        kernel="rbf", prior="botorch", mean="constant", learn_outputscale=False, fit_optimizer="lbfgs",
        fit_steps=200, n_restarts=2, noise_floor=1e-4, lengthscale_bounds=(2.5e-2, 1e3), refit_every="auto",
        outcome_transform="discrete_half_rank",
        acq_optimizer={"ei": _EI_UCB_OPT, "ucb": _EI_UCB_OPT, "ts": _TS_OPT,
                       "cei": _EI_UCB_OPT, "ehvi": _EI_UCB_OPT, "parego": _EI_UCB_OPT, "ehvi-c": _EI_UCB_OPT,
                       "lcb-c": AcqOptimizer(raw_samples=2048, num_restarts=1, steps=0, local_fraction=0.25,
                                                local_integer_std=1.0)},
    ),
    "paper": dict(
        kernel="rbf", prior="none", mean="zero", learn_outputscale=True, fit_optimizer="adam", fit_steps=100,
        n_restarts=4, noise_floor=1e-6, lengthscale_bounds=(1e-2, 1e1), refit_every=1, outcome_transform="standardize",
        acq_optimizer={a: AcqOptimizer(raw_samples=512 if a == "ts" else 2048, num_restarts=1, steps=0,
                                       local_fraction=0.0, raw_sampler="uniform")
                       for a in ACQUISITIONS},
    ),
}
"""Per preset: the GP model, its fit and the acquisition optimizer per acquisition (module doc)."""


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


@records_config
def gp_bo(
    kernel: Optional[str] = None,
    acquisition: str | Callable = "ei",
    *,
    preset: str = "default",
    ntk_depth: Optional[int] = None,
    ntk_activation: Optional[str] = None,
    ntk_use_bias: Optional[bool] = None,
    beta: float = 2.0,
    beta_c=None,
    reference_point=None,
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
    deterministic: bool = False,
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
        ntk_depth: ``kernel="ntk"`` only: depth of the network whose NTK is the kernel, as
            ``neural_bo``'s ``depth`` (int >= 2); ``None`` = Neural-BO's default, 2.
        ntk_activation: ``kernel="ntk"`` only: its activation, one of
            :data:`nbo_jax.gp_model.NTK_ACTIVATIONS` (``"relu"``); ``None`` = ``"relu"``.
        ntk_use_bias: ``kernel="ntk"`` only: whether it has biases; ``None`` = True, as
            Neural-BO's default network (its paper preset has none: ``ntk_use_bias=False``).
        acquisition: ``"ei"`` (Jones et al. 1998, minimization form ``sigma (z Phi(z) +
            phi(z))``, ``z = (y_best - mu)/sigma``, maximized as log EI, Ament et al. 2023),
            ``"ucb"`` (Srinivas et al. 2010 in minimization form: minimize ``mu - sqrt(beta)
            sigma``) or ``"ts"`` (Chowdhury & Gopalan 2017: one joint posterior draw over the
            raw samples, its argmin); constrained: ``"cei"`` (Gardner et al. 2014, ICML,
            eqs. 5-6: EI over the best observed feasible value times the probability of
            feasibility; PoF alone while nothing feasible is observed) or ``"lcb-c"``
            (ConfigOpt, Xu et al. 2023; UCB-C, Nguyen et al. 2023: minimize ``mu - sqrt(beta)
            sigma`` over the points whose constraint bounds ``mu_k - sqrt(beta_c) sigma_k``
            are all ``<= 0``, else the smallest total violation); for ``m >= 2`` objectives
            (``y (m,)`` per point): ``"ehvi"`` (log expected hypervolume improvement,
            :func:`nbo_jax.acquisition.ehvi`) or ``"parego"`` (:func:`nbo_jax.acquisition.parego`),
            each on one GP per objective, and with constraints ``"ehvi-c"`` (log EHVI over the
            observed feasible front plus the log probability of feasibility, one GP per
            objective and per constraint; Daulton et al. 2020's constrained EHVI, as Optuna's
            ``GPSampler``'s ``LogCEHVI``: :func:`nbo_jax.acquisition.ehvi` with
            ``constraints=True``); see the module doc. Or a
            function ``acq(SurrogatePosterior, key) -> (N,)`` of the GP's posterior
            (:mod:`nbo_jax.acquisition`): one that reads the constraints' posterior
            (``requires``) makes the algorithm constrained, one that reads the joint draw
            (:func:`nbo_jax.acquisition.thompson_sampling`) scores the raw samples only.
        preset: ``"default"`` (BoTorch's model, fit and optimizer) or ``"paper"``; fills every
            option left ``None`` (module doc).
        reference_point: ``"ehvi"`` / ``"parego"`` / ``"ehvi-c"`` only: the hypervolume reference point,
            ``m`` numbers in the objectives' units (:func:`nbo_jax.acquisition.ehvi`);
            ``None``: inferred from the observed front at each ask.
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
        deterministic: the objective returns the same value at the same point (bool): the
            noise variance is fixed at ``noise_floor`` instead of fitted, as Optuna's
            ``GPSampler(deterministic_objective=True)`` fixes it at its minimum and SMAC's
            ``Scenario(deterministic=True)`` evaluates a configuration once. A GP with a
            fitted noise treats equal values at nearby points (a plateau, a step) as noise
            and asks again where it has observed: on the mixed selection problems fixing it
            was better or level on all eight, on the mixed test problems not (SVC behind
            TPE; docs, "Benchmarks", "A deterministic objective").
            ``False`` (default): fitted, for noisy objectives.
        lengthscale_bounds: ``(low, high)`` limits of the lengthscales, in unit-cube units
            (default preset ``(2.5e-2, 1e3)``, paper ``(1e-2, 1e1)``). With ``kernel="ntk"``
            the lengthscales are fixed at 1 and unused, and this argument is refused; a
            ``"botorch"`` prior then acts on the noise only.
        outputscale_bounds: ``(low, high)`` limits of the output scale ``s_f^2``.
        jitter: added to the noise variance inside every Cholesky; default 0 in float64 and
            ``1e-6`` in float32.
        standardize: fit the GP to standardized targets; if False, to the raw ``y`` (then the
            outputscale bounds are in ``y``'s units). Constrained: the constraints are
            RMS-scaled when True, raw when False.
        outcome_transform: what the GP is fitted to, one of
            :data:`nbo_jax.outcome.OUTCOME_TRANSFORMS`: ``"standardize"`` (BoTorch's
            ``Standardize``), ``"power"`` (Yeo-Johnson with the maximum-likelihood exponent,
            HEBO's, Cowen-Rivers et al. 2022), ``"copula"`` (normal quantiles of the ranks),
            ``"half_rank"`` (the worse half rank-warped, OSS Vizier's, Song et al. 2024),
            ``"none"``, ``"auto"`` (``"power"`` on a search space with an integer or
            categorical parameter, ``"standardize"`` elsewhere: :func:`nbo_jax.outcome.resolved`)
            or ``"discrete_half_rank"`` (``"half_rank"`` there, ``"standardize"`` elsewhere);
            default ``None``: the preset's, ``"discrete_half_rank"`` (default preset; chosen on
            the mixed selection problems, docs "The GP's targets on mixed spaces";
            ``"standardize"`` for the constrained and multi-objective acquisitions) or
            ``"standardize"`` (paper), or ``"none"`` with ``standardize=False``. The
            transforms keep the order of the observations; EI's ``y_best`` and the posterior
            are in the transformed units. The constrained and multi-objective acquisitions
            take ``"standardize"`` or ``"none"`` only.
        q: points per ``ask`` (BoTorch's ``q``). ``q > 1``: GP-TS takes ``q`` independent
            joint draws (Kandasamy et al. 2018); EI, UCB, cEI and LCB-C choose the points one
            after the other, each told to a copy of the state with a constant-liar value
            (Ginsbourger et al. 2010; :mod:`nbo_jax.transforms.batch`).

    Returns:
        ``BOAlgorithm(init, ask, tell, name="gp-ei" | "gp-ucb" | "gp-ts", surrogate)`` (``"gp"``
        for an acquisition function), built by :func:`nbo_jax.bo.bo_algorithm` over
        :func:`nbo_jax.surrogates.gp.gp`: ``init(key, x0 (n0, d), y0 (n0,), c0=None, *, bounds,
        capacity) -> BOState`` (the GP's hyperparameters, factor and fit in ``state.model``, a
        :class:`~nbo_jax.surrogates.gp.GPSurrogateState`), ``ask(state, key) -> (d,)`` (``(q,
        d)`` when ``q > 1``), ``tell(state, x (d,) | (n, d), y () | (n,), c=None) -> BOState``,
        ``surrogate(state, u (N, d)) -> SurrogatePosterior`` (latent mean/std, standardized
        units, incumbent = best standardized finite observation, the ARD lengthscales).
        ``c0``/``c`` are accepted and ignored.

        For ``"cei"`` / ``"lcb-c"``: ``BOAlgorithm(..., name="gp-cei" | "gp-lcb-c",
        constrained=True)`` with the same signatures, ``c0 (n0, K)`` and ``c (K,) | (n, K)``
        required (``c <= 0`` feasible; a NaN/inf value is a failed evaluation, imputed as the
        :class:`~nbo_jax.dataset.Dataset` does), one GP per column
        (:func:`nbo_jax.surrogates.gp.gp_columns`, ``state.model`` stacked over the ``K + 1``
        functions), and
        ``surrogate(state, u (N, d)) -> SurrogatePosterior`` with
        ``constraint_mean``/``constraint_std`` ``(N, K)`` (RMS-scaled units, 0 = threshold)
        and ``incumbent`` = best observed feasible standardized objective value (``+inf``
        when none). For ``"ehvi-c"`` (``name="gp-ehvi-c"``, ``constrained=True``): ``y0
        (n0, m)`` and ``c0 (n0, K)``, one GP per column over the ``m + K`` functions, the
        incumbent the ``(cap, m)`` observed feasible targets (``+inf`` elsewhere).

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
    custom = callable(acquisition)
    if not custom:
        check_choice("acquisition", acquisition, ACQUISITIONS)
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
    deterministic = check_bool("deterministic", deterministic)
    pb = gpm.ParamBounds(_check_pair("lengthscale_bounds", chosen["lengthscale_bounds"]),
                         _check_pair("outputscale_bounds", outputscale_bounds),
                         (noise_floor, noise_floor if deterministic else 1.0)).validate()
    if not learn_os:
        pb = pb._replace(outputscale=(1.0, 1.0))
    if isinstance(kind, gpm.NTKKernel):
        pb = pb._replace(lengthscale=(1.0, 1.0))  # not a parameter of the NTK: fixed, unused
    if reference_point is not None and acquisition not in MULTI_OBJECTIVE_ACQUISITIONS:
        raise ValueError(f"reference_point is used by the multi-objective acquisitions {MULTI_OBJECTIVE_ACQUISITIONS} "
                         f"only (a callable one takes its own), got acquisition={acquisition!r}")
    if beta_c is not None:
        if acquisition != "lcb-c":
            raise ValueError(f"beta_c is used by acquisition='lcb-c' only, got acquisition={acquisition!r}")
        beta_c = check_betas("beta_c", beta_c)
    if custom:
        needs = requires(acquisition)
        no_gradient = ("the acquisition reads the GP's joint posterior draw over the raw samples, not a function "
                       "to climb") if "sample" in needs else None
        constrained = reads_constraints(acquisition)
        multi = reads_objectives(acquisition)
        default_aopt = chosen["acq_optimizer"]["ts" if no_gradient else ("cei" if constrained else "ei")]
    else:
        no_gradient = {"ts": "acquisition='ts': a joint posterior draw over the raw samples is not a function "
                             "to climb",
                       "lcb-c": "acquisition='lcb-c': its utility is a hard feasibility filter, with no useful "
                                "gradient"}.get(acquisition)
        constrained = acquisition in CONSTRAINED_ACQUISITIONS
        multi = acquisition in MULTI_OBJECTIVE_ACQUISITIONS
        default_aopt = chosen["acq_optimizer"][acquisition]
    # None: the preset's, "auto" (default) or "standardize" (paper); constraints or several objectives: standardized
    transform = outcome_transform_of(outcome_transform, standardize,
                                     default="standardize" if constrained or multi else chosen["outcome_transform"])
    if (constrained or multi) and transform not in AFFINE_OUTCOME_TRANSFORMS:
        raise ValueError(f"outcome_transform={transform!r} is for the unconstrained acquisitions; "
                         f"acquisition={acquisition!r} scales the objective and its constraints affinely: "
                         f"use {' or '.join(map(repr, AFFINE_OUTCOME_TRANSFORMS))}")
    aopt = as_acq_optimizer(acq_optimizer, default=default_aopt, no_gradient=no_gradient, mean_rank=not (constrained or multi))
    fit = GPFit(kind, pb, chosen["prior"], chosen["fit_optimizer"], n_restarts, fit_steps, fit_learning_rate, jitter,
                chosen["mean"] == "constant", warm_start)
    if constrained or multi:
        # the variance floor keeps the gradient of sqrt finite at observed points (climbs only)
        surrogate = gp_columns(fit, std_floor=aopt.steps > 0)
    else:
        surrogate = gp_surrogate(fit)
    if custom:
        acq, name = acquisition, "gp"
    else:
        if acquisition in MULTI_OBJECTIVE_ACQUISITIONS:
            acq = {"ehvi": ehvi, "parego": parego, "ehvi-c": partial(ehvi, constraints=True)}[acquisition](
                reference_point=reference_point)
        else:
            acq = {"ei": log_ei(), "ucb": lcb(beta), "ts": thompson_sampling(), "cei": log_cei(),
                   "lcb-c": lcb_feasible(beta, beta_c)}[acquisition]
        name = f"gp-{acquisition}"
    algo = bo_algorithm(surrogate, acq, acq_optimizer=aopt, name=name, q=q, refit_every=refit_every,
                        outcome_transform=transform,
                        constrained=constrained)
    if beta_c is not None and np.ndim(beta_c) == 1:
        init = algo.init

        def checked_init(key, x0, y0, c0=None, *, bounds, capacity, start=None):
            if c0 is not None and np.ndim(c0) == 2:
                check_beta_count("beta_c", beta_c, np.shape(c0)[1])
            return init(key, x0, y0, c0, bounds=bounds, capacity=capacity, start=start)

        algo = algo._replace(init=checked_init)
    return algo


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


__all__ = ["gp_bo", "ACQUISITIONS", "CONSTRAINED_ACQUISITIONS", "PRESETS", "PRIORS"]
