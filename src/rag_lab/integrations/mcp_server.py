"""``rag-lab mcp ROOT``: the corpus as Model Context Protocol tools (needs the ``mcp`` extra).

Built on the official Python SDK (``mcp.server.mcpserver.MCPServer``), stdio by default;
streamable HTTP on 127.0.0.1 only, with Host and Origin checked against that address and
port (DNS rebinding), when asked for with ``http_port``.
Three tools, each a thin call into the library (:mod:`rag_lab.integrations.evidence`):

* ``ask`` — ``query_once``: status, reason, answer, the answer text, every citation with
  its quoted span, and for a non-answer ``explanation`` (plain words) and what to add;
* ``open_citation`` — one evidence id: quote and numbered context lines, re-verified now;
* ``index_status`` — index ready / missing, unit count, stale and the changed paths.

A refusal is a normal tool result (``status`` says so), never a tool error: tool errors
are for bad input (an empty question, an unknown evidence id, no index). Who asks is
decided as in docs/permissions.md: by default ``anonymous`` (public files only);
``owner=True`` answers as the corpus owner; ``principal=`` fixes one principal for the
whole server; a tool call may name a principal only when ``trust_principals=True``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from rag_lab.data.access import Principal, parse_groups
from rag_lab.data.corpus import check_root
from rag_lab.errors import ConfigError, RagLabError
from rag_lab.integrations.evidence import (
    CONTEXT_LINES,
    MAX_CONTEXT_LINES,
    explain,
    index_status,
    open_citation,
    quoted,
)
from rag_lab.records import Result, Status
from rag_lab.retrieval import query_once
from rag_lab.retrieval.pack import DEFAULT_BUDGET

#: Who asks when nothing else is said (as ``rag-lab serve``).
ANONYMOUS = "anonymous"
#: The most candidates and the largest context budget (code points) a tool call may ask for.
MAX_TOP_K = 100
MAX_BUDGET = 100_000

INSTRUCTIONS = (
    "rag_lab answers questions from one folder of source files and never says more than its sources "
    "support. Call `ask` with the user's question (Chinese works best written as subject and field, e.g. "
    "`借阅台 开放时间`). Its `status` is the answer: `answered` comes with citations you should show; "
    "`refused`, `partial` and `needs_clarification` are answers too. Pass them on to the user in your own "
    "words, with `explanation`: do not retry with rephrasings to force a different outcome, do not fill "
    "the gap from your own knowledge, and never present a refused question as answered. For "
    "`needs_clarification`, ask the user which of the listed options they mean."
)

ASK_DESCRIPTION = (
    "Ask the corpus one question. Returns status (answered, partial, refused, needs_clarification), "
    "reason, answer (the verbatim value), text (a sentence to show), citations (source file, line, "
    "sha256, code-point span, quoted line, re-verified now) and, when not answered, explanation. "
    "A refusal is a correct, final answer to pass on to the user, not an error to work around: do not "
    "rephrase the question to get around it and do not answer from elsewhere. A conflict cites every side."
)
OPEN_DESCRIPTION = (
    "Open one citation by its evidence_id (from `ask`): the quoted span with numbered lines around it, "
    "re-verified against the file's bytes right now (verified: false names the check that failed)."
)
STATUS_DESCRIPTION = (
    "Whether the corpus index exists and is current: unit count, stale (the corpus changed since the "
    "index was built; questions are refused until it is rebuilt) and the changed paths."
)

PrincipalName = Annotated[
    str | None,
    Field(
        description="ask as this principal; only on a server started with --trust-principals, else leave empty"
    ),
]
PrincipalGroups = Annotated[list[str] | None, Field(description="the principal's groups (with as_name)")]


@dataclass(frozen=True)
class Callers:
    """Who a tool call is answered as: ``default`` unless it names a principal, which
    is accepted only when the server was started trusting such claims."""

    default: Principal | None
    trusted: bool

    def resolve(self, name: str | None, groups: list[str] | None) -> Principal | None:
        if name is None or not name.strip():
            if groups:
                raise ConfigError("groups need as_name")
            return self.default
        if not self.trusted:
            who = "the corpus owner" if self.default is None else f"{self.default.name}"
            raise ConfigError(
                f"this server does not take a principal from the tool call ({name!r}): it would be only the "
                f"caller's claim. Every call is answered as {who}; leave as_name and groups empty (the "
                "operator can start it with `rag-lab mcp ROOT --trust-principals`)"
            )
        return principal_of(name, groups or [])


def principal_of(name: str, groups: list[str]) -> Principal:
    """A principal with the CLI's rules for group names."""
    wanted = [g.strip() for g in groups if g.strip()]
    if wanted and parse_groups(wanted) is None:
        raise ConfigError(f"group names are letters, digits, _ . - (got {', '.join(map(repr, wanted))})")
    return Principal(name.strip(), frozenset(wanted))


def _as_of(value: str | None) -> date | None:
    if value is None or not value.strip():
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ConfigError(f"as_of must be an ISO date such as 2026-01-31, got {value!r}") from None


