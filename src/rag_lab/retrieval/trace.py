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
        self._hashed: tuple[dict[str, Any], str] | None = None  # (the config's entries, its hash)

    def add(self, step: str, **data: Any) -> None:
        self.events.append({"step": step, **data})

    def count(self, name: str, amount: int = 1) -> None:
        self.counters[name] = self.counters.get(name, 0) + amount

    def _config_hash(self) -> str:
        """config_hash of the config, computed again when an entry of it changed (the request
        renders its trace twice: the decision's result, then the one with the generated text)."""
        hashed = self._hashed
        if hashed is None or hashed[0] != self.config:
            hashed = self._hashed = (dict(self.config), config_hash(self.config))
        return hashed[1]

    def as_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "config": self.config,
            "config_hash": self._config_hash(),
            "events": self.events,
            "counters": dict(sorted(self.counters.items())),
        }
