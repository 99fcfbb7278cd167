"""`rag-lab index` / `ask` as a new user meets them: warnings with file:line, a wrong ROOT,
an empty index, stdin questions, bad bytes, --strict and the per-file size limit."""

from __future__ import annotations

import io
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from rag_lab.cli import main

GOOD = "主题：借阅台\n开放时间：九点。\n地点：一楼\n"
TYPO = "主题：咨询台\n开放时间：十点。\n地点:二楼\n"  # line 3: ASCII colon


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def typo_root(make_corpus: Any) -> Path:
    return make_corpus({"documents/a.md": GOOD, "documents/b.md": TYPO})


# -- warnings ---------------------------------------------------------------------------------


def test_index_prints_each_warning_with_file_and_line(typo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "index", str(typo_root))
    assert code == 0 and "1 warnings" in out
    assert "  warning: documents/b.md:3: ASCII colon ':' where a field line needs the full-width colon" in err


def test_index_json_lists_the_warnings(typo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "index", str(typo_root), "--json")
    summary = json.loads(out)
    assert code == 0 and summary["warnings"] == 1
    assert [(w["path"], w["line"]) for w in summary["warning_list"]] == [("documents/b.md", 3)]
    assert summary["warning_list"][0]["message"].startswith("ASCII colon")


def test_a_refusal_a_warned_line_explains_says_so(typo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "index", str(typo_root))
    code, out, _ = run(capsys, "ask", str(typo_root), "咨询台 地点", "--json")
    result = json.loads(out)
    assert code == 3
    assert (result["status"], result["reason"]) == ("refused", "no_supporting_evidence")
    assert "咨询台 has no field 地点" in result["message"]
    assert "Note: documents/b.md:3 `地点:二楼` was not read as a field: ASCII colon" in result["message"]
    assert result["notes"] == [
        {
            "path": "documents/b.md",
            "line": 3,
            "text": "地点:二楼",
            "warning": result["notes"][0]["warning"],
            "note": result["notes"][0]["note"],
        }
    ]
    assert list(result)[-1] == "trace"


def test_no_note_when_the_warned_line_is_about_another_subject(
    typo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "index", str(typo_root))
    _, out, _ = run(capsys, "ask", str(typo_root), "借阅台 开放时间", "--json")
    assert "notes" not in json.loads(out)  # answered: nothing to explain
    _, out, _ = run(capsys, "ask", str(typo_root), "借阅台 容量", "--json")
    assert "notes" not in json.loads(out)


