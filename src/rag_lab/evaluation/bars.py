"""Bars on an evaluation report: met, missed, or not applicable when the metric has nothing to count.

A ratio whose denominator is empty is ``None`` in the report (docs/evaluation.md), and a bar
on it is *not applicable*: a refusal-only question set has no answerable coverage to fall
short of, so ``--min-coverage`` can neither pass nor fail it. Only a missed bar makes the
CLI exit 4.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class BarOutcome(StrEnum):
    MET = "met"
    MISSED = "missed"
    NOT_APPLICABLE = "not_applicable"


def ratio(text: str) -> float:
    """A bar on a share: a number from 0 to 1 (argparse names this function in its error)."""
    value = float(text)
    if not 0.0 <= value <= 1.0 or math.isnan(value):
        raise ValueError(f"{text!r} is not between 0 and 1")
    return value


def count(text: str) -> int:
    """A bar on a count: a whole number, 0 or more."""
    value = int(text)
    if value < 0:
        raise ValueError(f"{text!r} is negative")
    return value


def _unsupported(report: dict[str, Any]) -> int | None:
    # Only a question that expects a refusal or a clarification can be answered unsupported.
    return report["unsupported_answers"]["count"] if report["total"] > report["answerable"] else None


@dataclass(frozen=True)
class Bar:
    option: str  # the CLI option
    metric: str  # the report key it reads
    lowest: bool  # True: the value must be at least the bar; False: at most
    parse: Callable[[str], float]
    read: Callable[[dict[str, Any]], float | None]
    empty: str  # why the metric can have nothing to count
    help: str

    @property
    def dest(self) -> str:
        return self.option.removeprefix("--").replace("-", "_")


BARS = (
    Bar("--min-coverage", "answerable_coverage", True, ratio, lambda r: r["answerable_coverage"],
        "no question expects an answer", "exit 4 when answerable coverage is below this (0 to 1)"),
    Bar("--min-accuracy", "answer_accuracy", True, ratio, lambda r: r["answer_accuracy"],
        "no question expects an answer", "exit 4 when answer accuracy is below this (0 to 1)"),
    Bar("--max-unsupported", "unsupported_answers", False, count, _unsupported,
        "no question expects a refusal or a clarification",
        "exit 4 when there are more unsupported answers than this"),
    Bar("--min-citation-validity", "citation_validity", True, ratio, lambda r: r["citation_validity"]["rate"],
        "no result cited anything", "exit 4 when the share of valid citations is below this (0 to 1)"),
    Bar("--min-citation-support", "citation_support", True, ratio, lambda r: r["citation_support"]["rate"],
        "no answered slot cited anything",
        "exit 4 when the share of citations supporting their answer is below this (0 to 1)"),
)


def check_bars(report: dict[str, Any], given: dict[str, float | None]) -> list[dict[str, Any]]:
    """One entry per bar given (by option, e.g. ``{"--min-coverage": 0.9}``), in ``BARS`` order."""
    checked = []
    for bar in BARS:
        limit = given.get(bar.option)
        if limit is None:
            continue
        value = bar.read(report)
        if value is None:
            outcome = BarOutcome.NOT_APPLICABLE
        elif value >= limit if bar.lowest else value <= limit:
            outcome = BarOutcome.MET
        else:
            outcome = BarOutcome.MISSED
        checked.append(
            {"option": bar.option, "metric": bar.metric, "bar": limit, "value": value, "outcome": outcome.value}
        )
    return checked


def describe(checked: dict[str, Any]) -> str:
    """The line for a bar that was not met: ``below the bar: …`` or ``not applicable: …``."""
    bar = next(b for b in BARS if b.option == checked["option"])
    head = f"{checked['option']} {checked['bar']}"
    if checked["outcome"] == BarOutcome.NOT_APPLICABLE:
        return f"not applicable: {head} ({bar.metric} has nothing to count: {bar.empty})"
    return f"below the bar: {head} ({bar.metric} {checked['value']})"
