"""Neural-BO: Thompson sampling with NTK gradient features (Phan-Trong et al. 2023,
"Neural-BO: a black-box optimization algorithm using deep neural networks", Algorithms 1-2).

Per iteration ``t`` (minimization form)::

    sigma_t^2(x) = lam g(x)^T U_{t-1}^{-1} g(x) / m               g(x) = grad_theta h(x; theta_0)
    f~_t ~ posterior of the linearized network;   x_t = argmin_x f~_t(x);  y_t = f(x_t) + eps_t
    theta_t = TrainNN(data, start theta_0);  U_t = U_{t-1} + g(x_t) g(x_t)^T / m

The Thompson sample ``f~_t`` is drawn in one of two ways:

- ``thompson="pathwise"`` (library default): one joint sample of the linearized network,
  ``f~(x) = h(x; theta_t) + nu s g(x)^T delta / sqrt(m)`` with ``delta ~ N(0, lam U^{-1})``
  (:func:`nbo_jax.posterior.sample_weights`: Matheron's rule through the ``t x t`` Gram matrix
  in ``dual``). It is a function of ``x``, evaluated by one Jacobian-vector product per point
  (no per-point Jacobian), so :func:`nbo_jax.optimize.optimize_acqf` scores the raw samples
  and climbs the best of them by projected gradient steps.
- ``thompson="independent"`` (the paper's Algorithm 1, line 4): ``f~(x) ~ N(h(x), nu^2
  sigma^2(x))`` drawn independently per raw sample; only the raw samples are scored.

With ``scales="fit"`` (library default) the posterior's ``lam`` and output scale ``s^2`` are
not fixed: the linearized network is Bayesian linear regression on ``g``, i.e. a GP with the
empirical NTK as kernel, and ``(lam, s^2)`` maximize its marginal likelihood of the targets
``y - h(x; theta_0)`` (:func:`nbo_jax.posterior.fit_scales`; ``nu`` then multiplies the fitted
``s``): ``s^2`` at every ``tell``, ``lam`` on the ``refit_every`` schedule. ``acquisition=``
swaps Thompson sampling for any function of the surrogate posterior
(:mod:`nbo_jax.acquisition`), maximized by the same optimizer.

**Paper preset** (``preset="paper"``; Phan-Trong et al. 2023, Section 7): L = 2, m = 500,
weights N(0, 1/m), no biases, plain SGD lr 1e-3, batch 50, 50 epochs, lam = 0.01, nu in
{0.1, 1, 10}, training restarts from theta_0, features at theta_0, independent draws over
2048 uniform raw samples, fixed scales.

**Library defaults** (``preset="default"``): as the paper but with biases, Adam (lr 1e-3) and
warm start from the previous weights (as in the authors' released code), pathwise Thompson
sampling on fitted scales with ``nu = 0.5`` below ``d = 10``, ``0.25`` (``MID_DIM_NU``) from
``d = 10`` (``MID_NU_FROM_DIM``; 0.5 inside a trust region) and ``0.1`` (``HIGH_DIM_NU``) from
``d = 20`` (:func:`default_nu`), and ``acq_optimizer(raw_samples=2048, num_restarts=10, steps=200)``
(scrambled Sobol raw samples, a quarter of them around the 5 best observations, Boltzmann
restarts, box-constrained L-BFGS; :mod:`nbo_jax.optimize`; on a mixed space the local raw
samples perturb an integer by a std of one of its steps, ``local_integer_std=1``: with the
cube's 0.05 they kept the best observations' integers), with no climb (the best raw sample)
from ``d = 20`` on (``CLIMB_BELOW_DIM``): climbed, the sample's minimum lies on the box's
boundary, and the run ends worse than random search. Below ``d = 20`` (``CIRCLE_BELOW_DIM``)
the network sees each coordinate on a quarter circle (``input_embedding="circle"``), so that
its Thompson samples are not drawn to the corners. The exploration scale's and the climb's ``d``
is the number of parameters (a categorical parameter counts once); the embedding's is the
number of unit-cube columns (one per category; with 24 columns and 5 parameters the two
embeddings end level, docs "Neural-BO's inputs"). On a space with a categorical parameter the
network sees each one-hot column's inputs times a weight chosen by the empirical NTK's marginal
likelihood (``category_weight="fit"``), and an ask (``q = 1``) is the best of 512 raw samples
by expected improvement (``categorical_acquisition="ei"``). On a search space with an integer or
categorical parameter the network's training adds a penalty on slopes that fall toward the box's
faces (``boundary_penalty``, Siivola et al. 2018's virtual derivative-sign observations as a
hinge; :func:`nbo_jax.training.boundary_penalty`): a ReLU network carries the slope of its data
to the edge, and its asks followed it there. The surrogate settings were chosen on
problems other than the test problems (Ackley, Levy, Michalewicz); the measurements are on the
documentation site's page "Benchmarks" (``docs/benchmarks.md``). Every choice is an
argument.

**Batches** (``q > 1``, :mod:`nbo_jax.transforms.batch`): Thompson sampling (both ``thompson`` modes)
asks ``q`` independent draws (Kandasamy et al. 2018); a user ``acquisition=`` is taken as a
deterministic utility (UCB, EI, ...) and batched by the constant liar (Ginsbourger et al.
2010). A stochastic ``acquisition`` (e.g. :func:`nbo_jax.acquisition.thompson`) is Thompson
sampling too: build it with ``q=1`` and batch it with
``nbo_jax.transforms.batch.batched(algo._replace(batch_rule="independent"), q)``, as
:func:`nbo_jax.algorithms.neural_ucb.neural_ts` does.
"""

