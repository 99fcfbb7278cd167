"""Parent expansion and extractive compression of sentence units in the evidence package.

A kept ``sentence`` unit alone may lack its qualifiers. When the package is rendered from an
index, each kept sentence is shown with its **heading path** (title › headings) and the
**neighbouring sentences of its paragraph** (same file, same ``parent_span``), nearest first,
alternating before/after, while the request's expansion budget (``EXPANSION_BUDGET`` code
points of added text, separate from the context budget) lasts. What does not fit is left out
and the kept pieces keep their own spans: that is the extractive compression — every piece is
verbatim text at a stated position, never a summary. Neighbours already in the package are
not repeated. The report lists per kept sentence what was expanded, what was compressed away
and why. Field lines, cells and images are rendered as before.
"""

from __future__ import annotations

from typing import Any, Protocol

from rag_lab.records import Unit

EXPANSION_BUDGET = 300


class NeighbourSource(Protocol):
    def units_of_source(self, source: str) -> list[Unit]: ...
    def units_of_source_spanning(self, source: str, start: int, end: int) -> list[Unit]: ...


def paragraph_units(unit: Unit, source: NeighbourSource) -> list[Unit]:
    """The units of ``unit``'s file that start inside its paragraph (``parent_span``), in span
    order: a sentence of the paragraph lies inside it (data/prose.py), so these hold all of them;
    every unit of the file when ``unit`` has no parent span (the callers then match nothing else)."""
    parent = unit.get("parent_span")
    if not isinstance(parent, list) or len(parent) != 2 or not all(isinstance(x, int) for x in parent):
        return source.units_of_source(str(unit["source"]))
    return source.units_of_source_spanning(str(unit["source"]), parent[0], parent[1])


def neighbours(unit: Unit, source: NeighbourSource) -> list[Unit]:
    """The other sentences of ``unit``'s paragraph, nearest first (before, after, before, …)."""
    parent = unit.get("parent_span")
    same = [
        u
        for u in paragraph_units(unit, source)
        if u.get("kind") == "sentence"
        and u.get("parent_span") == parent
        and u["evidence_id"] != unit["evidence_id"]
    ]
    before = sorted((u for u in same if u["span"][0] < unit["span"][0]), key=lambda u: -u["span"][0])
    after = sorted((u for u in same if u["span"][0] > unit["span"][0]), key=lambda u: u["span"][0])
    order: list[Unit] = []
    for i in range(max(len(before), len(after))):
        order.extend(side[i] for side in (before, after) if i < len(side))
    return order


def expand(units: list[Unit], source: NeighbourSource, budget: int = EXPANSION_BUDGET) -> dict[str, Any]:
    """``{"budget", "used", "by_unit": {evidence_id: {"headings", "before", "after", "dropped"}}}``."""
    in_package = {u["evidence_id"] for u in units}
    used = 0
    by_unit: dict[str, Any] = {}
    for unit in units:
        if unit.get("kind") != "sentence":
            continue
        path = [unit.get("title"), *(unit.get("headings") or [])]
        if len(path) > 1 and path[0] == path[1]:
            path = path[1:]  # the title is the first heading
        entry: dict[str, Any] = {
            "path": path,
            "added": [],
            "dropped": [],
        }
        for other in neighbours(unit, source):
            if other["evidence_id"] in in_package:
                continue
            size = len(other["text"])
            if used + size <= budget:
                used += size
                entry["added"].append(other)
                in_package.add(other["evidence_id"])
            else:
                entry["dropped"].append(
                    {
                        "evidence_id": other["evidence_id"],
                        "span": other["span"],
                        "reason": "over_expansion_budget",
                    }
                )
        entry["added"].sort(key=lambda u: u["span"][0])
        by_unit[str(unit["evidence_id"])] = entry
    return {"budget": budget, "used": used, "by_unit": by_unit}


def expansion_report(expansion: dict[str, Any]) -> dict[str, Any]:
    """What the trace keeps of an expansion: ids and spans, not the texts."""
    return {
        "budget": expansion["budget"],
        "used": expansion["used"],
        "expanded": [
            {"evidence_id": eid, "added": [[u["evidence_id"], u["span"]] for u in e["added"]]}
            for eid, e in expansion["by_unit"].items()
            if e["added"]
        ],
        "compressed": [
            {"evidence_id": eid, "dropped": e["dropped"]}
            for eid, e in expansion["by_unit"].items()
            if e["dropped"]
        ],
    }
