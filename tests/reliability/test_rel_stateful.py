"""Stateful test: add, edit and delete files, reindex (or not) and ask (issue 7, item 4).

A hypothesis ``RuleBasedStateMachine`` drives a real corpus folder. The test keeps its
own model: the bytes of every file now, and the bytes at the last build. At every ask:

* after every step (an invariant): ``check_freshness`` reports exactly the added,
  deleted and modified paths of the model since the last build;
* never built → ``IndexError_`` (no index yet);
* the corpus changed since the last build → ``index_stale`` naming exactly the added,
  deleted and modified paths (an edit that rewrites identical bytes is no change);
* otherwise the answer follows a dict ``(subject, field) → values`` computed by the test:
  one distinct value → ``answered`` with it, one citation per unit of the key, every
  citation re-hashing to the file on disk; several → ``conflicting_evidence`` citing
  every unit; none → not answered and nothing cited.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from rag_lab.errors import IndexError_
from rag_lab.index import Index, build_index, check_freshness, default_index_path
from rag_lab.retrieval import query_once

SUBJECTS = ("借阅台", "测试台", "复印机", "阅览室")
FIELDS = ("开放时间", "地点", "电话")
VALUES = ("九点", "十点", "二楼", "三楼东")
NAMES = tuple(f"documents/{d}{i}.md" for d in ("", "sub/") for i in range(4))

Doc = tuple[str, tuple[tuple[str, str], ...]]
DOCS = st.tuples(
    st.sampled_from(SUBJECTS),
    st.lists(st.tuples(st.sampled_from(FIELDS), st.sampled_from(VALUES)), max_size=4).map(tuple),
)


def render(doc: Doc, crlf: bool) -> bytes:
    subject, fields = doc
    newline = "\r\n" if crlf else "\n"
    lines = ["# 文档", f"主题：{subject}", *(f"{f}：{v}" for f, v in fields)]
    return (newline.join(lines) + newline).encode("utf-8")


def model_answers(files: dict[str, Doc]) -> dict[tuple[str, str], list[str]]:
    values: dict[tuple[str, str], list[str]] = {}
    for subject, fields in files.values():
        for field, value in fields:
            values.setdefault((subject, field), []).append(value)
    return values


class CorpusMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="rel-state-")) / "corpus"
        (self.root / "documents/sub").mkdir(parents=True)
        self.docs: dict[str, Doc] = {}
        self.now: dict[str, bytes] = {}
        self.built: dict[str, bytes] | None = None
        self.built_docs: dict[str, Doc] = {}

    def teardown(self) -> None:
        shutil.rmtree(self.root.parent, ignore_errors=True)

    def _write(self, name: str, doc: Doc, crlf: bool) -> None:
        data = render(doc, crlf)
        (self.root / name).write_bytes(data)
        self.docs[name], self.now[name] = doc, data

    @initialize(doc=DOCS)
    def start(self, doc: Doc) -> None:
        self._write(NAMES[0], doc, False)

    @precondition(lambda self: len(self.now) < len(NAMES))
    @rule(data=st.data(), doc=DOCS, crlf=st.booleans())
    def add(self, data: st.DataObject, doc: Doc, crlf: bool) -> None:
        name = data.draw(st.sampled_from([n for n in NAMES if n not in self.now]))
        self._write(name, doc, crlf)

    @precondition(lambda self: bool(self.now))
    @rule(data=st.data(), doc=DOCS, crlf=st.booleans())
    def edit(self, data: st.DataObject, doc: Doc, crlf: bool) -> None:
        self._write(data.draw(st.sampled_from(sorted(self.now))), doc, crlf)

    @precondition(lambda self: bool(self.now))
    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(self.now)))
        (self.root / name).unlink()
        del self.now[name], self.docs[name]

    @rule()
    def reindex(self) -> None:
        summary = build_index(self.root)
        assert summary.errors == [] and summary.files == len(self.now)
        self.built, self.built_docs = dict(self.now), dict(self.docs)

    @rule(subject=st.sampled_from(SUBJECTS), field=st.sampled_from(FIELDS))
    def ask(self, subject: str, field: str) -> None:
        question = f"{subject} {field}"
        if self.built is None:
            with pytest.raises(IndexError_, match="no index at"):
                query_once(question, self.root, top_k=50)
            return
        result = query_once(question, self.root, top_k=50)
        changed = self.changes()
        if any(changed.values()):
            assert (result["status"], result["reason"]) == ("refused", "index_stale")
            assert {k: sorted(v) for k, v in result["stale"].items()} == changed
            for paths in changed.values():
                for path in paths:
                    assert path in result["message"]
            return
        values = model_answers(self.docs).get((subject, field), [])
        ids = {c["evidence_id"] for c in result["citations"]}
        assert len(ids) == len(result["citations"])
        for cite in result["citations"]:
            assert cite["sha256"] == hashlib.sha256(self.now[cite["source"]]).hexdigest()
        if len(set(values)) == 1:
            assert (result["status"], result["answer"]) == ("answered", values[0]), result["message"]
            assert len(result["citations"]) == result["same_key_sources_checked"] == len(values)
        elif values:
            assert (result["status"], result["reason"]) == ("refused", "conflicting_evidence")
            assert result["answer"] is None and len(result["citations"]) == len(values)
        else:
            assert result["status"] != "answered" and result["citations"] == []

    def changes(self) -> dict[str, list[str]]:
        assert self.built is not None
        return {
            "added": sorted(set(self.now) - set(self.built)),
            "deleted": sorted(set(self.built) - set(self.now)),
            "modified": sorted(n for n in self.now if n in self.built and self.now[n] != self.built[n]),
        }

    @invariant()
    def freshness_names_exactly_the_changes(self) -> None:
        if self.built is None:
            return
        with Index(default_index_path(self.root)) as index:
            found = check_freshness(self.root, index)
        assert found.as_dict() == self.changes()
        assert found.stale == any(self.changes().values())

    @invariant()
    def model_matches_disk(self) -> None:
        on_disk = sorted(p.relative_to(self.root).as_posix() for p in self.root.rglob("*.md"))
        assert on_disk == sorted(self.now)


CorpusMachine.TestCase.settings = settings(
    max_examples=50,
    stateful_step_count=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_rel_corpus_state_machine = CorpusMachine.TestCase
