"""Every request is bounded (SPEC §12): the caps, in one place, for the library, CLI and server.

Each cap is a documented constant; ``docs/robustness.md`` lists them. A value past a cap is
bad input (:class:`~rag_lab.errors.ConfigError` or :class:`~rag_lab.errors.QuestionError`),
never silently clipped, except the clarification list, which is cut with a count of the rest.
"""

from __future__ import annotations

from rag_lab.errors import ConfigError

#: Most ranked candidates a request may ask for (``top_k``).
MAX_TOP_K = 200
#: Largest context budget (code points of unit text, or tokens): room for a unit of a few MB.
MAX_BUDGET = 4 * 1024 * 1024
#: Longest question, in code points.
MAX_QUESTION_CHARS = 500
#: Most options a clarification lists; the rest are counted (``more_options``).
MAX_CLARIFICATION_OPTIONS = 50
#: Largest HTTP request body the server reads, in bytes (refused before reading the rest).
MAX_BODY_BYTES = 64 * 1024
#: Largest response body the server sends, in bytes.
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
#: Largest corpus file that is indexed, in bytes; a larger file is a per-file error.
MAX_FILE_BYTES = 16 * 1024 * 1024
#: What the server keeps of the postings it read, in bytes, for every view of the index together
#: (the owner's and each principal's, of every open version): ``rag-lab serve --cache-mib``.
SERVER_POSTINGS_BYTES = 256 * 1024 * 1024


def check_top_k(top_k: object) -> int:
    """``top_k`` as a whole number in ``[1, MAX_TOP_K]``."""
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise ConfigError(f"top_k must be a whole number from 1 to {MAX_TOP_K}, got {top_k!r}")
    return top_k


def check_budget(budget: object) -> int:
    """``budget`` as a whole number in ``[0, MAX_BUDGET]``."""
    if isinstance(budget, bool) or not isinstance(budget, int) or not 0 <= budget <= MAX_BUDGET:
        raise ConfigError(f"budget must be a whole number from 0 to {MAX_BUDGET}, got {budget!r}")
    return budget


__all__ = [
    "MAX_BODY_BYTES",
    "MAX_BUDGET",
    "MAX_CLARIFICATION_OPTIONS",
    "MAX_FILE_BYTES",
    "MAX_QUESTION_CHARS",
    "MAX_RESPONSE_BYTES",
    "MAX_TOP_K",
    "check_budget",
    "check_top_k",
]
