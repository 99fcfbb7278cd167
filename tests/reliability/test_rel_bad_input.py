"""The bad-input table of docs/robustness.md: one test per row (issue 7, item 3).

Every row ends in a typed error (``rag_lab.errors.*``), a file error or warning in the
build summary that names the file (and line or byte offset), or a refusal whose message
says what and where — and every *other* file of the corpus is still indexed and
answerable. Rows whose current behaviour falls short are ``xfail(strict=True)`` with
the reason; docs/robustness.md lists the proposed fixes.
"""

from __future__ import annotations

import io
import json
import os
import re
import sqlite3
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw

from rag_lab.cli import main
from rag_lab.data.corpus import sha256_hex
from rag_lab.data.documents import evidence_id
from rag_lab.data.prose import MAX_SENTENCES
from rag_lab.errors import IndexError_, QuestionError
from rag_lab.index import BuildSummary, Index, build_index, default_index_path
from rag_lab.limits import MAX_FILE_BYTES
from rag_lab.retrieval import answer, query_once
from store_fixtures import sqlite_only

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

GOOD: dict[str, str | bytes] = {
    "documents/good.md": "主题：借阅台\n开放时间：九点。\n",
    "documents/sub/good2.md": "主题：复印机\n地点：二楼\n电话：5550007\n",
}


def red_circle_png() -> bytes:
    image = Image.new("RGB", (100, 100), (255, 255, 255))
    ImageDraw.Draw(image).ellipse((40, 40, 60, 60), fill=(220, 20, 20))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def png_header_only(width: int, height: int) -> bytes:
    """A PNG whose IHDR (with a correct checksum) claims ``width`` x ``height`` pixels."""
    ihdr = struct.pack(">II5B", width, height, 8, 6, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    body = struct.pack(">I", 13) + chunk + struct.pack(">I", zlib.crc32(chunk))
    idat = zlib.compress(b"\0" * 64)
    idat_chunk = struct.pack(">I", len(idat)) + b"IDAT" + idat + struct.pack(">I", zlib.crc32(b"IDAT" + idat))
    iend = struct.pack(">I", 0) + b"IEND" + struct.pack(">I", zlib.crc32(b"IEND"))
    return b"\x89PNG\r\n\x1a\n" + body + idat_chunk + iend


def make_root(tmp_path: Path, bad: dict[str, str | bytes]) -> Path:
    root = tmp_path / "corpus"
    files: dict[str, str | bytes] = {**GOOD, "images/red.png": red_circle_png(), **bad}
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return root


def assert_others_fine(root: Path) -> None:
    """The good files are indexed, fresh and answerable next to the bad one."""
    result = query_once("借阅台 开放时间", root)
    assert (result["status"], result["answer"]) == ("answered", "九点。"), result["message"]
    result = query_once("复印机 地点", root)
    assert (result["status"], result["answer"]) == ("answered", "二楼"), result["message"]
    result = query_once("红色 小 圆形", root)
    assert (result["status"], result["answer"]) == ("answered", "红色 小 圆形"), result["message"]
    assert [c["source"] for c in result["citations"]] == ["images/red.png"]


def build_with(tmp_path: Path, bad: dict[str, str | bytes]) -> tuple[Path, BuildSummary]:
    root = make_root(tmp_path, bad)
    summary = build_index(root)
    assert_others_fine(root)
    return root, summary


def problems(root: Path) -> list[dict[str, Any]]:
    with Index(default_index_path(root)) as index:
        return index.file_problems()


def reconstruct(root: Path, cite: dict[str, Any]) -> str:
    text = (root / cite["source"]).read_bytes().decode("utf-8")
    start, end = cite["span"]
    return text[start:end]


# -- candidates that point outside ROOT --------------------------------------------------------


def crafted(root: Path, source: str) -> list[dict[str, Any]]:
    data = (root / "documents/good.md").read_bytes()
    sha = sha256_hex(data)
    unit = {
        "evidence_id": evidence_id(source, (6, 14), sha),
        "source": source,
        "sha256": sha,
        "span": [6, 14],
        "line": 2,
        "text": "开放时间：九点。",
        "subject": "借阅台",
        "field": "开放时间",
        "value": "九点。",
        "modality": "text",
    }
    return [{"evidence": unit, "score": 1.0}]


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("../outside/good.md", "climbs out with '..'"),
        ("documents/../../outside/good.md", "climbs out with '..'"),
        ("ABSOLUTE", "is absolute"),
        ("/etc/passwd", "is absolute"),
    ],
    ids=["dotdot", "nested-dotdot", "absolute-inside-root", "absolute-elsewhere"],
)
def test_rel_candidate_with_path_traversal_or_absolute_path_is_refused(
    tmp_path: Path, source: str, words: str
) -> None:
    root = make_root(tmp_path, {})
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "good.md").write_bytes((root / "documents/good.md").read_bytes())  # same bytes, same hash
    if source == "ABSOLUTE":
        source = str(root / "documents/good.md")
    result = answer("借阅台 开放时间", crafted(root, source), root)
    assert (result["status"], result["reason"]) == ("refused", "source_verification_failed")
    assert result["verification_failure"]["failed_check"] == "path"
    assert words in result["message"] and repr(source) in result["message"]
    assert result["answer"] is None and result["citations"] == []


