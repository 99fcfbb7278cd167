"""Plain-text rendering of results and traces for terminals (used by the CLI; no printing here)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rag_lab.records import Result


def quote_original(root: Path, cite: dict[str, Any], texts: dict[str, str] | None = None) -> str:
    """The cited original line, read from the file by its span (empty if unreadable).

    ``texts`` caches decoded files across the citations of one result (one read per file).
    """
    if cite.get("span") is None:
        return f"bbox {cite.get('bbox')}"
    texts = {} if texts is None else texts
    if cite["source"] not in texts:
        try:
            texts[cite["source"]] = (root / cite["source"]).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            texts[cite["source"]] = ""
    start, end = cite["span"]
    return str(texts[cite["source"]][start:end])


def render_citation(
    number: int | str, root: Path, cite: dict[str, Any], texts: dict[str, str] | None = None
) -> list[str]:
    where = cite["source"] + (f":{cite['line']}" if cite.get("line") is not None else "")
    span = f" [{cite['span'][0]},{cite['span'][1]})" if cite.get("span") is not None else ""
    return [
        f"  [{number}] {where}{span} {cite['sha256'][:12]} {cite['support_type']}",
        f"      {quote_original(root, cite, texts)}",
    ]


#: What each support type in a citation line means (the legend under the citations).
SUPPORT_WORDS = {
    "verbatim_line": "the value is quoted exactly from that line",
    "remeasured_pixels": "the image's pixels were measured again and match",
    "verbatim_sentence": "the answer is quoted exactly from that sentence",
    "verbatim_cell": "the value is quoted exactly from that table cell",
}


def citation_legend(citations: list[dict[str, Any]]) -> str:
    """One line explaining ``[43,61) f82bb2ba17ba verbatim_line``, with the first citation's values."""
    parts = []
    spanned = next((c for c in citations if c.get("span") is not None), None)
    if spanned is not None:
        start, end = spanned["span"]
        parts.append(f"[{start},{end}) = where the cited line is in the file, in Unicode code points")
    parts.append(f"{citations[0]['sha256'][:12]} = the start of the file's SHA-256")
    kinds = sorted({str(c.get("support_type")) for c in citations})
    parts.extend(f"{kind} = {SUPPORT_WORDS[kind]}" if kind in SUPPORT_WORDS else kind for kind in kinds)
    return "  legend: " + " · ".join(parts)


def _refs(result: Result) -> dict[str, str]:
    """evidence_id → the request id (``E1``) the verified text uses for it."""
    refs: dict[str, str] = {}
    for claim in result.get("claims") or []:
        for ref, evidence_id in zip(claim.get("evidence", []), claim.get("evidence_ids", []), strict=False):
            refs.setdefault(evidence_id, ref)
    return refs


def render_result(result: Result, root: Path) -> str:
    """The verified ``text`` (with its ``[E1]`` markers), then each citation under its marker."""
    lines = []
    text = result.get("text") or (result["answer"] if result["status"] == "answered" else result["message"])
    if result["status"] == "answered":
        lines.append(f"answered: {text}")
    else:
        label = result["status"] + (f" ({result['reason']})" if result["reason"] else "")
        lines.append(f"{label}: {text}")
        if result.get("answer") and not result.get("text"):
            lines.append(f"answered part: {result['answer']}")
    for slot in result.get("slots", []):
        match = slot.get("field_match")
        if match and match.get("method") != "verbatim":  # how a field named in other words was found
            lines.append(f"  matched {match['field']} from {match['asked']} ({match['method']}, score {match['score']})")
        for side in slot.get("sides", []):
            lines.append(f"  side {side['value']!r}: {len(side['evidence_ids'])} source(s)")
    refs = _refs(result)
    texts: dict[str, str] = {}
    for number, cite in enumerate(result["citations"], 1):
        lines.extend(render_citation(refs.get(cite["evidence_id"], number), root, cite, texts))
    if result["citations"]:
        lines.append(citation_legend(result["citations"]))
    if result.get("clarification"):
        lines.append("  options: " + json.dumps(result["clarification"], ensure_ascii=False))
    return "\n".join(lines)


def _brief(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def render_trace(trace: dict[str, Any]) -> str:
    """One block per event, in causal order."""
    lines = [f"config {trace['config_hash']}: {_brief(trace['config'])}"]
    for number, event in enumerate(trace["events"], 1):
        step = event["step"]
        rest = {k: v for k, v in event.items() if k != "step"}
        if step == "retrieve":
            lines.append(f"{number:>3}. retrieve: {len(rest['candidates'])} candidate(s)")
            for rank, c in enumerate(rest["candidates"], 1):
                ev = c["evidence"]
                lines.append(
                    f"       #{rank} {c['score']:.6f} {ev['evidence_id']} {ev['source']} {ev['text']}"
                )
        elif step == "verify":
            verdict = "ok" if rest["ok"] else f"FAILED {rest['failed_check']}: {rest['detail']}"
            lines.append(
                f"{number:>3}. verify ({rest['purpose']}) {rest['evidence_id']} {rest['source']}: {verdict}"
            )
        else:
            lines.append(f"{number:>3}. {step}: {_brief(rest)}")
    if trace.get("counters"):
        lines.append(f"counters: {_brief(trace['counters'])}")
    return "\n".join(lines)
