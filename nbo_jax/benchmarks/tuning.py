"""Hyperparameter tuning of scikit-learn models on the data sets scikit-learn ships (no
download), in the style of Bayesmark (Turner, Eriksson, McCourt, Kiili, Laaksonen, Xu and
Guyon 2021, "Bayesian optimization is superior to random search for machine learning
hyperparameter tuning: analysis of the black-box optimization challenge 2020", NeurIPS 2020
competition track, Section 2: a task is a model x a data set x a metric, its loss the
cross-validated metric). Each task is a :class:`~nbo_jax.types.Problem` whose ``bounds`` is a
mixed :class:`~nbo_jax.search_space.SearchSpace` (a point holds one number per parameter, a
category as its index; minimization; ``optimal_value=None``, unknown)::

    task               model (scikit-learn)            data (n x d)          loss
    svc_breast_cancer  StandardScaler + SVC            breast_cancer 569x30  1 - accuracy
                       C log [1e-2, 1e3], gamma log [1e-4, 1], kernel {rbf, poly, sigmoid}
    knn_wine           scaler + KNeighborsClassifier   wine 178x13           1 - accuracy
                       n_neighbors {1..25}, p {1..4}, weights {uniform, distance},
                       scaler {none, standard, minmax}
    rf_diabetes        RandomForestRegressor, 10 trees diabetes 442x10       MSE
                       max_depth {1..15}, max_features [0.1, 1], min_samples_leaf log
                       {1..32}, bootstrap {True, False}
    svc_breast_cancer_nll, knn_wine_nll: the two classifiers (same space, data and folds)
                       with Bayesmark's other classification metric, the log loss (nll) of
                       the predicted class probabilities (the SVC's by Platt scaling:
                       ``CalibratedClassifierCV(svc, method="sigmoid", ensemble=False)``)
    sgd_breast_cancer_nll  StandardScaler + SGDClassifier(loss="log_loss"), 50 epochs;
                       breast_cancer; log loss. alpha log [1e-6, 1], eta0 log [1e-4, 1],
                       learning_rate {optimal, constant, invscaling, adaptive},
                       penalty {l2, l1, elasticnet}. A selection task (SELECTION), where
                       defaults are chosen, not a test task (TUNING)
    knn_iris_nll       knn_wine's model and space on iris 150x4; log loss. A selection task
                       (SELECTION), heavy-tailed as knn_wine_nll
    rf_breast_cancer   rf_diabetes' forest and space as a classifier on breast_cancer; 1 -
                       accuracy. A selection task (SELECTION), the twin of the tasks that tie
    rf_friedman1       rf_diabetes' forest and space on Friedman #1 442x10 (generated:
                       make_friedman1(442, 10, noise=1, random_state=0); 5 of the 10 features
                       inform); MSE. A selection task (SELECTION), rf_diabetes' twin
    rf_friedman1_noisy rf_friedman1 with noise=5: shallow trees come near the best, as on
                       diabetes; MSE. A selection task (SELECTION), a second twin
    svc_wine_nll       svc_breast_cancer_nll's model and space on wine 178x13; log loss. A
                       selection task (SELECTION), its twin, where a third of the runs of
                       every method end at the box's edge (gamma = 1e-4, C large)

    loss(config) = mean over the 3 folds of the metric's loss on the held-out fold
                   (StratifiedKFold for classifiers, KFold for the regressor; 3 folds,
                   shuffled with random_state=0; the forest's random_state=0)

The ranges follow Bayesmark's ``bayesmark/sklearn_funcs.py`` (kNN's ``n_neighbors`` and ``p``,
the SVM's log-scaled ``C`` and ``gamma``, the forest's ``max_depth``), widened where the data
are standardized (``gamma``) and given a categorical parameter each (the SVM's kernel, kNN's
weights and scaler, the forest's bootstrap), so every task mixes parameter kinds. Bayesmark
cross-validates on 80 % of the data with 5 folds; the whole data set and 3 folds keep one
evaluation near 10-50 ms on one core. Evaluations are deterministic (fixed splitter and seeds)
and memoized per configuration. An accuracy on 178 or 569 points moves in steps of one
sample, so runs often tie on it; the log loss is continuous.

The objective runs scikit-learn on the host through :func:`jax.pure_callback`
(``vmap_method="broadcast_all"``: one callback receives every seed's point of a step), so it
sits inside the jit-compiled, vmapped :func:`nbo_jax.run_bo`. scikit-learn (Pedregosa et al.
2011, "Scikit-learn: machine learning in Python", JMLR 12) comes with the ``tasks`` extra.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from typing import NamedTuple

import jax
import numpy as np

from ..search_space import Categorical, Continuous, Integer, SearchSpace, search_space
from ..types import Problem
from .synthetic import _as_float

Array = jax.Array

N_FOLDS = 3
"""Cross-validation folds of every task."""
SEED = 0
"""``random_state`` of the fold splitter, the random forest and the SGD classifier."""
SGD_EPOCHS = 50
"""Epochs of ``sgd_breast_cancer_nll``'s SGD classifier (``max_iter``, ``tol=None``: always all)."""