from __future__ import annotations

from typing import Optional

import jax

from .. import posterior as post_lib
from .._checks import (
    BATCH_SIZE_RENAMED,
    check_bool,
    check_choice,
    check_int,
    check_refit_every,
    check_scale,
    outcome_transform_of,
    refuse_renamed,
    resolve_preset,
)
from ..acquisition import AcquisitionFn, random_scalarization
from ..acquisition import ei as expected_improvement
from ..acquisition import thompson as independent_thompson
from ..bo import BOState, bo_algorithm, make_algorithm, reads_objectives, records_config
from ..networks import CIRCLE_BELOW_DIM, INPUT_EMBEDDINGS, has_categories  # noqa: F401 - CIRCLE_BELOW_DIM: as before
from ..optimize import AcqOptimizer, as_acq_optimizer, optimize_acqf
from ..surrogates.columns import independent
from ..surrogates.neural_linear import NeuralLinearState, neural_linear
from ..types import BOAlgorithm, SearchRegion
from ..networks import network_builder
from ..training import train_config

Array = jax.Array

THOMPSON = ("pathwise", "independent")
SCALES = ("fit", "fixed")
FEATURE_PARAMS = ("initial", "current")
# pathwise Thompson samples are climbed below this many parameters; from it on the best raw sample
# is asked (climbed, the sample's minimum lies on the box's boundary)
CLIMB_BELOW_DIM = 20
# from CLIMB_BELOW_DIM parameters on, the default pathwise Thompson sample's exploration scale when
# nu is not given (the raw samples' best is asked, and nu = 0.5 spread it over the cube)
HIGH_DIM_NU = 0.1
# from MID_NU_FROM_DIM parameters up to CLIMB_BELOW_DIM, the default pathwise sample's exploration scale
# when nu is not given (measured with the quarter-circle embedding at d = 5, 10 and 15)
MID_DIM_NU = 0.25
MID_NU_FROM_DIM = 10
CATEGORICAL_ACQUISITIONS = ("ei", "thompson")
# the default preset's boundary penalty kappa (boundary_penalty=None) on a search space with an integer or
# categorical parameter; 0 on a box or a space of floats (chosen on the mixed selection problems, docs
# "Neural-BO at the box's faces")
DISCRETE_BOUNDARY_PENALTY = 1.0
# categorical_acquisition="ei" scores this many raw samples unless acq_optimizer names raw_samples: a
# posterior standard deviation needs each point's Jacobian (2048 took 1.75 times GPSampler's time per
# later 30-trial study of benchmarks/trial_cost.py, 512 about half of it)
CATEGORICAL_EI_RAW_SAMPLES = 512
# below this input dimension input_embedding="auto" (the default preset's) puts each coordinate on a
# quarter circle; from it on the network sees 2u - 1 (measured at d = 2-10 and 20)


