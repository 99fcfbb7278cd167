"""The request schemas: one JSON Schema per request body and query parameter, used twice.

:func:`validate` checks a request against these dicts, and :mod:`rag_lab.server.openapi`
puts the *same* dicts into ``/openapi.json``, so the document cannot describe a request
the server refuses or accept one the document forbids. The validator knows exactly the
keywords used here (:data:`KEYWORDS`); :func:`check_keywords` refuses any other, and
:func:`~rag_lab.server.openapi.openapi_document` runs it on every schema it publishes.

Patterns use explicit character classes (no ``\\w``, ``\\s``, ``\\d``), which mean the
same in Python and in ECMA-262, the regex dialect of JSON Schema.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Any

from rag_lab.limits import MAX_BUDGET, MAX_QUESTION_CHARS, MAX_TOP_K
from rag_lab.retrieval.pack import DEFAULT_BUDGET

#: Control characters a question may not hold (Unicode category Cc, except tab, LF, CR).
_CONTROL = "\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x9f"
#: What ``str.strip`` removes, plus the control characters: a character outside it is "text".
_BLANK = "\\x00-\\x20\\x7f-\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
#: Group names over HTTP: ASCII letters, digits, ``_ . -`` and CJK ideographs (a subset of
#: the library's rule ``[\\w.-]+``, so every name the schema allows is a valid group).
_GROUP = "[A-Za-z0-9_.\\-\\u3400-\\u4dbf\\u4e00-\\u9fff]+"

QUESTION = {
    "type": "string",
    "minLength": 1,
    "maxLength": MAX_QUESTION_CHARS,
    "pattern": f"^[^{_CONTROL}]*[^{_BLANK}][^{_CONTROL}]*$",
    "description": f"at most {MAX_QUESTION_CHARS} code points (MAX_QUESTION_CHARS), not blank, "
    "no control characters but tab, LF and CR",
    "example": "借阅台 开放时间",
}
NAME = {"type": "string", "minLength": 1, "maxLength": 200, "pattern": f"[^{_BLANK}]"}
PRINCIPAL = {
    "type": ["object", "null"],
    "additionalProperties": False,
    "required": ["name"],
    "properties": {
        "name": NAME,
        "groups": {"type": "array", "maxItems": 64, "items": {"type": "string", "pattern": f"^{_GROUP}$"}},
    },
    "description": "Who asks (SPEC §7). null: the server's default caller. A named principal is the "
    "caller's claim: accepted only because this server runs with trust_principals=True.",
}
UNTRUSTED_PRINCIPAL = {
    "type": "null",
    "description": "This server answers every request as its default caller (anonymous, or the corpus "
    "owner with owner=True) and refuses a named principal with invalid_setting: it would be only the "
    "caller's claim (start it with trust_principals=True behind an authenticating front).",
}


def ask_request(trusted: bool) -> dict[str, Any]:
    """The body of ``POST /api/ask`` (``principal`` is named only on a trusting server)."""
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["question"],
        "properties": {
            "question": QUESTION,
            "top_k": {"type": "integer", "minimum": 1, "maximum": MAX_TOP_K, "default": 5},
            "budget": {
                "type": "integer",
                "minimum": 0,
                "maximum": MAX_BUDGET,
                "default": DEFAULT_BUDGET,
                "description": "code points of unit text (MAX_BUDGET)",
            },
            "as_of": {
                "type": ["string", "null"],
                "format": "date",
                "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
                "description": "YYYY-MM-DD; default (or null): today",
            },
            "principal": PRINCIPAL if trusted else UNTRUSTED_PRINCIPAL,
        },
    }


#: The body of ``POST /api/index``: an empty object (the request must still be JSON, so a
#: cross-site form cannot send it).
INDEX_REQUEST: dict[str, Any] = {"type": "object", "additionalProperties": False, "properties": {}}

#: ``?as=`` and ``?groups=`` (trusting servers only).
AS_PARAM = {**NAME, "description": "the caller's name"}
GROUPS_PARAM = {
    "type": "string",
    "maxLength": 2000,
    "pattern": f"^({_GROUP}(,{_GROUP})*)?$",
    "description": "the caller's groups, comma-separated (without ?as=, the caller is named anonymous)",
}

KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "maxItems",
        "items",
        "pattern",
        "format",
        # annotations: no effect on validation
        "default",
        "description",
        "example",
    }
)

_TYPES = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())
    ),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}


@dataclass(frozen=True)
class Invalid(Exception):
    """A value that does not match its schema: where (``path``, e.g. ``("principal", "name")``) and why."""

    path: tuple[str | int, ...]
    message: str

    def where(self) -> str:
        out = ""
        for part in self.path:
            out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
        return out or "the body"


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def validate(value: Any, schema: dict[str, Any], path: tuple[str | int, ...] = ()) -> Any:
    """``value`` if it matches ``schema`` (integral floats become ints), else :class:`Invalid`."""
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        if not any(_TYPES[t](value) for t in names):
            wanted = " or ".join("an integer" if t == "integer" else t for t in names)
            raise Invalid(path, f"must be {wanted}, got {_kind(value)} {_shown(value)}")
    if isinstance(value, float) and value.is_integer() and "integer" in (types or ()):
        value = int(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        low, high = schema.get("minimum"), schema.get("maximum")
        if (low is not None and value < low) or (high is not None and value > high):
            bounds = f"from {low} to {high}" if high is not None else f"≥ {low}"
            raise Invalid(path, f"must be a whole number {bounds}, got {_shown(value)}")
    if isinstance(value, str):
        _check_string(value, schema, path)
    if isinstance(value, list):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            raise Invalid(path, f"holds {len(value)} items; the limit is {schema['maxItems']}")
        value = [validate(item, schema.get("items", {}), (*path, i)) for i, item in enumerate(value)]
    if isinstance(value, dict):
        value = _check_object(value, schema, path)
    return value


def _check_string(value: str, schema: dict[str, Any], path: tuple[str | int, ...]) -> None:
    if len(value) < schema.get("minLength", 0):
        raise Invalid(path, "must not be empty")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        raise Invalid(path, f"is {len(value)} code points long; the limit is {schema['maxLength']}")
    if schema.get("format") == "date":
        try:
            date.fromisoformat(value)
            shaped = re.search(schema.get("pattern", ""), value) is not None
        except ValueError:
            shaped = False
        if not shaped:
            raise Invalid(path, f"must be an ISO date such as 2026-01-31, got {_shown(value)}")
    elif "pattern" in schema and re.search(schema["pattern"], value) is None:
        raise Invalid(path, f"{_shown(value)} does not match {schema['pattern']}")


def _check_object(
    value: dict[str, Any], schema: dict[str, Any], path: tuple[str | int, ...]
) -> dict[str, Any]:
    properties = schema.get("properties", {})
    if schema.get("additionalProperties", True) is False:
        unknown = sorted(set(value) - set(properties))
        if unknown:
            allowed = ", ".join(properties) or "none"
            raise Invalid(path, f"unknown key(s) {', '.join(map(repr, unknown))}; allowed: {allowed}")
    for key in schema.get("required", ()):
        if key not in value:
            raise Invalid((*path, key), "is required")
    return {k: validate(v, properties[k], (*path, k)) if k in properties else v for k, v in value.items()}


def check_keywords(schema: dict[str, Any]) -> None:
    """Refuse a schema that uses a keyword :func:`validate` would silently ignore."""
    unknown = set(schema) - KEYWORDS
    if unknown:
        raise AssertionError(f"schema keyword(s) the validator does not know: {sorted(unknown)}")
    for sub in schema.get("properties", {}).values():
        check_keywords(sub)
    if isinstance(schema.get("items"), dict):
        check_keywords(schema["items"])
