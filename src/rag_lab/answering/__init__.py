"""Decisions per unit kind that retrieval/answer.py dispatches to: prose (sentences), field matching."""
