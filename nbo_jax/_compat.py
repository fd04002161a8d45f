"""The one place that adapts neural-tangents 0.6.5 to the installed JAX.

neural-tangents 0.6.5 (Dec 2023) no longer imports on current JAX (google/neural-tangents
issue 209) for two reasons, both handled here without touching its files:

1. ``neural_tangents/__init__.py`` imports its ``experimental`` module, which imports
   TensorFlow and tf2jax (used only to port TF models). We do not install TensorFlow
   (see ``[tool.uv] override-dependencies`` in pyproject.toml); a stub module takes its
   place in ``sys.modules`` so the import succeeds. Calling anything in it raises.
2. Several names moved from ``jax.core`` to ``jax.extend.core`` (``Jaxpr``, ``JaxprEqn``,
   ``Literal``, ``Var``, ``Primitive``, ...) and ``jax.interpreters.ad.zeros_like_p`` was
   removed. Missing names are put back on ``jax.core`` from ``jax.extend.core`` (or JAX's
   private core as a last resort); ``zeros_like_p`` becomes an inert placeholder
   primitive, used by neural-tangents only in its STRUCTURED_DERIVATIVES rule table.
   ``jax.util`` (removed in JAX 0.10) is recreated with the two helpers it imports,
   ``safe_map`` and ``safe_zip``.

What works afterwards (and is tested in ``tests/test_ntk.py``): ``stax`` analytic kernels and
``empirical_ntk_fn`` with ``NtkImplementation.JACOBIAN_CONTRACTION`` and
``NTK_VECTOR_PRODUCTS``. ``STRUCTURED_DERIVATIVES`` does not work; do not use it.

Usage: ``from nbo_jax._compat import neural_tangents as nt`` (never import neural_tangents
directly elsewhere in the package).
"""

from __future__ import annotations

import importlib
import sys
import types

import jax
import jax.core
import jax.interpreters.ad as _ad

_MOVED_CORE_NAMES = (
    "Jaxpr",
    "JaxprEqn",
    "Literal",
    "Var",
    "Primitive",
    "ShapedArray",
    "Value",
    "AbstractValue",
    "DShapedArray",
    "get_aval",
    "lattice_join",
    "eval_context",
)


def _patch_jax() -> None:
    try:
        import jax.extend.core as _extend_core
    except ImportError:  # pragma: no cover - very old JAX
        _extend_core = None
    from jax._src import core as _private_core

    for name in _MOVED_CORE_NAMES:
        if hasattr(jax.core, name):
            continue
        for source in (_extend_core, _private_core):
            if source is not None and hasattr(source, name):
                setattr(jax.core, name, getattr(source, name))
                break
    try:
        importlib.import_module("jax.util")
    except ImportError:  # removed in JAX 0.10: neural-tangents imports safe_map/safe_zip
        from jax._src import util as _private_util

        util = types.ModuleType("jax.util")
        util.safe_map = _private_util.safe_map
        util.safe_zip = _private_util.safe_zip
        sys.modules["jax.util"] = util
        jax.util = util  # type: ignore[attr-defined]
    if not hasattr(_ad, "zeros_like_p"):
        primitive_cls = getattr(jax.core, "Primitive")
        _ad.zeros_like_p = primitive_cls("zeros_like_placeholder")


def _stub_experimental() -> None:
    name = "neural_tangents.experimental"
    if name in sys.modules:
        return
    stub = types.ModuleType(name)
    stub.__doc__ = "Stub installed by nbo_jax._compat: needs TensorFlow, not installed."

    def __getattr__(attr: str):
        if attr.startswith("__") and attr.endswith("__"):
            # module introspection (__file__, __path__, ...; e.g. hypothesis scanning
            # sys.modules) must see an ordinary module without that attribute
            raise AttributeError(attr)
        raise ImportError(
            f"neural_tangents.experimental.{attr} needs TensorFlow, which nbo_jax does not "
            "install (see nbo_jax/_compat.py)."
        )

    stub.__getattr__ = __getattr__  # type: ignore[attr-defined]
    sys.modules[name] = stub


_patch_jax()
_stub_experimental()

try:
    import neural_tangents  # noqa: E402
except ModuleNotFoundError as err:  # an optional extra since issue 15
    if err.name not in ("neural_tangents", "frozendict"):
        raise
    raise ImportError(
        "the analytic NTK (nbo_jax.ntk.analytic_ntk) needs neural-tangents, an optional extra: "
        "pip install 'nbo-jax[ntk]' (neural-tangents 0.6.5 declares TensorFlow, which this feature "
        "does not use; to skip it: pip install --no-deps neural-tangents==0.6.5 frozendict)"
    ) from err

__all__ = ["neural_tangents"]
