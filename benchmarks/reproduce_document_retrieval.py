"""Unknown-target document retrieval (Phan-Trong 2024, PhD thesis, Section 3.5.3.2, Figure 3.4;
Phan-Trong et al. 2023, Section 7.2.2): BO over a finite corpus of documents, each a vector of
term counts; the objective is ``1 - hF1`` between a retrieved document's category path and a
hidden target's, and the reported metric is the best hierarchical F1 found (higher is better).

Every algorithm scores its acquisition on the documents not retrieved yet and never retrieves
a document twice (finite domain). One comparison per hidden target (``--targets`` targets,
drawn with seeds 0..k-1), each over ``--seeds`` seeds sharing their initial documents.

Usage::

    uv run python benchmarks/reproduce_document_retrieval.py                # synthetic corpus, CPU size
    uv run python benchmarks/reproduce_document_retrieval.py --path train_40k.csv --iterations 100 --seeds 10

``--path`` reads the Kaggle "hierarchical text classification" CSV (columns Title, Text, Cat1,
Cat2, Cat3; the thesis' 37,738 reviews with a 500-term vocabulary). Without it a synthetic
corpus in that layout is generated (``--documents`` documents, by default 5000 documents in 3
levels of 6, 66 and 462 classes over 500 terms, the shape of the thesis' data).

Writes per target a folder with histories and ``regret.png`` (the best hF1 curves), and at the
top ``table_summary.md``, ``table_ks.md`` and ``table_welch.md``; prints the tables.
"""

from __future__ import annotations

import dataclasses

from _study import run_from_args, study_parser

import nbo_jax as nbo


def main():
    ap = study_parser(__doc__, problems=["document_retrieval"], methods=["neural-bo", "gp-ei", "random"],
                      iterations=40, out="results/document_retrieval")
    ap.add_argument("--path", default=None, help="Kaggle CSV (train_40k.csv); default: a synthetic corpus")
    ap.add_argument("--documents", type=int, default=5000, help="documents of the synthetic corpus")
    ap.add_argument("--levels", default="6,11,7",
                    help="branching factors of the synthetic hierarchy (6,11,7: 6, 66, 462 classes, the shape of "
                    "the thesis' 6, 64, 464)")
    ap.add_argument("--synthetic-vocabulary", type=int, default=500, help="distinct terms of the synthetic corpus")
    ap.add_argument("--vocabulary", type=int, default=500, help="terms kept (thesis: 500)")
    ap.add_argument("--targets", type=int, default=3, help="hidden targets (one comparison each)")
    ap.add_argument("--width", type=int, default=128, help="width of the Neural-BO network")
    args = ap.parse_args()

    corpus = dict(path=args.path, n_documents=args.documents, vocabulary_size=args.vocabulary,
                  levels=tuple(int(b) for b in args.levels.split(",")), synthetic_vocabulary=args.synthetic_vocabulary)

    def problems():
        for t in range(args.targets):
            p = nbo.benchmarks.get("document_retrieval", seed=t, **corpus)
            row = p.metadata["target"]
            print(f"target {t}: document {row}, categories {p.metadata['target_path']}, "
                  f"{p.metadata['n_optimal']} documents of its leaf class", flush=True)
            yield f"target{t}", dataclasses.replace(p, name=f"document_retrieval_target{row}")

    def algorithms(problem):
        kw = {"neural-bo": {"width": args.width}}
        return {m: nbo.registry.get(m, **kw.get(m, {})) for m in args.methods}

    first = nbo.benchmarks.get("document_retrieval", seed=0, **corpus)
    meta = first.metadata
    print(f"corpus: {meta['corpus']}: {meta['n_documents']} documents, {meta['vocabulary_size']} terms, "
          f"classes per level {meta['n_classes']}, {meta['n_dropped_unknown']} dropped (unknown), "
          f"{meta['n_merged_duplicates']} merged (duplicates)", flush=True)
    run_from_args(args, problems(), algorithms, script="reproduce_document_retrieval.py",
                  welch_title="one-sided Welch t-tests on the best hF1 vs {reference} (p, BH decision)")


if __name__ == "__main__":
    main()