# -- symlinks ------------------------------------------------------------------------------


def test_rel_file_symlink_pointing_outside_root_is_reported_not_indexed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("主题：外部台\n开放时间：一点。\n", encoding="utf-8")
    root = make_root(tmp_path, {})
    (root / "documents/link.md").symlink_to(outside)
    summary = build_index(root)
    assert_others_fine(root)
    assert summary.errors == [
        {"path": "documents/link.md", "error": "symlink points outside ROOT or to no file; not indexed"}
    ]
    result = query_once("外部台 开放时间", root)
    assert result["status"] != "answered" and result["citations"] == []
    # a crafted candidate through the link is refused by the path check
    refused = answer("借阅台 开放时间", crafted(root, "documents/link.md"), root)
    assert refused["verification_failure"]["failed_check"] == "path"
    assert "resolves outside ROOT (symlink escape)" in refused["message"]


def _dir_symlink_root(tmp_path: Path) -> Path:
    outside = tmp_path / "outside_dir"
    outside.mkdir()
    (outside / "x.md").write_text("主题：外部台\n开放时间：一点。\n", encoding="utf-8")
    root = make_root(tmp_path, {})
    (root / "documents/ext").symlink_to(outside, target_is_directory=True)
    return root


def test_rel_directory_symlink_pointing_outside_root_is_not_followed(tmp_path: Path) -> None:
    root = _dir_symlink_root(tmp_path)
    summary = build_index(root)
    assert_others_fine(root)
    assert summary.units == 4  # good.md 1, good2.md 2, red.png 1: nothing behind the link
    assert query_once("外部台 开放时间", root)["citations"] == []


def test_rel_directory_symlink_pointing_outside_root_is_reported(tmp_path: Path) -> None:
    root = _dir_symlink_root(tmp_path)
    summary = build_index(root)
    assert [e["path"] for e in summary.errors] == ["documents/ext"]
    assert "symlink" in summary.errors[0]["error"]


# -- bytes and encodings -----------------------------------------------------------------------


def test_rel_nul_byte_in_a_document_is_a_file_error_with_offset(tmp_path: Path) -> None:
    _, summary = build_with(tmp_path, {"documents/nul.md": b"\xe4\xb8\xbb\xe9\xa2\x98\xef\xbc\x9aX\n\x00Y"})
    assert summary.errors == [
        {
            "path": "documents/nul.md",
            "error": "binary data: NUL byte at byte offset 11; documents must be UTF-8 text",
        }
    ]


