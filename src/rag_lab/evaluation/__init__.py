"""Evaluation: fixed question sets, separate metrics for answering and refusing, reports.

The names below are imported on first use (module ``__getattr__``): ``rag_lab.cli`` needs only
``evaluation.bars`` to start, and importing this package must not load the whole pipeline.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rag_lab.evaluation.claims import claim_metrics, load_packages, save_packages
    from rag_lab.evaluation.questions import load_questions
    from rag_lab.evaluation.report import render_comparison, render_report
    from rag_lab.evaluation.run import evaluate, evaluate_demo, evaluate_file

_LAZY = {
    "claim_metrics": "claims",
    "load_packages": "claims",
    "save_packages": "claims",
    "load_questions": "questions",
    "render_comparison": "report",
    "render_report": "report",
    "evaluate": "run",
    "evaluate_demo": "run",
    "evaluate_file": "run",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'rag_lab.evaluation' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"rag_lab.evaluation.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "claim_metrics",
    "evaluate",
    "evaluate_demo",
    "evaluate_file",
    "load_packages",
    "load_questions",
    "render_comparison",
    "render_report",
    "save_packages",
]
