"""A package whose names load their modules on first use (PEP 562), so importing one piece does not import the
others' dependencies."""
from __future__ import annotations

import importlib

__all__ = ["lazy_names"]


def lazy_names(package: str, table: dict[str, str], namespace: dict):
    """``(__getattr__, __dir__)`` for ``package``: ``table`` maps a public name to the submodule defining it; a
    name is imported on first access and kept in ``namespace`` (the package's globals) from then on."""
    def __getattr__(name: str):
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{table[name]}"), name)
        namespace[name] = value
        return value

    def __dir__():
        return sorted(set(namespace) | set(namespace.get("__all__", ())))

    return __getattr__, __dir__
