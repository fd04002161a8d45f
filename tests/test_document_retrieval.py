"""Tests of nbo_jax.benchmarks.document_retrieval: hierarchical F1, the Kaggle-layout loader,
the synthetic corpus and the unknown-target document-retrieval problem."""

import collections
import csv
import functools
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

import nbo_jax as nbo
from nbo_jax.benchmarks.document_retrieval import (
    KAGGLE_COLUMNS,
    corpus_from_records,
    document_retrieval,
    hierarchical_f1,
    hierarchical_f1_matrix,
    load_corpus,
    synthetic_corpus,
    write_corpus_csv,
)
from nbo_jax.benchmarks.finite import index_of


def _hf1_by_sets(p, t):
    """Kiritchenko et al. 2005 written out with sets of ancestors (prefixes)."""
    P = {tuple(p[: i + 1]) for i in range(len(p))}
    T = {tuple(t[: i + 1]) for i in range(len(t))}
    inter = len(P & T)
    if inter == 0:
        return 0.0
    hp, hr = inter / len(P), inter / len(T)
    return 2 * hp * hr / (hp + hr)


# --------------------------------------------------------------------------- hierarchical F1


def test_hierarchical_f1_hand_computed():
    t = ("toys games", "games", "puzzles")
    assert hierarchical_f1(t, t) == 1.0
    assert hierarchical_f1(("toys games", "dolls", "puzzles"), t) == pytest.approx(1 / 3)
    assert hierarchical_f1(("toys games", "games", "cards"), t) == pytest.approx(2 / 3)
    # a node is its whole prefix: equal lower labels under another root count for nothing
    assert hierarchical_f1(("books", "games", "puzzles"), t) == 0.0
    # different depths: P = {a, ab}, T = {a, ab, abc}: hP = 1, hR = 2/3, hF = 0.8
    assert hierarchical_f1(("a", "b"), ("a", "b", "c")) == pytest.approx(0.8)
    # P = {a}, T = {a, ab, abc, abcd}: hP = 1, hR = 1/4, hF = 0.4
    assert hierarchical_f1(("a",), ("a", "b", "c", "d")) == pytest.approx(0.4)
    assert hierarchical_f1(("a", "b", "c", "d"), ("a",)) == pytest.approx(0.4)  # symmetric


def test_hierarchical_f1_matches_set_definition_and_matrix_form():
    rng = np.random.default_rng(0)
    paths = rng.integers(0, 2, size=(200, 3))
    for target in ([0, 1, 0], [1, 1, 1]):
        want = np.array([_hf1_by_sets(tuple(p), tuple(target)) for p in paths])
        got = hierarchical_f1_matrix(paths, np.array(target))
        np.testing.assert_allclose(got, want, atol=1e-15)
        np.testing.assert_allclose(got, [hierarchical_f1(p, target) for p in paths], atol=1e-15)
        got_j = jax.jit(hierarchical_f1_matrix)(jnp.asarray(paths), jnp.asarray(target))
        np.testing.assert_allclose(np.asarray(got_j), want, atol=1e-6)
    # negative codes mark missing levels (paths of different depths)
    padded = np.array([[0, 1, -1], [0, -1, -1], [0, 1, 2], [1, -1, -1]])
    np.testing.assert_allclose(hierarchical_f1_matrix(padded, np.array([0, 1, 2])), [0.8, 0.5, 1.0, 0.0])
    np.testing.assert_allclose(hierarchical_f1_matrix(padded, np.array([0, -1, -1])), [2 / 3, 1.0, 0.5, 0.0])


def test_hierarchical_f1_errors():
    with pytest.raises(TypeError, match="predicted_path"):
        hierarchical_f1("toys", ("toys",))
    with pytest.raises(ValueError, match="true_path"):
        hierarchical_f1(("a",), ())
    with pytest.raises(ValueError, match="target"):
        hierarchical_f1_matrix(np.zeros((4, 3), int), np.zeros(2, int))
    with pytest.raises(ValueError, match="paths"):
        hierarchical_f1_matrix(np.zeros(3, int), np.zeros(3, int))
    with pytest.raises(ValueError, match="paths: a level is present after a missing"):
        hierarchical_f1_matrix(np.array([[0, -1, 2]]), np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="integer"):
        hierarchical_f1_matrix(np.zeros((2, 3)), np.zeros(3, int))


# --------------------------------------------------------------------------- loader