def _sentence(result: Result) -> str:
    """The answer as a sentence: the result's own ``text`` when it has one."""
    if result.get("text"):
        return str(result["text"])
    if result["status"] == Status.ANSWERED:
        return str(result.get("answer") or "")
    return str(result.get("message") or "")


def tool_result(result: Result, evidence: list[dict[str, Any]], include_trace: bool) -> dict[str, Any]:
    """What ``ask`` returns: the result without its trace (unless asked), citations quoted."""
    out = {key: value for key, value in result.items() if key not in ("trace", "citations")}
    out["text"] = _sentence(result)
    out["citations"] = evidence
    out["explanation"] = explain(result) or None
    if include_trace:
        out["trace"] = result["trace"]
    return out


def create_server(
    root: str | os.PathLike[str],
    *,
    index_path: str | os.PathLike[str] | None = None,
    owner: bool = False,
    principal: Principal | None = None,
    trust_principals: bool = False,
) -> MCPServer:
    """The MCP server for the corpus at ``root`` (see the module docstring)."""
    base = check_root(root)
    if owner and principal is not None:
        raise ConfigError("give either --owner or --as NAME, not both")
    default = principal if principal is not None else None if owner else Principal(ANONYMOUS, frozenset())
    callers = Callers(default, trust_principals)
    server = MCPServer(
        name="rag_lab", title=f"rag_lab: {Path(base).resolve().name}", instructions=INSTRUCTIONS
    )

    def guarded(call: Any) -> Any:
        try:
            return call()
        except RagLabError as exc:
            raise ToolError(str(exc)) from None

    def ask(
        question: Annotated[str, Field(description="the user's question, e.g. 借阅台 开放时间")],
        top_k: Annotated[int, Field(ge=1, le=MAX_TOP_K, description="candidates to retrieve")] = 5,
        budget: Annotated[
            int, Field(ge=0, le=MAX_BUDGET, description="context budget in code points")
        ] = DEFAULT_BUDGET,
        as_of: Annotated[str | None, Field(description="date for validity windows, YYYY-MM-DD")] = None,
        include_trace: Annotated[bool, Field(description="add the request's trace (large)")] = False,
        as_name: PrincipalName = None,
        groups: PrincipalGroups = None,
    ) -> dict[str, Any]:
        def run() -> dict[str, Any]:
            who = callers.resolve(as_name, groups)
            result = query_once(
                question,
                base,
                index_path=index_path,
                top_k=top_k,
                budget=budget,
                as_of=_as_of(as_of),
                principal=who,
            )
            result, evidence = quoted(result, base, index_path=index_path, principal=who)
            return tool_result(result, evidence, include_trace)

        out: dict[str, Any] = guarded(run)
        return out

    def open_citation_tool(
        evidence_id: Annotated[str, Field(description="an evidence_id from a citation of `ask`")],
        context_lines: Annotated[
            int, Field(ge=0, le=MAX_CONTEXT_LINES, description="lines shown on each side")
        ] = CONTEXT_LINES,
        as_name: PrincipalName = None,
        groups: PrincipalGroups = None,
    ) -> dict[str, Any]:
        out: dict[str, Any] = guarded(
            lambda: open_citation(
                base,
                evidence_id,
                index_path=index_path,
                principal=callers.resolve(as_name, groups),
                context_lines=context_lines,
            )
        )
        return out

    def index_status_tool(as_name: PrincipalName = None, groups: PrincipalGroups = None) -> dict[str, Any]:
        out: dict[str, Any] = guarded(
            lambda: index_status(base, index_path=index_path, principal=callers.resolve(as_name, groups))
        )
        return out

    server.add_tool(ask, name="ask", title="Ask the corpus", description=ASK_DESCRIPTION)
    server.add_tool(
        open_citation_tool, name="open_citation", title="Open a citation", description=OPEN_DESCRIPTION
    )
    server.add_tool(
        index_status_tool, name="index_status", title="Index status", description=STATUS_DESCRIPTION
    )
    return server


#: The only address the streamable HTTP transport listens on.
LOOPBACK = "127.0.0.1"


def http_security(port: int) -> Any:
    """Host and Origin checks for the HTTP transport: this loopback address and port only."""
    from mcp.server.transport_security import TransportSecuritySettings

    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{LOOPBACK}:{port}", f"localhost:{port}"],
        allowed_origins=[f"http://{LOOPBACK}:{port}", f"http://localhost:{port}"],
    )


def run(
    root: str | os.PathLike[str],
    *,
    index_path: str | os.PathLike[str] | None = None,
    owner: bool = False,
    principal: Principal | None = None,
    trust_principals: bool = False,
    http_port: int | None = None,
) -> None:
    """Serve the tools until the client closes the pipe (``rag-lab mcp ROOT``), or with
    ``http_port`` over streamable HTTP at ``http://127.0.0.1:PORT/mcp`` until interrupted."""
    if http_port is not None and not 1 <= http_port <= 65535:
        raise ConfigError(f"--http takes a port 1..65535, got {http_port}")
    server = create_server(
        root, index_path=index_path, owner=owner, principal=principal, trust_principals=trust_principals
    )
    if http_port is None:
        server.run("stdio")
        return
    server.run("streamable-http", host=LOOPBACK, port=http_port, transport_security=http_security(http_port))