def test_a_broken_subject_line_is_noted_too(make_corpus: Any, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_corpus({"documents/a.md": GOOD, "documents/c.md": "主题:打印室\n地点：三楼\n"})
    run(capsys, "index", str(root))
    _, out, _ = run(capsys, "ask", str(root), "打印室 地点", "--json")
    result = json.loads(out)
    assert result["status"] != "answered"
    assert [(n["path"], n["line"], n["text"]) for n in result["notes"]] == [("documents/c.md", 1, "主题:打印室")]


def test_notes_never_name_a_file_the_caller_cannot_see(make_corpus: Any, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_corpus({"documents/a.md": GOOD, "documents/hr/b.md": "权限：hr\n" + TYPO})
    run(capsys, "index", str(root))
    _, out, _ = run(capsys, "ask", str(root), "咨询台 地点", "--json", "--as", "bob")
    assert "notes" not in json.loads(out) and "hr/b.md" not in out
    _, out, _ = run(capsys, "ask", str(root), "咨询台 地点", "--json", "--as", "ann", "--groups", "hr")
    assert [n["path"] for n in json.loads(out)["notes"]] == ["documents/hr/b.md"]


# -- ROOT -----------------------------------------------------------------------------------------


def test_a_root_without_documents_or_images_is_an_error_suggesting_the_parent(
    make_corpus: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_corpus({"documents/a.md": GOOD})
    code, out, err = run(capsys, "index", str(root / "documents"))
    assert (code, out) == (1, "")
    assert f"corpus root {str(root / 'documents')!r} holds neither documents/ nor images/" in err
    assert f"did you mean its parent {str(root)!r}, which holds documents/?" in err
    assert not (root / "documents" / ".rag_lab").exists()  # nothing was created


def test_asking_in_the_documents_folder_suggests_the_parent(
    make_corpus: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_corpus({"documents/a.md": GOOD})
    run(capsys, "index", str(root))
    code, out, err = run(capsys, "ask", str(root / "documents"), "借阅台 开放时间")
    assert (code, out) == (1, "")
    assert f"did you mean its parent {str(root)!r}, which holds documents/?" in err


def test_an_unrelated_folder_is_an_error_without_a_suggestion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes").mkdir()
    code, _, err = run(capsys, "index", str(tmp_path / "notes"))
    assert code == 1 and "holds neither documents/ nor images/" in err and "did you mean" not in err
    assert list((tmp_path / "notes").iterdir()) == []


def test_an_index_with_no_unit_says_so_and_why(make_corpus: Any, capsys: pytest.CaptureFixture[str]) -> None:
    # headings and punctuation only: no field line, no sentence, no table
    root = make_corpus({"documents/a.md": "# 借阅台\n\n## 开放\n", "documents/b.md": "---\n\n地点：\n"})
    code, out, err = run(capsys, "index", str(root))
    assert code == 0 and "0 units" in out
    assert "note: the index holds 0 evidence units: 2 file(s) had no `字段：值` line" in err
    assert "1 line(s) were warned about" in err
    _, out, _ = run(capsys, "index", str(root), "--json")
    assert json.loads(out)["empty_reason"].startswith("the index holds 0 evidence units: 2 file(s)")


def test_an_empty_documents_folder_says_the_corpus_has_no_files(
    make_corpus: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_corpus({})
    code, _, err = run(capsys, "index", str(root))
    assert code == 0 and "the corpus has no documents/**/*.md or *.txt and no images/**/*.png" in err


def test_messages_name_the_real_root(make_corpus: Any, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_corpus({"documents/a.md": GOOD}, name="my corpus")
    run(capsys, "index", str(root))
    (root / "documents" / "new.md").write_text(GOOD, encoding="utf-8")
    code, out, _ = run(capsys, "ask", str(root), "借阅台 开放时间")
    assert code == 3 and "index_stale" in out
    assert f"`rag-lab index {shlex.quote(str(root))}`" in out and "ROOT" not in out  # the composed text
    code, out, _ = run(capsys, "ask", str(root), "借阅台 开放时间", "--json")
    assert f"rebuild it with `rag-lab index {shlex.quote(str(root))}`" in json.loads(out)["message"]
    code, _, err = run(capsys, "ask", str(root), "借阅台 开放时间", "--index", str(root / "none.sqlite"))
    assert code == 1 and f"rag-lab index {shlex.quote(str(root))}" in err and "ROOT" not in err


# -- questions --------------------------------------------------------------------------------


@pytest.fixture
def indexed(make_corpus: Any, capsys: pytest.CaptureFixture[str]) -> Path:
    root = make_corpus({"documents/a.md": GOOD})
    run(capsys, "index", str(root))
    return root


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


@pytest.mark.parametrize("data", ["借阅台 开放时间\n".encode(), "借阅台 开放时间".encode(), "借阅台 开放时间\r\n".encode()])
def test_a_question_may_come_from_stdin(
    indexed: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], data: bytes
) -> None:
    _stdin(monkeypatch, data)
    code, out, _ = run(capsys, "ask", str(indexed), "-", "--json")
    assert code == 0 and json.loads(out)["question"] == "借阅台 开放时间"


def test_invalid_utf8_on_stdin_exits_2_with_a_question_error(
    indexed: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _stdin(monkeypatch, "借阅台".encode() + b"\xff\n")
    code, out, err = run(capsys, "ask", str(indexed), "-")
    assert (code, out) == (2, "")
    assert "rag-lab: error: the question on stdin is not UTF-8: byte 0xff at byte offset 9" in err


def test_an_overlong_stdin_question_exits_2(
    indexed: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _stdin(monkeypatch, ("长" * 5000).encode())
    code, _, err = run(capsys, "ask", str(indexed), "-")
    assert code == 2 and "the limit is 500 code points" in err


def test_invalid_utf8_in_argv_exits_2_not_a_traceback(indexed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    question = b"\xe5\x80\x9f\xff".decode("utf-8", "surrogateescape")  # 借 then a bad byte, as argv gives it
    code, out, err = run(capsys, "ask", str(indexed), question, "--json")
    assert (code, out) == (2, "")
    assert "rag-lab: error: the question is not UTF-8 text: byte 0xff at byte offset 3" in err


@pytest.mark.parametrize("question", ["", "   ", "\n"])
def test_an_empty_question_exits_2(
    indexed: Path, question: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "ask", str(indexed), question)
    assert code == 2 and "the question is empty" in err
    _stdin(monkeypatch, question.encode())
    code, _, err = run(capsys, "ask", str(indexed), "-")
    assert code == 2 and "the question is empty" in err


def test_invalid_utf8_argv_through_the_real_script(indexed: Path) -> None:
    import subprocess

    completed = subprocess.run(
        [sys.executable, "-m", "rag_lab.cli", "ask", str(indexed).encode(), b"\xe5\x80\x9f\xff"],
        capture_output=True, timeout=120, check=False,
    )
    assert completed.returncode == 2, completed.stderr
    assert b"Traceback" not in completed.stderr and b"is not UTF-8 text" in completed.stderr


# -- --strict and the size limit ----------------------------------------------------------------


def test_strict_exits_1_when_a_file_failed(make_corpus: Any, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_corpus({"documents/a.md": GOOD, "documents/bad.md": b"\xff\xfe"})
    code, _, err = run(capsys, "index", str(root))
    assert code == 0 and "error: documents/bad.md: invalid UTF-8" in err
    code, out, err = run(capsys, "index", str(root), "--strict")
    assert code == 1 and "1 errors" in out
    assert "rag-lab: error: 1 file(s) failed (--strict); the index was built without them" in err
    assert (root / ".rag_lab" / "index.sqlite").exists()
    code, _, _ = run(capsys, "index", str(make_corpus({"documents/a.md": GOOD}, name="clean")), "--strict")
    assert code == 0


def test_a_file_over_the_size_limit_is_a_clear_per_file_error(
    make_corpus: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    big = "主题：大文件\n" + "字段：值\n" * 200
    root = make_corpus({"documents/a.md": GOOD, "documents/big.md": big})
    size = len(big.encode())
    code, out, err = run(capsys, "index", str(root), "--max-file-bytes", "1000", "--json")
    summary = json.loads(out)
    assert code == 0 and summary["units"] == 2
    assert summary["errors"] == [
        {
            "path": "documents/big.md",
            "error": f"file is {size:,} bytes, over the per-file limit of 1,000 bytes; it is not indexed: "
            "split it, or raise the limit (`rag-lab index ROOT --max-file-bytes N`)",
        }
    ]
    code, _, err = run(capsys, "index", str(root), "--max-file-bytes", "1000")
    assert f"`rag-lab index {shlex.quote(str(root))} --max-file-bytes N`" in err
    code, out, _ = run(capsys, "index", str(root), "--json")  # the default limit (16 MiB) admits it
    assert json.loads(out)["errors"] == []
    with pytest.raises(SystemExit) as info:
        main(["index", str(root), "--max-file-bytes", "0"])
    assert info.value.code == 2


def test_a_file_is_never_read_past_the_limit(make_corpus: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Decided from stat first; and if the file grew since, at most limit + 1 bytes are read."""
    import os

    from rag_lab.data import read_record
    from rag_lab.data.corpus import walk

    root = make_corpus({"documents/a.md": "主题：甲\n" + "字段：值\n" * 100})
    item = next(iter(walk(root)))
    reads: list[int] = []
    real_read = os.read

    def read(fd: int, n: int) -> bytes:
        reads.append(n)
        return real_read(fd, n)

    monkeypatch.setattr(os, "read", read)
    record = read_record(root, item, max_file_bytes=100)
    assert record.error is not None and "over the per-file limit of 100 bytes" in record.error
    assert reads == []  # never opened: the walk's size decided
    shrunk = type(item)(item.path, item.kind, type(item.fingerprint)(10, 0, 0, 0))  # stale stat: "10 bytes"
    record = read_record(root, shrunk, max_file_bytes=100)
    assert sum(reads) == 101 and reads[0] == 11 and record.error is not None and "grew past the per-file limit" in record.error