@functools.lru_cache(maxsize=None)
def _records():
    """Synthetic records edited to hold unknown categories, duplicates and empty texts."""
    recs = synthetic_corpus(40, seed=1)
    recs[3]["Cat3"] = "Unknown"        # dropped (case-insensitive)
    recs[7]["Cat2"] = "  unknown "     # dropped (spaces ignored)
    recs[11]["Cat1"] = ""              # dropped (empty)
    recs[5]["Title"], recs[5]["Text"] = recs[0]["Title"], recs[0]["Text"]  # duplicate of row 0
    recs[5]["Cat1"] = "l1 c2" if recs[0]["Cat1"] != "l1 c2" else "l1 c0"
    recs[9]["Title"], recs[9]["Text"] = "", "The and of!"   # empty after tokenisation
    recs[12]["Title"], recs[12]["Text"] = "", "a to be"     # ... and another one: merged with row 9
    recs[1]["Title"], recs[1]["Text"] = "term001 term001", "term002, The TERM001!"
    return recs


@pytest.fixture(scope="module")
def csv_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("docs") / "train.csv"
    write_corpus_csv(_records(), path)
    return path


def test_synthetic_corpus_layout_and_determinism(csv_path):
    recs = synthetic_corpus(30, seed=4, levels=(2, 3), vocabulary_size=20)
    assert list(recs[0]) == list(KAGGLE_COLUMNS[:-1])  # two levels: Cat1, Cat2
    assert recs == synthetic_corpus(30, seed=4, levels=(2, 3), vocabulary_size=20)
    assert recs != synthetic_corpus(30, seed=5, levels=(2, 3), vocabulary_size=20)
    assert {r["Cat1"] for r in recs} <= {"l1 c0", "l1 c1"}
    assert {r["Cat2"] for r in recs} <= {"l2 c0", "l2 c1", "l2 c2"}
    with open(csv_path, newline="", encoding="utf-8") as fh:
        header = next(csv.reader(fh))
    assert header == list(KAGGLE_COLUMNS)


def test_load_corpus_drops_unknown_merges_duplicates(csv_path):
    recs = _records()
    c = load_corpus(csv_path, vocabulary_size=500)
    assert c.n_dropped_unknown == 3
    assert c.n_merged_duplicates == 2                 # row 5 (copy of row 0) and row 12 (empty like row 9)
    assert c.n_documents == 40 - 3 - 2
    assert set(c.row_index.tolist()) == set(range(40)) - {3, 7, 11, 5, 12}
    assert np.all(np.diff(c.row_index) > 0)          # file order kept
    assert np.unique(c.counts, axis=0).shape[0] == c.n_documents
    assert c.counts.dtype == np.float64 and c.paths.dtype == np.int64
    # the first of each duplicate group is kept, with its own categories
    i0 = int(np.nonzero(c.row_index == 0)[0][0])
    assert c.path_names(i0) == (recs[0]["Cat1"], recs[0]["Cat2"], recs[0]["Cat3"])
    i9 = int(np.nonzero(c.row_index == 9)[0][0])
    assert np.all(c.counts[i9] == 0)
    for i, r in enumerate(c.row_index):
        assert c.path_names(i) == (recs[r]["Cat1"], recs[r]["Cat2"], recs[r]["Cat3"])
    # hand count: "term001 term001" + "term002, The TERM001!" -> term001: 3, term002: 1; "the" is a stop word
    i1 = int(np.nonzero(c.row_index == 1)[0][0])
    row = dict(zip(c.vocabulary, c.counts[i1]))
    assert row["term001"] == 3 and row["term002"] == 1 and sum(row.values()) == 4
    assert not set(c.vocabulary) & ENGLISH_STOP_WORDS
    assert c.vocabulary == tuple(sorted(c.vocabulary))
    assert c.level_names[0] == tuple(sorted({recs[r]["Cat1"] for r in c.row_index}))
    assert c.n_classes()[0] == len(c.level_names[0])
    assert c.n_classes()[2] >= len(c.level_names[2])   # level-3 names repeat under other parents


def test_load_corpus_vocabulary_size_keeps_most_frequent_terms(csv_path):
    recs = _records()
    c = load_corpus(csv_path, vocabulary_size=10)
    assert len(c.vocabulary) == 10 and c.counts.shape[1] == 10
    kept = [r for i, r in enumerate(recs) if i not in (3, 7, 11)]
    totals = collections.Counter(
        tok for r in kept for tok in re.findall(r"(?u)\b\w\w+\b", f"{r['Title']} {r['Text']}".lower())
        if tok not in ENGLISH_STOP_WORDS)
    assert min(totals[t] for t in c.vocabulary) >= max(v for t, v in totals.items() if t not in c.vocabulary)
    assert c.n_merged_duplicates >= 2
    # max_documents keeps the first 5 known-category rows (0, 1, 2, 4, 5), then row 5 merges into row 0
    c5 = load_corpus(csv_path, vocabulary_size=500, max_documents=5)
    assert c5.row_index.tolist() == [0, 1, 2, 4]
    assert (c5.n_dropped_unknown, c5.n_merged_duplicates) == (1, 1)   # rows read: 0-5


