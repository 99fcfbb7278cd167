"""What every request passes before a route sees it, and how a body is read.

* :class:`Guard` (ASGI middleware, outermost): the ``Host`` header must name an address
  the server was started for (DNS rebinding: a web page whose name resolves to 127.0.0.1
  must not read the corpus). A refusal is the one JSON error body; nothing is redirected.
* :func:`check_post` (every POST route): ``Content-Type: application/json`` and no
  ``Origin`` or the server's own, so a cross-site form or ``text/plain`` fetch cannot
  start a rebuild.
* :func:`read_json`: a body of at most ``MAX_BODY_BYTES``, refused from its
  ``Content-Length`` before any byte is read, or as soon as the streamed bytes pass the
  cap; then strict JSON: UTF-8 (no BOM), no ``NaN``/``Infinity``, no duplicate keys, no
  lone surrogates, nesting bounded by the parser (``RecursionError`` is bad input).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from rag_lab import limits
from rag_lab.server.problems import ApiError, ErrorType, error_body

#: The loopback names a local server always answers to.
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
_DEFAULT_PORTS = {"http": "80", "https": "443"}


def split_host(value: str) -> tuple[str, str | None]:
    """``"Name:port"`` → (``"name"``, ``"port"``); IPv6 stays bracketed (``"[::1]"``)."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        name, rest = value[: end + 1], value[end + 1 :]
        return name, rest[1:] if rest.startswith(":") else None
    name, sep, port = value.partition(":")
    return name, port if sep else None


def host_entry(host: str, port: int | None = None) -> str:
    """An allowed-host entry for ``host`` (IPv6 addresses are bracketed), with ``port`` if given."""
    name = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return name.lower() if port is None else f"{name.lower()}:{port}"


class Guard:
    """Host, content-type and Origin checks in front of ``app`` (see the module docstring)."""

    def __init__(self, app: ASGIApp, allowed_hosts: Iterable[str]) -> None:
        self.app = app
        self.allowed = {split_host(entry) for entry in allowed_hosts}

    def host_allowed(self, host: str) -> bool:
        name, port = split_host(host)
        return (name, port) in self.allowed or (name, None) in self.allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        problem = self.problem(scope, headers)
        if problem is None:
            await self.app(scope, receive, send)
            return
        response = JSONResponse(error_body(problem.kind, problem.message), status_code=problem.status)
        await response(scope, receive, send)

    def problem(self, scope: Scope, headers: dict[str, str]) -> ApiError | None:
        host = headers.get("host")
        if host is None or not self.host_allowed(host):
            shown = "no Host header" if host is None else f"Host {host[:100]!r}"
            names = ", ".join(sorted(f"{n}:{p}" if p else n for n, p in self.allowed))
            return ApiError(
                ErrorType.HOST_NOT_ALLOWED,
                f"{shown} is not an address this server was started for ({names}); "
                "ask it by one of those names (rag-lab serve --allow-host NAME, or run(..., allowed_hosts=...), adds more)",
            )
        return None


def check_post(request: Request) -> None:
    """A state-changing request must be JSON and same-origin (or carry no ``Origin``): a
    cross-site form or ``text/plain`` fetch is refused before its body is read."""
    headers = request.headers
    kind = headers.get("content-type", "")
    media, *params = (part.strip().lower() for part in kind.split(";"))
    if media != "application/json" or any(p not in ("charset=utf-8", 'charset="utf-8"') for p in params if p):
        raise ApiError(
            ErrorType.UNSUPPORTED_MEDIA_TYPE,
            f"a POST must send Content-Type: application/json (UTF-8), got {headers.get('content-type')!r}",
        )
    origin = headers.get("origin")
    host = headers.get("host", "")
    if origin is not None and not same_origin(origin, host, request.url.scheme):
        raise ApiError(
            ErrorType.FORBIDDEN_ORIGIN,
            f"Origin {origin[:100]!r} is not this server ({host}); a POST must come from the "
            "server's own page or from a client that sends no Origin",
        )


def same_origin(origin: str, host: str, scheme: str) -> bool:
    """True when ``origin`` is ``scheme://host`` (default ports compared as equal)."""
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    if parts.scheme not in _DEFAULT_PORTS or parts.path or parts.query or not parts.netloc:
        return False
    mine, their = split_host(host), split_host(parts.netloc)
    default = _DEFAULT_PORTS[parts.scheme]
    return parts.scheme == scheme and (mine[0], mine[1] or default) == (their[0], their[1] or default)


async def read_body(request: Request) -> bytes:
    """The body, refused with ``413 body_too_large`` past ``MAX_BODY_BYTES`` without reading on."""
    cap = limits.MAX_BODY_BYTES
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise ApiError(ErrorType.BAD_REQUEST, f"Content-Length {declared[:40]!r} is not a byte count")
        if int(declared) > cap:
            raise ApiError(ErrorType.BODY_TOO_LARGE, _too_large(f"{int(declared):,} bytes", cap))
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            raise ApiError(ErrorType.BODY_TOO_LARGE, _too_large(f"more than {cap:,} bytes", cap))
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(what: str, cap: int) -> str:
    return f"the request body is {what}; the limit is {cap:,} bytes (MAX_BODY_BYTES)"


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key!r} appears twice")
        out[key] = value
    return out


def _check_text(value: Any, where: str = "body") -> None:
    """Refuse lone surrogates (``"\\ud800"``): valid JSON escapes, but no Unicode text."""
    stack = [(value, where)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, str):
            for offset, char in enumerate(item):
                if 0xD800 <= ord(char) <= 0xDFFF:
                    raise ApiError(
                        ErrorType.BAD_REQUEST,
                        f"{at} holds a lone surrogate \\u{ord(char):04x} at code point {offset}; "
                        "send Unicode text (UTF-8)",
                    )
        elif isinstance(item, dict):
            stack.extend((k, f"a key of {at}") for k in item)
            stack.extend((v, f"{at}.{k}") for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, f"{at}[{i}]") for i, v in enumerate(item))


def parse_json(raw: bytes) -> Any:
    """Strict JSON from ``raw``, or ``400 bad_request`` saying what is wrong."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(
            ErrorType.BAD_REQUEST, f"the body is not UTF-8 (byte offset {exc.start}: {exc.reason})"
        ) from None
    try:
        value = json.loads(text, parse_constant=_no_constant, object_pairs_hook=_pairs)
    except RecursionError:
        raise ApiError(ErrorType.BAD_REQUEST, "the body is not JSON (nested too deeply)") from None
    except ValueError as exc:
        raise ApiError(ErrorType.BAD_REQUEST, f"the body is not JSON ({exc})") from None
    _check_text(value)
    return value


async def read_json(request: Request) -> Any:
    """The JSON body of a POST, after :func:`check_post`, bounded and strictly parsed."""
    check_post(request)
    return parse_json(await read_body(request))
