"""``rag-lab replay`` of a caller's saved result re-decides as that caller, not as the owner."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from perm_corpora import AS_OF

from rag_lab.cli import main

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

ASK = ["测试台 开放时间", "--json", "--as-of", AS_OF.isoformat()]


def save(root: Path, target: Path, capsys: pytest.CaptureFixture[str], *who: str) -> Path:
    main(["ask", str(root), *ASK, *who])
    target.write_text(capsys.readouterr().out, encoding="utf-8")
    return target


def test_owner_replay_is_identical(
    make_b: Callable[[str], Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_b("conflict")
    owner = save(root, tmp_path / "owner.json", capsys)
    assert main(["replay", str(owner), str(root)]) == 0
    assert capsys.readouterr().out.startswith("replay identical: refused conflicting_evidence")


def test_bobs_replay_is_identical_and_names_nothing_hidden(
    make_b: Callable[[str], Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_b("conflict")
    saved = save(root, tmp_path / "bob.json", capsys, "--as", "bob", "--groups", "staff")
    code = main(["replay", str(saved), str(root)])
    out = capsys.readouterr().out
    assert "same_key_sources_checked: 2 → 3" not in out
    assert code == 0
