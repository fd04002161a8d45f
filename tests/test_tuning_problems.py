"""The scikit-learn tuning tasks (nbo_jax.benchmarks.tuning): each objective equals the 3-fold
cross-validated loss computed here with scikit-learn directly, points decode to the typed values
the estimator receives, and a vmapped batch equals its points evaluated alone."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn import datasets
from sklearn.calibration import CalibratedClassifierCV
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.linear_model import SGDClassifier
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler, StandardScaler
from sklearn.svm import SVC

from nbo_jax.benchmarks import tuning

# (task, point x (P,) exact in float32, the reference model at that point, loader, scikit-learn scoring)
CASES = [
    ("svc_breast_cancer", [8.0, 2.0 ** -7, 1.0],
     lambda: make_pipeline(StandardScaler(), SVC(C=8.0, gamma=2.0 ** -7, kernel="poly")),
     datasets.load_breast_cancer, "accuracy"),
    ("knn_wine", [7.0, 1.0, 1.0, 2.0],
     lambda: make_pipeline(MinMaxScaler(), KNeighborsClassifier(n_neighbors=7, p=1, weights="distance")),
     datasets.load_wine, "accuracy"),
    ("rf_diabetes", [4.0, 0.5, 8.0, 1.0],
     lambda: RandomForestRegressor(n_estimators=10, max_depth=4, max_features=0.5, min_samples_leaf=8,
                                   bootstrap=False, random_state=0),
     datasets.load_diabetes, "neg_mean_squared_error"),
    ("svc_breast_cancer_nll", [8.0, 2.0 ** -7, 1.0],
     lambda: make_pipeline(StandardScaler(), CalibratedClassifierCV(SVC(C=8.0, gamma=2.0 ** -7, kernel="poly"),
                                                                    method="sigmoid", ensemble=False)),
     datasets.load_breast_cancer, "neg_log_loss"),
    ("knn_wine_nll", [7.0, 1.0, 1.0, 2.0],
     lambda: make_pipeline(MinMaxScaler(), KNeighborsClassifier(n_neighbors=7, p=1, weights="distance")),
     datasets.load_wine, "neg_log_loss"),
    ("sgd_breast_cancer_nll", [2.0 ** -10, 2.0 ** -4, 2.0, 2.0],
     lambda: make_pipeline(StandardScaler(), SGDClassifier(loss="log_loss", alpha=2.0 ** -10, eta0=2.0 ** -4,
                                                           learning_rate="invscaling", penalty="elasticnet",
                                                           max_iter=50, tol=None, random_state=0)),
     datasets.load_breast_cancer, "neg_log_loss"),
    ("knn_iris_nll", [2.0, 3.0, 0.0, 1.0],
     lambda: make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=2, p=3, weights="uniform")),
     datasets.load_iris, "neg_log_loss"),
    ("rf_breast_cancer", [6.0, 0.25, 4.0, 0.0],
     lambda: RandomForestClassifier(n_estimators=10, max_depth=6, max_features=0.25, min_samples_leaf=4,
                                    bootstrap=True, random_state=0),
     datasets.load_breast_cancer, "accuracy"),
    ("rf_friedman1", [9.0, 0.375, 2.0, 1.0],
     lambda: RandomForestRegressor(n_estimators=10, max_depth=9, max_features=0.375, min_samples_leaf=2,
                                   bootstrap=False, random_state=0),
     lambda return_X_y: datasets.make_friedman1(n_samples=442, n_features=10, noise=1.0, random_state=0),
     "neg_mean_squared_error"),
    ("rf_friedman1_noisy", [4.0, 0.55, 8.0, 0.0],
     lambda: RandomForestRegressor(n_estimators=10, max_depth=4, max_features=0.55, min_samples_leaf=8,
                                   bootstrap=True, random_state=0),
     lambda return_X_y: datasets.make_friedman1(n_samples=442, n_features=10, noise=5.0, random_state=0),
     "neg_mean_squared_error"),
    ("svc_wine_nll", [8.0, 2.0 ** -10, 2.0],
     lambda: make_pipeline(StandardScaler(), CalibratedClassifierCV(SVC(C=8.0, gamma=2.0 ** -10, kernel="sigmoid"),
                                                                    method="sigmoid", ensemble=False)),
     datasets.load_wine, "neg_log_loss"),
]


@pytest.mark.parametrize("name, x, model, loader, scoring", CASES, ids=[c[0] for c in CASES])
def test_objective_is_the_cross_validated_loss(name, x, model, loader, scoring):
    X, y = loader(return_X_y=True)
    folds = (KFold if scoring == "neg_mean_squared_error" else StratifiedKFold)(3, shuffle=True, random_state=0)
    scores = cross_val_score(model(), X, y, cv=folds, scoring=scoring)
    expected = 1.0 - scores.mean() if scoring == "accuracy" else -scores.mean()
    problem = {**tuning.TUNING, **tuning.SELECTION}[name]()
    assert problem.optimal_value is None and problem.dim == len(x) == problem.bounds.dim
    value = problem.objective(jnp.asarray(x, jnp.float32))
    assert value.shape == () and value.dtype == jnp.float32
    np.testing.assert_allclose(float(value), expected, rtol=1e-6)
    assert tuning.cv_loss(name, tuning.configuration(problem.bounds, x)) == pytest.approx(expected, rel=1e-12)


def test_points_decode_to_the_values_scikit_learn_receives():
    space = tuning.space("knn_wine")
    config = tuning.configuration(space, np.float32([7.0, 3.0, 1.0, 0.0]))
    assert config == {"n_neighbors": 7, "p": 3, "weights": "distance", "scaler": "none"}
    assert type(config["n_neighbors"]) is int and type(config["p"]) is int
    params = tuning.estimator("knn_wine", config).get_params()
    assert params["steps"][0][1] == "passthrough"
    assert (params["kneighborsclassifier__n_neighbors"], params["kneighborsclassifier__p"],
            params["kneighborsclassifier__weights"]) == (7, 3, "distance")

    rf = tuning.estimator("rf_diabetes", tuning.configuration(tuning.space("rf_diabetes"), [15, 1.0, 32, 0])).get_params()
    assert (rf["max_depth"], rf["max_features"], rf["min_samples_leaf"], rf["bootstrap"]) == (15, 1.0, 32, True)
    assert type(rf["max_depth"]) is int and rf["bootstrap"] is True

    svc_space = tuning.space("svc_breast_cancer")
    # float32's nearest value to the log-scaled lower bound 1e-2 lies below it: clipped, not refused
    svc = tuning.configuration(svc_space, np.float32([1e-2, 1.0, 2.0]))
    assert svc == {"C": 1e-2, "gamma": 1.0, "kernel": "sigmoid"} and type(svc["C"]) is float
    assert tuning.estimator("svc_breast_cancer", svc).get_params()["svc__kernel"] == "sigmoid"


@pytest.mark.parametrize("x, match", [([7.0, 3.0, 2.0, 0.0], "'weights'"), ([7.5, 3.0, 1.0, 0.0], "'n_neighbors'"),
                                      ([7.0, 5.0, 1.0, 0.0], "'p'"), ([7.0, 3.0, 1.0], r"shape \(4,\)")])
def test_invalid_points_are_refused_naming_the_parameter(x, match):
    with pytest.raises(ValueError, match=match):
        tuning.configuration(tuning.space("knn_wine"), x)


def test_unknown_task_is_refused():
    with pytest.raises(ValueError, match="name: unknown tuning task 'svm'"):
        tuning.space("svm")


def test_vmapped_batch_equals_single_evaluations():
    problem = tuning.knn_wine()
    X = jnp.asarray([[1.0, 2.0, 0.0, 0.0], [25.0, 4.0, 1.0, 1.0]], jnp.float32)
    batch = jax.jit(jax.vmap(problem.objective))(X)
    singles = [float(problem.objective(x)) for x in X]
    assert batch.shape == (2,)
    np.testing.assert_array_equal(np.asarray(batch), np.float32(singles))
    assert singles[0] != singles[1]  # two different losses: an exchanged order would fail


def test_selection_tasks_are_kept_apart_from_the_test_tasks():
    """Defaults are chosen on SELECTION's tasks and measured on TUNING's: no task is in both, and
    every task with a metric is in one of them."""
    assert set(tuning.SELECTION).isdisjoint(tuning.TUNING)
    assert set(tuning.METRICS) == set(tuning.TUNING) | set(tuning.SELECTION)
    assert tuning.METRICS["sgd_breast_cancer_nll"] == tuning.METRICS["knn_iris_nll"] == "nll"
