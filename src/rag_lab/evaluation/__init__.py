"""Evaluation: fixed question sets, separate metrics for answering and refusing, reports."""

from rag_lab.evaluation.claims import claim_metrics, load_packages, save_packages
from rag_lab.evaluation.questions import load_questions
from rag_lab.evaluation.report import render_comparison, render_report
from rag_lab.evaluation.run import evaluate, evaluate_demo, evaluate_file

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