def test_load_corpus_errors(csv_path, tmp_path):
    bad = tmp_path / "bad.csv"
    write_corpus_csv([{k: v for k, v in r.items() if k not in ("Cat3", "Title")} for r in _records()], bad)
    with pytest.raises(ValueError, match=r"lacks the columns \['Title', 'Cat3'\]"):
        load_corpus(bad)
    with pytest.raises(FileNotFoundError, match="no file"):
        load_corpus(tmp_path / "missing.csv")
    with pytest.raises(ValueError, match="vocabulary_size"):
        load_corpus(csv_path, vocabulary_size=0)
    with pytest.raises(ValueError, match="record 1 lacks the columns"):
        corpus_from_records([_records()[0], {"Title": "x", "Text": "y"}])
    with pytest.raises(ValueError, match="no document left"):
        corpus_from_records([dict(_records()[0], Cat2="UNKNOWN")])


# --------------------------------------------------------------------------- the problem


def test_problem_values_are_one_minus_hf1(csv_path):
    c = load_corpus(csv_path, vocabulary_size=500)
    p = document_retrieval(path=csv_path, target=4)
    assert p is document_retrieval(path=str(csv_path), target=4)   # cached
    assert p.choices.shape == c.counts.shape and p.dim == len(c.vocabulary)
    assert p.optimal_value == 0.0
    tgt = c.path_names(4)
    rows = np.arange(c.n_documents)
    want = np.array([1 - hierarchical_f1(c.path_names(i), tgt) for i in rows])
    got = np.asarray(p(jnp.asarray(c.counts)))
    np.testing.assert_allclose(got, want, atol=1e-6)
    assert got[4] == 0.0
    assert set(np.round(want, 6)) <= {0.0, round(1 / 3, 6), round(2 / 3, 6), 1.0}
    m = p.metadata
    assert (m["target"], m["target_file_row"], m["target_path"]) == (4, int(c.row_index[4]), tgt)
    assert (m["n_dropped_unknown"], m["n_merged_duplicates"], m["n_documents"]) == (3, 2, c.n_documents)
    assert m["n_optimal"] == int(np.sum(want == 0))
    with pytest.raises(ValueError, match="target"):
        document_retrieval(path=csv_path, target=c.n_documents)


def test_default_synthetic_problem_and_metric():
    p = document_retrieval(seed=3)
    assert p.choices.shape == (300, 64)
    t = p.metadata["target"]
    assert t == int(np.random.default_rng(3).integers(300))
    assert float(p(jnp.asarray(p.choices[t]))) == 0.0
    assert p.metadata["n_classes"] == (3, 12, 60)
    # the metric reads best_f: best hF1 = 1 - best_f
    hist = {"best_f": np.array([[1.0, 2 / 3, 0.0], [1.0, 1.0, 1 / 3]])}
    np.testing.assert_allclose(p.metric.final(hist), [1.0, 2 / 3])
    np.testing.assert_allclose(p.metric.curve(hist), [[0.0, 1 / 3, 1.0], [0.0, 0.0, 2 / 3]])
    assert p.metric.higher_is_better and p.metric.label == "best hierarchical F1"
    # a short random-search run: evaluated rows are distinct documents, f is 1 - hF1 there
    hist = jax.vmap(lambda k: nbo.run_bo(k, nbo.registry.get("random"), p, 4, 6))(
        jax.random.split(jax.random.PRNGKey(0), 2))
    rows = index_of(p, np.asarray(hist.x))
    assert all(len(set(r)) == 10 for r in rows.tolist())
    c_paths = corpus_from_records(synthetic_corpus(300, seed=0)).paths
    want = 1 - hierarchical_f1_matrix(c_paths, c_paths[t])[rows]
    np.testing.assert_allclose(np.asarray(hist.f), want, atol=1e-6)
    np.testing.assert_allclose(p.metric.final({"best_f": np.asarray(hist.best_f)}), 1 - want.min(axis=1), atol=1e-6)


def test_tasks_through_benchmarks_get():
    """The registry's task dispatch: 'paper' noise is the thesis' noiseless setting, a dim
    that is not the task's is refused, unknown task names list the tasks."""
    from nbo_jax import benchmarks

    p = benchmarks.get("document_retrieval", noise_std="paper", n_documents=80, seed=1)
    assert p.noise_std == 0.0 and p is benchmarks.get("document_retrieval", n_documents=80, seed=1)
    assert "document_retrieval" in benchmarks.available()
    with pytest.raises(ValueError, match=r"dim: task 'document_retrieval' has dimension \d+ \(fixed by the task\)"):
        benchmarks.get("document_retrieval", dim=3, n_documents=80, seed=1)
    with pytest.raises(ValueError, match=r"name: unknown task 'nope'; tasks: \['document_retrieval'"):
        benchmarks.task("nope")
