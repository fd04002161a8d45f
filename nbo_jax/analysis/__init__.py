"""Analysis of BO runs: regret metrics, statistics, tables, plots, result files.

Everything here works on host (numpy) arrays after a run; JAX arrays are accepted and
converted with ``np.asarray``. Shapes use ``S`` for the number of seeds and ``n`` for the
number of evaluations (``n_init + n_iter``).

Modules:

- :mod:`~nbo_jax.analysis.metrics`: simple and cumulative regret, best positive regret plus
  violation, the log hypervolume difference, per-method curves, final values and their summaries;
- :mod:`~nbo_jax.analysis.stats`: Kolmogorov-Smirnov normality, one-sided Welch t-tests,
  Benjamini-Hochberg, and :func:`statistics` combining them (Phan-Trong 2024 (PhD thesis),
  Section 3.5.2, Tables 3.1 and 3.2);
- :mod:`~nbo_jax.analysis.tables`: the Markdown/plain-text table renderer;
- :mod:`~nbo_jax.analysis.plots`: :func:`plot_regret`, :func:`plot_pareto_fronts`;
- :mod:`~nbo_jax.analysis.fronts`: final Pareto fronts of runs of several objectives, a
  problem's sampled true front, ``pareto.png`` / ``pareto_fronts.npz``;
- :mod:`~nbo_jax.analysis.results`: ``histories.npz`` / ``config.json`` / ``summary.md``.

Running algorithms side by side on shared seeds is :func:`nbo_jax.comparison.compare`.
"""

from .fronts import final_fronts, load_fronts, sampled_front, write_fronts
from .metrics import (
    HYPERVOLUME_REGRET,
    LOG_FLOOR,
    SUMMARY_COLUMNS,
    cumulative_regret,
    final_values,
    hypervolume_regret,
    is_constrained,
    is_multi_objective,
    metric_curves,
    regret_plus_violation,
    simple_regret,
    summarize,
    summary_rows,
)
from .plots import plot_pareto_fronts, plot_regret
from .results import (
    CONSTRAINED_FIELDS,
    HISTORY_FIELDS,
    MULTI_OBJECTIVE_FIELDS,
    PathLike,
    environment_info,
    source_commit,
    history_to_numpy,
    load_results,
    save_results,
    wall_seconds,
)
from .stats import benjamini_hochberg, ks_normality, statistics, welch_one_sided
from .tables import format_table, markdown_table

__all__ = [
    "simple_regret",
    "cumulative_regret",
    "regret_plus_violation",
    "is_constrained",
    "is_multi_objective",
    "hypervolume_regret",
    "HYPERVOLUME_REGRET",
    "LOG_FLOOR",
    "final_fronts",
    "sampled_front",
    "write_fronts",
    "load_fronts",
    "plot_pareto_fronts",
    "MULTI_OBJECTIVE_FIELDS",
    "metric_curves",
    "final_values",
    "summarize",
    "summary_rows",
    "SUMMARY_COLUMNS",
    "format_table",
    "markdown_table",
    "ks_normality",
    "welch_one_sided",
    "benjamini_hochberg",
    "statistics",
    "plot_regret",
    "save_results",
    "load_results",
    "environment_info",
    "source_commit",
    "history_to_numpy",
    "wall_seconds",
    "HISTORY_FIELDS",
    "CONSTRAINED_FIELDS",
    "PathLike",
]
