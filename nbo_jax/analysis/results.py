"""Result files of BO runs: ``histories.npz``, ``config.json`` and ``summary.md``.

:func:`save_results` writes, :func:`load_results` reads back; :func:`history_to_numpy` is
the host copy of a :class:`~nbo_jax.types.History` that both use, and
:func:`environment_info` the library versions and device recorded with every run.

``histories.npz`` holds the arrays ``<method>__x``, ``__y``, ``__f``, ``__best_f``,
``__valid`` and, for constrained runs, ``__c``, ``__c_true``, ``__feasible``,
``__best_feasible_f``, for runs of ``m >= 2`` objectives ``__hypervolume`` (``f``, ``y``,
``best_f`` then ``(S, n, m)``) (plus ``__info.<name>`` per-step diagnostics); ``config.json`` the
run's configuration, library versions, device, seeds, timings and summary; ``summary.md``
the summary table.
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata as _metadata
import json
import math
import pathlib
import platform
import sys
from typing import Any, Mapping, Optional, Union

import numpy as np

from .metrics import field, metric_curves, optional_field, summary_rows
from .tables import format_table

PathLike = Union[str, pathlib.Path]

HISTORY_FIELDS = ("x", "y", "f", "best_f", "valid")
CONSTRAINED_FIELDS = ("c", "c_true", "feasible", "best_feasible_f")
MULTI_OBJECTIVE_FIELDS = ("hypervolume",)


def history_to_numpy(history) -> dict[str, np.ndarray]:
    """The fields of a :class:`~nbo_jax.types.History` as numpy arrays (host copy).

    Args:
        history: a History (single run: ``x (n, d)``, ``y, f, best_f, valid (n,)``; vmapped:
            a leading seed axis ``S``) or a mapping with the same fields.

    Returns:
        ``{field: array}`` with the fields of ``HISTORY_FIELDS`` (dtypes kept), the
        constraint fields of ``CONSTRAINED_FIELDS`` when present (``c``, ``c_true``:
        ``(..., n, K)``), ``hypervolume (..., n)`` for ``m >= 2`` objectives, and each per-step diagnostic of ``History.info`` as
        ``"info.<name>"``.

    Raises:
        ValueError: a mapping without one of ``HISTORY_FIELDS``. TypeError: an object
        without them.
    """
    out = {name: field(history, name) for name in HISTORY_FIELDS}
    for name in CONSTRAINED_FIELDS + MULTI_OBJECTIVE_FIELDS:
        value = optional_field(history, name)
        if value is not None:
            out[name] = value
    info = history.get("info") if isinstance(history, Mapping) else getattr(history, "info", None)
    for name, value in (info or {}).items():
        out[f"info.{name}"] = np.asarray(value)
    return out


def _version(dist: str) -> Optional[str]:
    try:
        return _metadata.version(dist)
    except _metadata.PackageNotFoundError:
        return None


def source_commit() -> Optional[str]:
    """The git commit (40 hex digits) of the checkout nbo_jax is imported from, with ``+dirty``
    appended when the package's files (``nbo_jax/``) differ from it; ``None`` for an installed
    wheel (also one in a virtual environment inside another repository, which does not track
    the package), a folder outside git or no ``git`` on the path. A version number names a
    release, not the code between two releases that a benchmark's stored results came from.

    Returns:
        ``str`` or ``None``; never raises (``git`` is given 10 s per call)."""
    import subprocess

    root = pathlib.Path(__file__).resolve().parents[2]
    try:
        tracked = subprocess.run(["git", "-C", str(root), "ls-files", "--error-unmatch", "nbo_jax/__init__.py"],
                                 capture_output=True, timeout=10)  # a venv inside another repository: not ours
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=10)
        if tracked.returncode != 0 or commit.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(root), "diff", "--quiet", "HEAD", "--", "nbo_jax"],
                               capture_output=True, timeout=10).returncode != 0
    except (OSError, subprocess.SubprocessError):
        return None
    return commit.stdout.strip() + ("+dirty" if dirty else "")


def environment_info() -> dict:
    """What a result was computed with.

    Returns:
        A JSON-ready dict: versions (``python``, ``jax``, ``jaxlib``, ``flax``, ``optax``,
        ``numpy``, ``scipy``, ``matplotlib``, ``nbo_jax``; ``None`` for a package that is not
        installed), ``nbo_jax_commit`` (:func:`source_commit`), ``platform``, ``machine``, the
        JAX ``backend``, ``device_kind`` and ``device_count`` (``None``/``0`` plus
        ``device_error`` when no backend is usable), and ``x64`` (whether float64 is enabled).
        Never raises for a missing device.
    """
    import jax

    from .. import __version__

    info = {
        "python": sys.version.split()[0],
        "jax": jax.__version__,
        "jaxlib": _version("jaxlib"),
        "flax": _version("flax"),
        "optax": _version("optax"),
        "numpy": np.__version__,
        "scipy": _version("scipy"),
        "matplotlib": _version("matplotlib"),
        "nbo_jax": __version__,
        "nbo_jax_commit": source_commit(),
        "platform": platform.platform(),
        "machine": platform.machine(),
    }
    try:
        devices = jax.devices()
        info.update(backend=jax.default_backend(), device_kind=devices[0].device_kind, device_count=len(devices))
    except RuntimeError as err:  # no usable backend
        info.update(backend=None, device_kind=None, device_count=0, device_error=str(err))
    info["x64"] = bool(jax.config.jax_enable_x64)
    return info


def _key_data(keys) -> Optional[list]:
    """Raw key data of (typed or raw uint32) PRNG keys as nested lists, or ``None``."""
    if keys is None:
        return None
    import jax

    k = keys
    if hasattr(k, "dtype") and jax.dtypes.issubdtype(k.dtype, jax.dtypes.prng_key):
        k = jax.random.key_data(k)
    return np.asarray(k).tolist()


def _jsonable(obj):
    """``obj`` with numpy values, paths and tuples turned into JSON types (NaN/inf as strings)."""
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, pathlib.PurePath):
        return str(obj)
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        return f if math.isfinite(f) else str(f)  # JSON has no NaN/inf
    if isinstance(obj, np.ndarray) or hasattr(obj, "__array__"):
        return _jsonable(np.asarray(obj).tolist())
    if obj is None or isinstance(obj, (str, int)):
        return obj
    return repr(obj)


def wall_seconds(timings: Optional[Mapping[str, Any]]) -> dict[str, float]:
    """Wall-clock seconds per method from a run's timings.

    Args:
        timings: method -> seconds (a number) or a mapping with a ``"wall_s"`` number (as
            :func:`save_results` stores them), or ``None``.

    Returns:
        method -> float seconds, for the methods whose timing is a number; the others
        (``None``, a mapping without ``wall_s``, a non-finite value stored as a string by
        the JSON writer) are left out.
    """
    wall = {}
    for method, t in (timings or {}).items():
        t = t.get("wall_s") if isinstance(t, Mapping) else t
        if isinstance(t, (int, float, np.integer, np.floating)) and not isinstance(t, bool):
            wall[method] = float(t)
    return wall


def save_results(
    out_dir: PathLike,
    histories: Mapping[str, Any],
    config: Mapping[str, Any],
    *,
    optimal_value: Optional[float] = None,
    max_hypervolume: Optional[float] = None,
    seed: Optional[int] = None,
    keys=None,
    timings: Optional[Mapping[str, Any]] = None,
) -> dict[str, pathlib.Path]:
    """Write a comparison's results to ``out_dir`` (created if needed; files overwritten).

    Files:
        - ``histories.npz``: for each method the arrays ``<method>__x (S, n, d)``,
          ``<method>__y (S, n)``, ``<method>__f (S, n)``, ``<method>__best_f (S, n)``,
          ``<method>__valid (S, n)`` exactly as given (dtypes kept), and the constraint
          fields and ``info.<name>`` diagnostics when present (:func:`history_to_numpy`).
        - ``config.json``: ``{"config": config, "environment": environment_info(),
          "seeds": {...}, "timings": timings, "metric": ..., "optimal_value": ...,
          "summary": rows, "methods": [...], "created": ISO time}``.
        - ``summary.md``: the summary table (:func:`~nbo_jax.analysis.summary_rows`,
          :func:`~nbo_jax.analysis.format_table`).

    Args:
        out_dir: output folder.
        histories: method name -> :class:`~nbo_jax.types.History` (vmapped, arrays with a
            leading seed axis) or a mapping with the same fields.
        config: JSON-serializable description of the run (numpy values are converted).
        optimal_value: ``f*`` for the regret summary; default ``config.get("optimal_value")``;
            when ``None`` the summary is of the final ``best_f``.
        max_hypervolume: for histories of ``m >= 2`` objectives, the true front's
            hypervolume (the summary is of the final log hypervolume difference); default
            ``config.get("max_hypervolume")``; when ``None`` of the final hypervolume.
        seed: the integer seed; keys: the PRNG keys used (one per run; their raw key data
            is stored).
        timings: e.g. method -> wall seconds, or method -> {"compile_s", "run_s", "wall_s"};
            the ``wall_s`` column of the summary is ``timings[method]`` when that is a
            number, or ``timings[method]["wall_s"]``.

    Returns:
        ``{"histories": path, "config": path, "summary": path}``.

    Raises:
        ValueError: no histories, an empty or non-string method name, or a method name with
            ``"__"`` (the npz key separator). TypeError: a history without the fields.
        OSError: ``out_dir`` cannot be created or written.
    """
    if not histories:
        raise ValueError("histories is empty: pass {method: History}")
    out = pathlib.Path(out_dir)
    arrays = {}
    for method, hist in histories.items():
        if not isinstance(method, str) or not method or "__" in method:
            raise ValueError(f"method names must be non-empty strings without '__', got {method!r}")
        for name, value in history_to_numpy(hist).items():
            arrays[f"{method}__{name}"] = value
        if isinstance(hist, Mapping):  # already converted: keep its per-step diagnostics
            for name, value in hist.items():
                if str(name).startswith("info."):
                    arrays[f"{method}__{name}"] = np.asarray(value)
    if optimal_value is None:
        optimal_value = config.get("optimal_value")
    if max_hypervolume is None:
        max_hypervolume = config.get("max_hypervolume")
    wall = wall_seconds(timings)
    rows = summary_rows(histories, optimal_value, wall, max_hypervolume=max_hypervolume)
    n_evals = {m: int(np.shape(field(h, "valid"))[-1]) for m, h in histories.items()}
    metric = "final " + metric_curves(histories, optimal_value, max_hypervolume=max_hypervolume)[1]

    out.mkdir(parents=True, exist_ok=True)
    paths = {"histories": out / "histories.npz", "config": out / "config.json", "summary": out / "summary.md"}
    np.savez_compressed(paths["histories"], **arrays)
    key_data = _key_data(keys)
    record = {
        "config": dict(config),
        "methods": list(histories),
        "optimal_value": optimal_value,
        "max_hypervolume": max_hypervolume,
        "metric": metric,
        "n_evaluations": n_evals,
        "seeds": {
            "seed": seed,
            "n_seeds": len(key_data) if key_data is not None else None,
            "derivation": "jax.random.split(jax.random.key(seed), n_seeds); run i uses key i",
            "key_data": key_data,
        },
        "timings": dict(timings) if timings else None,
        "summary": rows,
        "environment": environment_info(),
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    paths["config"].write_text(json.dumps(_jsonable(record), indent=2) + "\n")
    lines = [
        "# nbo_jax results",
        "",
        f"Metric: {metric}, over seeds (median, 25%/75% quantiles, IQR, mean);"
        + (" wall_s: wall-clock seconds per method." if wall else ""),
        "",
        format_table(rows),
        "",
        "Config: " + ", ".join(f"{k}={_jsonable(v)}" for k, v in config.items()),
        "",
    ]
    paths["summary"].write_text("\n".join(lines))
    return paths


def load_results(out_dir: PathLike) -> tuple[dict[str, dict[str, np.ndarray]], dict]:
    """Read what :func:`save_results` wrote.

    Args:
        out_dir: the results folder.

    Returns:
        ``(histories, record)``: ``histories[method][field]`` numpy arrays (fields
        ``x, y, f, best_f, valid`` and whatever else was saved), methods in saved order;
        ``record`` the parsed ``config.json`` (its ``"config"`` entry is the config that was
        given), or ``{}`` when there is no ``config.json``.

    Raises:
        FileNotFoundError: ``out_dir`` has no ``histories.npz``.
        ValueError: the file holds no ``<method>__<field>`` arrays, or ``config.json`` is
            not valid JSON.
    """
    out = pathlib.Path(out_dir)
    npz = out / "histories.npz"
    if not npz.is_file():
        raise FileNotFoundError(f"no results in {str(out)!r}: {npz.name} not found (write them with save_results)")
    histories: dict[str, dict[str, np.ndarray]] = {}
    with np.load(npz, allow_pickle=False) as data:
        for key in data.files:
            method, sep, name = key.rpartition("__")
            if not sep or not method:
                continue
            histories.setdefault(method, {})[name] = data[key]
    if not histories:
        raise ValueError(f"{npz} holds no '<method>__<field>' arrays")
    cfg_path = out / "config.json"
    record = json.loads(cfg_path.read_text()) if cfg_path.is_file() else {}
    order = [m for m in record.get("methods", []) if m in histories]
    order += [m for m in histories if m not in order]
    return {m: histories[m] for m in order}, record