# estimator -> its parameters
_SPACES = {
    "svc": (Continuous("C", 1e-2, 1e3, log=True), Continuous("gamma", 1e-4, 1.0, log=True),
            Categorical("kernel", ("rbf", "poly", "sigmoid"))),
    "knn": (Integer("n_neighbors", 1, 25), Integer("p", 1, 4), Categorical("weights", ("uniform", "distance")),
            Categorical("scaler", ("none", "standard", "minmax"))),
    "rf": (Integer("max_depth", 1, 15), Continuous("max_features", 0.1, 1.0),
           Integer("min_samples_leaf", 1, 32, log=True), Categorical("bootstrap", (True, False))),
    "sgd": (Continuous("alpha", 1e-6, 1.0, log=True), Continuous("eta0", 1e-4, 1.0, log=True),
            Categorical("learning_rate", ("optimal", "constant", "invscaling", "adaptive")),
            Categorical("penalty", ("l2", "l1", "elasticnet"))),
}


class _Model(NamedTuple):
    """A model: an estimator (a key of ``_SPACES``) on a data set (its scikit-learn loader, or
    generator with its ``(name, value)`` arguments)."""

    estimator: str
    loader: str
    classification: bool
    generated: tuple = ()


def _friedman1(noise: float) -> tuple:
    """``make_friedman1``'s arguments: diabetes' size (442 x 10), ``noise`` the std of its Gaussian noise."""
    return (("n_samples", 442), ("n_features", 10), ("noise", noise), ("random_state", SEED))


# model (a task is a model x a metric, _TASKS) -> its estimator and data set
_MODELS = {"svc_breast_cancer": _Model("svc", "load_breast_cancer", True), "knn_wine": _Model("knn", "load_wine", True),
           "rf_diabetes": _Model("rf", "load_diabetes", False),
           "sgd_breast_cancer": _Model("sgd", "load_breast_cancer", True), "knn_iris": _Model("knn", "load_iris", True),
           "rf_breast_cancer": _Model("rf", "load_breast_cancer", True),
           "rf_friedman1": _Model("rf", "make_friedman1", False, _friedman1(1.0)),
           "rf_friedman1_noisy": _Model("rf", "make_friedman1", False, _friedman1(5.0)),
           "svc_wine": _Model("svc", "load_wine", True)}