PRESETS = {
    "paper": dict(optimizer="sgd", warm_start=False, use_bias=False, thompson="independent", scales="fixed", nu=1.0,
                  input_embedding="linear", category_weight=1.0, categorical_acquisition="thompson",
                  outcome_transform="standardize", boundary_penalty=0.0,
                  acq_optimizer=AcqOptimizer(raw_samples=2048, num_restarts=1, steps=0, local_fraction=0.0,
                                             raw_sampler="uniform")),
    "default": dict(optimizer="adam", warm_start=True, use_bias=True, thompson="pathwise", scales="fit", nu=0.5,
                    input_embedding="auto", category_weight="fit", categorical_acquisition="ei",
                    outcome_transform="discrete_half_rank", boundary_penalty="discrete",
                    acq_optimizer=AcqOptimizer(raw_samples=2048, num_restarts=10, steps=200, local_integer_std=1.0)),
}


def default_nu(d: int, in_region: bool = False) -> float:
    """The default preset's exploration scale of its pathwise Thompson sample for ``d``
    parameters when ``nu`` is not given (a box's inputs; on a mixed space a categorical
    parameter counts once, not once per one-hot column; the climb's rule ``CLIMB_BELOW_DIM``
    counts the same way): ``HIGH_DIM_NU`` (0.1) from ``CLIMB_BELOW_DIM`` (20) on,
    ``MID_DIM_NU`` (0.25) from ``MID_NU_FROM_DIM`` (10) when asked over the whole box, else
    the preset's ``nu`` (0.5): below ``d = 10``, and below ``d = 20`` when asked inside a trust
    region (``in_region``: asked with a search region, :func:`nbo_jax.transforms.trust_region.trust_region`), which
    already keeps the asks near the incumbent. Chosen on selection problems (Styblinski-Tang,
    Rastrigin, Griewank, Rosenbrock) and COCO, not on the reported test problems
    (``docs/benchmarks.md``); counting a mixed space's parameters rather than its one-hot
    columns was chosen on the mixed selection problems of ``benchmarks/mixed_selection.py``
    (docs, "The figures behind the defaults")."""
    if d >= CLIMB_BELOW_DIM:
        return HIGH_DIM_NU
    return MID_DIM_NU if d >= MID_NU_FROM_DIM and not in_region else PRESETS["default"]["nu"]


NeuralBOState = NeuralLinearState
"""Neural-BO's surrogate state (the model inside :class:`~nbo_jax.bo.BOState`'s ``model``)."""


def _check_acquisition(acquisition, nu) -> None:
    """``nu`` only with the default Thompson sampling; ``acquisition`` callable."""
    if acquisition is not None and nu is not None:
        raise ValueError(
            "nu only scales the default Thompson acquisition; with acquisition= given, put the "
            "exploration scale into it (e.g. nbo.acquisition.thompson(nu)) and drop nu"
        )
    if acquisition is not None and not callable(acquisition):
        raise TypeError(f"acquisition must be callable (posterior, key) -> (N,), got {type(acquisition).__name__}")


def _check_thompson_options(categorical_acquisition, thompson, acquisition, multi_objective, q) -> None:
    """The options of the default Thompson sampling, given where they would not act: a
    ``categorical_acquisition`` (the pathwise sample or EI at ``q = 1``) where neither asks
    (``acquisition=``, several objectives), ``"ei"`` where Thompson draws ask (``q > 1``,
    ``thompson="independent"``); ``thompson`` with ``acquisition=``."""
    if categorical_acquisition is not None:
        if acquisition is not None or multi_objective is True:
            given = "acquisition=" if acquisition is not None else "multi_objective=True"
            raise ValueError(f"categorical_acquisition={categorical_acquisition!r} has no effect with {given}, "
                             f"which asks on every space; drop categorical_acquisition")
        if categorical_acquisition == "ei" and (q != 1 or thompson == "independent"):
            given = f"q={q!r}" if q != 1 else "thompson='independent'"
            raise ValueError(f"categorical_acquisition='ei' asks one point at q = 1 with the pathwise preset; with "
                             f"{given} independent Thompson draws ask on every space; drop categorical_acquisition")
    if acquisition is not None and thompson is not None:
        raise ValueError(f"thompson={thompson!r} chooses how the default Thompson sampling draws; with "
                         f"acquisition= given it has no effect; drop thompson")


