"""The OpenAPI document is the server's truth: schemathesis, with every check, finds nothing.

A live uvicorn on 127.0.0.1 (a port the OS picks) serves a copy of the demo corpus; the
schemathesis CLI reads ``/openapi.json`` and sends what it generates from it: schema-valid
requests (which must be accepted), schema-violating ones (which must be refused with a
documented 4xx), undeclared methods, and checks every status, content type, header and
body against the document. Deterministic (``--generation-deterministic``), bounded
(``--max-examples``), run in a temporary folder so nothing is written into the checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn

from rag_lab.server import create_app

MAX_EXAMPLES = 15


def _st() -> str:
    found = shutil.which("st", path=str(Path(sys.executable).parent)) or shutil.which("st")
    if found is None:
        pytest.fail("schemathesis is not installed: python -m pip install '.[test]'")
    return found


@pytest.fixture(params=[False, True], ids=["default", "trust_principals"])
def live(request: pytest.FixtureRequest, corpus: Path) -> Iterator[str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = create_app(corpus, trust_principals=request.param)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base + "/api/health", timeout=2) as response:
                if response.status == 200:
                    break
        except OSError:
            time.sleep(0.05)
    else:
        pytest.fail("uvicorn did not start on " + base)
    yield base
    server.should_exit = True
    thread.join(10)
    sock.close()


def test_schemathesis_with_all_checks_finds_nothing(live: str, tmp_path: Path) -> None:
    # An image id, so that the image operation is exercised past its 404.
    body = json.dumps({"question": "红色 小 圆形"}).encode()
    ask = urllib.request.Request(live + "/api/ask", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(ask, timeout=30) as response:
        image_id = json.load(response)["citations"][0]
    config = tmp_path / "schemathesis.toml"
    config.write_text(
        '[[operations]]\ninclude-name = "GET /api/images/{evidence_id}"\n'
        f'parameters = {{ "path.evidence_id" = "{image_id["evidence_id"]}" }}\n',
        encoding="utf-8",
    )
    command = [
        _st(),
        "--config-file",
        str(config),
        "run",
        live + "/openapi.json",
        "--checks",
        "all",
        "--max-examples",
        str(MAX_EXAMPLES),
        "--generation-deterministic",
        "--no-color",
        "--request-timeout",
        "60",
    ]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": ""}
    done = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-6000:]
    summary = [line for line in output.splitlines() if " generated, " in line]
    assert summary and summary[-1].strip().endswith("passed"), output[-3000:]
    generated, passed = (int(part.split()[0]) for part in summary[-1].strip().split(", "))
    assert generated == passed > 200, summary
    assert "Tested: 7" in output
