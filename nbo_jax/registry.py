"""The registry: every algorithm preset and transformation by name (the names of the CLI,
the tables and the integrations); the one module that knows both :mod:`nbo_jax.algorithms`
and the transformations (:func:`nbo_jax.trust_region`).

:func:`get` builds one by name, e.g. ``get("gp-ei")`` or ``get("turbo-neural-bo")``;
:data:`REGISTRY` maps each name to its builder.
"""

from __future__ import annotations

import importlib
import re
from typing import Callable, Optional

from .transforms.trust_region import trust_region

# name -> (module, factory, fixed keyword arguments)
_SPECS: dict[str, tuple[str, str, dict]] = {
    "neural-bo": ("neural_bo", "neural_bo", {}),
    "neural-ucb": ("neural_ucb", "neural_ucb", {}),
    "neural-ts": ("neural_ucb", "neural_ts", {}),
    "neural-greedy": ("neural_greedy", "neural_greedy", {"variant": "simple"}),
    "neural-greedy-posterior": ("neural_greedy", "neural_greedy", {"variant": "posterior"}),
    "adaptive-basis": ("adaptive_basis", "adaptive_basis", {"head": "ols"}),
    "dngo": ("adaptive_basis", "adaptive_basis", {"head": "bayesian"}),
    "gp-ei": ("gp", "gp_bo", {"acquisition": "ei"}),
    "gp-ucb": ("gp", "gp_bo", {"acquisition": "ucb"}),
    "gp-ts": ("gp", "gp_bo", {"acquisition": "ts"}),
    # GP-EI with the infinite-width NTK of Neural-BO's default network (Neural-BO at m = inf)
    "gp-ntk": ("gp", "gp_bo", {"acquisition": "ei", "kernel": "ntk"}),
    "random": ("random_search", "random_search", {}),
    "neural-cbo": ("neural_cbo", "neural_cbo", {}),
    "gp-cei": ("gp", "gp_bo", {"acquisition": "cei"}),
    "gp-lcb-c": ("gp", "gp_bo", {"acquisition": "lcb-c"}),
    "pinn-bo": ("pinn_bo", "pinn_bo", {}),
    "rf-ei": ("random_forest", "rf_bo", {}),
    "ensemble-ts": ("surrogate_bo", "surrogate_bo", {"surrogate": "ensemble", "acquisition": "ts"}),
    "vbll-ts": ("surrogate_bo", "surrogate_bo", {"surrogate": "vbll", "acquisition": "ts"}),
}
# several objectives (y (m,) per point; random search takes any number)
_MULTI_OBJECTIVE_SPECS: dict[str, tuple[str, str, dict]] = {
    "gp-ehvi": ("gp", "gp_bo", {"acquisition": "ehvi"}),
    "gp-parego": ("gp", "gp_bo", {"acquisition": "parego"}),
    "gp-ehvi-c": ("gp", "gp_bo", {"acquisition": "ehvi-c"}),
    "neural-bo-mo": ("neural_bo", "neural_bo", {"multi_objective": True}),
}

_ALIASES = {
    "neuralbo": "neural-bo",
    "random-search": "random",
    "rs": "random",
    "neuralgreedy": "neural-greedy",
    "simple-smb": "neural-greedy",
    "posterior-smb": "neural-greedy-posterior",
    "neuralucb": "neural-ucb",
    "neuralts": "neural-ts",
    "gpei": "gp-ei",
    "gpucb": "gp-ucb",
    "gpts": "gp-ts",
    "gpntk": "gp-ntk",
    "ntk-gp": "gp-ntk",
    "gp-ei-ntk": "gp-ntk",
    "neuralcbo": "neural-cbo",
    "cei": "gp-cei",
    "gpcei": "gp-cei",
    "lcb-c": "gp-lcb-c",
    "configopt": "gp-lcb-c",
    "ucb-c": "gp-lcb-c",
    "pinnbo": "pinn-bo",
    "pinn": "pinn-bo",
    "rf": "rf-ei",
    "random-forest": "rf-ei",
    "smac": "rf-ei",
    "deep-ensemble": "ensemble-ts",
    "vbll": "vbll-ts",
    "ehvi": "gp-ehvi",
    "qnehvi": "gp-ehvi",
    "parego": "gp-parego",
    "ehvi-c": "gp-ehvi-c",
    "cehvi": "gp-ehvi-c",
    "neuralbo-mo": "neural-bo-mo",
}