def test_rel_invalid_utf8_names_file_and_byte_offset(tmp_path: Path) -> None:
    prefix = "主题：甲\n开放时间：".encode()
    data = prefix + b"\xff\xfe" + "九点\n".encode()
    assert len(prefix) == 28
    _, summary = build_with(tmp_path, {"documents/latin.md": data})
    assert summary.errors == [
        {
            "path": "documents/latin.md",
            "error": "invalid UTF-8 at byte offset 28 (invalid start byte); save the file as UTF-8",
        }
    ]


def test_rel_bom_is_code_point_zero_and_answers_verify(tmp_path: Path) -> None:
    root, summary = build_with(tmp_path, {"documents/bom.md": "\ufeff主题：带签台\n开放时间：十点。\n"})
    assert summary.errors == [] and summary.warnings == 0
    result = query_once("带签台 开放时间", root)
    assert (result["status"], result["answer"]) == ("answered", "十点。")
    assert result["citations"][0]["span"] == [8, 16]
    assert reconstruct(root, result["citations"][0]) == "开放时间：十点。"


def test_rel_crlf_lines_answer_without_the_carriage_return(tmp_path: Path) -> None:
    root, _ = build_with(tmp_path, {"documents/crlf.md": "主题：回车台\r\n开放时间：十一点。\r\n"})
    result = query_once("回车台 开放时间", root)
    assert (result["status"], result["answer"]) == ("answered", "十一点。")
    assert reconstruct(root, result["citations"][0]) == "开放时间：十一点。"


def test_rel_lone_cr_inside_a_line_is_kept_verbatim(tmp_path: Path) -> None:
    root, _ = build_with(tmp_path, {"documents/cr.md": "主题：甲台\n开放时间：九点\r地点：一楼\n"})
    result = query_once("甲台 开放时间", root)
    # a lone CR does not end a line: the value runs on, verbatim, and still verifies
    assert (result["status"], result["answer"]) == ("answered", "九点\r地点：一楼")
    assert reconstruct(root, result["citations"][0]) == "开放时间：九点\r地点：一楼"


def test_rel_lone_cr_line_endings_are_warned(tmp_path: Path) -> None:
    root, summary = build_with(tmp_path, {"documents/mac.md": "主题：旧机\r开放时间：九点\r"})
    assert summary.errors == []
    found = [p for p in problems(root) if p["path"] == "documents/mac.md"]
    assert found and "CR" in found[0]["message"]


def test_rel_u2028_inside_a_value_is_kept_verbatim(tmp_path: Path) -> None:
    root, _ = build_with(tmp_path, {"documents/ls.md": "主题：乙台\n开放时间：九点\u2028地点：一楼\n"})
    result = query_once("乙台 开放时间", root)
    assert (result["status"], result["answer"]) == ("answered", "九点\u2028地点：一楼")
    assert reconstruct(root, result["citations"][0]) == "开放时间：九点\u2028地点：一楼"


def test_rel_nfd_text_reconstructs_and_only_matches_nfd_questions(tmp_path: Path) -> None:
    nfd = "Cafe\u0301"
    root, _ = build_with(tmp_path, {"documents/nfd.md": f"主题：{nfd}\n地点：二楼东\u0301\n"})
    result = query_once(f"{nfd} 地点", root)
    assert (result["status"], result["answer"]) == ("answered", "二楼东\u0301")
    assert reconstruct(root, result["citations"][0]) == "地点：二楼东\u0301"
    # documented limit: names are folded code point by code point (NFKC of each), so é and
    # e + U+0301 stay different; the unknown name where the subject belongs is refused (issue 13)
    nfc = query_once("Café 地点", root)
    assert (nfc["status"], nfc["reason"]) == ("refused", "no_supporting_evidence")
    assert nfc["citations"] == []


def test_rel_empty_document_gives_no_units_and_no_error(tmp_path: Path) -> None:
    root, summary = build_with(tmp_path, {"documents/empty.md": b""})
    assert summary.errors == [] and summary.warnings == 0 and summary.files == 4
    with Index(default_index_path(root)) as index:
        snap = index.snapshot_of("documents/empty.md")
    assert snap is not None and snap[0] == 0  # in the snapshot, size 0
    assert snap[4] == sha256_hex(b"") and snap[5] is None  # hashed, no error


