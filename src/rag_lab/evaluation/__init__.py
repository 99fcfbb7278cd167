"""Evaluation: fixed question sets, separate metrics for answering and refusing, reports.

The names below are imported on first use (module ``__getattr__``): ``rag_lab.cli`` needs only
``evaluation.bars`` to start, and importing this package must not load the whole pipeline.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rag_lab._lazy import lazy_attributes

if TYPE_CHECKING:
    from rag_lab.evaluation.claims import claim_metrics, load_packages, save_packages
    from rag_lab.evaluation.questions import load_questions
    from rag_lab.evaluation.report import render_comparison, render_report
    from rag_lab.evaluation.run import evaluate, evaluate_demo, evaluate_file

_LAZY = {
    "claim_metrics": "rag_lab.evaluation.claims",
    "load_packages": "rag_lab.evaluation.claims",
    "save_packages": "rag_lab.evaluation.claims",
    "load_questions": "rag_lab.evaluation.questions",
    "render_comparison": "rag_lab.evaluation.report",
    "render_report": "rag_lab.evaluation.report",
    "evaluate": "rag_lab.evaluation.run",
    "evaluate_demo": "rag_lab.evaluation.run",
    "evaluate_file": "rag_lab.evaluation.run",
}


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY)


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
