"""A scripted OpenAI-compatible chat-completions endpoint on 127.0.0.1 (port 0), in a thread.

It stands in for a model server (llama.cpp, vLLM, Ollama) so the tests exercise *our* side —
the real client, parser and verifier — against the replies a model may give. ``reply`` is a
function of the received request body returning the message content (or an ``Envelope`` for
transport-level behaviour: status code, raw bytes, delay).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Envelope:
    status: int = 200
    body: bytes | None = None
    delay_s: float = 0.0


Reply = Callable[[dict[str, Any]], "str | Envelope"]


@dataclass
class Endpoint:
    url: str
    requests: list[dict[str, Any]]


def completion(content: str) -> bytes:
    return json.dumps(
        {"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant",
         "content": content}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}},
        ensure_ascii=False,
    ).encode("utf-8")


@contextmanager
def serve(reply: Reply) -> Iterator[Endpoint]:
    received: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length).decode("utf-8"))
            received.append({"path": self.path, "body": body})
            out = reply(body)
            envelope = out if isinstance(out, Envelope) else Envelope(body=completion(out))
            if envelope.delay_s:
                time.sleep(envelope.delay_s)
            data = envelope.body if envelope.body is not None else b""
            try:
                self.send_response(envelope.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Endpoint(f"http://127.0.0.1:{server.server_address[1]}/v1", received)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def package_refs(body: dict[str, Any]) -> dict[str, str]:
    """From the prompt's evidence package: each unit line's text → its request id (E1…)."""
    prompt = body["messages"][-1]["content"]
    refs: dict[str, str] = {}
    current = None
    for line in prompt.splitlines():
        header = re.match(r"^\[(E\d+)\] source=", line)
        if header:
            current = header.group(1)
        elif current and not line.startswith("主题：") and not line.startswith("<<<"):
            refs[line] = current
            current = None
    return refs
