"""Independent check of a generated benchmark: re-reads the files, recounts, re-derives.

    python benchmarks/realistic/check.py OUT_DIR

It does not import the generator. It parses ``OUT_DIR/corpus/documents/**/*.md`` back
into (subject, field, value) lines, re-derives every question's expected outcome from
the corpus alone, re-checks that every question is unambiguous (the maximal subject-name
occurrences are exactly the intended subjects, the maximal field-name occurrences
outside them exactly the intended fields, none overlapping), and prints the overlap
statistics as JSON. Exit code 1 if any problem was found (they are listed).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

COMMON_WORDS = ("应用", "基础", "中国", "学习")
EXPECT = {
    "answerable": ("answered", None),
    "field_missing": ("refused", "no_supporting_evidence"),
    "unknown_subject": ("refused", "no_supporting_evidence"),  # issue 13: "X is not a subject in the corpus"
    "conflict": ("refused", "conflicting_evidence"),
    "multi_subject": ("answered", None),
    "multi_field": ("answered", None),
}


def read_corpus(root: Path, problems: list[str]) -> tuple[dict[str, Any], Counter[str]]:
    """subject -> {"kind", "docs": [{field: value}]}, and files per folder."""
    subjects: dict[str, Any] = {}
    folders: Counter[str] = Counter()
    for path in sorted(root.glob("documents/**/*.md")):
        rel = path.relative_to(root).as_posix()
        folders[str(path.parent.relative_to(root).as_posix())] += 1
        lines = path.read_bytes().decode("utf-8").split("\n")
        if lines[-1] == "":
            lines.pop()
        pairs = []
        for line in lines:
            field, colon, value = line.partition("：")
            if not colon or not field or not value or line != line.strip():
                problems.append(f"{rel}: bad line {line!r}")
                continue
            pairs.append((field, value))
        if not pairs or pairs[0][0] != "主题":
            problems.append(f"{rel}: does not start with 主题")
            continue
        name = pairs[0][1]
        doc = dict(pairs[1:])
        if len(doc) != len(pairs) - 1:
            problems.append(f"{rel}: a field repeats")
        for field, value in doc.items():
            if not 4 <= len(value) <= 20:
                problems.append(f"{rel}: value of {field} has {len(value)} code points")
        entry = subjects.setdefault(name, {"kind": None, "docs": []})
        entry["docs"].append(doc)
        if rel.split("/")[1] != "copies":
            entry["kind"] = rel.split("/")[1]
    return subjects, folders


def containment(names: set[str]) -> dict[str, list[str]]:
    """name -> the other names lying inside it."""
    inner: dict[str, list[str]] = {}
    for name in names:
        inner[name] = sorted(
            {
                name[i:j]
                for i in range(len(name))
                for j in range(i + 1, len(name) + 1)
                if name[i:j] != name and name[i:j] in names
            }
        )
    return inner


def occurrences(text: str, names: set[str]) -> list[tuple[int, int]]:
    longest = max(map(len, names))
    return [
        (i, j)
        for i in range(len(text))
        for j in range(i + 1, min(len(text), i + longest) + 1)
        if text[i:j] in names
    ]


def maximal(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    return sorted(
        s for s in spans if not any(o != s and o[0] <= s[0] and s[1] <= o[1] for o in spans)
    )


def overlapping(spans: list[tuple[int, int]]) -> bool:
    return any(a[1] > b[0] for a, b in zip(spans, spans[1:], strict=False))


def reading(text: str, subjects: set[str], fields: set[str]) -> tuple[list[str], list[str], bool]:
    """Maximal subject names, maximal field names outside them, and whether any overlap."""
    s_max = maximal(occurrences(text, subjects))
    f_out = [
        f
        for f in occurrences(text, fields)
        if not any(s[0] <= f[0] and f[1] <= s[1] for s in s_max)
    ]
    f_max = maximal(f_out)
    clash = (
        overlapping(s_max)
        or overlapping(f_max)
        or any(f[0] < s[1] and s[0] < f[1] for f in f_max for s in s_max)
    )
    return [text[i:j] for i, j in s_max], [text[i:j] for i, j in f_max], clash


def check_question(
    q: dict[str, Any], corpus: dict[str, Any], subject_names: set[str], field_names: set[str]
) -> list[str]:
    bad: list[str] = []
    label = q["label"]
    subjects = q["subject"] if isinstance(q["subject"], list) else [q["subject"]]
    fields = q["field"] if isinstance(q["field"], list) else [q["field"]]
    if (q["expect_status"], q["expect_reason"]) != EXPECT[label]:
        bad.append("expect_status/expect_reason do not match the label")

    def values(s: str, f: str) -> list[str]:
        return sorted({d[f] for d in corpus[s]["docs"] if f in d}) if s in corpus else []

    if label in ("answerable", "multi_subject", "multi_field"):
        got = [values(s, f) for s in subjects for f in fields]
        if any(len(v) != 1 for v in got):
            bad.append(f"not answerable from the corpus: {got}")
        else:
            answer = [v[0] for v in got]
            if (answer[0] if label == "answerable" else answer) != q["expect_answer"]:
                bad.append("expect_answer differs from the corpus")
    elif label == "conflict" and len(values(subjects[0], fields[0])) < 2:
        bad.append("no conflicting values")
    elif label == "field_missing" and (subjects[0] not in corpus or values(subjects[0], fields[0])):
        bad.append("subject missing or has the field")
    elif label == "unknown_subject" and subjects[0] in corpus:
        bad.append("made-up subject is in the corpus")
    if any(f not in field_names for f in fields):
        bad.append("field unknown to the corpus")
    seen_s, seen_f, clash = reading(q["question"], subject_names, field_names)
    want_s = [] if label == "unknown_subject" else subjects
    if clash or seen_s != want_s or seen_f != fields:
        bad.append(f"ambiguous reading: subjects {seen_s}, fields {seen_f}, overlap {clash}")
    return bad


def main(argv: list[str]) -> int:
    out = Path(argv[0])
    problems: list[str] = []
    corpus, folders = read_corpus(out / "corpus", problems)
    names = set(corpus)
    fields = {f for s in corpus.values() for d in s["docs"] for f in d}
    inner = containment(names)
    is_inside = {i for n in names for i in inner[n]}
    persons = {n for n in names if corpus[n]["kind"] == "person"}
    prefix_pairs = [(a, b) for b in persons for a in inner[b] if a in persons and b.startswith(a)]
    field_inner = containment(fields)
    per_subject = [len({f for d in s["docs"] for f in d}) for s in corpus.values()]
    with_field_inside = sorted(n for n in names if any(f in n for f in fields))
    n_docs = Counter(len(s["docs"]) for s in corpus.values())
    conflicting = [
        n
        for n, s in corpus.items()
        if len(s["docs"]) > 1
        and any(len({d[f] for d in s["docs"] if f in d}) > 1 for d0 in s["docs"] for f in d0)
    ]
    questions = [
        json.loads(line)
        for line in (out / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    for q in questions:
        for problem in check_question(q, corpus, names, fields):
            problems.append(f"{q['id']} {q['question']!r}: {problem}")
    texts = Counter(q["question"] for q in questions)
    outer_names = {i for n in names for i in inner[n]}
    outer_fields = {i for f in fields for i in field_inner[f]}
    hard: Counter[str] = Counter()
    for q in questions:
        if q["label"] != "answerable":
            continue
        s, f = q["subject"], q["field"]
        value = corpus[s]["docs"][0].get(f)
        traps = {
            "subject_contains_another_subject": bool(inner[s]),
            "subject_inside_another_subject": s in outer_names,
            "inner_subject_has_field_with_other_value": any(
                any(d.get(f) not in (None, value) for d in corpus[i]["docs"]) for i in inner[s]
            ),
            "person_prefix": any(i in persons and s.startswith(i) for i in inner[s])
            or any(s in inner[p] and p.startswith(s) for p in persons if len(p) > len(s)),
            "field_contains_another_field": bool(field_inner[f]),
            "field_inside_another_field": f in outer_fields,
            "subject_contains_a_field_name": s in with_field_inside,
        }
        hard.update(k for k, v in traps.items() if v)
        hard["any_of_these"] += any(traps.values())
    report = {
        "documents": sum(folders.values()),
        "max_files_per_folder": max(folders.values()),
        "subjects": len(names),
        "subjects_inside_another_subject": len(is_inside),
        "subjects_containing_another_subject": sum(bool(inner[n]) for n in names),
        "person_prefix_pairs": len(prefix_pairs),
        "common_words": {
            w: {"is_subject": w in names, "inside_subjects": sum(w in inner[n] for n in names)}
            for w in COMMON_WORDS
        },
        "subjects_containing_a_field_name": with_field_inside,
        "fields": len(fields),
        "fields_inside_another_field": len({i for f in fields for i in field_inner[f]}),
        "fields_per_subject": [min(per_subject), max(per_subject)],
        "subjects_by_document_count": dict(sorted(n_docs.items())),
        "multi_document_subjects_conflicting": len(conflicting),
        "questions": len(questions),
        "questions_by_label": dict(sorted(Counter(q["label"] for q in questions).items())),
        "questions_by_pattern": dict(sorted(Counter(q["pattern"] for q in questions).items())),
        "answerable_overlap_cases": dict(hard),
        "templates": len({q["template"] for q in questions}),
        "duplicate_question_texts": sum(c - 1 for c in texts.values()),
        "problems": len(problems),
    }
    print(json.dumps(report, ensure_ascii=False, indent=1))
    for problem in problems[:50]:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
