"""The one table renderer of nbo_jax: Markdown tables that also read as plain text.

:func:`markdown_table` renders a header and rows of cells (aligned columns, numeric columns
right-aligned); :func:`format_table` lays out rows given as dicts (e.g. from
:func:`nbo_jax.analysis.summarize`) and renders them with :func:`markdown_table`. The
thesis tables of :mod:`nbo_jax.comparison` are rendered by the same function.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import numpy as np


def _is_number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _fmt(value, floatfmt: str) -> str:
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return format(float(value), floatfmt)
    return "" if value is None else str(value)


def markdown_table(header: Sequence[Any], rows: Sequence[Sequence[Any]], floatfmt: str = ".4g") -> str:
    """A Markdown table with aligned columns (readable as plain text).

    Args:
        header: the column names, ``C`` of them.
        rows: one sequence of ``C`` cells per row: strings, numbers (floats formatted with
            ``floatfmt``, ints as they are), bools, or ``None`` (left blank). A column whose
            non-blank cells are all numbers is right-aligned (``---:``), the others left-aligned.
        floatfmt: format spec for floats (default ``".4g"``).

    Returns:
        The table as a string: header line, separator line, one line per row; no trailing
        newline. With no rows, the header and separator only.

    Raises:
        ValueError: a row whose length differs from the header's, or an empty header.
    """
    header = [str(c) for c in header]
    if not header:
        raise ValueError("header is empty: a table needs at least one column")
    for i, row in enumerate(rows):
        if len(row) != len(header):
            raise ValueError(f"row {i} has {len(row)} cells, the header {len(header)} columns")
    cells = [[_fmt(v, floatfmt) for v in row] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(header)]
    given = [[row[i] for row in rows if row[i] is not None] for i in range(len(header))]
    numeric = [bool(values) and all(_is_number(v) for v in values) for values in given]

    def line(values):
        parts = [v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)]
        return "| " + " | ".join(parts) + " |"

    sep = "|" + "|".join(("-" * (w + 1) + ":") if num else ("-" * (w + 2)) for w, num in zip(widths, numeric)) + "|"
    return "\n".join([line(header), sep, *(line(r) for r in cells)])


def format_table(rows: Sequence[Mapping[str, Any]], columns: Optional[Sequence[str]] = None,
                 floatfmt: str = ".4g") -> str:
    """A Markdown (and plain-text readable) table of dict rows, by :func:`markdown_table`.

    Args:
        rows: dicts, e.g. from :func:`nbo_jax.analysis.summarize`.
        columns: column order; default: the keys of all rows in first-seen order.
        floatfmt: format spec for floats (default ``".4g"``).

    Returns:
        The table as a string (header, separator, one line per row; no trailing newline).
        Missing entries are left blank.

    Raises:
        ValueError: ``rows`` is empty.
    """
    if not rows:
        raise ValueError("rows is empty")
    if columns is None:
        columns = []
        for row in rows:
            columns.extend(k for k in row if k not in columns)
    return markdown_table(columns, [[row.get(c) for c in columns] for row in rows], floatfmt)
