"""Realistic question-understanding benchmark: generator (``generate.py``) and small
regression slices (``slices.small_slice``). See README.md."""