def _factory(name: str) -> Callable:
    module, attr, fixed = {**_SPECS, **_MULTI_OBJECTIVE_SPECS}[name]
    fn = getattr(importlib.import_module(f"nbo_jax.algorithms.{module}"), attr)

    def build(**kwargs):
        clash = sorted(set(fixed) & set(kwargs))
        if clash:
            raise ValueError(f"{name!r} fixes {clash}; use the factory {attr}() directly to change them")
        return fn(**fixed, **kwargs)._replace(name=name)

    build.__name__ = attr
    build.__doc__ = fn.__doc__
    build.factory = fn  # the factory and the arguments the registry name fixes
    build.fixed = dict(fixed)
    return build


REGISTRY: dict[str, Callable] = {name: _factory(name) for name in _SPECS}
"""The single-objective algorithms (and random search) by name."""
MULTI_OBJECTIVE: dict[str, Callable] = {name: _factory(name) for name in _MULTI_OBJECTIVE_SPECS}
"""The algorithms for ``m >= 2`` objectives by name (random search, in :data:`REGISTRY`, takes
any number)."""
_ALL = {**REGISTRY, **MULTI_OBJECTIVE}
STUDY_DEFAULT = "gp-ei"
"""The algorithm of a study that names none, for one objective (``NBOSampler()``,
``NBOSearcher()``): GP-EI, the documentation's pick for integer and categorical parameters and
small budgets (docs, "Choosing an algorithm")."""


_TURBO = re.compile(r"^turbo(\d*)-")


def canonical_name(name: str) -> str:
    """The registry name for ``name`` (case, ``_`` and aliases normalized); ``turbo-<name>``
    names a registry algorithm inside a TuRBO-1 trust region, ``turbo<m>-<name>`` (``m >= 2``)
    inside ``m`` (TuRBO-m; :func:`get`).

    Raises:
        ValueError: unknown name (the message lists the known ones), or ``turbo0-`` /
        ``turbo1-`` (write ``turbo-``).
    """
    key = str(name).strip().lower().replace("_", "-")
    match = _TURBO.match(key)
    prefix = match.group(0) if match else ""
    if match and match.group(1) and int(match.group(1)) < 2:
        raise ValueError(f"algorithm {name!r}: turbo<m>- needs m >= 2 regions; one region is 'turbo-'")
    key = _ALIASES.get(key[len(prefix):], key[len(prefix):])
    if key not in _ALL:
        raise ValueError(f"algorithm must be one of {sorted(_SPECS)} (or 'turbo-' / 'turbo<m>-' and one of them), "
                         f"or for several objectives one of {sorted(_MULTI_OBJECTIVE_SPECS)}, got {name!r}")
    if prefix and key in MULTI_OBJECTIVE:
        raise ValueError(f"algorithm {name!r}: trust regions run single-objective algorithms only")
    return prefix + key


def get(name: str, *, turbo: Optional[dict] = None, **kwargs):
    """The algorithm registered as ``name`` built with ``kwargs`` (its ``name`` field is set
    to the registry name). ``turbo-<name>`` (e.g. ``"turbo-neural-bo"``) is
    :func:`nbo_jax.trust_region` around ``get(<name>, **kwargs)``, named ``turbo-<name>``;
    ``turbo<m>-<name>`` (e.g. ``"turbo3-gp-ei"``) the same with ``regions=m`` (TuRBO-m),
    named so. ``turbo``: arguments of :func:`nbo_jax.trust_region` for such a name (e.g.
    ``get("turbo-gp-ts", turbo={"min_improvement": 1e-3})``, the paper's success rule);
    ``None`` (default): its defaults.

    Raises:
        ValueError: unknown name; ``turbo`` given for a name without ``turbo-`` /
        ``turbo<m>-``, or holding ``regions`` (the name sets it); errors of the factory (a
        constrained algorithm in a trust region follows SCBO's rules:
        :func:`nbo_jax.trust_region`; it has one region).
        TypeError: ``turbo`` not a dict, or naming an argument :func:`nbo_jax.trust_region`
        lacks.
    """
    key = canonical_name(name)
    match = _TURBO.match(key)
    if turbo is not None:
        if not isinstance(turbo, dict):
            raise TypeError(f"turbo must be a dict of trust_region arguments, got {type(turbo).__name__}")
        if not match:
            raise ValueError(f"turbo: trust_region arguments need a 'turbo-<name>' algorithm, got {name!r}")
        if "regions" in turbo:
            raise ValueError(f"turbo: 'regions' is set by the name ({key!r}: 'turbo<m>-' for m regions)")
    if match:
        regions = int(match.group(1)) if match.group(1) else 1
        return trust_region(REGISTRY[key[match.end():]](**kwargs), regions=regions, **(turbo or {}))
    return _ALL[key](**kwargs)


__all__ = ["MULTI_OBJECTIVE", "REGISTRY", "STUDY_DEFAULT", "canonical_name", "get"]
