"""Optuna's own conformance kit for third-party samplers (optuna.testing.pytest_samplers),
held against NBOSampler at small sizes (issue 24). The basic, relative-sampling and
multi-objective cases run with random search as the algorithm (it takes any number of
objectives); the single-objective-only case with GP-EI, refused on a study of two objectives
before anything is compiled. They test the sampler (the
study's history read into the optimizer's domain, the proposals written back as each
distribution's values; the basic ones mostly ``sample_independent``, which delegates to
Optuna's independent sampler, and short studies with NaN values, fixed parameters and dynamic
ranges), and a model would only add a compilation per search space (the kit has over a
hundred). GP-EI, Neural-BO and NeuralBOSampler run the kit's relative-sampling assertions on
one float, one stepped integer and one categorical parameter; ``optuna_cases.py`` holds the
model-based studies."""

import pytest

optuna = pytest.importorskip("optuna")
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution  # noqa: E402
from optuna.testing import pytest_samplers as kit  # noqa: E402

import nbo_jax as nbo  # noqa: E402
from nbo_jax.integrations.optuna import NBOSampler, NeuralBOSampler  # noqa: E402

_RANDOM = nbo.random_search()  # one factory call: shared compiles
_GP = nbo.gp_bo(fit_steps=5, acq_optimizer=dict(raw_samples=64, num_restarts=2, steps=3))


class TestNBOSampler(kit.BasicSamplerTestCase, kit.RelativeSamplerTestCase, kit.MultiObjectiveSamplerTestCase):
    @pytest.fixture
    def sampler(self):
        return lambda: NBOSampler(_RANDOM, n_startup_trials=0, seed=0)


class TestNBOSamplerImputingConditionalParameters(kit.BasicSamplerTestCase, kit.RelativeSamplerTestCase):
    """``conditional_parameters="impute"``: the relative search space is the union of the
    parameters completed trials suggested (the kit's dynamic ranges and conditional
    parameters go through it)."""

    @pytest.fixture
    def sampler(self):
        return lambda: NBOSampler(_RANDOM, n_startup_trials=0, seed=0, conditional_parameters="impute")


class TestNBOSamplerOfOneObjective(kit.SingleOnlySamplerTestCase):
    @pytest.fixture
    def sampler(self):
        return lambda: NBOSampler(_GP, n_startup_trials=0, seed=0)


_NEURAL = nbo.neural_bo(width=16, epochs=2)


@pytest.mark.parametrize("make", [lambda: NBOSampler(_GP, n_startup_trials=0, seed=0),
                                  lambda: NBOSampler(_NEURAL, n_startup_trials=0, seed=0),
                                  lambda: NeuralBOSampler(n_startup_trials=0, seed=0, width=16, epochs=2)],
                         ids=["NBOSampler-gp-ei", "NBOSampler-neural-bo", "NeuralBOSampler"])
def test_neural_samplers_return_each_distributions_type(make):
    """The kit's relative-sampling assertions for one float, one stepped integer and one
    categorical parameter: a Python value of the distribution's type, in range, on the step."""
    space = dict(x=FloatDistribution(1e-3, 1.0, log=True), n=IntDistribution(3, 9, step=2),
                 c=CategoricalDistribution([-1, -10, -100]))
    study = optuna.create_study(sampler=make())
    trial = study.ask(space)
    study.tell(trial, 1.0)
    for _ in range(3):
        params = study.sampler.sample_relative(study, kit._create_new_trial(study), space)
        assert list(params) == ["x", "n", "c"]
        assert type(params["x"]) is float and 1e-3 <= params["x"] <= 1.0
        assert type(params["n"]) is int and params["n"] in (3, 5, 7, 9)
        assert type(params["c"]) is int and params["c"] in (-1, -10, -100)


