"""Every factory-built algorithm pickles (as its ``config``, ``name`` and ``q``) and unpickles
to an algorithm that runs the same: every registry algorithm at the contract's small settings,
trust regions and hand-batched ones around them, and the Ray Tune searcher that holds one."""

import pickle

import jax
import jax.numpy as jnp
import pytest

import nbo_jax as nbo
from test_contract import NAMES, SMALL, _build

try:
    import cloudpickle
except ImportError:  # pragma: no cover - an optional dependency (Ray's)
    cloudpickle = None

DUMPS = [pickle.dumps] + ([cloudpickle.dumps] if cloudpickle is not None else [])


def _small(name):
    return nbo.registry.get(name, **SMALL[name])


# (id, builder): the registry at small settings, and the transformations around some of them
CASES = [(name, lambda name=name: _build(name)) for name in NAMES] + [
    ("batched-gp-ts-q3", lambda: nbo.batched(_small("gp-ts"), 3)),
    ("batched-neural-bo-q2", lambda: nbo.batched(_small("neural-bo"), 2)),
    ("turbo-gp-ei-q3", lambda: nbo.trust_region(_small("gp-ei"), q=3)),
    ("turbo-batched-random", lambda: nbo.trust_region(nbo.batched(_small("random"), 2))),
    ("turbo2-neural-bo", lambda: nbo.registry.get("turbo2-neural-bo", **SMALL["neural-bo"])),
]

X0 = jnp.array([[0.1, 0.2], [0.8, 0.3], [0.4, 0.9], [0.6, 0.6], [0.3, 0.5]])
Y0 = jnp.sum((X0 - 0.4) ** 2, axis=1)
C0 = (X0[:, :1] - 0.7)  # one constraint, c <= 0 feasible


def _init_ask(algorithm):
    """One ``init`` + ``ask`` on a small 2-D problem, lowered for ``jit``."""
    def run(key):
        k_init, k_ask = jax.random.split(key)
        state = algorithm.init(k_init, X0, Y0, C0, bounds=([0.0, 0.0], [1.0, 1.0]), capacity=12)
        return algorithm.ask(state, k_ask)

    return jax.jit(run).lower(jax.random.key(0))


# the cases whose unpickled init + ask is also compared as a program (tracing every case
# twice cost a minute of the suite; the recipe comparison covers the others)
LOWERED = {"gp-ei", "neural-bo", "pinn-bo", "batched-gp-ts-q3", "turbo2-neural-bo"}


@pytest.mark.parametrize("case_id, case", CASES, ids=[i for i, _ in CASES])
def test_an_algorithm_pickles_and_unpickles_to_one_that_runs_the_same(case_id, case):
    """The unpickled algorithm has the same recipe (factory call, name, ``q``, batch rule);
    for the :data:`LOWERED` cases its jitted init + ask is the same program as the original's
    (identical StableHLO, constants included: the same output for every key), without
    compiling either (cloudpickle takes the same ``__reduce__``: its copy is compared by
    recipe)."""
    algorithm = case()
    assert algorithm.config is not None
    copies = [pickle.loads(dumps(algorithm)) for dumps in DUMPS]
    for again in copies:
        assert (again.name, again.q, again.batch_rule, again.constrained) == (
            algorithm.name, algorithm.q, algorithm.batch_rule, algorithm.constrained)
        assert repr(again.config) == repr(algorithm.config)
    if case_id in LOWERED:
        assert _init_ask(copies[0]).as_text() == _init_ask(algorithm).as_text()


@pytest.mark.parametrize("factory", [nbo.neural_bo, nbo.gp_bo])
def test_the_default_factories_pickle(factory):
    algorithm = pickle.loads(pickle.dumps(factory()))
    assert algorithm.name == factory().name and repr(algorithm.config) == repr(factory().config)


def test_a_hand_made_algorithm_is_refused_with_its_name():
    hand_made = nbo.gp_bo()._replace(config=None, name="mine")
    for dumps in DUMPS:
        with pytest.raises(TypeError, match="cannot pickle algorithm 'mine': it has no config"):
            dumps(hand_made)


def test_the_default_ray_tune_searcher_pickles():
    pytest.importorskip("ray")
    from ray import tune

    from nbo_jax.integrations.ray_tune import NBOSearcher

    for searcher in (NBOSearcher(), NBOSearcher({"x": tune.uniform(0.0, 1.0)}, metric="loss", mode="min")):
        for dumps in DUMPS:
            again = pickle.loads(dumps(searcher))
            assert again._algorithm.name == "gp-ei"  # the default algorithm
            assert repr(again._algorithm.config) == repr(searcher._algorithm.config)
