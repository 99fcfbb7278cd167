"""One exception tree for rag_lab.

Exceptions are for bad input, a broken index or a bug. A refusal is a *result*
(see :mod:`rag_lab.records`), never an exception::

    RagLabError
    ├── CorpusError          the corpus root is missing or unusable
    ├── SourceFileError      one corpus file cannot be read or parsed (path, where, why)
    ├── IndexError_          the index is missing, corrupt or of another schema
    ├── QuestionError        a question is empty, too long or holds control characters
    ├── ConfigError          a setting is out of range (budget, top_k, date, principal)
    ├── QuestionSetError     an evaluation question file is malformed (file and line)
    ├── TraceError           a saved trace cannot be replayed
    └── GenerationError      a generator endpoint failed (unreachable, timeout, oversized reply)

Every message says what failed, where, and how to fix it.
"""

from __future__ import annotations


class RagLabError(Exception):
    """Root of every error rag_lab raises on purpose."""


class CorpusError(RagLabError):
    """The corpus root is missing or is not a folder."""


class SourceFileError(RagLabError):
    """One corpus file cannot be read or parsed; ``path`` is relative to ROOT."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.detail = message


class IndexError_(RagLabError):  # noqa: N801 - avoid shadowing the builtin IndexError
    """The index file is missing, corrupt, or was built by another schema version."""


class QuestionError(RagLabError):
    """A question cannot be asked at all (empty, too long, control characters)."""


class ConfigError(RagLabError, ValueError):
    """A setting is out of range: the message names the setting and the allowed values."""


class QuestionSetError(RagLabError):
    """An evaluation question file is malformed; the message names file and line."""


class TraceError(RagLabError):
    """A saved trace cannot be replayed."""


class GenerationError(RagLabError):
    """A generator could not produce a draft: its endpoint failed, timed out or sent no completion."""


__all__ = [
    "ConfigError",
    "CorpusError",
    "GenerationError",
    "IndexError_",
    "QuestionError",
    "QuestionSetError",
    "RagLabError",
    "SourceFileError",
    "TraceError",
]
