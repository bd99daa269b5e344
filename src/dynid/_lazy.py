"""Names a package exports but loads on first use (PEP 562), so that ``import dynid`` stays fast
and cvxpy, sympy, matplotlib, numba and pinocchio load only when something needs them.

A package declares ``_LAZY = {name: "dynid.module"}`` and binds ``__getattr__, __dir__ =
lazy_exports(__name__, _LAZY)``; the import-graph test reads ``_LAZY`` as imports of the package.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[Callable, Callable]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` for ``exports`` (name -> module)."""

    def __getattr__(name: str):
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # later look-ups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return __getattr__, __dir__