@records_config
def neural_bo(
    width: int = 500,
    depth: int = 2,
    nu: Optional[float] = None,
    lam: float = 0.01,
    *,
    preset: str = "default",
    posterior: str = "auto",
    feature_params: str = "initial",
    warm_start: Optional[bool] = None,
    optimizer: Optional[str] = None,
    learning_rate: float = 1e-3,
    epochs: int = 50,
    minibatch_size: int = 50,
    thompson: Optional[str] = None,
    scales: Optional[str] = None,
    refit_every: Optional[int | str] = None,
    acq_optimizer: Optional[AcqOptimizer | dict] = None,
    acquisition: Optional[AcquisitionFn] = None,
    standardize: bool = True,
    outcome_transform: Optional[str] = None,
    activation: str = "relu",
    use_bias: Optional[bool] = None,
    chunk_size: Optional[int] = None,
    input_embedding: Optional[str] = None,
    category_weight: Optional[float | str] = None,
    categorical_acquisition: Optional[str] = None,
    boundary_penalty: Optional[float] = None,
    q: int = 1,
    multi_objective: bool = False,
    reference_point=None,
    **kwargs,
) -> BOAlgorithm:
    """Build Neural-BO as a :class:`~nbo_jax.types.BOAlgorithm` (Phan-Trong et al. 2023,
    Algorithm 1).

    Args:
        width: hidden width ``m`` (int >= 1). depth: number of weight layers ``L`` (int >= 2).
        nu: exploration scale of Thompson sampling (Phan-Trong et al. 2023, Algorithm 1,
            line 4), a float ``>= 0`` or a scalar array (vmappable); default the preset's
            (paper 1.0; the default preset's pathwise sample takes 0.5 below ``d = 10`` parameters,
            ``MID_DIM_NU = 0.25`` from ``d = MID_NU_FROM_DIM = 10`` (0.5 inside a trust
            region) and ``HIGH_DIM_NU = 0.1`` from ``d = CLIMB_BELOW_DIM = 20`` on:
            :func:`default_nu`). With
            ``scales="fit"`` it multiplies the fitted scale. Not allowed together with
            ``acquisition``. A given ``nu`` makes the Thompson sample ask on a space with a
            categorical parameter too (``categorical_acquisition`` then defaults to
            ``"thompson"``); given together with ``categorical_acquisition="ei"``, it scales the
            asks on spaces without one.
        lam: regularization ``lambda > 0`` of TrainNN and (``scales="fixed"``) of
            ``U_0 = lam I``; a float or a scalar array.
        preset: ``"paper"`` or ``"default"``: fills every option left ``None`` (module doc).
        posterior: ``"full"`` (Sherman-Morrison), ``"diagonal"`` (approximation),
            ``"dual"`` (Gram-matrix Cholesky) or ``"auto"`` (``dual`` with ``scales="fit"``,
            else the cheaper exact one: :func:`nbo_jax.posterior.choose_mode`).
        feature_params: ``"initial"`` (``g`` at ``theta_0``; paper) or ``"current"``
            (``g`` at the current weights, as the authors' code and NeuralUCB do; each
            observation's feature is taken at the weights trained right after it).
        warm_start: train from the previous weights instead of ``theta_0`` (bool).
        optimizer: ``"sgd"`` or ``"adam"``; learning_rate (> 0), epochs (int >= 1),
            minibatch_size (int >= 1): TrainNN's optimizer and SGD mini-batch.
        thompson: ``"pathwise"``: one joint sample ``f~(x) = h(x; theta_t) + nu s g(x)^T
            delta / sqrt(m)`` with ``delta ~ N(0, lam U^{-1})`` (:func:`nbo_jax.posterior.
            sample_weights`), a differentiable function maximized by ``acq_optimizer``;
            ``"independent"``: the paper's ``N(h(x), nu^2 sigma^2(x))`` drawn independently
            per raw sample (no gradient steps). Refused with ``acquisition``.
        scales: ``"fit"``: before each ask's posterior is used, ``(lam, s^2)`` of the
            posterior maximize the marginal likelihood of the linearized network (a GP with
            the empirical NTK; :func:`nbo_jax.posterior.fit_scales`, targets ``y - h(x;
            theta_0)``), refitted on the ``refit_every`` schedule; ``"fixed"``: ``lam`` and
            ``s = 1``.
        refit_every: ``scales="fit"`` only: ``lam`` is refitted (an eigendecomposition of the
            ``cap x cap`` Gram matrix, ``O(cap^3)``) at ``init`` and at every
            ``refit_every``-th tell; between refits the new rows are appended to the factor
            with the kept ``lam`` (``O(cap^2)``) and ``s^2`` is refitted for it
            (:func:`nbo_jax.posterior.fit_output_scale`). 1 = both at every tell. ``"auto"``
            (default): every ``max(1, n // 50)``-th tell with ``n`` rows held (every tell
            below 100; :func:`nbo_jax.bo.refit_due`).
        acq_optimizer: :func:`nbo_jax.optimize.acq_optimizer` settings for
            :func:`nbo_jax.optimize.optimize_acqf`, or a dict of some of its fields laid over
            the preset's (default: the preset's; with ``thompson="independent"``, ``steps=0``;
            with the default pathwise Thompson sampling and ``d >= CLIMB_BELOW_DIM`` (20)
            parameters, ``steps=0`` unless ``acq_optimizer`` is an ``AcqOptimizer`` or a dict
            naming ``steps``).
            A stochastic user ``acquisition`` (fresh draws per point) needs ``steps=0``.
        acquisition: ``acq(SurrogatePosterior, key) -> (N,)`` utility to maximize instead of
            Thompson sampling (:mod:`nbo_jax.acquisition`).
        standardize: train on standardized targets (bool); ``False``: on the raw ``y``.
        outcome_transform: what the network and its posterior are fitted to, one of
            :data:`nbo_jax.outcome.OUTCOME_TRANSFORMS`: ``"standardize"``, ``"power"``
            (Yeo-Johnson with the maximum-likelihood exponent, as HEBO), ``"copula"`` (normal
            quantiles of the ranks), ``"half_rank"`` (the worse half rank-warped, as OSS
            Vizier) or ``"none"``, or ``"discrete_half_rank"`` (``"half_rank"`` on a search
            space with an integer or categorical parameter, ``"standardize"`` elsewhere); default
            ``None``: the preset's, ``"discrete_half_rank"`` (default preset; ``"standardize"``
            for the paper preset and with a multi-objective acquisition), or ``"none"`` with
            ``standardize=False``. Every transform keeps the order of the
            observations, so the Thompson sample's minimum is sought in the transformed units.
        activation: the network's activation (paper and default: ReLU).
        use_bias: whether the network has biases (paper: no; default: yes, as the authors'
            code. Without biases the ReLU network is positively homogeneous, ``h(c z) = c
            h(z)``, so ``h(0) = 0`` and its minimum over the box sits on the boundary or at
            the centre).
        chunk_size: compute candidate features in chunks of this size (memory bound; int
            >= 1 or ``None``).
        input_embedding: how the network sees a unit-cube point (:func:`nbo_jax.networks.
            embed_inputs`): ``"linear"`` (``z = 2u - 1``, the authors' code; the paper
            preset's), ``"circle"`` (each coordinate on a quarter circle, every point of the
            same norm, so the prior variance of the linearized network does not grow toward
            the corners) or ``"auto"`` (the default preset's: ``"circle"`` below ``d =
            CIRCLE_BELOW_DIM = 20`` unit-cube columns, ``"linear"`` from there on).
        category_weight: on a space with a categorical parameter, the factor on each one-hot
            column's network inputs (:func:`nbo_jax.networks.category_weights`; a float > 0,
            or ``"fit"`` with ``scales="fit"``: chosen from ``(0.125, 0.25, 0.5, 1)`` by the
            empirical-NTK marginal likelihood whenever ``lam`` is refitted,
            :func:`nbo_jax.surrogates.neural_linear.select_category_weight`; the default
            preset's ``"fit"``, 1 with ``scales="fixed"``; the paper preset's 1).
            No effect on a box or a space of integers. With 0.25 a change of category moves
            the network's input as a quarter of a continuous coordinate's range does: the
            network pools what it learns across the categories.
        categorical_acquisition: what the pathwise Thompson preset asks with on a space with a
            categorical parameter when ``q = 1``: ``"ei"`` (the default preset's; expected
            improvement of the surrogate posterior,
            :func:`nbo_jax.acquisition.ei`, at the best of ``CATEGORICAL_EI_RAW_SAMPLES = 512``
            raw samples unless ``acq_optimizer`` names ``raw_samples``, no climb unless it names
            ``steps``: a posterior standard deviation needs each point's Jacobian) or
            ``"thompson"`` (the paper preset's, and the default when ``nu`` is given: the
            pathwise sample, as on a box). Refused with ``acquisition`` or
            ``multi_objective=True`` (they ask on every space), and ``"ei"`` with ``q > 1`` or
            ``thompson="independent"`` (independent Thompson draws ask). Chosen with
            ``category_weight="fit"`` on the mixed selection problems (docs, "Neural-BO on
            categories"): EI alone left them where they were, the fitted weight alone improved
            them, both together more; with a fixed weight 0.25 one seed of the SVC tuning task
            stayed on the plateau of its worst kernel.
        boundary_penalty: ``kappa``, a float ``>= 0``: the network's training adds ``kappa``
            times the mean squared slope toward the box's inside at its faces
            (:func:`nbo_jax.training.boundary_penalty`: virtual derivative-sign observations
            that the function rises toward the boundary, Siivola et al. 2018, as a hinge on
            the network's slopes) on every unit-cube column that is not a category's, on every
            domain; 0: none. Default ``None``: the preset's, the default preset's
            ``DISCRETE_BOUNDARY_PENALTY = 1.0`` on a search space with an integer or
            categorical parameter and 0 on a box or a space of floats (so runs on boxes are
            as before), the paper preset's 0; ``"discrete"`` names the default preset's rule.
            A ReLU network extrapolates its slope to the box's edge, and its posterior mean
            there can fall below every observation: on an SVC's log loss the asks followed it
            to ``gamma``'s lower bound (docs, "Neural-BO at the box's faces").
        multi_objective: optimize ``m >= 2`` objectives (``y (m,)`` per point): one network
            and its linearized posterior per objective (:func:`nbo_jax.surrogates.independent`)
            and random-scalarization Thompson sampling on their pathwise draws, at
            exploration scale ``nu`` (the preset's 0.5 when ``None``; Paria, Kandasamy &
            Poczos 2019; :func:`nbo_jax.acquisition.random_scalarization`). An ``acquisition``
            that reads several objectives does the same with its own rule.
        reference_point: with several objectives, the hypervolume reference point (``m``
            numbers in the objectives' units) the algorithm keeps; ``None``: inferred.
        q: points per ``ask`` (int >= 1). Thompson sampling asks ``q`` independent draws
            (``batch_rule="independent"``); with ``acquisition`` given, the constant liar
            (``batch_rule="fantasy"``); see the module doc for stochastic acquisitions.

    Returns:
        ``BOAlgorithm`` named ``"neural-bo"``: ``init(key, x0, y0, c0=None, *, bounds,
        capacity)``, ``ask(state, key) -> (d,)`` (``(q, d)`` for ``q > 1``), ``tell(state, x,
        y, c=None)`` (``c`` ignored), ``surrogate(state, u (N, d)) -> SurrogatePosterior``
        (the outcome transform's units: standardized, half-rank on a space with an integer or
        categorical parameter by default; ``std`` includes the fitted scale, not ``nu``) and, with
        ``scales="fit"``, ``info``: ``post_lam`` and ``post_scale`` (the fitted ``lam`` and
        output scale ``s`` of the posterior).

    Raises:
        TypeError: an argument of the wrong type (e.g. ``width=2.7``, ``nu="1"``,
        ``warm_start="yes"``), ``acquisition`` not callable, ``acq_optimizer`` of the wrong
        type, ``batch_size=`` (renamed ``minibatch_size``; ``q`` is the number of points per
        ask) or any other unknown keyword.
        ValueError: any argument out of range, NaN or unknown (the message names it), an
        ``outcome_transform`` other than ``"none"`` with ``standardize=False``, or a
        ``categorical_acquisition`` that would not ask (see above).
    """
    refuse_renamed(kwargs, BATCH_SIZE_RENAMED, "neural_bo")
    _check_thompson_options(categorical_acquisition, thompson, acquisition, multi_objective, q)
    if nu is not None and categorical_acquisition is None:
        categorical_acquisition = "thompson"  # a given nu scales the Thompson sample on every space
    chosen = resolve_preset(PRESETS, preset, warm_start=warm_start, optimizer=optimizer, use_bias=use_bias,
                            thompson=thompson, scales=scales, input_embedding=input_embedding,
                            category_weight=category_weight, categorical_acquisition=categorical_acquisition,
                            boundary_penalty=boundary_penalty)
    categorical_acquisition = check_choice("categorical_acquisition", chosen["categorical_acquisition"],
                                           CATEGORICAL_ACQUISITIONS)
    thompson = check_choice("thompson", chosen["thompson"], THOMPSON)
    fit = check_choice("scales", chosen["scales"], SCALES) == "fit"
    given_weight, category_weight = category_weight, chosen["category_weight"]
    if category_weight == "fit" and not fit and given_weight is None:
        category_weight = 1.0  # the default preset's fitted weight needs fitted scales
    if isinstance(category_weight, str):
        if category_weight != "fit" or not fit:
            raise ValueError(f"category_weight must be a float > 0, or 'fit' with scales='fit'; got {category_weight!r}")
    else:
        category_weight = float(check_scale("category_weight", category_weight, allow_zero=False))
    boundary_discrete_only = chosen["boundary_penalty"] == "discrete"
    boundary_penalty = (DISCRETE_BOUNDARY_PENALTY if boundary_discrete_only
                        else float(check_scale("boundary_penalty", chosen["boundary_penalty"], allow_array=False)))
    if refit_every is not None and not fit:
        raise ValueError(f"refit_every schedules the scale fit of scales='fit'; with scales='fixed' nothing is "
                         f"refitted, got refit_every={refit_every!r}")
    refit_every = check_refit_every("auto" if refit_every is None else refit_every)
    posterior = check_choice("posterior", posterior, post_lib.MODES + ("auto",))
    if fit and posterior not in ("auto", "dual"):
        raise ValueError(f"scales='fit' needs posterior='dual' (or 'auto'): refitting lam rebuilds the "
                         f"posterior, which only the dual form does cheaply; got posterior={posterior!r}")
    feature_params = check_choice("feature_params", feature_params, FEATURE_PARAMS)
    warm = check_bool("warm_start", chosen["warm_start"])
    network = network_builder(width, depth, activation, use_bias=chosen["use_bias"])
    input_embedding = check_choice("input_embedding", chosen["input_embedding"], INPUT_EMBEDDINGS + ("auto",))
    chunk_size = None if chunk_size is None else check_int("chunk_size", chunk_size, 1)
    lam = check_scale("lam", lam, allow_zero=False)
    m = float(width)
    train_cfg = train_config(chosen["optimizer"], learning_rate, epochs, minibatch_size, m * lam)
    if nu is not None:
        nu = check_scale("nu", nu)
    multi_objective = check_bool("multi_objective", multi_objective)
    if multi_objective and acquisition is None:
        acquisition = random_scalarization(reference_point=reference_point)
    elif reference_point is not None:
        raise ValueError("reference_point is used with multi_objective=True only (an acquisition= takes its own)")
    multi = acquisition is not None and reads_objectives(acquisition)
    # None: the preset's, "discrete_half_rank" (default) or "standardize"; several objectives: standardized
    transform = outcome_transform_of(outcome_transform, standardize,
                                     default="standardize" if multi else chosen["outcome_transform"])
    draw_nu = None
    if multi:  # nu scales each objective's pathwise draw
        draw_nu = chosen["nu"] if nu is None else check_scale("nu", nu)
        nu = None
    _check_acquisition(acquisition, nu)
    pathwise = acquisition is None and thompson == "pathwise"
    no_gradient = None
    if acquisition is None and not pathwise:
        no_gradient = "thompson='independent' draws per point have no gradient; use thompson='pathwise'"
    aopt = as_acq_optimizer(acq_optimizer, default=chosen["acq_optimizer"], no_gradient=no_gradient)
    def caller_set(field: str) -> bool:
        """Whether the caller chose ``acq_optimizer``'s ``field`` (a whole AcqOptimizer sets all)."""
        return isinstance(acq_optimizer, AcqOptimizer) or (isinstance(acq_optimizer, dict) and field in acq_optimizer)

    climb_by_dim = pathwise and not caller_set("steps")  # CLIMB_BELOW_DIM applies unless the caller set steps
    nu_by_dim = pathwise and nu is None and preset == "default"  # default_nu applies
    nu_value = chosen["nu"] if nu is None else nu
    acq = acquisition if acquisition is not None else independent_thompson(nu_value)

    surrogate = neural_linear(network, width=width, lam=lam, train=train_cfg, warm_start=warm,
                              feature_params=feature_params, fit_scales=fit, mode=posterior, embedding=input_embedding,
                              chunk_size=chunk_size, category_weight=category_weight,
                              boundary_penalty=boundary_penalty, boundary_discrete_only=boundary_discrete_only)
    if multi:
        one = surrogate
        surrogate = independent(one._replace(sample=lambda state, key: one.sample(state, key, draw_nu)))
    base = bo_algorithm(surrogate, acq, acq_optimizer=aopt, name="neural-bo-mo" if multi else "neural-bo",
                        q=1 if pathwise else q, refit_every=refit_every, outcome_transform=transform,
                        batch_rule="independent" if acquisition is None or multi else "fantasy")
    if not pathwise:
        return base
    on_categories = None  # EI on a space with a categorical parameter (categorical_acquisition="ei", q = 1)
    if categorical_acquisition == "ei" and q == 1:
        ei_opts = aopt._replace(
            steps=aopt.steps if caller_set("steps") else 0,
            raw_samples=aopt.raw_samples if caller_set("raw_samples") else CATEGORICAL_EI_RAW_SAMPLES)
        on_categories = bo_algorithm(surrogate, expected_improvement(), acq_optimizer=ei_opts,
                                     name="neural-bo", refit_every=refit_every, outcome_transform=transform)

    def ask(state: BOState, key: Array, region: Optional[SearchRegion] = None) -> Array:
        """The pathwise Thompson sample's minimum (its exploration scale by dimension and
        region, :func:`default_nu`); on a space with a categorical parameter, with
        ``categorical_acquisition="ei"``, the best raw sample by expected improvement."""
        if on_categories is not None and has_categories(state.data.space):  # static
            return on_categories.ask(state, key, region)
        k_c, k_a = jax.random.split(key)
        d = state.bounds.dim  # static: the number of parameters (a category's one-hot columns count once)
        in_region = region is not None  # static: asked inside a trust region
        sample = surrogate.sample(state.model, k_a, default_nu(d, in_region) if nu_by_dim else nu_value)
        opts = aopt._replace(steps=0) if climb_by_dim and d >= CLIMB_BELOW_DIM else aopt
        return state.bounds.from_unit(optimize_acqf(lambda u_c: -sample(u_c), k_c, state.data, opts, region))

    return make_algorithm(base.init, ask, base.tell, name="neural-bo", surrogate=base.surrogate, info=base.info, q=q,
                          batch_rule="independent", model=surrogate,
                          outcome_transform=base.outcome_transform)


