"""NBOSearcher's arguments and search spaces, without a Ray cluster: the searcher's methods
called as Tune calls them (``set_search_properties``, ``suggest``, ``on_trial_complete``)."""

import numpy as np
import pytest

pytest.importorskip("ray")

from ray import tune  # noqa: E402

import nbo_jax as nbo  # noqa: E402
from nbo_jax.integrations.ray_tune import NBOSearcher  # noqa: E402


def test_an_algorithm_passed_first_is_the_algorithm():
    algorithm = nbo.random_search()
    searcher = NBOSearcher(algorithm, "loss", "min")
    assert searcher._algorithm is algorithm and searcher.study is None
    assert searcher.set_search_properties(None, None, {"x": tune.uniform(0.0, 1.0)})
    assert searcher.study is not None and 0.0 <= searcher.suggest("t0")["x"] <= 1.0


def test_bad_spaces_and_arguments_are_refused_naming_the_argument():
    with pytest.raises(TypeError, match=r"space must be a dict of Tune domains, got the algorithm 'random' as well "
                                        r"as algorithm='gp-ei'"):
        NBOSearcher(nbo.random_search(), algorithm=nbo.gp_bo())
    with pytest.raises(TypeError, match="space must be a dict of Tune domains and constants, got list"):
        NBOSearcher([tune.uniform(0, 1)])
    with pytest.raises(TypeError, match="space must be a dict .* got function: pass the algorithm as algorithm="):
        NBOSearcher(nbo.gp_bo)
    with pytest.raises(TypeError, match="metric must be a str"):
        NBOSearcher({"x": tune.uniform(0, 1)}, 3)
    searcher = NBOSearcher(algorithm=nbo.random_search())
    with pytest.raises(TypeError, match=r"config \(the Tuner's param_space\) must be a dict"):
        searcher.set_search_properties("loss", "min", [1, 2])


@pytest.mark.parametrize("grid", [tune.grid_search([1, 2]), {"grid_search": [0.1, 0.2]}])
def test_a_grid_search_is_refused_at_the_space(grid):
    space = {"x": tune.uniform(0.0, 1.0), "opt": {"g": grid}, "layers": [32, 64]}
    with pytest.raises(ValueError, match=r"space: grid search \(\['opt/g'\]\) cannot be combined with NBOSearcher"):
        NBOSearcher(space, algorithm=nbo.random_search())
    with pytest.raises(ValueError, match=r"grid search \(\['opt/g'\]\)"):
        NBOSearcher(algorithm=nbo.random_search()).set_search_properties("loss", "min", space)


def test_list_constants_and_domains_inside_lists_keep_the_space_s_structure():
    space = {"x": tune.uniform(0.0, 1.0), "layers": [32, 64], "a/b": 1,
             "nest": {"sizes": [tune.choice([1, 2]), 3, tune.loguniform(1e-3, 1e-1)], "name": "net"}}
    searcher = NBOSearcher(algorithm=nbo.random_search(), n_init=2, seed=0)
    assert searcher.set_search_properties("loss", "min", space)
    for i in range(3):
        config = searcher.suggest(f"t{i}")
        assert config["layers"] == [32, 64] and config["a/b"] == 1 and config["nest"]["name"] == "net"
        sizes = config["nest"]["sizes"]
        assert len(sizes) == 3 and sizes[0] in (1, 2) and sizes[1] == 3 and 1e-3 <= sizes[2] <= 1e-1
        assert 0.0 <= config["x"] <= 1.0
        searcher.on_trial_complete(f"t{i}", {"loss": config["x"]})
    assert searcher.study.n_told == 3 and searcher.study.x.shape == (3, 3)  # x, the choice's index, nest/sizes/2
    assert space["layers"] == [32, 64] and isinstance(space["nest"]["sizes"][0], tune.search.sample.Domain)


