"""Turning a generator's raw output into claims ``{"text": …, "evidence": ["E1", …]}``.

Accepted, in order: a JSON array of claims, an object ``{"claims": [...]}`` (either may sit
inside a Markdown code fence or among other text), or plain text, whose sentences become
claims with their inline ``[E1]`` markers as evidence. Inline markers inside a JSON claim's
text are moved into its evidence. Nothing is dropped silently: an entry that is not a claim
becomes a claim with no evidence (so the verifier deletes it and the trace says so).
"""

from __future__ import annotations

import json
import re
from typing import Any

#: Caps on what one output may hold (the verifier never sees more).
MAX_CLAIMS = 64
MAX_CLAIM_CHARS = 2000

MARKER = re.compile(r"[\[【]\s*((?:E\d+|ev_[0-9A-Za-z]+)(?:\s*[,，、;；]\s*(?:E\d+|ev_[0-9A-Za-z]+))*)\s*[\]】]")
_SPLIT_IDS = re.compile(r"\s*[,，、;；]\s*")
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


def take_markers(text: str) -> tuple[str, list[str]]:
    """``(text without [E…] markers, the ids in order of appearance)``."""
    ids: list[str] = []
    for match in MARKER.finditer(text):
        ids.extend(_SPLIT_IDS.split(match.group(1)))
    return MARKER.sub("", text).strip(), ids


def _json_payload(raw: str) -> Any:
    text = _FENCE.sub("", raw.strip())
    for attempt in (text, _between(text, "[", "]"), _between(text, "{", "}")):
        if attempt is None:
            continue
        try:
            return json.loads(attempt)
        except json.JSONDecodeError:
            continue
    return None


def _between(text: str, open_: str, close: str) -> str | None:
    start, end = text.find(open_), text.rfind(close)
    return text[start : end + 1] if 0 <= start < end else None


def _claim(item: Any) -> dict[str, Any]:
    if not isinstance(item, dict) or not isinstance(item.get("text"), str):
        return {"text": json.dumps(item, ensure_ascii=False)[:MAX_CLAIM_CHARS], "evidence": [], "malformed": True}
    text, inline = take_markers(item["text"][:MAX_CLAIM_CHARS])
    evidence = item.get("evidence", [])
    if isinstance(evidence, str):
        evidence = [evidence]
    ids = [str(e) for e in evidence] if isinstance(evidence, list) else []
    return {"text": text, "evidence": list(dict.fromkeys(ids + inline))}


def parse_output(raw: str) -> list[dict[str, Any]]:
    """The claims of one raw output (at most :data:`MAX_CLAIMS`)."""
    payload = _json_payload(raw)
    if isinstance(payload, dict) and isinstance(payload.get("claims"), list):
        payload = payload["claims"]
    if isinstance(payload, list):
        return [_claim(item) for item in payload[:MAX_CLAIMS]]
    claims = []
    for sentence in split_sentences(raw.strip()):
        text, ids = take_markers(sentence)
        if text:
            claims.append({"text": text[:MAX_CLAIM_CHARS], "evidence": list(dict.fromkeys(ids))})
    return claims[:MAX_CLAIMS]


_ENDS = "。！？!?；;\n"
_END = re.compile(f"[{re.escape(_ENDS)}]")


def blocked_positions(text: str, protected: list[str] | None) -> set[int]:
    """Positions inside an occurrence of a ``protected`` string (its last character excluded),
    where :func:`split_sentences` never cuts."""
    blocked: set[int] = set()
    for value in protected or []:
        if len(value) < 2:
            continue
        start = text.find(value)
        while start >= 0:
            blocked.update(range(start, start + len(value) - 1))
            start = text.find(value, start + 1)
    return blocked


def split_sentences(text: str, protected: list[str] | None = None) -> list[str]:
    """Split after 。！？!?；; and newlines, never inside an occurrence of a ``protected`` string
    (an evidence value such as ``上午九点。下午休息。``); markers after a sentence end stay with it."""
    blocked = blocked_positions(text, protected)
    pieces: list[str] = []
    start = 0  # where the current piece begins; every end before it was taken with a marker
    for end in _END.finditer(text):
        k = end.start()
        if k < start or k in blocked:
            continue
        cut = k + 1
        marker = MARKER.match(text, cut)
        while marker:  # keep trailing markers with the sentence they follow
            cut = marker.end()
            marker = MARKER.match(text, cut)
        pieces.append(text[start:cut])
        start = cut
    pieces.append(text[start:])
    return [p.strip() for p in pieces if p.strip()]
