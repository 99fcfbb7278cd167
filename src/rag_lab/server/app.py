"""The ASGI app: routes, the JSON error body, the page's static files.

Built by :func:`create_app` (no module-level app). Request handlers are thin: they
parse the body, call :mod:`rag_lab.server.ask` and turn library errors into the one
error body of :mod:`rag_lab.server.problems`. Answering runs on the event loop (a few
milliseconds, no thread hop); a rebuild runs in a worker thread so that requests keep
being answered from the previous index version meanwhile.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import date
from importlib import metadata, resources
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from rag_lab.data.access import Principal, parse_groups
from rag_lab.errors import ConfigError, RagLabError
from rag_lab.retrieval.pack import DEFAULT_BUDGET
from rag_lab.server.ask import ask, evidence_view, image_bytes
from rag_lab.server.openapi import openapi_document
from rag_lab.server.problems import ApiError, ErrorType, error_body, from_library
from rag_lab.server.state import ServerState

ASK_KEYS = ("question", "top_k", "budget", "as_of", "principal")
STATIC = {
    "app.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}
PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


#: Who asks when a request names no principal (unless the app was made with ``owner=True``).
ANONYMOUS = "anonymous"


def principal_from(name: object, groups: object, *, where: str) -> Principal:
    """A :class:`Principal` from a request, with the CLI's rules for group names."""
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{where}: the principal's name must be a non-empty string, got {name!r}")
    if isinstance(groups, str):
        wanted = [g for g in groups.split(",") if g]
    elif isinstance(groups, list) and all(isinstance(g, str) for g in groups):
        wanted = [g for g in groups if g]
    elif groups is None:
        wanted = []
    else:
        raise ConfigError(f"{where}: groups must be a list of group names, got {groups!r}")
    if wanted and parse_groups(wanted) is None:
        raise ConfigError(
            f"{where}: group names are letters, digits, _ . - (got {', '.join(map(repr, wanted))})"
        )
    return Principal(name.strip(), frozenset(wanted))


@dataclass(frozen=True)
class Callers:
    """Who a request is answered as: ``default`` unless it names a principal, which is
    accepted only when the server was told to trust such claims (``trusted``)."""

    default: Principal | None
    trusted: bool

    def claimed(self, principal: Principal) -> Principal:
        if not self.trusted:
            who = "the corpus owner" if self.default is None else "anonymous (public documents only)"
            raise ConfigError(
                f"this server does not take a principal from the request ({principal.name!r}): it would be "
                "only the caller's claim. Start it with trust_principals=True "
                "(`rag-lab serve --trust-principals`) behind a front that authenticates callers and sets "
                f"the principal; until then every request is answered as {who}"
            )
        return principal


def _body_principal(value: object, callers: Callers) -> Principal | None:
    if value is None:
        return callers.default
    if not isinstance(value, dict) or set(value) - {"name", "groups"}:
        raise ConfigError(f'principal must be null or {{"name": "bob", "groups": ["staff"]}}, got {value!r}')
    return callers.claimed(principal_from(value.get("name"), value.get("groups"), where="principal"))


def _query_principal(request: Request, callers: Callers) -> Principal | None:
    name, groups = request.query_params.get("as"), request.query_params.get("groups")
    if name is None:
        if groups:
            raise ConfigError("?groups= needs ?as=NAME")
        return callers.default
    return callers.claimed(principal_from(name, groups, where="?as="))


def _parse_ask(body: object, callers: Callers) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise ApiError(
            ErrorType.BAD_REQUEST, 'the body must be a JSON object, e.g. {"question": "借阅台 开放时间"}'
        )
    unknown = sorted(set(body) - set(ASK_KEYS))
    if unknown:
        raise ApiError(
            ErrorType.BAD_REQUEST, f"unknown key(s) {', '.join(unknown)}; allowed: {', '.join(ASK_KEYS)}"
        )
    if "question" not in body:
        raise ApiError(
            ErrorType.INVALID_QUESTION, 'the body has no "question"; e.g. {"question": "借阅台 开放时间"}'
        )
    principal = _body_principal(body.get("principal"), callers)
    as_of = body.get("as_of")
    day: date | None = None
    if as_of is not None:
        try:
            day = date.fromisoformat(as_of) if isinstance(as_of, str) else None
        except ValueError:
            day = None
        if day is None:
            raise ConfigError(f"as_of must be an ISO date such as 2026-01-31, got {as_of!r}")
    return {
        "question": body["question"],
        "top_k": body.get("top_k", 5) if body.get("top_k") is not None else 5,
        "budget": body.get("budget") if body.get("budget") is not None else DEFAULT_BUDGET,
        "as_of": day,
        "principal": principal,
    }


def _static(name: str) -> bytes:
    return (resources.files("rag_lab.server") / "static" / name).read_bytes()


def _version() -> str:
    try:
        return metadata.version("rag-lab")
    except metadata.PackageNotFoundError:
        return "0"


