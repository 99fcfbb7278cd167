"""The release gate (second seed): save each question's evidence set, compare a later run.

An *evidence set* is what a question was answered from: its status, reason, answer, the
cited evidence ids and the slots it covered (``subject field`` for a key slot, ``prose``
for a prose answer). ``rag-lab eval … --save-evidence FILE`` writes them;
``--compare-evidence FILE`` compares the run against a saved file and exits with the
below-bar code when a **required slot is lost** (covered before, not now) or a **verified
answer changed** (answered before; now another answer or no answer). Changed evidence ids
with the same answer are listed but do not fail (a re-saved file changes its ids).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from rag_lab.errors import QuestionSetError

FORMAT = "rag-lab-evidence-sets/1"


def evidence_set(result: dict[str, Any]) -> dict[str, Any]:
    """The evidence set of one result (module docstring)."""
    covered = []
    for slot in result["slots"]:
        if slot["status"] == "answered":
            covered.append("prose" if slot.get("kind") == "prose" else f"{slot['subject']} {slot['field']}")
    return {
        "status": result["status"],
        "reason": result["reason"],
        "answer": result["answer"],
        "evidence_ids": sorted({c["evidence_id"] for c in result["citations"]}),
        "slots_covered": sorted(covered),
    }


def save_evidence(path: str | os.PathLike[str], name: str, sets: dict[str, Any]) -> None:
    payload = {"format": FORMAT, "questions": name, "sets": dict(sorted(sets.items()))}
    Path(path).write_text(json.dumps(payload, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def load_evidence(path: str | os.PathLike[str]) -> dict[str, Any]:
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise QuestionSetError(f"cannot read evidence sets {str(path)!r}: {exc.strerror}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise QuestionSetError(f"{path}: not an evidence-set file ({exc})") from None
    if (
        not isinstance(payload, dict)
        or payload.get("format") != FORMAT
        or not isinstance(payload.get("sets"), dict)
    ):
        raise QuestionSetError(
            f"{path}: not an evidence-set file (format {FORMAT!r}); save one with --save-evidence"
        )
    sets: dict[str, Any] = payload["sets"]
    return sets


def compare_evidence(before: dict[str, Any], after: dict[str, Any]) -> tuple[list[str], list[str]]:
    """``(failures, notes)``: lost slots and changed verified answers fail; the rest are notes."""
    failures: list[str] = []
    notes: list[str] = []
    for qid in sorted(before):
        old, new = before[qid], after.get(qid)
        if new is None:
            if old["slots_covered"]:
                failures.append(f"{qid}: not in this run; it covered {', '.join(old['slots_covered'])}")
            continue
        for slot in old["slots_covered"]:
            if slot not in new["slots_covered"]:
                failures.append(f"{qid}: required slot {slot!r} lost (now {new['status']}/{new['reason']})")
        if old["status"] == "answered" and (new["status"] != "answered" or new["answer"] != old["answer"]):
            failures.append(f"{qid}: verified answer changed: {old['answer']!r} → {new['answer']!r}")
        gone = sorted(set(old["evidence_ids"]) - set(new["evidence_ids"]))
        came = sorted(set(new["evidence_ids"]) - set(old["evidence_ids"]))
        if gone or came:
            notes.append(f"{qid}: evidence changed: -{gone} +{came}")
        if old["status"] != "answered" and new["status"] != old["status"]:
            notes.append(f"{qid}: status {old['status']} → {new['status']}")
    notes.extend(f"{qid}: new question" for qid in sorted(set(after) - set(before)))
    return failures, notes
