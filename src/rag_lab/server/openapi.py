"""The OpenAPI 3.1 document served at ``GET /openapi.json``, derived from what the server runs.

* request bodies and query parameters are the schemas of :mod:`rag_lab.server.schema`, the
  very dicts the server validates with;
* each operation's error responses come from :data:`OPERATIONS`, the table the app builds
  its routes from, plus the refusals every request can get (:func:`_common_errors`);
* error types and their status codes come from :class:`ErrorType` / :data:`STATUS`,
  statuses and reasons from the library's enums.

``tests/server/test_server_fuzz.py`` runs schemathesis (all checks) against a live server
with this document: every status, header, content type and body it declares must be what
the server does, and every request it allows must be accepted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rag_lab.records import Reason, Status, SupportType
from rag_lab.server import schema
from rag_lab.server.problems import STATUS, ErrorType


@dataclass(frozen=True)
class Operation:
    """One routed method and path, as the document describes it."""

    method: str
    path: str
    summary: str
    ok: dict[str, Any]
    errors: tuple[ErrorType, ...] = ()
    body: str | None = None  # name of the request-body schema
    query: bool = False  # takes ?as= / ?groups= (documented on trusting servers)
    path_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    json: bool = True  # the success body is JSON (bounded by MAX_RESPONSE_BYTES)


def _json(description: str, ref: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}},
    }


E = ErrorType
INDEX_ERRORS = (E.INDEX_MISSING, E.INDEX_UNREADABLE, E.CORPUS_UNAVAILABLE)
EVIDENCE_ID = {"evidence_id": {"type": "string", "description": "an id from a result's citations"}}
STATIC_NAMES = ("app.js", "style.css", "favicon.svg")

OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "post",
        "/api/ask",
        "Answer a question (the result of SPEC §3.6, as query_once returns it)",
        {"200": _json("The result: answered, refused, partial or needs_clarification", "Result")},
        (E.INVALID_QUESTION, E.INVALID_SETTING, *INDEX_ERRORS),
        body="AskRequest",
    ),
    Operation(
        "get",
        "/api/evidence/{evidence_id}",
        "The original file around one evidence unit, re-verified now; a unit the caller may not see "
        "answers exactly like an unknown id",
        {"200": _json("The unit, its numbered lines and highlighted span, and the verification", "Evidence")},
        (E.INVALID_SETTING, E.UNKNOWN_EVIDENCE, *INDEX_ERRORS),
        query=True,
        path_params=EVIDENCE_ID,
    ),
    Operation(
        "get",
        "/api/images/{evidence_id}",
        "The PNG bytes of an image unit, after re-verification",
        {
            "200": {
                "description": "The verified bytes",
                "headers": {
                    "X-Rag-Lab-Sha256": {"schema": {"type": "string"}, "description": "sha256 of the bytes"},
                    "X-Rag-Lab-Verified": {"schema": {"type": "string", "enum": ["true"]}},
                },
                "content": {"image/png": {"schema": {"type": "string", "format": "binary"}}},
            }
        },
        (E.INVALID_SETTING, E.UNKNOWN_EVIDENCE, E.NOT_AN_IMAGE, E.SOURCE_VERIFICATION_FAILED, *INDEX_ERRORS),
        query=True,
        path_params=EVIDENCE_ID,
        json=False,
    ),
    Operation(
        "post",
        "/api/index",
        "Rebuild the index atomically; requests keep being answered meanwhile. The summary counts and "
        "names only files the caller may read",
        {"200": _json("What the build did, as the caller may see it", "BuildSummary")},
        (E.REBUILD_IN_PROGRESS, E.CORPUS_UNAVAILABLE, E.INDEX_UNREADABLE),
        body="IndexRequest",
    ),
    Operation(
        "get",
        "/api/health",
        "Index version, staleness (as the caller sees it) and watcher state; 503 when degraded",
        {
            "200": _json("The index is readable", "Health"),
            "503": _json("Degraded: no index can be read (index says why)", "Health"),
        },
        (E.INVALID_SETTING,),
        query=True,
    ),
    Operation(
        "get",
        "/openapi.json",
        "This document",
        {
            "200": {
                "description": "OpenAPI 3.1",
                "content": {"application/json": {"schema": {"type": "object"}}},
            }
        },
    ),
    Operation(
        "get",
        "/",
        "The web page",
        {"200": {"description": "HTML", "content": {"text/html": {"schema": {"type": "string"}}}}},
        json=False,
    ),
    Operation(
        "get",
        "/static/{name}",
        "The page's script, style sheet and icon",
        {
            "200": {
                "description": "JavaScript, CSS or SVG",
                "content": {
                    "text/javascript": {"schema": {"type": "string"}},
                    "text/css": {"schema": {"type": "string"}},
                    "image/svg+xml": {"schema": {"type": "string"}},
                },
            }
        },
        (E.NOT_FOUND,),
        path_params={"name": {"type": "string", "enum": list(STATIC_NAMES)}},
        json=False,
    ),
)


def _common_errors(op: Operation) -> tuple[ErrorType, ...]:
    """Refusals any request to ``op`` can get before or after its route runs."""
    common: tuple[ErrorType, ...] = (E.HOST_NOT_ALLOWED,)
    if op.method == "post":
        common += (E.BAD_REQUEST, E.UNSUPPORTED_MEDIA_TYPE, E.FORBIDDEN_ORIGIN, E.BODY_TOO_LARGE)
    if op.json and op.path != "/openapi.json":
        common += (E.RESPONSE_TOO_LARGE,)
    return common


def _responses(op: Operation) -> dict[str, Any]:
    by_status: dict[int, list[str]] = {}
    for kind in (*op.errors, *_common_errors(op)):
        by_status.setdefault(STATUS[kind], []).append(str(kind))
    out = dict(op.ok)
    for status, kinds in sorted(by_status.items()):
        if str(status) not in out:
            out[str(status)] = {
                "description": " or ".join(sorted(set(kinds))),
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
            }
    return out


def _parameters(op: Operation, trusted: bool) -> list[dict[str, Any]]:
    params = [
        {"name": name, "in": "path", "required": True, "schema": spec}
        for name, spec in op.path_params.items()
    ]
    if op.query and trusted:
        params += [
            {"name": "as", "in": "query", "required": False, "schema": schema.AS_PARAM},
            {"name": "groups", "in": "query", "required": False, "schema": schema.GROUPS_PARAM},
        ]
    return params


def request_schemas(trusted: bool) -> dict[str, dict[str, Any]]:
    """The request-body schemas by name: what the document shows and the server validates."""
    return {"AskRequest": schema.ask_request(trusted), "IndexRequest": schema.INDEX_REQUEST}


def _operation(op: Operation, trusted: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"summary": op.summary}
    params = _parameters(op, trusted)
    if params:
        out["parameters"] = params
    if op.body is not None:
        ref = {"$ref": f"#/components/schemas/{op.body}"}
        out["requestBody"] = {"required": True, "content": {"application/json": {"schema": ref}}}
    out["responses"] = _responses(op)
    return out


def openapi_document(version: str, *, trusted: bool = False) -> dict[str, Any]:
    """The document for a server that does (``trusted``) or does not take a named principal."""
    bodies = request_schemas(trusted)
    for body in (*bodies.values(), schema.AS_PARAM, schema.GROUPS_PARAM):
        schema.check_keywords(body)
    errors = {str(kind): STATUS[kind] for kind in ErrorType}
    paths: dict[str, dict[str, Any]] = {}
    for op in OPERATIONS:
        paths.setdefault(op.path, {})[op.method] = _operation(op, trusted)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "rag_lab",
            "version": version,
            "description": (
                "Answers only what the corpus supports, with citations re-checked against the original "
                'bytes. Every error has the body {"error": {"type", "message"}}; types and their '
                "status codes: " + ", ".join(f"{k} {v}" for k, v in errors.items()) + "."
            ),
        },
        "paths": paths,
        "components": {"schemas": {**bodies, **RESPONSE_SCHEMAS}},
    }


_STR = {"type": "string"}
_INT = {"type": "integer"}
_PATHS = {"type": "array", "items": _STR}

RESPONSE_SCHEMAS: dict[str, Any] = {
    "Result": {
        "type": "object",
        "required": [
            "question",
            "status",
            "reason",
            "answer",
            "message",
            "citations",
            "support_scope",
            "slots",
            "trace",
        ],
        "properties": {
            "question": _STR,
            "status": {"enum": [str(s) for s in Status]},
            "reason": {"enum": [None, *(str(r) for r in Reason)]},
            "answer": {"type": ["string", "null"]},
            "message": _STR,
            "citations": {"type": "array", "items": {"$ref": "#/components/schemas/Citation"}},
            "support_scope": {"type": ["string", "null"]},
            "same_key_sources_checked": _INT,
            "independent_sources": _INT,
            "duplicates_merged": _INT,
            "slots": {"type": "array", "items": {"type": "object"}},
            "stale": {
                "type": ["object", "null"],
                "description": "index_stale only: added/deleted/modified paths",
            },
            "verification_failure": {"type": ["object", "null"]},
            "clarification": {
                "type": ["object", "null"],
                "description": "needs_clarification only: the fields, subjects or options to choose from "
                "(at most MAX_CLARIFICATION_OPTIONS; more_options counts the rest)",
            },
            "text": {"type": "string", "description": "the verified answer with [E1] markers (docs/generation.md)"},
            "claims": {
                "type": "array",
                "items": {"type": "object"},
                "description": "each: text, evidence, evidence_ids, supported, support (row of M_ij), weight",
            },
            "coverage": {"type": ["number", "null"], "description": "weighted citation coverage"},
            "notes": {"type": "array", "items": {"type": "object"}, "description": "warned lines that explain it"},
            "trace": {"type": "object"},
        },
    },
    "Citation": {
        "type": "object",
        "required": ["evidence_id", "source", "sha256"],
        "properties": {
            "evidence_id": _STR,
            "source": _STR,
            "sha256": _STR,
            "span": {"type": ["array", "null"], "items": _INT, "description": "[start, end) code points"},
            "line": {"type": ["integer", "null"]},
            "modality": {"enum": ["text", "image"]},
            "support_type": {"enum": [str(t) for t in SupportType]},
            "bbox": {"type": "array", "items": _INT},
        },
    },
    "Evidence": {
        "type": "object",
        "required": [
            "evidence_id",
            "source",
            "sha256",
            "current_sha256",
            "verified",
            "verification",
            "excerpt",
        ],
        "properties": {
            "evidence_id": _STR,
            "source": _STR,
            "modality": {"enum": ["text", "image"]},
            "sha256": {"type": "string", "description": "indexed"},
            "current_sha256": {"type": ["string", "null"], "description": "of the bytes read now"},
            "verified": {"type": "boolean", "description": "re-verified at request time"},
            "verification": {"type": "object"},
            "checked_at": {"type": "string", "format": "date-time"},
            "excerpt": {
                "type": ["object", "null"],
                "description": "lines [{number, text}] around the unit; highlight {line, start, end} "
                "in code points of that line, null unless verified",
            },
            "bbox": {"type": ["array", "null"], "items": _INT},
            "image_url": _STR,
        },
    },
    "BuildSummary": {
        "type": "object",
        "required": ["index", "files", "units", "errors", "warnings", "index_version"],
        "properties": {
            "index": {"type": "string", "description": "the index file, relative to ROOT"},
            "files": _INT,
            "units": _INT,
            "errors": {
                "type": "array",
                "items": {"type": "object", "properties": {"path": _STR, "error": _STR}},
            },
            "warnings": _INT,
            "seconds": {"type": "number", "description": "the corpus owner only"},
            "index_version": _INT,
        },
    },
    "Health": {
        "type": "object",
        "required": ["status", "index", "index_file", "watching", "watcher_error", "stale"],
        "properties": {
            "status": {"enum": ["ok", "degraded"]},
            "index": {
                "enum": ["ready", str(E.INDEX_MISSING), str(E.INDEX_UNREADABLE), str(E.CORPUS_UNAVAILABLE)]
            },
            "index_file": {"type": "string", "description": "relative to ROOT"},
            "index_version": _INT,
            "units": {"type": "integer", "description": "units the caller may see"},
            "stale": {"type": ["boolean", "null"]},
            "changed": {
                "type": "object",
                "properties": {"added": _PATHS, "deleted": _PATHS, "modified": _PATHS},
            },
            "watching": {"type": "boolean"},
            "watcher_error": {"type": ["string", "null"]},
            "message": _STR,
        },
    },
    "Error": {
        "type": "object",
        "required": ["error"],
        "additionalProperties": False,
        "properties": {
            "error": {
                "type": "object",
                "required": ["type", "message"],
                "additionalProperties": False,
                "properties": {"type": {"enum": sorted(str(k) for k in ErrorType)}, "message": _STR},
            }
        },
    },
}
