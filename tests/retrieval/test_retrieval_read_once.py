"""One read, one hash and one decode per file per request, however many of its units are verified."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

import rag_lab.data.corpus as corpus_module
import rag_lab.retrieval.verify as verify_module
from rag_lab.index import build_index
from rag_lab.retrieval import query_once
from rag_lab.retrieval.verify import SourceReader, verify_unit

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

UNITS = 150


@pytest.fixture
def one_big_file(make_corpus: Any) -> Path:
    lines = "".join(f"字段{i}：大文件的值{i}\n" for i in range(UNITS))
    root = make_corpus({"documents/big.md": "主题：大文件\n" + lines, "documents/other.md": "主题：小文件\n字段1：一\n"})
    build_index(root)
    return root


class Counting:
    """Counts the bytes-of-a-whole-file reads, SHA-256 computations and UTF-8 decodes of big.md."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
        self.reads = self.hashes = self.decodes = 0
        self.data = path.read_bytes()
        real_read_bytes, real_sha = Path.read_bytes, hashlib.sha256
        counter = self

        def read_bytes(self_path: Path) -> bytes:
            data = real_read_bytes(self_path)
            counter.reads += data == counter.data
            return data

        class Sha:
            def __init__(self, data: bytes = b"") -> None:
                counter.hashes += data == counter.data
                self._h = real_sha(data)

            def update(self, data: bytes) -> None:
                self._h.update(data)

            def hexdigest(self) -> str:
                return self._h.hexdigest()

        class Data(bytes):
            def decode(self, *args: Any, **kwargs: Any) -> str:
                counter.decodes += 1
                return bytes.decode(self, *args, **kwargs)

        def read_bytes_counted(self_path: Path) -> bytes:
            data = read_bytes(self_path)
            return Data(data) if data == counter.data else data

        def read_whole_counted(path: str) -> bytes:
            return read_bytes_counted(Path(path))

        monkeypatch.setattr(Path, "read_bytes", read_bytes_counted)
        monkeypatch.setattr(verify_module, "read_whole", read_whole_counted)  # the reader's own reads
        monkeypatch.setattr(corpus_module.hashlib, "sha256", Sha)


def test_verifying_many_units_of_one_file_reads_hashes_and_decodes_it_once(
    one_big_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rag_lab.data import extract_documents

    units = [u for u in extract_documents(one_big_file) if u["source"] == "documents/big.md"]
    assert len(units) == UNITS
    counts = Counting(monkeypatch, one_big_file / "documents/big.md")
    reader = SourceReader(one_big_file)
    assert all(verify_unit(u, reader).ok for u in units)
    assert (counts.reads, counts.hashes, counts.decodes) == (1, 1, 1)


def test_a_request_citing_every_unit_of_a_file_reads_it_once(
    one_big_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = Counting(monkeypatch, one_big_file / "documents/big.md")
    # every unit of big.md is retrieved, packed and verified in context
    result = query_once("大文件 字段7", one_big_file, top_k=UNITS, budget=100_000)
    assert result["status"] == "answered" and result["answer"] == "大文件的值7"
    verified = [e for e in result["trace"]["events"] if e["step"] == "verify"]
    assert len(verified) > 100
    assert counts.reads <= 1 and counts.hashes <= 1 and counts.decodes <= 1


def test_a_changed_file_still_fails_for_every_unit(one_big_file: Path) -> None:
    from rag_lab.data import extract_documents

    units = [u for u in extract_documents(one_big_file) if u["source"] == "documents/big.md"]
    path = one_big_file / "documents/big.md"
    path.write_bytes(path.read_bytes().replace("值1".encode(), "值X".encode(), 1))
    reader = SourceReader(one_big_file)
    outcomes = [verify_unit(u, reader) for u in units[:3]]
    assert [o.failed_check for o in outcomes] == ["sha256"] * 3
    assert verify_module.SourceReader is SourceReader