_PEAK_SCRIPT = (
    "import json, resource, sys\n"
    "from rag_lab.index import build_index\n"
    "s = build_index(sys.argv[1], max_file_bytes=int(sys.argv[2]))\n"
    "print(json.dumps([s.units, s.errors, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss]))\n"
)


def _build_peak(root: Path, limit: int) -> tuple[int, list[dict[str, str]], int]:
    out = subprocess.run(
        [sys.executable, "-c", _PEAK_SCRIPT, str(root), str(limit)], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    units, errors, peak_kib = json.loads(out.stdout)
    return units, errors, peak_kib * 1024


@sqlite_only  # builds in a child process, into the default file
def test_rel_50mb_document_over_the_limit_is_a_file_error_and_costs_no_memory(tmp_path: Path) -> None:
    root = make_root(tmp_path, {})
    line = ("这是一行很长的说明文字，没有字段，只是正文。" * 4 + "\n").encode()
    with open(root / "documents/huge.md", "wb") as out:
        out.write("主题：巨文档\n开始：一\n".encode())
        block = line * 1000
        blocks = 0
        while out.tell() < 50 * 1024 * 1024:
            out.write(block)
            blocks += 1
        out.write("结尾：最后一行\n".encode())
    size = (root / "documents/huge.md").stat().st_size
    _, _, baseline = _build_peak(make_root(tmp_path / "small", {}), MAX_FILE_BYTES)
    units, errors, peak = _build_peak(root, MAX_FILE_BYTES)  # the default limit: 16 MiB
    assert units == 4  # 2 good + 1 image + 电话
    assert [e["path"] for e in errors] == ["documents/huge.md"]
    assert f"file is {size:,} bytes, over the per-file limit of {MAX_FILE_BYTES:,} bytes" in errors[0]["error"]
    # the file is never read: the build costs what a build without it costs (within 10 MiB)
    assert peak < baseline + 10 * 1024 * 1024, f"peak RSS {peak} B vs {baseline} B without the big file"
    assert_others_fine(root)
    # a raised limit indexes it, peak RSS within a few copies of the file (bytes, text, lines)
    units, errors, peak = _build_peak(root, 64 * 1024 * 1024)
    # 2 good + 1 image + 开始 + 结尾 + 电话, and the prose lines up to the per-document sentence cap
    assert (units, errors) == (6 + MAX_SENTENCES, [])
    assert peak < 10 * size, f"peak RSS {peak} B for a {size}-byte document"


def test_rel_one_megabyte_line_is_excluded_by_budget_then_answers_with_room(tmp_path: Path) -> None:
    value = "长" * (1024 * 1024)
    root, summary = build_with(tmp_path, {"documents/long.md": f"主题：长行台\n说明：{value}\n"})
    assert summary.errors == []
    result = query_once("长行台 说明", root)
    assert (result["status"], result["reason"]) == ("refused", "excluded_by_budget")
    assert "did not fit the context budget" in result["message"]
    roomy = query_once("长行台 说明", root, budget=2 * 1024 * 1024)
    assert roomy["status"] == "answered" and roomy["answer"] == value


def test_rel_binary_data_with_md_name_is_a_file_error(tmp_path: Path) -> None:
    png = red_circle_png()
    _, summary = build_with(
        tmp_path, {"documents/photo.md": png, "documents/noise.md": bytes(range(128, 256))}
    )
    assert summary.errors == [
        {
            "path": "documents/noise.md",
            "error": "invalid UTF-8 at byte offset 0 (invalid start byte); save the file as UTF-8",
        },
        {
            "path": "documents/photo.md",
            "error": "binary data: NUL byte at byte offset 8; documents must be UTF-8 text",
        },
    ]


# -- images ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("TRUNCATED", "truncated PNG data: chunk"),
        (b"GIF89a" + b"\0" * 40, "not a PNG file (signature b'GIF89a\\x00\\x00'"),
        ("BOMB", "(decompression-bomb guard)"),
        (b"", "empty file (0 bytes): expected a PNG image"),
    ],
    ids=["truncated", "not-png", "bomb-header", "zero-bytes"],
)
def test_rel_bad_png_is_a_file_error_naming_the_problem(
    tmp_path: Path, content: bytes | str, message: str
) -> None:
    if content == "TRUNCATED":
        whole = red_circle_png()
        content = whole[: len(whole) // 2]
    elif content == "BOMB":
        content = png_header_only(200_000, 200_000)
    assert isinstance(content, bytes)
    _, summary = build_with(tmp_path, {"images/bad.png": content})
    assert [e["path"] for e in summary.errors] == ["images/bad.png"]
    assert message in summary.errors[0]["error"]


def test_rel_bomb_message_names_the_pixel_count(tmp_path: Path) -> None:
    _, summary = build_with(tmp_path, {"images/bomb.png": png_header_only(200_000, 200_000)})
    assert summary.errors[0]["error"].startswith("image has 40,000,000,000 pixels (200000x200000)")


# -- document structure ------------------------------------------------------------------------


def test_rel_duplicated_subject_lines(tmp_path: Path) -> None:
    text = "主题：会议室\n容量：十人\n主题：会议室\n地点：三楼\n主题：储物间\n容量：两人\n"
    root, summary = build_with(tmp_path, {"documents/dup.md": text})
    assert summary.warnings == 0
    # a repeated 主题 line changes nothing; a different one applies to the lines after it
    assert query_once("会议室 地点", root)["answer"] == "三楼"
    assert query_once("会议室 容量", root)["answer"] == "十人"
    assert query_once("储物间 容量", root)["answer"] == "两人"


def test_rel_field_lines_before_subject_are_warned_with_line(tmp_path: Path) -> None:
    root, summary = build_with(tmp_path, {"documents/early.md": "地点：一楼\n主题：早台\n开放时间：八点\n"})
    assert summary.warnings == 1
    assert [p for p in problems(root) if p["path"] == "documents/early.md"] == [
        {
            "path": "documents/early.md",
            "line": 1,
            "severity": "warning",
            "message": "field line before any 主题 line; add 主题：… above line 1",
        }
    ]
    assert query_once("早台 开放时间", root)["answer"] == "八点"


def test_rel_ascii_colon_field_line_is_warned(tmp_path: Path) -> None:
    root, summary = build_with(tmp_path, {"documents/ascii.md": "主题：丙台\n开放时间:九点\n"})
    found = [p for p in problems(root) if p["path"] == "documents/ascii.md"]
    assert [p["line"] for p in found] == [2]
    assert "colon" in found[0]["message"]


def test_rel_ascii_colon_line_is_not_a_unit(tmp_path: Path) -> None:
    root, summary = build_with(tmp_path, {"documents/ascii.md": "主题：丙台\n开放时间:九点\n"})
    assert summary.errors == []
    result = query_once("丙台 开放时间", root)
    assert result["status"] != "answered" and result["citations"] == []


# -- questions ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "message"),
    [
        ("", "the question is empty"),
        ("   \u3000 ", "the question is empty"),
        ("借阅台" * 3414, "the question is 10242 code points long; the limit is 500"),
        ("借阅台\0开放时间", "control character U+0000 at code point 3"),
        ("借阅台\x1b[2J开放时间", "control character U+001B at code point 3"),
        ("借阅台\x7f", "control character U+007F at code point 3"),
    ],
    ids=["empty", "blank", "10kb", "nul", "escape", "delete"],
)
def test_rel_unaskable_question_is_a_question_error(tmp_path: Path, question: str, message: str) -> None:
    root, _ = build_with(tmp_path, {})
    with pytest.raises(QuestionError, match=re.escape(message)):
        query_once(question, root)
    with pytest.raises(QuestionError):
        answer(question, [], root)


