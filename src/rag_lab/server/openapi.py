"""The hand-written OpenAPI 3.1 description served at ``GET /openapi.json``.

A test checks that every route of :func:`rag_lab.server.create_app` is described here
and every described path is routed, and that the error types are the closed set.
"""

from __future__ import annotations

from typing import Any

from rag_lab.records import Reason, Status
from rag_lab.server.problems import STATUS, ErrorType


def _error(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def _json(description: str, ref: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}},
    }


EVIDENCE_ID = {"name": "evidence_id", "in": "path", "required": True, "schema": {"type": "string"}}
AS = {
    "name": "as",
    "in": "query",
    "required": False,
    "schema": {"type": "string"},
    "description": "the caller's name (with groups; only on a server with trust_principals=True); "
    "default: the server's default caller",
}
GROUPS = {
    "name": "groups",
    "in": "query",
    "required": False,
    "schema": {"type": "string"},
    "description": "the caller's groups, comma-separated (with as)",
}


def openapi_document(version: str) -> dict[str, Any]:
    errors = {str(kind): STATUS[kind] for kind in ErrorType}
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
        "paths": {
            "/api/ask": {
                "post": {
                    "summary": "Answer a question (the result of SPEC §3.6, as query_once returns it)",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/AskRequest"}}
                        },
                    },
                    "responses": {
                        "200": _json(
                            "The result: answered, refused, partial or needs_clarification", "Result"
                        ),
                        "400": _error("invalid_question, invalid_setting or bad_request"),
                        "503": _error("index_missing or index_unreadable"),
                    },
                }
            },
            "/api/evidence/{evidence_id}": {
                "get": {
                    "summary": "The original file around one evidence unit, re-verified now; a unit the caller "
                    "may not see answers exactly like an unknown id",
                    "parameters": [EVIDENCE_ID, AS, GROUPS],
                    "responses": {
                        "200": _json(
                            "The unit, its numbered lines and highlighted span, and the verification",
                            "Evidence",
                        ),
                        "404": _error("unknown_evidence"),
                        "503": _error("index_missing or index_unreadable"),
                    },
                }
            },
            "/api/images/{evidence_id}": {
                "get": {
                    "summary": "The PNG bytes of an image unit, after re-verification",
                    "parameters": [EVIDENCE_ID, AS, GROUPS],
                    "responses": {
                        "200": {"description": "The verified bytes", "content": {"image/png": {}}},
                        "404": _error("unknown_evidence or not_an_image"),
                        "409": _error("source_verification_failed"),
                        "503": _error("index_missing or index_unreadable"),
                    },
                }
            },
            "/api/index": {
                "post": {
                    "summary": "Rebuild the index atomically; requests keep being answered meanwhile",
                    "responses": {
                        "200": _json("What the build did", "BuildSummary"),
                        "409": _error("rebuild_in_progress"),
                        "503": _error("corpus_unavailable"),
                    },
                }
            },
            "/api/health": {
                "get": {
                    "summary": "Index version, staleness (as the caller sees it) and watcher state",
                    "parameters": [AS, GROUPS],
                    "responses": {"200": _json("Health", "Health")},
                }
            },
            "/openapi.json": {
                "get": {"summary": "This document", "responses": {"200": {"description": "OpenAPI 3.1"}}}
            },
            "/": {"get": {"summary": "The web page", "responses": {"200": {"description": "HTML"}}}},
            "/static/{name}": {
                "get": {
                    "summary": "The page's script and style sheet",
                    "parameters": [
                        {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}
                    ],
                    "responses": {"200": {"description": "JavaScript or CSS"}, "404": _error("not_found")},
                }
            },
        },
        "components": {
            "schemas": {
                "AskRequest": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["question"],
                    "properties": {
                        "question": {"type": "string", "example": "借阅台 开放时间"},
                        "top_k": {"type": "integer", "minimum": 1, "default": 5},
                        "budget": {
                            "type": "integer",
                            "minimum": 0,
                            "default": 1200,
                            "description": "code points",
                        },
                        "as_of": {
                            "type": ["string", "null"],
                            "format": "date",
                            "description": "default: today",
                        },
                        "principal": {
                            "oneOf": [{"type": "null"}, {"$ref": "#/components/schemas/Principal"}],
                            "description": "Who asks (SPEC §7). null: the server's default caller — "
                            "`anonymous` (public documents only), or the corpus owner if the server "
                            "was started with owner=True. A named principal is a claim: it is "
                            "accepted only when the server runs with trust_principals=True (behind a "
                            "front that authenticates callers), otherwise refused with invalid_setting.",
                        },
                    },
                },
                "Principal": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["name"],
                    "properties": {
                        "name": {"type": "string"},
                        "groups": {"type": "array", "items": {"type": "string", "pattern": "^[\\w.-]+$"}},
                    },
                },
                "Result": {
                    "type": "object",
                    "required": ["question", "status", "reason", "answer", "message", "citations", "trace"],
                    "properties": {
                        "question": {"type": "string"},
                        "status": {"enum": [str(s) for s in Status]},
                        "reason": {"enum": [None, *(str(r) for r in Reason)]},
                        "answer": {"type": ["string", "null"]},
                        "message": {"type": "string"},
                        "citations": {"type": "array", "items": {"$ref": "#/components/schemas/Citation"}},
                        "support_scope": {"type": ["string", "null"]},
                        "same_key_sources_checked": {"type": "integer"},
                        "slots": {"type": "array", "items": {"type": "object"}},
                        "stale": {
                            "type": "object",
                            "description": "index_stale only: added/deleted/modified paths",
                        },
                        "text": {
                            "type": "string",
                            "description": "the verified answer with [E1] markers (docs/generation.md)",
                        },
                        "claims": {
                            "type": "array",
                            "items": {"type": "object"},
                            "description": "each: text, evidence, evidence_ids, supported, support (row of M_ij), weight",
                        },
                        "coverage": {"type": ["number", "null"], "description": "weighted citation coverage"},
                        "trace": {"type": "object"},
                    },
                },
                "Citation": {
                    "type": "object",
                    "properties": {
                        "evidence_id": {"type": "string"},
                        "source": {"type": "string"},
                        "sha256": {"type": "string"},
                        "span": {
                            "type": ["array", "null"],
                            "items": {"type": "integer"},
                            "description": "[start, end) code points",
                        },
                        "line": {"type": ["integer", "null"]},
                        "modality": {"enum": ["text", "image"]},
                        "support_type": {"enum": ["verbatim_line", "remeasured_pixels"]},
                        "bbox": {"type": "array", "items": {"type": "integer"}},
                    },
                },
                "Evidence": {
                    "type": "object",
                    "properties": {
                        "evidence_id": {"type": "string"},
                        "source": {"type": "string"},
                        "sha256": {"type": "string", "description": "indexed"},
                        "current_sha256": {
                            "type": ["string", "null"],
                            "description": "of the bytes read now",
                        },
                        "verified": {"type": "boolean", "description": "re-verified at request time"},
                        "verification": {"type": "object"},
                        "checked_at": {"type": "string", "format": "date-time"},
                        "excerpt": {
                            "type": ["object", "null"],
                            "description": "lines [{number, text}] around the unit; highlight {line, start, end} "
                            "in code points of that line, null unless verified",
                        },
                        "bbox": {"type": "array", "items": {"type": "integer"}},
                        "image_url": {"type": "string"},
                    },
                },
                "BuildSummary": {"type": "object"},
                "Health": {"type": "object"},
                "Error": {
                    "type": "object",
                    "required": ["error"],
                    "properties": {
                        "error": {
                            "type": "object",
                            "required": ["type", "message"],
                            "properties": {"type": {"enum": sorted(errors)}, "message": {"type": "string"}},
                        }
                    },
                },
            }
        },
    }