def create_app(
    root: str | os.PathLike[str],
    *,
    index_path: str | os.PathLike[str] | None = None,
    watch: bool = True,
    owner: bool = False,
    trust_principals: bool = False,
) -> Starlette:
    """An ASGI app answering questions about the corpus at ``root`` (see docs/server.md).

    ``watch=True`` watches the corpus with inotify so that requests pay only for the
    files they cite; ``watch=False`` walks the corpus on every request like ``query_once``.
    A request that names no principal is answered as ``anonymous`` (public documents
    only), or as the corpus owner (like the CLI without ``--as``) when ``owner=True``.
    A request may name a principal only when ``trust_principals=True`` (the server then
    believes the claim: put it behind a front that authenticates callers).
    Raises :class:`rag_lab.errors.CorpusError` if ``root`` is not a folder.
    """
    state = ServerState(root, index_path, watch)
    callers = Callers(None if owner else Principal(ANONYMOUS, frozenset()), trust_principals)
    files = {name: _static(name) for name in (*STATIC, "index.html")}
    spec = openapi_document(_version())

    async def ask_route(request: Request) -> Response:
        raw = await request.body()
        try:
            body = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ApiError(ErrorType.BAD_REQUEST, f"the body is not JSON ({exc})") from None
        return JSONResponse(ask(state, **_parse_ask(body, callers)))

    async def evidence_route(request: Request) -> Response:
        principal = _query_principal(request, callers)
        return JSONResponse(evidence_view(state, request.path_params["evidence_id"], principal))

    async def image_route(request: Request) -> Response:
        principal = _query_principal(request, callers)
        data, sha = image_bytes(state, request.path_params["evidence_id"], principal)
        headers = {"X-Rag-Lab-Sha256": sha, "X-Rag-Lab-Verified": "true", "Cache-Control": "no-store"}
        return Response(
            data, media_type="image/png", headers={**headers, "X-Content-Type-Options": "nosniff"}
        )

    async def index_route(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(state.rebuild))

    async def health_route(request: Request) -> Response:
        return JSONResponse(state.health(_query_principal(request, callers)))

    async def openapi_route(request: Request) -> Response:
        return JSONResponse(spec)

    async def page_route(request: Request) -> Response:
        return Response(files["index.html"], media_type="text/html; charset=utf-8", headers=PAGE_HEADERS)

    async def static_route(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            raise ApiError(ErrorType.NOT_FOUND, f"no static file {name!r}; there are: {', '.join(STATIC)}")
        return Response(files[name], media_type=STATIC[name], headers=PAGE_HEADERS)

    async def api_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        return JSONResponse(error_body(exc.kind, exc.message), status_code=exc.status)

    async def library_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RagLabError)
        return await api_error(request, from_library(exc, state.index_path))

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 405:
            allowed = (exc.headers or {}).get("Allow", "")
            kind, message = (
                ErrorType.METHOD_NOT_ALLOWED,
                f"{request.method} is not allowed on {request.url.path}; use {allowed}",
            )
        elif exc.status_code == 404:
            kind, message = ErrorType.NOT_FOUND, f"no route {request.url.path}; see /openapi.json"
        else:
            kind, message = ErrorType.BAD_REQUEST, str(exc.detail)
        response = JSONResponse(error_body(kind, message), status_code=exc.status_code)
        if exc.headers:
            response.headers.update(exc.headers)
        return response

    async def internal_error(request: Request, exc: Exception) -> Response:
        message = f"{type(exc).__name__}: {exc}"
        return JSONResponse(error_body(ErrorType.INTERNAL_ERROR, message), status_code=500)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await run_in_threadpool(state.start)
        try:
            yield
        finally:
            state.stop()

    routes = [
        Route("/api/ask", ask_route, methods=["POST"]),
        Route("/api/evidence/{evidence_id}", evidence_route, methods=["GET"]),
        Route("/api/images/{evidence_id}", image_route, methods=["GET"]),
        Route("/api/index", index_route, methods=["POST"]),
        Route("/api/health", health_route, methods=["GET"]),
        Route("/openapi.json", openapi_route, methods=["GET"]),
        Route("/", page_route, methods=["GET"]),
        Route("/static/{name}", static_route, methods=["GET"]),
    ]
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={
            ApiError: api_error,
            RagLabError: library_error,
            HTTPException: http_error,
            Exception: internal_error,
        },
    )
    app.state.rag_lab = state
    return app


def run(
    root: str | os.PathLike[str],
    host: str = "127.0.0.1",
    port: int = 8000,
    index_path: str | os.PathLike[str] | None = None,
    *,
    owner: bool = False,
    trust_principals: bool = False,
) -> None:
    """Serve ``create_app(root)`` with uvicorn until interrupted (``rag-lab serve ROOT``)."""
    import uvicorn

    app = create_app(root, index_path=index_path, owner=owner, trust_principals=trust_principals)
    uvicorn.run(app, host=host, port=port, access_log=False, log_level="info")