def test_rel_unaskable_question_via_cli_exits_2_with_the_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, _ = build_with(tmp_path, {})
    assert main(["ask", str(root), "借阅台\0", "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "rag-lab: error: the question holds control character U+0000 at code point 3" in captured.err


@pytest.mark.parametrize(
    "question", ["？！。，", "...", "——", "？？？？" * 100], ids=["cjk", "dots", "dashes", "400-marks"]
)
def test_rel_punctuation_only_question_is_refused(tmp_path: Path, question: str) -> None:
    root, _ = build_with(tmp_path, {})
    result = query_once(question, root)
    assert (result["status"], result["reason"]) == ("refused", "no_supporting_evidence")
    assert result["message"] == (
        "The question names no subject or field known in the corpus; nothing supports an answer."
    )
    assert result["answer"] is None and result["citations"] == []


# -- a damaged index ---------------------------------------------------------------------------


@sqlite_only  # damages the index file
def test_rel_truncated_index_is_an_index_error(tmp_path: Path) -> None:
    root, _ = build_with(tmp_path, {})
    path = default_index_path(root)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 100])
    with pytest.raises(IndexError_, match="is truncated or damaged: .* rebuild it with `rag-lab index ROOT`"):
        query_once("借阅台 开放时间", root)


def _flip_all(path: Path, old: bytes, new: bytes) -> int:
    data = path.read_bytes()
    count = data.count(old)
    path.write_bytes(data.replace(old, new))
    return count


