"""A request's trace: events in causal order, plus a hash of the configuration."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def config_hash(config: dict[str, Any]) -> str:
    blob = json.dumps(config, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


class Trace:
    """Append-only list of ``{"step": …}`` events; rendered with :meth:`as_dict`."""

    def __init__(self, config: dict[str, Any] | None = None, question: str | None = None) -> None:
        self.config = dict(config or {})
        self.question = question
        self.events: list[dict[str, Any]] = []
        self.counters: dict[str, int] = {}

    def add(self, step: str, **data: Any) -> None:
        self.events.append({"step": step, **data})

    def count(self, name: str, amount: int = 1) -> None:
        self.counters[name] = self.counters.get(name, 0) + amount

    def as_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "config": self.config,
            "config_hash": config_hash(self.config),
            "events": self.events,
            "counters": dict(sorted(self.counters.items())),
        }
