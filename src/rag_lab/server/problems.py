"""The one JSON error body of the HTTP API: ``{"error": {"type": ..., "message": ...}}``.

Every error the server answers with — bad input, unknown evidence, a missing index,
an unknown route, a bug — goes through :func:`error_body`, with the status code of
its :class:`ErrorType`. Library errors (:mod:`rag_lab.errors`) are mapped in
:func:`from_library`; the message is the library's, which already says what failed,
where, and how to fix it.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any

from rag_lab.errors import (
    ConfigError,
    CorpusError,
    IndexError_,
    QuestionError,
    RagLabError,
)


class ErrorType(StrEnum):
    """Closed set of error types; the status code of each is in :data:`STATUS`."""

    BAD_REQUEST = "bad_request"
    INVALID_QUESTION = "invalid_question"
    INVALID_SETTING = "invalid_setting"
    UNKNOWN_EVIDENCE = "unknown_evidence"
    NOT_AN_IMAGE = "not_an_image"
    NOT_FOUND = "not_found"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    HOST_NOT_ALLOWED = "host_not_allowed"
    FORBIDDEN_ORIGIN = "forbidden_origin"
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
    BODY_TOO_LARGE = "body_too_large"
    RESPONSE_TOO_LARGE = "response_too_large"
    SOURCE_VERIFICATION_FAILED = "source_verification_failed"
    REBUILD_IN_PROGRESS = "rebuild_in_progress"
    INDEX_MISSING = "index_missing"
    INDEX_UNREADABLE = "index_unreadable"
    CORPUS_UNAVAILABLE = "corpus_unavailable"
    INTERNAL_ERROR = "internal_error"


STATUS: dict[ErrorType, int] = {
    ErrorType.BAD_REQUEST: 400,
    ErrorType.INVALID_QUESTION: 400,
    ErrorType.INVALID_SETTING: 400,
    ErrorType.UNKNOWN_EVIDENCE: 404,
    ErrorType.NOT_AN_IMAGE: 404,
    ErrorType.NOT_FOUND: 404,
    ErrorType.METHOD_NOT_ALLOWED: 405,
    ErrorType.HOST_NOT_ALLOWED: 421,
    ErrorType.FORBIDDEN_ORIGIN: 403,
    ErrorType.UNSUPPORTED_MEDIA_TYPE: 415,
    ErrorType.BODY_TOO_LARGE: 413,
    ErrorType.RESPONSE_TOO_LARGE: 422,
    ErrorType.SOURCE_VERIFICATION_FAILED: 409,
    ErrorType.REBUILD_IN_PROGRESS: 409,
    ErrorType.INDEX_MISSING: 503,
    ErrorType.INDEX_UNREADABLE: 503,
    ErrorType.CORPUS_UNAVAILABLE: 503,
    ErrorType.INTERNAL_ERROR: 500,
}


class ApiError(Exception):
    """An error answered with the canonical body and the status of its type."""

    def __init__(self, kind: ErrorType, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message

    @property
    def status(self) -> int:
        return STATUS[self.kind]


def error_body(kind: ErrorType, message: str) -> dict[str, Any]:
    return {"error": {"type": str(kind), "message": message}}


def from_library(exc: RagLabError, index_path: Path | None = None) -> ApiError:
    """The API error for a library exception."""
    if isinstance(exc, QuestionError):
        return ApiError(ErrorType.INVALID_QUESTION, str(exc))
    if isinstance(exc, ConfigError):
        return ApiError(ErrorType.INVALID_SETTING, str(exc))
    if isinstance(exc, IndexError_):
        missing = index_path is not None and not index_path.exists()
        kind = ErrorType.INDEX_MISSING if missing else ErrorType.INDEX_UNREADABLE
        return ApiError(kind, f"{exc} (or POST /api/index)")
    if isinstance(exc, CorpusError):
        return ApiError(ErrorType.CORPUS_UNAVAILABLE, str(exc))
    return ApiError(ErrorType.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
