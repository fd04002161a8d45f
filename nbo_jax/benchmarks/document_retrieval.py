"""Unknown-target document retrieval: BO over a finite corpus of documents (Phan-Trong 2024,
PhD thesis, Section 3.5.3.2; Phan-Trong et al. 2023, Section 7.2.2).

Each document is a vector of term counts (a bag of words over the ``V`` most frequent terms);
the optimizer retrieves one document at a time and is told how close its category is to the
category of a hidden target document, measured by the hierarchical F1 score (Kiritchenko,
Matwin and Famili 2005) between the two category paths. The objective (minimized) is
``1 - hF1``: 0 for the target and for every document of the target's leaf class.

The thesis uses the Amazon product reviews of the Kaggle data set "hierarchical text
classification" (kashnitsky): ``train_40k.csv`` (40,000 reviews, 3 category levels), reduced
to 37,738 reviews after dropping those with an "unknown" category (6, 64 and 464 classes),
and a vocabulary of 500 terms. The data are not shipped here: :func:`load_corpus` reads the
CSV file from Kaggle, :func:`synthetic_corpus` generates a small corpus in the same layout
(tests, examples, CPU runs), and :func:`document_retrieval` builds the
:class:`~nbo_jax.types.Problem` from either (with :func:`~nbo_jax.benchmarks.finite.finite_problem`).

Decisions (documented, tested in ``tests/test_document_retrieval.py``):

- **Inputs are the raw counts**, as in the thesis. Scaling is the library's: the finite
  domain's box is the corpus's bounding box, so every algorithm sees each term's count
  mapped linearly onto ``[0, 1]`` (count / largest count of that term in the corpus).
- **Duplicated count vectors are merged** (a finite domain is a set of distinct points):
  of each group of documents with equal count vectors (e.g. several reviews left empty by
  the tokenisation) the first one in file order is kept, with its own category path;
  :attr:`Corpus.n_merged_duplicates` counts the documents removed.
- **Category codes are per level** (index into :attr:`Corpus.level_names`): a name repeated
  under two parents ("toys/games", "books/games") has one code, but the hierarchical F1
  counts agreement from the root only until the first disagreement, so the two nodes never
  count as equal (a node is identified by its whole prefix).
"""

from __future__ import annotations

import csv
import functools
import os
from typing import Any, Iterable, Mapping, NamedTuple, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from .._checks import check_int, check_positive
from ..types import Problem, TaskMetric
from .finite import finite_problem

__all__ = [
    "DEFAULT_SYNTHETIC_DOCUMENTS",
    "DEFAULT_SYNTHETIC_VOCABULARY",
    "KAGGLE_COLUMNS",
    "Corpus",
    "corpus_from_records",
    "document_retrieval",
    "hierarchical_f1",
    "hierarchical_f1_matrix",
    "load_corpus",
    "synthetic_corpus",
    "write_corpus_csv",
]

#: Columns of the Kaggle files ``train_40k.csv`` / ``val_10k.csv`` (kashnitsky, "hierarchical
#: text classification"), in file order.
KAGGLE_COLUMNS = ("productId", "Title", "userId", "Helpfulness", "Score", "Time", "Text", "Cat1", "Cat2", "Cat3")

#: Size of the default synthetic corpus of :func:`document_retrieval` (documents, distinct terms).
DEFAULT_SYNTHETIC_DOCUMENTS = 300
DEFAULT_SYNTHETIC_VOCABULARY = 64

_SOURCE = ("Phan-Trong 2024, PhD thesis, Section 3.5.3.2; Phan-Trong et al. 2023, Section 7.2.2; "
           "hierarchical F1: Kiritchenko, Matwin and Famili 2005")


# --------------------------------------------------------------------------- hierarchical F1


