"""The ASGI app: routes, the JSON error body, the page's static files.

Built by :func:`create_app` (no module-level app). Request handlers are thin: the
:class:`~rag_lab.server.guard.Guard` checks Host, content type and Origin; a handler
reads a bounded body, validates it with the schemas of :mod:`rag_lab.server.schema`
(the same ones ``/openapi.json`` publishes), calls :mod:`rag_lab.server.ask` in a worker
thread and turns library errors into the one error body of :mod:`rag_lab.server.problems`.
Answering, evidence views and image bytes run on at most :data:`WORKERS` threads and
health on its own :data:`HEALTH_WORKERS`, so a slow request never stalls the event loop
or ``/api/health``; a rebuild runs in a worker thread so that requests keep being
answered from the previous index version meanwhile.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import date
from importlib import metadata, resources
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from rag_lab import limits
from rag_lab.data.access import Principal, parse_groups
from rag_lab.errors import ConfigError, QuestionError, RagLabError
from rag_lab.retrieval.pack import DEFAULT_BUDGET
from rag_lab.retrieval.question import check_question
from rag_lab.server import schema
from rag_lab.server.ask import ask, evidence_view, image_bytes
from rag_lab.server.guard import LOOPBACK, Guard, host_entry, read_json
from rag_lab.server.openapi import openapi_document, request_schemas
from rag_lab.server.problems import ApiError, ErrorType, error_body, from_library
from rag_lab.server.state import ServerState

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
#: Threads answering questions, evidence views and image bytes at once (more wait their turn).
WORKERS = 4
#: Threads for ``/api/health`` (its own, so that it answers while every worker is busy).
HEALTH_WORKERS = 2

T = TypeVar("T")


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


def _query_principal(request: Request, callers: Callers) -> Principal | None:
    name, groups = request.query_params.get("as"), request.query_params.get("groups")
    if name is None and groups is None:
        return callers.default
    if not callers.trusted:
        if name is None:
            raise ConfigError("?groups= needs ?as=NAME, and this server takes no principal from the request")
        return callers.claimed(principal_from(name, groups, where="?as="))
    for key, value, spec in (("as", name, schema.AS_PARAM), ("groups", groups, schema.GROUPS_PARAM)):
        if value is not None:
            try:
                schema.validate(value, spec)
            except schema.Invalid as exc:
                raise ConfigError(f"?{key}= {exc.message}") from None
    return callers.claimed(principal_from(name or ANONYMOUS, groups, where="?as="))


def _invalid_ask(exc: schema.Invalid, body: Any, callers: Callers) -> Exception:
    """The error for an ask body that does not match its schema, with the library's words
    where the library has them."""
    if not exc.path:
        if not isinstance(body, dict):
            return ApiError(
                ErrorType.BAD_REQUEST, 'the body must be a JSON object, e.g. {"question": "借阅台 开放时间"}'
            )
        return ApiError(ErrorType.BAD_REQUEST, exc.message)
    key = exc.path[0]
    if key == "question":
        if "question" not in body:
            return ApiError(
                ErrorType.INVALID_QUESTION, 'the body has no "question"; e.g. {"question": "借阅台 开放时间"}'
            )
        try:
            check_question(body["question"])
        except QuestionError as problem:
            return problem
        return QuestionError(f"the question {exc.message}")
    if key == "principal":
        value = body["principal"]
        if not isinstance(value, dict):
            return ConfigError(
                f'principal must be null or {{"name": "bob", "groups": ["staff"]}}, got {value!r}'
            )
        if not callers.trusted:
            try:
                callers.claimed(principal_from(value.get("name"), value.get("groups"), where="principal"))
            except ConfigError as problem:
                return problem
    return ConfigError(f"{exc.where()} {exc.message}")


def _parse_ask(body: Any, callers: Callers, spec: dict[str, Any]) -> dict[str, Any]:
    try:
        valid = schema.validate(body, spec)
    except schema.Invalid as exc:
        raise _invalid_ask(exc, body, callers) from None
    named = valid.get("principal")
    principal = (
        callers.default
        if named is None
        else callers.claimed(principal_from(named["name"], named.get("groups"), where="principal"))
    )
    as_of = valid.get("as_of")
    return {
        "question": valid["question"],
        "top_k": valid.get("top_k", 5),
        "budget": valid.get("budget", DEFAULT_BUDGET),
        "as_of": None if as_of is None else date.fromisoformat(as_of),
        "principal": principal,
    }


def encode(data: Any) -> bytes:
    """``data`` as the JSON body, or ``response_too_large`` past ``MAX_RESPONSE_BYTES``."""
    body = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
    cap = limits.MAX_RESPONSE_BYTES
    if len(body) > cap:
        raise ApiError(
            ErrorType.RESPONSE_TOO_LARGE,
            f"the response would be {len(body):,} bytes; the limit is {cap:,} (MAX_RESPONSE_BYTES); "
            "ask a narrower question or lower top_k / budget",
        )
    return body


def _json_body(body: bytes, status: int = 200) -> Response:
    return Response(body, status_code=status, media_type="application/json")


class Workers:
    """The bounded thread pools (created in the event loop on first use)."""

    def __init__(self) -> None:
        self._limiters: dict[str, anyio.CapacityLimiter] = {}

    async def run(self, pool: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        limiter = self._limiters.get(pool)
        if limiter is None:
            size = HEALTH_WORKERS if pool == "health" else WORKERS
            limiter = self._limiters.setdefault(pool, anyio.CapacityLimiter(size))
        return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs), limiter=limiter)


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
    allowed_hosts: Iterable[str] | None = None,
    postings_cache_bytes: int = limits.SERVER_POSTINGS_BYTES,
) -> Starlette:
    """An ASGI app answering questions about the corpus at ``root`` (see docs/server.md).

    ``watch=True`` watches the corpus with inotify so that requests pay only for the
    files they cite; ``watch=False`` walks the corpus on every request like ``query_once``.
    A request that names no principal is answered as ``anonymous`` (public documents
    only), or as the corpus owner (like the CLI without ``--as``) when ``owner=True``.
    A request may name a principal only when ``trust_principals=True`` (the server then
    believes the claim: put it behind a front that authenticates callers).
    ``allowed_hosts``: the ``Host`` values answered, ``"name"`` (any port) or
    ``"name:port"``; default :data:`~rag_lab.server.guard.LOOPBACK` on any port.
    ``postings_cache_bytes``: what the open views of the index (the owner's and each principal's,
    old versions until their last request ends) keep of the postings they read, all together.
    Raises :class:`rag_lab.errors.CorpusError` if ``root`` is not a folder.
    """
    state = ServerState(root, index_path, watch, postings_cache_bytes)
    callers = Callers(None if owner else Principal(ANONYMOUS, frozenset()), trust_principals)
    files = {name: _static(name) for name in (*STATIC, "index.html")}
    spec = openapi_document(_version(), trusted=trust_principals)
    bodies = request_schemas(trust_principals)
    workers = Workers()

    def answer(body: Any) -> bytes:
        return encode(ask(state, **_parse_ask(body, callers, bodies["AskRequest"])))

    async def ask_route(request: Request) -> Response:
        body = await read_json(request)
        return _json_body(await workers.run("answer", answer, body))

    async def evidence_route(request: Request) -> Response:
        principal = _query_principal(request, callers)
        evidence_id = request.path_params["evidence_id"]
        view = await workers.run("answer", lambda: encode(evidence_view(state, evidence_id, principal)))
        return _json_body(view)

    async def image_route(request: Request) -> Response:
        principal = _query_principal(request, callers)
        evidence_id = request.path_params["evidence_id"]
        data, sha = await workers.run("answer", image_bytes, state, evidence_id, principal)
        headers = {"X-Rag-Lab-Sha256": sha, "X-Rag-Lab-Verified": "true", "Cache-Control": "no-store"}
        return Response(
            data, media_type="image/png", headers={**headers, "X-Content-Type-Options": "nosniff"}
        )

    async def index_route(request: Request) -> Response:
        body = await read_json(request)
        try:
            schema.validate(body, bodies["IndexRequest"])
        except schema.Invalid as exc:
            raise ApiError(
                ErrorType.BAD_REQUEST, f"POST /api/index takes the body {{}}: {exc.message}"
            ) from None
        summary = await run_in_threadpool(state.rebuild, callers.default)
        return _json_body(encode(summary))

    async def health_route(request: Request) -> Response:
        principal = _query_principal(request, callers)
        health = await workers.run("health", state.health, principal)
        return _json_body(encode(health), 200 if health["status"] == "ok" else 503)

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
        return JSONResponse(error_body(exc.kind, state.public(exc.message)), status_code=exc.status)

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
        # The exception's text may name files or paths: it goes to the server log, not the caller.
        message = f"{type(exc).__name__} (a bug in rag_lab; the server log has the details)"
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
    hosts = list(LOOPBACK) if allowed_hosts is None else list(allowed_hosts)
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        middleware=[Middleware(Guard, allowed_hosts=hosts)],
        exception_handlers={
            ApiError: api_error,
            RagLabError: library_error,
            HTTPException: http_error,
            Exception: internal_error,
        },
    )
    app.router.redirect_slashes = False  # a redirect would name the Host it was asked by
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
    allowed_hosts: Iterable[str] | None = None,
    postings_cache_bytes: int = limits.SERVER_POSTINGS_BYTES,
) -> None:
    """Serve ``create_app(root)`` with uvicorn until interrupted (``rag-lab serve ROOT``).

    Answers the ``Host`` names ``127.0.0.1``, ``localhost``, ``[::1]`` and ``host``, each
    with ``port``, plus ``allowed_hosts`` (e.g. the name a proxy in front uses).
    """
    import uvicorn

    hosts = [host_entry(name, port) for name in (*LOOPBACK, host)] + list(allowed_hosts or ())
    app = create_app(
        root,
        index_path=index_path,
        owner=owner,
        trust_principals=trust_principals,
        allowed_hosts=hosts,
        postings_cache_bytes=postings_cache_bytes,
    )
    uvicorn.run(app, host=host, port=port, access_log=False, log_level="info")
