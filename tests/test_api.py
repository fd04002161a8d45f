"""The public API (issue 12): explicit top-level re-exports, and user-facing text that cites
papers rather than files users do not have."""

import pathlib
import re

import nbo_jax as nbo

PACKAGE = pathlib.Path(nbo.__file__).parent


def test_top_level_exports_the_public_api_explicitly():
    expected = {"run_bo", "run_bo_sharded", "AskTell", "initial_design", "batched", "trust_region", "BOAlgorithm", "Bounds", "Dataset", "History",
                "Problem", "FiniteDomain", "TaskMetric", "finite_domain", "as_bounds", "make_bounds", "neural_bo", "neural_ucb", "neural_ts", "neural_greedy",
                "adaptive_basis", "gp_bo", "neural_cbo", "pinn_bo", "random_search", "rf_bo", "algorithms", "acquisition", "registry",
                "Surrogate", "SurrogatePosterior", "bo_algorithm", "surrogates",
                "benchmarks"}
    assert set(nbo.__all__) == expected
    for name in nbo.__all__:
        assert getattr(nbo, name) is not None
    # factories are the functions, not the submodules of the same name
    assert callable(nbo.neural_bo) and nbo.neural_bo().name == "neural-bo"


def test_user_facing_text_cites_papers_not_internal_files():
    pattern = re.compile(r"SPEC\.md|SPEC section|SPEC \*\*|seed 00\d|seeds/")
    hits = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line):
                hits.append(f"{path.relative_to(PACKAGE)}:{i}: {line.strip()}")
    assert not hits, "\n".join(hits)