def _check_path(path, name: str) -> tuple:
    if isinstance(path, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of labels from the root down (e.g. ('toys games', "
                        f"'games', 'puzzles')), not a string: {path!r}")
    try:
        labels = tuple(path)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of labels, got {type(path).__name__}") from None
    if not labels:
        raise ValueError(f"{name} must hold at least one label (the level-1 class)")
    return labels


def hierarchical_f1(predicted_path: Sequence, true_path: Sequence) -> float:
    """Hierarchical F1 score of one predicted category path against the true one
    (Kiritchenko, Matwin and Famili 2005, "Functional annotation of genes using hierarchical
    text categorization"; Phan-Trong 2024, PhD thesis, Section 3.5.3.2).

    Each label set is augmented with all its ancestors: a path ``(c_1, ..., c_L)`` from the
    root down stands for the set of nodes ``{(c_1), (c_1, c_2), ..., (c_1, ..., c_L)}`` (a node
    is its whole prefix, so "toys/games" and "books/games" differ; the root itself is not
    counted). With ``P`` and ``T`` the augmented sets of the predicted and true paths::

        hP = |P & T| / |P|,   hR = |P & T| / |T|,   hF = 2 hP hR / (hP + hR)   (0 if P & T is empty)

    ``|P & T| = k`` is the number of levels on which the paths agree from the root until the
    first disagreement, so ``hF = 2 k / (len(predicted) + len(true))``; for two paths of the
    same depth ``L`` it is ``k / L`` (e.g. 1/3 for three-level paths that share only the
    level-1 class).

    Args:
        predicted_path: sequence of labels (any hashable values) from the root down.
        true_path: likewise.

    Returns:
        ``hF`` in ``[0, 1]``, a Python float.

    Raises:
        TypeError: a path is a string (give a sequence of labels) or not a sequence.
        ValueError: a path is empty.
    """
    p = _check_path(predicted_path, "predicted_path")
    t = _check_path(true_path, "true_path")
    k = 0
    for a, b in zip(p, t):
        if a != b:
            break
        k += 1
    return 2.0 * k / (len(p) + len(t))


def hierarchical_f1_matrix(paths, target):
    """Vectorised :func:`hierarchical_f1` of ``N`` coded paths against one target path.

    Category paths are coded per level as non-negative integers (:attr:`Corpus.paths`); a
    negative entry marks a missing level, so paths of different depths fit in one array (the
    entries after a negative one must be negative too). The score of row ``i`` is
    ``2 k_i / (L_i + L_t)``, with ``k_i`` the number of leading levels on which row ``i`` and
    ``target`` agree and ``L_i``, ``L_t`` their depths (non-negative entries); for full paths
    of depth ``L`` it is ``k_i / L``. Source: Kiritchenko, Matwin and Famili 2005.

    Args:
        paths: ``(N, L)`` integer array (numpy or jax).
        target: ``(L,)`` integer array, at least one level.

    Returns:
        ``(N,)`` float scores in ``[0, 1]``: float64 numpy for numpy inputs, a jax array of
        the default float dtype if either input is a jax array (then jit/vmap-compatible; the
        value checks below are skipped).

    Raises:
        ValueError: ``paths`` not 2-D, ``target`` not ``(L,)``, non-integer codes, a
        ``target`` with no level, or a level present after a missing one (numpy inputs).
    """
    use_jax = isinstance(paths, jax.Array) or isinstance(target, jax.Array)
    xp = jnp if use_jax else np
    p = xp.asarray(paths)
    t = xp.asarray(target)
    if p.ndim != 2:
        raise ValueError(f"paths must be an (N, L) array, got shape {p.shape}")
    if t.shape != (p.shape[1],):
        raise ValueError(f"target must be an (L,) array with L = {p.shape[1]} (the columns of paths), "
                         f"got shape {t.shape}")
    for arr, name in ((p, "paths"), (t, "target")):
        if not (xp.issubdtype(arr.dtype, xp.integer) or (arr.size == 0)):
            raise ValueError(f"{name} must hold integer category codes, got dtype {arr.dtype}")
    if not use_jax:
        for arr, name in ((p, "paths"), (t[None], "target")):
            present = arr >= 0
            if np.any(present[:, 1:] & ~present[:, :-1]):
                raise ValueError(f"{name}: a level is present after a missing (negative) one")
        if not np.any(t >= 0):
            raise ValueError("target must hold at least one level (a non-negative code)")
    agree = (p == t[None, :]) & (t[None, :] >= 0)
    k = xp.sum(xp.cumprod(agree.astype(xp.int32), axis=1), axis=1)
    depth = xp.sum(p >= 0, axis=1)
    t_depth = xp.sum(t >= 0)
    dtype = np.float64 if not use_jax else jnp.zeros(()).dtype
    return (2.0 * k / (depth + t_depth)).astype(dtype)


# --------------------------------------------------------------------------- corpus


class Corpus(NamedTuple):
    """A corpus of documents as term counts, with their category paths.

    Attributes:
        counts: ``(N, V)`` float64 numpy array, count of each vocabulary term in each document;
            distinct rows (duplicates merged, see :func:`corpus_from_records`).
        paths: ``(N, L)`` int64 numpy array, category code of each document at each level:
            ``paths[i, l]`` indexes ``level_names[l]``.
        level_names: ``L`` tuples, the sorted distinct class names of each level.
        vocabulary: ``V`` terms, in the column order of ``counts`` (alphabetical).
        n_dropped_unknown: documents dropped for an unknown or empty category.
        n_merged_duplicates: documents removed because their count vector equals that of an
            earlier document.
        row_index: ``(N,)`` int64 numpy array, each document's row in the source (0-based
            data row of the CSV file, header not counted).
    """

    counts: np.ndarray
    paths: np.ndarray
    level_names: tuple
    vocabulary: tuple
    n_dropped_unknown: int
    n_merged_duplicates: int
    row_index: np.ndarray

    @property
    def n_documents(self) -> int:
        return int(self.counts.shape[0])

    def path_names(self, i: int) -> tuple:
        """Category names of document ``i`` from the root down."""
        return tuple(self.level_names[l][c] for l, c in enumerate(self.paths[int(i)]))

    def n_classes(self) -> tuple:
        """Number of distinct nodes at each level (a node is its whole prefix)."""
        return tuple(int(np.unique(self.paths[:, : l + 1], axis=0).shape[0]) for l in range(self.paths.shape[1]))


def _check_columns(columns, name: str) -> tuple:
    if isinstance(columns, str):
        raise TypeError(f"{name} must be a sequence of column names, not a string: {columns!r}")
    cols = tuple(columns)
    if not cols or not all(isinstance(c, str) for c in cols):
        raise ValueError(f"{name} must be a non-empty sequence of column names, got {columns!r}")
    return cols


def corpus_from_records(
    records: Iterable[Mapping[str, Any]],
    *,
    vocabulary_size: int = 500,
    text_columns: Sequence[str] = ("Title", "Text"),
    category_columns: Sequence[str] = ("Cat1", "Cat2", "Cat3"),
    unknown: str = "unknown",
    max_documents: Optional[int] = None,
) -> Corpus:
    """Build a :class:`Corpus` from records (mappings column -> value, e.g. CSV rows).

    Steps (Phan-Trong 2024, PhD thesis, Section 3.5.3.2, where stated; the rest are ours):

    1. Drop the records whose category at any level (``category_columns``, root first) is
       empty or equals ``unknown`` (compared case-insensitively, surrounding spaces ignored);
       their number is :attr:`Corpus.n_dropped_unknown` (thesis: 40,000 -> 37,738 reviews).
    2. Stop once ``max_documents`` records are kept (read all if ``None``); the counts of
       steps 1 and 4 are over the records read.
    3. Text of a document: the ``text_columns`` joined by a space. Term counts with
       ``sklearn.feature_extraction.text.CountVectorizer(max_features=vocabulary_size,
       stop_words="english")``: lower-cased, tokens are runs of 2 or more word characters
       (regular expression ``(?u)\\b\\w\\w+\\b``; punctuation separates tokens), scikit-learn's
       English stop-word list removed, then the ``vocabulary_size`` terms most frequent in the
       corpus (total count) are kept (fewer if the corpus has fewer distinct terms).
    4. Merge duplicated count vectors: of each group of equal rows the first (in record
       order) is kept with its own category path; :attr:`Corpus.n_merged_duplicates` counts
       the others (a finite BO domain must have distinct points).

    Args:
        records: iterable of mappings holding at least ``text_columns`` and
            ``category_columns``; ``None`` values read as empty strings.
        vocabulary_size: ``V``, the number of terms kept (thesis: 500).
        text_columns: columns whose text is counted.
        category_columns: one column per level, root first.
        unknown: the category value marking an unknown class.
        max_documents: cap on the documents kept after step 1.

    Returns:
        :class:`Corpus`.

    Raises:
        ValueError: a record lacks a column (the missing ones are named), no record is left
        after step 1, the texts hold no term (empty vocabulary), bad ``vocabulary_size`` /
        ``max_documents`` (also TypeError for a non-int), empty column lists.
    """
    from sklearn.feature_extraction.text import CountVectorizer

    vocabulary_size = check_int("vocabulary_size", vocabulary_size, 1)
    if max_documents is not None:
        max_documents = check_int("max_documents", max_documents, 1)
    text_columns = _check_columns(text_columns, "text_columns")
    category_columns = _check_columns(category_columns, "category_columns")
    if not isinstance(unknown, str):
        raise TypeError(f"unknown must be a string, got {type(unknown).__name__}")
    unknown_key = unknown.strip().lower()

    needed = text_columns + tuple(c for c in category_columns if c not in text_columns)
    texts, labels, rows = [], [], []
    n_dropped = 0
    n_records = 0
    for i, rec in enumerate(records):
        if max_documents is not None and len(texts) >= max_documents:
            break
        n_records += 1
        missing = [c for c in needed if c not in rec]
        if missing:
            raise ValueError(f"records: record {i} lacks the columns {missing} (needs {list(needed)})")
        cats = tuple(("" if rec[c] is None else str(rec[c])).strip() for c in category_columns)
        if any(c == "" or c.lower() == unknown_key for c in cats):
            n_dropped += 1
            continue
        texts.append(" ".join("" if rec[c] is None else str(rec[c]) for c in text_columns))
        labels.append(cats)
        rows.append(i)
    if not texts:
        raise ValueError(f"records: no document left ({n_records} records, {n_dropped} with an unknown or "
                         f"empty category in {list(category_columns)})")

    vectorizer = CountVectorizer(max_features=vocabulary_size, stop_words="english")
    try:
        counts = vectorizer.fit_transform(texts)
    except ValueError as err:  # sklearn: "empty vocabulary; perhaps the documents only contain stop words"
        raise ValueError(f"records: the texts in {list(text_columns)} hold no term after tokenisation ({err})") from None
    counts = np.asarray(counts.toarray(), dtype=np.float64)
    vocabulary = tuple(str(v) for v in vectorizer.get_feature_names_out())

    level_names = tuple(tuple(sorted({lab[l] for lab in labels})) for l in range(len(category_columns)))
    code = [{name: j for j, name in enumerate(names)} for names in level_names]
    paths = np.array([[code[l][lab[l]] for l in range(len(category_columns))] for lab in labels], dtype=np.int64)

    _, first = np.unique(counts, axis=0, return_index=True)
    keep = np.sort(first)
    return Corpus(
        counts=counts[keep], paths=paths[keep], level_names=level_names, vocabulary=vocabulary,
        n_dropped_unknown=int(n_dropped), n_merged_duplicates=int(len(texts) - keep.size),
        row_index=np.asarray(rows, dtype=np.int64)[keep])


def load_corpus(
    path,
    *,
    vocabulary_size: int = 500,
    text_columns: Sequence[str] = ("Title", "Text"),
    category_columns: Sequence[str] = ("Cat1", "Cat2", "Cat3"),
    unknown: str = "unknown",
    max_documents: Optional[int] = None,
) -> Corpus:
    """Read a corpus from a CSV file in the layout of the Kaggle data set "hierarchical text
    classification" (kashnitsky): ``train_40k.csv`` / ``val_10k.csv``, comma-separated,
    double-quoted fields, a header row, UTF-8, with the columns :data:`KAGGLE_COLUMNS`
    ``productId, Title, userId, Helpfulness, Score, Time, Text, Cat1, Cat2, Cat3`` (Amazon
    product reviews; ``Cat1``-``Cat3`` the category levels from the root). Only
    ``text_columns`` and ``category_columns`` are read; other columns may be absent.

    Processing (dropping unknown categories, tokenisation, vocabulary, merging duplicated
    count vectors) is that of :func:`corpus_from_records`, with record ``i`` the ``i``-th data
    row of the file. Source: Phan-Trong 2024, PhD thesis, Section 3.5.3.2 (``train_40k.csv``,
    vocabulary 500, 37,738 reviews after dropping unknown categories).

    Args:
        path: the CSV file (str or path-like).
        vocabulary_size: as in :func:`corpus_from_records`.
        text_columns: as in :func:`corpus_from_records`.
        category_columns: as in :func:`corpus_from_records`.
        unknown: as in :func:`corpus_from_records`.
        max_documents: as in :func:`corpus_from_records`.

    Returns:
        :class:`Corpus`; ``row_index`` gives each document's data row in the file.

    Raises:
        FileNotFoundError: no file at ``path``.
        ValueError: the file has no header row, or lacks a needed column (the message names
        the missing columns), or any error of :func:`corpus_from_records`.
        TypeError: ``path`` is not a str or path-like.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or path-like, got {type(path).__name__}")
    text_columns = _check_columns(text_columns, "text_columns")
    category_columns = _check_columns(category_columns, "category_columns")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"path: no file at {os.fspath(path)!r} (the Kaggle data set 'hierarchical text "
                                "classification' by kashnitsky, e.g. train_40k.csv)")
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        header = reader.fieldnames
        if not header:
            raise ValueError(f"path: {os.fspath(path)!r} is empty (no header row)")
        missing = [c for c in text_columns + category_columns if c not in header]
        if missing:
            raise ValueError(f"path: {os.fspath(path)!r} lacks the columns {missing}; its header is {list(header)}, "
                             f"expected the Kaggle layout {list(KAGGLE_COLUMNS)}")
        return corpus_from_records(
            reader, vocabulary_size=vocabulary_size, text_columns=text_columns,
            category_columns=category_columns, unknown=unknown, max_documents=max_documents)


# --------------------------------------------------------------------------- synthetic corpus


def synthetic_corpus(
    n_documents: int,
    *,
    seed: int,
    levels: Sequence[int] = (3, 4, 5),
    vocabulary_size: int = DEFAULT_SYNTHETIC_VOCABULARY,
    mean_length: float = 40.0,
) -> list:
    """A small generated corpus in the Kaggle layout (:data:`KAGGLE_COLUMNS`), whose words
    depend on the categories, for tests and examples (ours; not from the thesis).

    The hierarchy is a full tree: ``levels[0]`` level-1 classes, each with ``levels[1]``
    children, and so on (default 3, 12 and 60 nodes). Class names are ``"l<level> c<j>"`` with
    ``j`` the index among its siblings, so names repeat under different parents (as "games" may
    in real data). The vocabulary is ``vocabulary_size`` terms ``"term000"``, ``"term001"``, ...;
    a background distribution and one distribution per node are drawn from Dirichlet laws
    (concentrations 1 and 0.1, so node distributions are sparse). A document draws its leaf
    uniformly, then its words i.i.d. from the mixture ``0.2 background + 0.8 x`` (the mean of
    the distributions of its nodes, deeper levels weighted more: weights ``1, 2, ..., L``);
    ``Text`` has ``10 + Poisson(mean_length - 10)`` words and ``Title`` 3 words. Documents of
    the same leaf therefore share their frequent terms, documents of the same level-1 class
    some of them: retrieval by content is learnable.

    Args:
        n_documents: number of documents (rows).
        seed: seed of ``numpy.random.default_rng``.
        levels: branching factor of each level, root first (``L = len(levels)`` levels).
        vocabulary_size: number of distinct terms.
        mean_length: mean number of words of ``Text`` (>= 10).

    Returns:
        list of ``n_documents`` dicts with the keys :data:`KAGGLE_COLUMNS` (``Cat<l>`` for
        ``l = 1..L``), string values; write them with :func:`write_corpus_csv`.

    Raises:
        ValueError / TypeError: non-positive or non-int ``n_documents``, ``vocabulary_size``,
        ``levels`` entries, ``mean_length < 10``.
    """
    n_documents = check_int("n_documents", n_documents, 1)
    vocabulary_size = check_int("vocabulary_size", vocabulary_size, 1)
    levels = tuple(check_int("levels entries", b, 1) for b in levels)
    if not levels:
        raise ValueError("levels must hold at least one branching factor")
    if not (np.isfinite(mean_length) and mean_length >= 10):
        raise ValueError(f"mean_length must be >= 10, got {mean_length}")
    rng = np.random.default_rng(seed)
    terms = [f"term{j:03d}" for j in range(vocabulary_size)]
    background = rng.dirichlet(np.ones(vocabulary_size))
    node_dist: dict = {}

    def dist(prefix):
        if prefix not in node_dist:
            node_dist[prefix] = rng.dirichlet(np.full(vocabulary_size, 0.1))
        return node_dist[prefix]

    # draw every node's distribution in a fixed order (depth first), independent of the documents
    def visit(prefix):
        if prefix:
            dist(prefix)
        if len(prefix) < len(levels):
            for j in range(levels[len(prefix)]):
                visit(prefix + (j,))

    visit(())
    weights = np.arange(1, len(levels) + 1, dtype=np.float64)
    weights /= weights.sum()
    records = []
    for i in range(n_documents):
        leaf = tuple(int(rng.integers(b)) for b in levels)
        topic = sum(w * dist(leaf[: l + 1]) for l, w in enumerate(weights))
        p = 0.2 * background + 0.8 * topic
        p /= p.sum()
        n_words = 10 + int(rng.poisson(mean_length - 10))
        text = " ".join(terms[j] for j in rng.choice(vocabulary_size, size=n_words, p=p))
        title = " ".join(terms[j] for j in rng.choice(vocabulary_size, size=3, p=p))
        rec = {"productId": f"P{i:06d}", "Title": title, "userId": f"U{int(rng.integers(10**6)):06d}",
               "Helpfulness": f"{int(rng.integers(3))}/{int(rng.integers(3, 6))}",
               "Score": str(int(rng.integers(1, 6))), "Time": str(1_200_000_000 + int(rng.integers(10**8))),
               "Text": text}
        for l, c in enumerate(leaf):
            rec[f"Cat{l + 1}"] = f"l{l + 1} c{c}"
        records.append(rec)
    return records


def write_corpus_csv(records: Sequence[Mapping[str, Any]], path) -> None:
    """Write records (e.g. from :func:`synthetic_corpus`) as a CSV file readable by
    :func:`load_corpus`: a header row with the keys of the first record, comma-separated,
    fields quoted where needed (``csv.QUOTE_MINIMAL``), UTF-8.

    Raises:
        ValueError: no records, or a record with other keys than the first."""
    records = list(records)
    if not records:
        raise ValueError("records must hold at least one record")
    fields = list(records[0].keys())
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        for i, rec in enumerate(records):
            if set(rec.keys()) != set(fields):
                raise ValueError(f"records: record {i} has the keys {sorted(rec)}, the first has {sorted(fields)}")
            writer.writerow(rec)


# --------------------------------------------------------------------------- the problem


def _best_hf1(history) -> np.ndarray:
    return 1.0 - np.asarray(history["best_f"])[:, -1]


def _best_hf1_curve(history) -> np.ndarray:
    return 1.0 - np.asarray(history["best_f"])


def document_retrieval(
    *,
    path=None,
    target: Optional[int] = None,
    seed: int = 0,
    vocabulary_size: int = 500,
    max_documents: Optional[int] = None,
    n_documents: int = DEFAULT_SYNTHETIC_DOCUMENTS,
    corpus_seed: int = 0,
    levels: Sequence[int] = (3, 4, 5),
    synthetic_vocabulary: int = DEFAULT_SYNTHETIC_VOCABULARY,
    noise_std: float = 0.0,
) -> Problem:
    """Unknown-target document retrieval as a finite-domain minimization problem (Phan-Trong
    2024, PhD thesis, Section 3.5.3.2; Phan-Trong et al. 2023, Section 7.2.2).

    The domain is the corpus: ``choices[i]`` is document ``i``'s vector of term counts (raw
    counts, ``d = V``). A hidden target document ``t`` is chosen; the objective is
    ``f(x_i) = 1 - hF1(path_i, path_t)`` (:func:`hierarchical_f1`), minimized, with
    ``optimal_value = 0``, attained by the target and by every document of its leaf class.
    The task metric is the best hierarchical F1 found (``1 - best_f``, higher is better).

    Args:
        path: CSV file in the Kaggle layout (:func:`load_corpus`; thesis: ``train_40k.csv``).
            ``None``: a synthetic corpus, :func:`synthetic_corpus` with ``n_documents``
            documents (default 300), 3 levels (3, 12, 60 classes), 64 distinct terms and seed
            ``corpus_seed``; so ``d <= 64`` whatever ``vocabulary_size``.
        target: row of the corpus (after dropping unknown categories and merging duplicates)
            that is the hidden target; ``None``: drawn uniformly with
            ``numpy.random.default_rng(seed)``.
        seed: seed of the target draw (ignored when ``target`` is given).
        vocabulary_size: ``V``, number of terms kept (thesis: 500).
        max_documents: keep only the first documents of the file (:func:`load_corpus`).
        n_documents: size of the synthetic corpus (ignored with ``path``).
        corpus_seed: seed of the synthetic corpus (ignored with ``path``).
        levels: branching factors of the synthetic corpus (:func:`synthetic_corpus`; ignored
            with ``path``). ``levels=(6, 11, 7)`` gives 6, 66 and 462 classes, the shape of
            the thesis' hierarchy (6, 64, 464).
        synthetic_vocabulary: number of distinct terms of the synthetic corpus (ignored with
            ``path``).
        noise_std: observation noise standard deviation, in units of ``1 - hF1``.

    Returns:
        :class:`~nbo_jax.types.Problem` named ``"document_retrieval"``, built by
        :func:`~nbo_jax.benchmarks.finite.finite_problem`, with ``metric`` "best hierarchical
        F1" and ``metadata`` giving the source, corpus sizes (documents, vocabulary, classes
        per level), the target row, its file row and category names, and the dropped and
        merged counts. Cached per arguments (and per file modification time).

    Raises:
        ValueError / TypeError: ``target`` outside ``[0, N)``, bad sizes or ``noise_std``,
        errors of :func:`load_corpus`.
    """
    if path is not None:
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str, a path-like or None, got {type(path).__name__}")
        path = os.path.abspath(os.fspath(path))
        if not os.path.isfile(path):
            raise FileNotFoundError(f"path: no file at {path!r}")
        stamp = os.stat(path).st_mtime_ns
    else:
        stamp = None
        n_documents = check_int("n_documents", n_documents, 1)
        corpus_seed = check_int("corpus_seed", corpus_seed, 0)
        synthetic_vocabulary = check_int("synthetic_vocabulary", synthetic_vocabulary, 1)
        if isinstance(levels, (str, bytes)) or not hasattr(levels, "__len__") or len(levels) == 0:
            raise ValueError(f"levels must be a non-empty sequence of branching factors, got {levels!r}")
        levels = tuple(check_int("levels entries", b, 1) for b in levels)
    vocabulary_size = check_int("vocabulary_size", vocabulary_size, 1)
    if max_documents is not None:
        max_documents = check_int("max_documents", max_documents, 1)
    if target is not None:
        target = check_int("target", target, 0)
    seed = check_int("seed", seed, 0)
    noise_std = check_positive("noise_std", noise_std, allow_zero=True)
    return _build(path, stamp, target, seed, vocabulary_size, max_documents, n_documents, corpus_seed,
                  noise_std, tuple(levels), synthetic_vocabulary)


@functools.lru_cache(maxsize=None)
def _corpus(path, stamp, vocabulary_size, max_documents, n_documents, corpus_seed, levels=(3, 4, 5),
            synthetic_vocabulary=DEFAULT_SYNTHETIC_VOCABULARY) -> Corpus:
    if path is not None:
        return load_corpus(path, vocabulary_size=vocabulary_size, max_documents=max_documents)
    records = synthetic_corpus(n_documents, seed=corpus_seed, levels=levels, vocabulary_size=synthetic_vocabulary)
    return corpus_from_records(records, vocabulary_size=vocabulary_size, max_documents=max_documents)


@functools.lru_cache(maxsize=None)
def _build(path, stamp, target, seed, vocabulary_size, max_documents, n_documents, corpus_seed,
           noise_std, levels=(3, 4, 5), synthetic_vocabulary=DEFAULT_SYNTHETIC_VOCABULARY) -> Problem:
    corpus = _corpus(path, stamp, vocabulary_size, max_documents, n_documents, corpus_seed, levels,
                     synthetic_vocabulary)
    n = corpus.n_documents
    if target is None:
        target = int(np.random.default_rng(seed).integers(n))
    elif target >= n:
        raise ValueError(f"target must be a row of the corpus, in [0, {n}), got {target}")
    values = 1.0 - hierarchical_f1_matrix(corpus.paths, corpus.paths[target])
    metadata = {
        "source": _SOURCE,
        "corpus": path if path is not None else
        f"synthetic_corpus({n_documents}, seed={corpus_seed}, levels={tuple(levels)}, "
        f"vocabulary_size={synthetic_vocabulary})",
        "n_documents": n,
        "vocabulary_size": len(corpus.vocabulary),
        "vocabulary": corpus.vocabulary,
        "n_levels": int(corpus.paths.shape[1]),
        "n_classes": corpus.n_classes(),
        "target": int(target),
        "target_file_row": int(corpus.row_index[target]),
        "target_path": corpus.path_names(target),
        "n_optimal": int(np.sum(values == 0.0)),
        "n_dropped_unknown": corpus.n_dropped_unknown,
        "n_merged_duplicates": corpus.n_merged_duplicates,
        "inputs": "raw term counts (the box is the corpus's bounding box)",
    }
    metric = TaskMetric("best hierarchical F1", final=_best_hf1, higher_is_better=True, curve=_best_hf1_curve)
    return finite_problem("document_retrieval", corpus.counts, values, noise_std=noise_std, optimal_value=0.0,
                          metric=metric, metadata=metadata)