# task -> (model, metric): Bayesmark's task, a model x a data set x a metric
_TASKS = {"svc_breast_cancer": ("svc_breast_cancer", "accuracy"), "knn_wine": ("knn_wine", "accuracy"),
          "rf_diabetes": ("rf_diabetes", "mse"), "svc_breast_cancer_nll": ("svc_breast_cancer", "nll"),
          "knn_wine_nll": ("knn_wine", "nll"), "sgd_breast_cancer_nll": ("sgd_breast_cancer", "nll"),
          "knn_iris_nll": ("knn_iris", "nll"), "rf_breast_cancer": ("rf_breast_cancer", "accuracy"),
          "rf_friedman1": ("rf_friedman1", "mse"), "rf_friedman1_noisy": ("rf_friedman1_noisy", "mse"),
          "svc_wine_nll": ("svc_wine", "nll")}
# metric -> (scikit-learn scoring, the loss's name); "mse" is the regressor's, the others classifiers'
_SCORING = {"accuracy": ("accuracy", "1 - accuracy"), "nll": ("neg_log_loss", "log loss"),
            "mse": ("neg_mean_squared_error", "mean squared error")}
METRICS = {task: metric for task, (_, metric) in _TASKS.items()}
"""Task -> its loss: ``"accuracy"`` (``1 -`` accuracy), ``"nll"`` (the log loss of the predicted
class probabilities, Bayesmark's ``nll``) or ``"mse"`` (mean squared error)."""


def _sklearn():
    """Import scikit-learn, or raise an ImportError naming the ``tasks`` extra."""
    try:
        import sklearn  # noqa: F401
    except ImportError as err:  # pragma: no cover - the extra is installed in the test environment
        raise ImportError("the tuning tasks need scikit-learn, from the 'tasks' extra "
                          f"(pip install 'nbo-jax[tasks]'): {err}") from err


def _model(name: str) -> str:
    """The model of task ``name`` (the key of its space and data set).

    Raises:
        ValueError: unknown task name."""
    if name not in _TASKS:
        raise ValueError(f"name: unknown tuning task {name!r}; tasks: {sorted(_TASKS)}")
    return _TASKS[name][0]


def _parameters(model: str) -> tuple:
    """The parameters of ``model`` (a key of ``_MODELS``): its estimator's."""
    return _SPACES[_MODELS[model].estimator]