def test_integers_and_choices_are_modelled_on_their_steps():
    """tune.randint (upper exclusive), tune.qrandint (upper inclusive, on q), tune.lograndint,
    tune.quniform / qloguniform (the count of quanta) and tune.choice are coordinates of the
    searcher's mixed space: every suggestion is a value of its domain (a quantized float
    exactly a decimal multiple of q), and the study holds one coordinate per parameter (a choice
    as its index, a quantized float as its count of quanta: an integer)."""
    space = {"n": tune.randint(1, 4), "q": tune.qrandint(0, 10, 5), "w": tune.lograndint(1, 100),
             "act": tune.choice(["relu", "tanh", None]), "lr": tune.loguniform(1e-4, 1e-1),
             "z": tune.quniform(0.0, 1.0, 0.1), "m": tune.qloguniform(1e-3, 1e-1, 1e-3),
             "q3": tune.qrandint(1, 10, 3), "lq": tune.qlograndint(2, 100, 5), "q1": tune.qrandint(1, 4, 1)}
    searcher = NBOSearcher(space, "loss", "min", algorithm=nbo.random_search(), n_init=3, seed=0)
    seen = []
    for i in range(5):
        c = searcher.suggest(f"t{i}")
        assert c["n"] in (1, 2, 3) and type(c["n"]) is int and c["q"] in (0, 5, 10) and 1 <= c["w"] <= 99
        assert c["act"] in ("relu", "tanh", None) and 1e-4 <= c["lr"] <= 1e-1
        assert c["z"] in {k / 10 for k in range(11)}, c["z"]
        assert c["m"] in {k / 1000 for k in range(1, 101)}, c["m"]
        # Tune's quantized integers are the multiples of q between the bounds (upper exclusive for q = 1)
        assert c["q3"] in (3, 6, 9) and c["lq"] in range(5, 101, 5) and c["q1"] in (1, 2, 3), c
        assert all(type(c[k]) is int for k in ("q", "q3", "lq", "q1"))
        seen.append(c)
        searcher.on_trial_complete(f"t{i}", {"loss": float(c["n"]) + (c["act"] == "tanh")})
    kinds = {m[0][0]: m[1] for m in searcher._modelled}
    assert kinds == {"act": "choice", "lr": "float", "n": "int", "q": "quantized_int", "w": "int", "z": "quantized",
                     "m": "quantized", "q3": "quantized_int", "lq": "quantized_int", "q1": "quantized_int"}
    assert searcher.study.x.shape == (5, 10)
    order = [m[0][0] for m in searcher._modelled]
    counts = searcher.study.x[:, [order.index(k) for k in ("z", "m", "q3", "lq")]]
    assert (counts == counts.round()).all() and counts[:, 1].min() >= 1
    # the count of quanta keeps qlograndint's log scale (the multiples of 5 from 5 to 100: k = 1..20)
    lq = searcher.study.space.parameters[order.index("lq")]
    assert (lq.low, lq.high, lq.step, lq.log) == (1, 20, 1, True)
    with pytest.raises(ValueError, match=r"'k' has no multiple of q=5 between 1 and 4"):
        NBOSearcher({"k": tune.qrandint(1, 4, 5)}, "loss", "min")


def test_a_checkpoint_entry_of_a_quantized_float_still_rounds_to_its_q():
    """A state written before quantized floats were modelled as counts holds a ``"float"``
    entry with its ``q``: restored, the searcher still suggests multiples of ``q``."""
    searcher = NBOSearcher({"z": tune.uniform(0.0, 1.0)}, "loss", "min", algorithm=nbo.random_search(), n_init=2)
    state = searcher.get_state()
    path, _, _, lo, hi = state["modelled"][0]
    state["modelled"] = [(path, "float", 0.1, lo, hi)]
    searcher.set_state(state)
    values = [searcher.suggest(f"t{i}")["z"] for i in range(4)]
    assert all(abs(v * 10 - round(v * 10)) < 1e-9 for v in values) and len(set(values)) > 1, values


def test_floats_are_written_as_short_decimals_of_their_float32_values():
    """The design's and the algorithm's float32 values reach the trial as the shortest decimal
    that rounds to them (``0.361838``, not ``0.3618379831314087``), inside their domain, as the
    Optuna sampler writes them; the study keeps the values it proposed."""
    space = {"w": tune.uniform(0.0, 1.0), "lr": tune.loguniform(1e-4, 1e-1)}
    searcher = NBOSearcher(space, "loss", "min", algorithm=nbo.random_search(), n_init=2, seed=0)
    for i in range(5):
        c = searcher.suggest(f"t{i}")
        x = searcher._live[f"t{i}"]
        for value, coordinate in zip((c["w"], c["lr"]), x):
            assert np.float32(value) == np.float32(coordinate) and len(repr(value)) <= 14, (value, coordinate)
        assert 0.0 <= c["w"] <= 1.0 and 1e-4 <= c["lr"] <= 1e-1
        searcher.on_trial_complete(f"t{i}", {"loss": c["w"]})
    assert searcher.study.n_told == 5
