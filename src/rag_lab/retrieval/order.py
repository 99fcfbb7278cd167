"""Ordering the packed context: which position each kept unit takes in the package.

- ``relevance``: rank order (default).
- ``by_slot``: units grouped by the (subject, field) slot they serve, slots in question
  order, then everything else; rank order inside each group.
- ``ends``: strongest evidence at both ends (ranks 1, 3, 5, … then …, 6, 4, 2), for
  models that use the middle of a long context less.
"""

from __future__ import annotations

from rag_lab.errors import ConfigError
from rag_lab.records import Candidate

STRATEGIES = ("relevance", "by_slot", "ends")


def order_context(kept: list[Candidate], strategy: str, slots: list[tuple[str, str]]) -> list[Candidate]:
    if strategy not in STRATEGIES:
        raise ConfigError(f"ordering {strategy!r} is not one of {STRATEGIES}")
    if strategy == "relevance":
        return list(kept)
    if strategy == "ends":
        return kept[0::2] + kept[1::2][::-1]
    position = {slot: i for i, slot in enumerate(slots)}

    def group(c: Candidate) -> int:
        ev = c["evidence"]
        return position.get((ev.get("subject"), ev.get("field")), len(slots))

    return sorted(kept, key=group)  # stable: rank order inside a group
