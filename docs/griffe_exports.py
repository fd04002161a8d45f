"""Griffe extension: a re-exported factory that shares its module's name is the factory.

``nbo_jax/algorithms/__init__.py`` does ``from .neural_bo import neural_bo``: at run time
``nbo_jax.algorithms.neural_bo`` (and so ``nbo_jax.neural_bo``) is the *function*, which
shadows the submodule of the same name. Griffe's static analysis keeps the submodule, so the
top-level page would list ``nbo_jax.neural_bo`` as a module and leave the factory out. This
extension points every *re-export* (an alias, never the submodule itself, which keeps its
own section on the package's page) whose target is a module ``m`` holding a non-module
member also named ``m`` at that member, as Python does.
"""

from __future__ import annotations

from typing import Any

import griffe


class ShadowedSubmoduleExports(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        def visit(module: griffe.Module) -> None:
            for name, member in list(module.members.items()):
                if member.is_alias:
                    try:
                        target = member.final_target
                    except Exception:  # an alias to another package, or unresolvable: leave it
                        continue
                    inner = target.members.get(name) if target.is_module else None
                    if inner is not None and not inner.is_alias and not inner.is_module:
                        module.set_member(name, griffe.Alias(name, inner, parent=module))
                elif member.is_module:
                    visit(member)

        visit(pkg)