def load_data(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The data set of task ``name`` (loaded or generated once per data set, cached): ``X (n,
    d)`` float64 features and ``y (n,)`` targets (int64 class labels, float64 for the regression task).

    Raises:
        ValueError: unknown task name. ImportError: the ``tasks`` extra is missing."""
    m = _MODELS[_model(name)]
    return _load(m.loader, m.classification, m.generated)


@functools.cache
def _load(loader: str, classification: bool, generated: tuple) -> tuple[np.ndarray, np.ndarray]:
    _sklearn()
    from sklearn import datasets

    generate = getattr(datasets, loader)
    X, y = generate(**dict(generated)) if generated else generate(return_X_y=True)
    return np.asarray(X, np.float64), np.asarray(y, np.int64 if classification else np.float64)


def space(name: str) -> SearchSpace:
    """The :class:`~nbo_jax.search_space.SearchSpace` of task ``name`` (module table).

    Raises:
        ValueError: unknown task name."""
    return search_space(_parameters(_model(name)))


def configuration(space: SearchSpace, x) -> dict:
    """The typed configuration of a point ``x (P,)`` (one number per parameter): a float for a
    continuous parameter (clipped to its range, which float32 may miss by an ulp), a Python
    ``int`` for an integer one, the choice itself for a categorical one (``x`` holds its index).

    Raises:
        ValueError: ``x`` not of shape ``(P,)``, not finite, outside the space beyond float32
            rounding, off an integer's step or not a category's index (naming the parameter)."""
    x = np.asarray(x, np.float64)
    if x.shape != (space.dim,):
        raise ValueError(f"x must have shape ({space.dim},), one number per parameter, got {x.shape}")
    config = {}
    for p, v in zip(space.parameters, x):
        if not math.isfinite(v):
            raise ValueError(f"parameter {p.name!r}: value {v} is not finite")
        if isinstance(p, Continuous):
            tol = 1e-6 * max(abs(p.low), abs(p.high))
            if not (p.low - tol <= v <= p.high + tol):
                raise ValueError(f"parameter {p.name!r}: {v} is outside [{p.low}, {p.high}]")
            config[p.name] = float(min(max(v, p.low), p.high))
            continue
        low, high, step = (0, len(p.choices) - 1, 1) if isinstance(p, Categorical) else (p.low, p.high, p.step)
        k = (v - low) / step
        if abs(k - round(k)) > 1e-4 or not (low <= v + 1e-4 and v - 1e-4 <= high):
            what = "a category's index" if isinstance(p, Categorical) else f"a value of {{{low}, ..., {high}}} step {step}"
            raise ValueError(f"parameter {p.name!r}: {v} is not {what}")
        i = low + step * round(k)
        config[p.name] = p.choices[i] if isinstance(p, Categorical) else int(i)
    return config


def estimator(name: str, config: dict):
    """The unfitted scikit-learn estimator of task ``name`` at ``config`` (a dict by parameter
    name, typed values as :func:`configuration` returns): a ``Pipeline`` for the SVM and kNN
    (the SVM of ``svc_breast_cancer_nll`` inside ``CalibratedClassifierCV(method="sigmoid",
    ensemble=False)``: Platt scaling fitted on 5-fold predictions of the training folds), a
    ``RandomForestRegressor(n_estimators=10, random_state=0)`` for the forest
    (``RandomForestClassifier`` on a classification data set).

    Raises:
        ValueError: unknown task name. KeyError: a parameter missing from ``config``."""
    model = _MODELS[_model(name)]
    kind = model.estimator
    _sklearn()
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler, StandardScaler

    if kind == "svc":
        from sklearn.calibration import CalibratedClassifierCV
        from sklearn.svm import SVC

        svc = SVC(C=config["C"], gamma=config["gamma"], kernel=config["kernel"])
        if METRICS[name] == "nll":  # an SVC has no class probabilities of its own: Platt scaling
            svc = CalibratedClassifierCV(svc, method="sigmoid", ensemble=False)
        return make_pipeline(StandardScaler(), svc)
    if kind == "knn":
        from sklearn.neighbors import KNeighborsClassifier

        scaler = {"none": "passthrough", "standard": StandardScaler(), "minmax": MinMaxScaler()}[config["scaler"]]
        return make_pipeline(scaler, KNeighborsClassifier(n_neighbors=config["n_neighbors"], p=config["p"],
                                                          weights=config["weights"]))
    if kind == "sgd":
        from sklearn.linear_model import SGDClassifier

        return make_pipeline(StandardScaler(), SGDClassifier(
            loss="log_loss", alpha=config["alpha"], eta0=config["eta0"], learning_rate=config["learning_rate"],
            penalty=config["penalty"], max_iter=SGD_EPOCHS, tol=None, random_state=SEED))
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    forest = RandomForestClassifier if model.classification else RandomForestRegressor
    return forest(n_estimators=10, max_depth=config["max_depth"],
                                 max_features=config["max_features"],
                                 min_samples_leaf=config["min_samples_leaf"], bootstrap=config["bootstrap"],
                                 random_state=SEED)


def cv_loss(name: str, config: dict) -> float:
    """The loss of task ``name`` at ``config`` (module box; :data:`METRICS`): ``1 - `` the mean
    3-fold accuracy, the mean 3-fold log loss (nats per point) or the mean 3-fold mean squared
    error (target units squared); float64, memoized per configuration.

    Raises:
        ValueError: unknown task name. KeyError: a parameter missing from ``config``.
        ImportError: the ``tasks`` extra is missing."""
    return _cv_loss(name, tuple(config[p.name] for p in _parameters(_model(name))))


@functools.lru_cache(maxsize=65536)
def _cv_loss(name: str, values: tuple) -> float:
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score

    model, metric = _TASKS[name]
    X, y = load_data(name)
    folds = (StratifiedKFold if _MODELS[model].classification else KFold)(N_FOLDS, shuffle=True, random_state=SEED)
    unfitted = estimator(name, dict(zip((p.name for p in _parameters(model)), values)))
    with warnings.catch_warnings():  # BO tries configurations that fit badly on purpose
        warnings.simplefilter("ignore", ConvergenceWarning)
        scores = cross_val_score(unfitted, X, y, cv=folds, scoring=_SCORING[metric][0])
    return float(1.0 - np.mean(scores)) if metric == "accuracy" else float(-np.mean(scores))


@functools.cache
def _problem(name: str) -> Problem:
    sp = space(name)

    def host(x):
        x = np.asarray(x)
        flat = x.reshape(-1, sp.dim)
        out = np.array([cv_loss(name, configuration(sp, row)) for row in flat], np.float64)
        return out.reshape(x.shape[:-1]).astype(x.dtype)

    def objective(x: Array) -> Array:
        x = _as_float(x)
        if x.shape != (sp.dim,):
            raise ValueError(f"{name} objective: x must have shape ({sp.dim},), got {x.shape}")
        return jax.pure_callback(host, jax.ShapeDtypeStruct((), x.dtype), x, vmap_method="broadcast_all")

    model, metric = _TASKS[name]
    m = _MODELS[model]
    data = f"sklearn.datasets.{m.loader}" + (f"({', '.join(f'{k}={v}' for k, v in m.generated)})" if m.generated else "")
    return Problem(name, sp.dim, sp, objective, optimal_value=None,
                   metadata={"source": "Turner et al. 2021 (Bayesmark), scikit-learn tuning",
                             "data": data, "folds": N_FOLDS, "seed": SEED, "loss": _SCORING[metric][1]})


def svc_breast_cancer() -> Problem:
    """A support vector classifier on standardized Wisconsin breast cancer data (569 x 30, 2
    classes): ``C`` log in ``[1e-2, 1e3]``, ``gamma`` log in ``[1e-4, 1]``, ``kernel`` in
    ``(rbf, poly, sigmoid)``; loss ``1 - `` 3-fold accuracy.

    ``objective(x (3,)) -> ()`` in ``x``'s float dtype, evaluated by scikit-learn on the host
    (:func:`jax.pure_callback`, ``vmap_method="broadcast_all"``); cached (one
    :class:`~nbo_jax.types.Problem` per process, so ``jit`` compiles once).

    Raises:
        ImportError: the ``tasks`` extra (scikit-learn) is missing."""
    _sklearn()
    return _problem("svc_breast_cancer")


def knn_wine() -> Problem:
    """k nearest neighbours on the wine data (178 x 13, 3 classes): ``n_neighbors`` in
    ``{1..25}``, Minkowski ``p`` in ``{1..4}``, ``weights`` in ``(uniform, distance)``,
    ``scaler`` in ``(none, standard, minmax)``; loss ``1 - `` 3-fold accuracy.

    ``objective(x (4,)) -> ()``, evaluated as :func:`svc_breast_cancer`'s; cached.

    Raises:
        ImportError: the ``tasks`` extra (scikit-learn) is missing."""
    _sklearn()
    return _problem("knn_wine")


def rf_diabetes() -> Problem:
    """A random forest of 10 regression trees on the diabetes data (442 x 10): ``max_depth`` in
    ``{1..15}``, ``max_features`` (a fraction) in ``[0.1, 1]``, ``min_samples_leaf`` log in
    ``{1..32}``, ``bootstrap`` in ``(True, False)``; loss the 3-fold mean squared error (target
    units squared).

    ``objective(x (4,)) -> ()``, evaluated as :func:`svc_breast_cancer`'s; cached.

    Raises:
        ImportError: the ``tasks`` extra (scikit-learn) is missing."""
    _sklearn()
    return _problem("rf_diabetes")


def svc_breast_cancer_nll() -> Problem:
    """:func:`svc_breast_cancer` with the log loss of its Platt-scaled class probabilities
    (Platt 1999; ``CalibratedClassifierCV(SVC(...), method="sigmoid", ensemble=False)``, which
    scikit-learn names in place of ``SVC(probability=True)``; Bayesmark's ``nll``) as the loss: the mean
    3-fold log loss in nats per point, a continuous loss where the accuracy takes few values.

    Raises:
        ImportError: the ``tasks`` extra (scikit-learn) is missing."""
    _sklearn()
    return _problem("svc_breast_cancer_nll")


def knn_wine_nll() -> Problem:
    """:func:`knn_wine` with the log loss of its class probabilities (the neighbours' vote
    shares; Bayesmark's ``nll``) as the loss: the mean 3-fold log loss in nats per point
    (scikit-learn clips a probability of 0 to the float64 epsilon, about 36 nats).

    Raises:
        ImportError: the ``tasks`` extra (scikit-learn) is missing."""
    _sklearn()
    return _problem("knn_wine_nll")


def sgd_breast_cancer_nll() -> Problem:
    """Logistic regression by stochastic gradient descent on the standardized breast cancer data
    (569 x 30; ``SGDClassifier(loss="log_loss")``, :data:`SGD_EPOCHS` epochs): ``alpha`` (the
    penalty's weight) log in ``[1e-6, 1]``, ``eta0`` (the initial learning rate) log in ``[1e-4,
    1]``, ``learning_rate`` (its schedule) in ``(optimal, constant, invscaling, adaptive)``,
    ``penalty`` in ``(l2, l1, elasticnet)``; loss the mean 3-fold log loss in nats per point,
    heavy-tailed (about 0.07 at the best configurations, above 1 where a large step or penalty
    spoils the fit). A selection task (:data:`SELECTION`), not one of :data:`TUNING`.

    Raises:
        ImportError: the ``tasks`` extra (scikit-learn) is missing."""
    _sklearn()
    return _problem("sgd_breast_cancer_nll")


def knn_iris_nll() -> Problem:
    """:func:`knn_wine`'s model and space on the iris data (150 x 4, 3 classes) with the log loss
    of its class probabilities (Bayesmark's ``nll``): the mean 3-fold log loss in nats per point,
    about 0.075 at the best configurations and above 1 at one or two neighbours (a probability of
    0 is clipped to the float64 epsilon). A selection task (:data:`SELECTION`), not one of
    :data:`TUNING`.

    Raises:
        ImportError: the ``tasks`` extra (scikit-learn) is missing."""
    _sklearn()
    return _problem("knn_iris_nll")


def rf_breast_cancer() -> Problem:
    """:func:`rf_diabetes`'s forest and space as a classifier (``RandomForestClassifier``, 10
    trees) on the breast cancer data (569 x 30, 2 classes); loss ``1 - `` 3-fold accuracy. Flat
    in ``max_features`` between multiples of 1/30 (the forest draws ``int(max_features * 30)``
    features) and in steps of one sample: a selection task (:data:`SELECTION`), the twin of the
    tuning tasks that end in ties, not one of :data:`TUNING`.

    Raises:
        ImportError: the ``tasks`` extra (scikit-learn) is missing."""
    _sklearn()
    return _problem("rf_breast_cancer")


def rf_friedman1() -> Problem:
    """:func:`rf_diabetes`'s forest (10 regression trees) and space on Friedman #1 (Friedman 1991,
    "Multivariate adaptive regression splines", Ann. Statist. 19(1); scikit-learn's
    ``make_friedman1(n_samples=442, n_features=10, noise=1.0, random_state=0)``, diabetes' size:
    ``y = 10 sin(pi x1 x2) + 20 (x3 - 0.5)^2 + 10 x4 + 5 x5 + N(0, 1)``, ``x`` uniform on
    ``[0, 1]^10``, the last five features noise); loss the 3-fold mean squared error. Flat in
    ``max_features`` between multiples of 1/10 (the forest draws ``int(max_features * 10)``
    features) as :func:`rf_diabetes`, with a continuous loss: a selection task
    (:data:`SELECTION`), the twin of :func:`rf_diabetes`, not one of :data:`TUNING`.

    Raises:
        ImportError: the ``tasks`` extra (scikit-learn) is missing."""
    _sklearn()
    return _problem("rf_friedman1")


def rf_friedman1_noisy() -> Problem:
    """:func:`rf_friedman1` with five times the noise on Friedman #1 (``make_friedman1(n_samples=442,
    n_features=10, noise=5.0, random_state=0)``): the forest's depth-4 trees come within 0.4 of
    its best 3-fold mean squared error (30.74 on a grid of 9600 configurations), as
    :func:`rf_diabetes`'s shallow trees come near its best; a selection task (:data:`SELECTION`),
    a second twin of :func:`rf_diabetes`, not one of :data:`TUNING`.

    Raises:
        ImportError: the ``tasks`` extra (scikit-learn) is missing."""
    _sklearn()
    return _problem("rf_friedman1_noisy")


def svc_wine_nll() -> Problem:
    """:func:`svc_breast_cancer_nll`'s model, space and loss on the wine data (178 x 13, three
    classes; the log loss of the Platt-scaled one-vs-rest probabilities): a selection task
    (:data:`SELECTION`), the twin of :func:`svc_breast_cancer_nll`, not one of :data:`TUNING`.
    Its best log loss on a grid of 11 x 11 values of ``C`` and ``gamma`` per kernel is 0.0660
    (RBF, ``C = 3.16``, ``gamma = 0.025``); at the corner ``gamma = 1e-4``, ``C`` from 60 to
    1000 the RBF and sigmoid kernels give 0.083 to 0.09, worse than random search's median best
    after 45 evaluations (0.0774), yet a third of the runs of GP-EI, Neural-BO and TPE end
    there (30 seeds), as Neural-BO's do on :func:`svc_breast_cancer_nll`'s corner.

    Raises:
        ImportError: the ``tasks`` extra (scikit-learn) is missing."""
    _sklearn()
    return _problem("svc_wine_nll")


TUNING: dict[str, Callable[[], Problem]] = {"svc_breast_cancer": svc_breast_cancer, "knn_wine": knn_wine,
                                            "rf_diabetes": rf_diabetes, "svc_breast_cancer_nll": svc_breast_cancer_nll,
                                            "knn_wine_nll": knn_wine_nll}
"""Name -> builder of the tuning problems (the mixed benchmark's test tasks)."""
SELECTION: dict[str, Callable[[], Problem]] = {"sgd_breast_cancer_nll": sgd_breast_cancer_nll,
                                               "knn_iris_nll": knn_iris_nll, "rf_breast_cancer": rf_breast_cancer,
                                               "rf_friedman1": rf_friedman1, "rf_friedman1_noisy": rf_friedman1_noisy,
                                               "svc_wine_nll": svc_wine_nll}
"""Name -> builder of the tuning tasks on which defaults are chosen (``benchmarks/mixed_selection.py``),
kept apart from :data:`TUNING`, the tasks they are tested on."""

__all__ = ["METRICS", "N_FOLDS", "SEED", "SELECTION", "SGD_EPOCHS", "TUNING", "configuration", "cv_loss",
           "estimator", "knn_iris_nll", "knn_wine", "knn_wine_nll", "load_data", "rf_breast_cancer", "rf_diabetes",
           "rf_friedman1", "rf_friedman1_noisy", "sgd_breast_cancer_nll", "space", "svc_breast_cancer", "svc_breast_cancer_nll",
           "svc_wine_nll"]