@sqlite_only  # damages the index file
def test_rel_flipped_byte_in_a_unit_value_fails_verification(tmp_path: Path) -> None:
    root, _ = build_with(tmp_path, {})
    path = default_index_path(root)
    # one bit of the value 5550007 in the row's stored text: schema 7 stores a field line's value
    # alone (ASCII, so UTF-8 TEXT) and the text is 电话：+ that value, so the text changes with it: 7 → 6
    assert _flip_all(path, "电话：5550007".encode(), "电话：5550006".encode()) == 0
    assert _flip_all(path, b"5550007", b"5550006") == 1
    result = query_once("复印机 电话", root)
    assert (result["status"], result["reason"]) == ("refused", "source_verification_failed")
    failure = result["verification_failure"]
    assert (failure["source"], failure["failed_check"]) == ("documents/sub/good2.md", "span")
    assert "reads '电话：5550007', expected '电话：5550006'" in result["message"]


@sqlite_only  # damages the index file
def test_rel_flipped_byte_in_a_table_page_is_an_index_error(tmp_path: Path) -> None:
    root, _ = build_with(tmp_path, {})
    path = default_index_path(root)
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    (rootpage,) = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'units'").fetchone()
    db.close()
    data = bytearray(path.read_bytes())
    offset = (rootpage - 1) * page_size + (100 if rootpage == 1 else 0)
    assert data[offset] == 13  # a leaf table b-tree page
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(IndexError_, match="cannot be read .*malformed.*rebuild it with `rag-lab index ROOT`"):
        query_once("借阅台 开放时间", root)


@sqlite_only  # damages the index file
def test_rel_flipped_byte_in_an_evidence_id_is_detected(tmp_path: Path) -> None:
    root, _ = build_with(tmp_path, {})
    path = default_index_path(root)
    good = query_once("复印机 电话", root)["citations"][0]["evidence_id"]
    bad = good[:-1] + ("0" if good[-1] != "0" else "1")
    # stored as the digest's 12 raw bytes (schema 5)
    assert _flip_all(path, bytes.fromhex(good[3:]), bytes.fromhex(bad[3:])) >= 1
    result = query_once("复印机 电话", root)
    assert (result["status"], result["reason"]) == ("refused", "source_verification_failed")


@sqlite_only  # damages the index file
def test_rel_the_damaged_index_is_repaired_by_a_rebuild(tmp_path: Path) -> None:
    root, _ = build_with(tmp_path, {})
    path = default_index_path(root)
    path.write_bytes(path.read_bytes()[:4096])
    with pytest.raises(IndexError_):
        Index(path)
    build_index(root)
    assert_others_fine(root)
    assert sorted(os.listdir(path.parent)) == ["index.sqlite", "index.sqlite.lock"]