def test_suggested_floats_have_no_float32_artefact_and_steps_are_searched_on_their_values(monkeypatch):
    """The algorithm computes in float32 (no x64): a suggested float is the shortest decimal
    of its float32 point (``1.1584198``, not ``1.1584198474884033``), a stepped float is
    written with its step's decimals (``0.3``, not ``0.30000000000000004``), all inside their
    bounds, for a float64 ``suggest_float("x", 0, 2)``. A space with an integer or a stepped
    float and no category is searched as a mixed space: GP-EI's own proposal, before it is
    decoded, already holds a whole number of steps and an integer (rounded inside the
    acquisition search, not after it)."""
    import numpy as np

    import nbo_jax.integrations.optuna as module

    proposals, decode = [], module._params_of
    monkeypatch.setattr(module, "_params_of",
                        lambda x, space: proposals.append((list(space), np.asarray(x, np.float64))) or decode(x, space))
    space = dict(x=FloatDistribution(0.0, 2.0), z=FloatDistribution(0.0, 1.0, step=0.1),
                 lr=FloatDistribution(1e-3, 1.0, log=True), n=IntDistribution(1, 9))
    study = optuna.create_study(sampler=NBOSampler(_GP, n_startup_trials=0, seed=0))
    study.tell(study.ask(space), 1.0)
    xs = []
    for _ in range(4):
        trial = study.ask(space)
        x, z, lr, n = (trial.params[k] for k in ("x", "z", "lr", "n"))
        assert type(x) is float and 0.0 <= x <= 2.0 and 1e-3 <= lr <= 1.0 and type(n) is int
        assert x == float(str(np.float32(x))) and len(repr(x)) <= 11, repr(x)  # no float32 tail
        assert z in {k / 10 for k in range(11)}, repr(z)  # exactly a decimal of the step
        study.tell(trial, x + z + (n - 4.4) ** 2)
        xs.append(x)
    assert len(proposals) == 4
    for names, point in proposals:
        steps = point[[names.index("z"), names.index("n")]]
        assert np.all(steps == np.round(steps)), (names, point)
    assert any(float(np.float32(x)) != x for x in xs)  # floats written in float64, not float32 values


def test_a_log_float_in_a_box_is_the_shortest_decimal_of_its_float32():
    """Floats alone are a box, a log-scaled one searched as ``log10``: its value ``10**x`` is
    written as the shortest decimal of its float32 (``0.0010111272``, not
    ``0.0010111272154621675``), inside its bounds."""
    import numpy as np

    space = dict(lr=FloatDistribution(1e-4, 1e-1, log=True), w=FloatDistribution(0.0, 1.0))
    study = optuna.create_study(sampler=NBOSampler(_GP, n_startup_trials=0, seed=0))
    study.tell(study.ask(space), 1.0)
    for _ in range(3):
        trial = study.ask(space)
        lr, w = trial.params["lr"], trial.params["w"]
        assert 1e-4 <= lr <= 1e-1 and 0.0 <= w <= 1.0
        for v in (lr, w):
            assert v == float(str(np.float32(v))) and len(repr(v)) <= 14, repr(v)
        study.tell(trial, (lr - 0.003) ** 2 + w)


_SPACE = dict(x=FloatDistribution(-1.0, 1.0), n=IntDistribution(1, 4), c=CategoricalDistribution(["a", "b"]))


def _compiles(caplog, run) -> list:
    """``(thread name, message)`` of every compilation while ``run()`` runs."""
    import logging

    import jax

    caplog.clear()
    with jax.log_compiles(True), caplog.at_level(logging.WARNING):
        run()
    return [(r.threadName, r.getMessage()) for r in caplog.records if "Finished XLA compilation" in r.getMessage()]


def _trials(study, n: int) -> None:
    for _ in range(n):
        trial = study.ask(_SPACE)
        value = trial.params["x"] ** 2 + trial.params["n"]
        study.tell(trial, value if len(study.directions) == 1 else [value, -value][:len(study.directions)])


def test_trials_of_one_capacity_compile_nothing(caplog):
    """Once a capacity's programs are compiled, a trial compiles nothing: its history (a new
    number of rows each trial) goes to the device without a per-shape conversion program."""
    study = optuna.create_study(sampler=NBOSampler(nbo.random_search(), n_startup_trials=0, seed=0,
                                                   capacity=11))
    _trials(study, 3)  # the capacity's programs
    assert _compiles(caplog, lambda: _trials(study, 5)) == []


@pytest.mark.parametrize("m", [1, 2])
def test_startup_trials_compile_the_first_model_trial_in_the_background(caplog, m):
    """``precompile``: while the startup trials run, a background thread compiles ``init`` and
    ``ask`` for the first model-based trial's capacity (and ``m`` objectives), which then
    compiles neither; the proposals are those of a sampler that compiles at that trial."""
    from nbo_jax.integrations import optuna as integration

    def study_of(precompile: bool, capacity: int):
        return optuna.create_study(directions=["minimize"] * m,
                                   sampler=NBOSampler(nbo.random_search(), n_startup_trials=3, seed=1,
                                                      capacity=capacity, precompile=precompile))

    study = study_of(True, 11 + 2 * m)  # a capacity (13, 15) no other test compiles
    _trials(study, 3)
    for thread in list(integration._WARMING.values()):
        thread.join()
    model_trial = _compiles(caplog, lambda: _trials(study, 1))
    assert not [m for _, m in model_trial if "jit(ask)" in m or "jit(_padded_init)" in m], model_trial
    reference = study_of(False, 12 + 2 * m)
    _trials(reference, 4)
    assert [t.params for t in study.trials] == [t.params for t in reference.trials]


def test_precompile_must_be_a_bool():
    with pytest.raises(TypeError, match="precompile must be True or False"):
        NBOSampler("random", precompile="yes")
