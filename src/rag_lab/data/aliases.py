"""Alias files: how people ask for a field, written as ``phrase<TAB>field<TAB>field…`` lines.

Two tables use this one format: the general table shipped with rag_lab
(``rag_lab/data/aliases.tsv``, written by us, not derived from any data set) and a corpus owner's own
``ROOT/aliases.tsv``. Format (UTF-8):

* one alias per line: the question phrase, a TAB, then one or more field names separated
  by TABs (``多少岁<TAB>年龄``; ``多少钱<TAB>价格<TAB>票价<TAB>定价``);
* blank lines and lines starting with ``#`` are ignored;
* a phrase is 1–20 code points, a field 1–60; neither may hold a TAB, a control
  character or a full-width colon, nor begin or end with white space;
* a phrase may appear on one line only (say every field it may mean on that line).

Any violation makes the whole file invalid with a line-numbered message: a half-read
alias table would answer some questions with a rule the owner did not write.
"""

from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

ALIAS_FILE = "aliases.tsv"
MAX_PHRASE = 20
MAX_FIELD = 60


@dataclass(frozen=True)
class Alias:
    """``phrase`` asks for one of ``fields`` (in the file's order); ``line`` is 1-based."""

    phrase: str
    fields: tuple[str, ...]
    line: int


class AliasFileError(ValueError):
    """An alias file breaks the format; the message names the line and how to fix it."""


def _problem(text: str, what: str, limit: int) -> str | None:
    if not text:
        return f"empty {what}"
    if len(text) > limit:
        return f"{what} {text!r} is {len(text)} code points long; the limit is {limit}"
    if text != text.strip():
        return f"{what} {text!r} begins or ends with white space"
    if "：" in text:
        return f"{what} {text!r} holds a full-width colon"
    for char in text:
        if unicodedata.category(char) == "Cc":
            return f"{what} {text!r} holds control character U+{ord(char):04X}"
    return None


def parse_aliases(data: bytes, origin: str) -> list[Alias]:
    """Every alias of one file, in line order; raises :class:`AliasFileError` on any problem."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AliasFileError(f"{origin}: invalid UTF-8 at byte offset {exc.start}; save it as UTF-8") from None
    text = text.removeprefix("\ufeff")
    found: list[Alias] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.removesuffix("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) < 2:
            raise AliasFileError(
                f"{origin}: line {number}: no TAB; write the phrase, a TAB, then the field name(s), "
                "e.g. 多少岁<TAB>年龄"
            )
        phrase, fields = parts[0], parts[1:]
        problem = _problem(phrase, "phrase", MAX_PHRASE) or next(
            (p for p in (_problem(f, "field", MAX_FIELD) for f in fields) if p), None
        )
        if problem is not None:
            raise AliasFileError(f"{origin}: line {number}: {problem}")
        if phrase in seen:
            raise AliasFileError(
                f"{origin}: line {number}: phrase {phrase!r} is already on line {seen[phrase]}; "
                "list every field it may mean on one line"
            )
        if len(set(fields)) != len(fields):
            raise AliasFileError(f"{origin}: line {number}: a field is listed twice for {phrase!r}")
        seen[phrase] = number
        found.append(Alias(phrase, tuple(fields), number))
    return found


@functools.cache
def general_aliases() -> tuple[Alias, ...]:
    """The general table shipped with rag_lab (``aliases.tsv`` beside this module)."""
    data = resources.files("rag_lab.data").joinpath("aliases.tsv").read_bytes()
    return tuple(parse_aliases(data, "rag_lab/data/aliases.tsv"))


def read_alias_file(root: Path) -> tuple[list[Alias], str | None]:
    """``ROOT/aliases.tsv``: (aliases, None), ([], None) when absent, or ([], the problem)."""
    try:
        data = (root / ALIAS_FILE).read_bytes()
    except FileNotFoundError:
        return [], None
    except OSError as exc:
        return [], f"cannot read: {exc.strerror}"
    try:
        return parse_aliases(data, ALIAS_FILE), None
    except AliasFileError as exc:
        return [], str(exc).removeprefix(f"{ALIAS_FILE}: ")


__all__ = ["ALIAS_FILE", "Alias", "AliasFileError", "general_aliases", "parse_aliases", "read_alias_file"]
