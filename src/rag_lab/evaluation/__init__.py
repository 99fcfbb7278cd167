"""Evaluation: fixed question sets, separate metrics for answering and refusing, reports."""

from rag_lab.evaluation.questions import load_questions
from rag_lab.evaluation.report import render_report
from rag_lab.evaluation.run import evaluate, evaluate_demo, evaluate_file

__all__ = ["evaluate", "evaluate_demo", "evaluate_file", "load_questions", "render_report"]
