"""Names a package imports on first use (a module ``__getattr__``, PEP 562).

``rag_lab`` and ``rag_lab.evaluation`` export names whose modules pull in the whole pipeline;
a command that needs none of them (``rag-lab index``) must not pay for importing them."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(package: str, table: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: a name in ``table`` is imported from
    the module it maps to on first use and then set on the package (later lookups do not come
    here); any other name is a subpackage, as eager imports used to set it, or an AttributeError."""
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            if name.startswith("_") or importlib.util.find_spec(f"{package}.{name}") is None:
                raise AttributeError(f"module {package!r} has no attribute {name!r}")
            return importlib.import_module(f"{package}.{name}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *table})

    return __getattr__, __dir__
