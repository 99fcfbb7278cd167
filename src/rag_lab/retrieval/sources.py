"""Where the decision reads names and same-key sets from: the index, or the files themselves.

:class:`EvidenceSource` is what answering needs of a corpus. :class:`Index` satisfies
it from the persisted same-key map; :class:`CorpusSource` builds the same answers by
reading the *current* originals under ROOT (used by ``answer()`` without an index, so
the low-level API never has the top-k hole).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol

from rag_lab import neural
from rag_lab.data import extract_corpus
from rag_lab.data.access import NOBODY, PUBLIC, Principal, visible_acls
from rag_lab.data.aliases import Alias, read_alias_file
from rag_lab.data.names import fold
from rag_lab.neural import Vectors
from rag_lab.records import DEFAULT_RESERVED_FIELDS, Modality, Unit


class EvidenceSource(Protocol):
    @property
    def reserved_fields(self) -> frozenset[str]: ...
    @property
    def principal(self) -> Principal | None: ...
    def may_see(self, unit: Unit) -> bool: ...
    def name_kinds(self, candidates: Iterable[str]) -> dict[str, set[str]]: ...
    def name_length_range(self) -> tuple[int, int]: ...
    def folded_name_kinds(self, candidates: Iterable[str]) -> dict[str, set[tuple[str, str]]]: ...
    def has_key(self, subject: str, field: str) -> bool: ...
    def fields_of(self, subject: str) -> list[str]: ...
    def subjects_with_field(self, field: str, limit: int) -> list[str]: ...
    def units_for_key(self, subject: str, field: str) -> list[Unit]: ...
    def images_matching(self, attrs: dict[str, str]) -> list[Unit]: ...
    # field matching (rag_lab/retrieval/fields.py)
    def user_aliases(self) -> list[Alias]: ...
    def field_vector_model(self) -> str | None: ...
    def field_vectors(self, names: Sequence[str]) -> dict[str, Vectors]: ...


class CorpusSource:
    """An :class:`EvidenceSource` read from the current files (whole-corpus scan)."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        reserved_fields: frozenset[str] | None = None,
        principal: Principal | None = None,
    ) -> None:
        self._reserved = reserved_fields or DEFAULT_RESERVED_FIELDS
        self._principal = principal
        self._aliases = read_alias_file(Path(root))[0]
        self._vectors: dict[str, Vectors] = {}
        self._folded: dict[str, set[tuple[str, str]]] | None = None
        records = extract_corpus(root)
        self._visible = set(visible_acls({r.acl for r in records}, principal))
        self._acl_of = {r.path: r.acl for r in records if r.error is None}
        units = sorted(
            (u for rec in records if rec.acl in self._visible for u in rec.units),
            key=lambda u: u["evidence_id"],
        )
        self._by_key: dict[tuple[str, str], list[Unit]] = {}
        self._names: dict[str, set[str]] = {}
        self._images = [u for u in units if u["modality"] == Modality.IMAGE]
        self._by_id = {u["evidence_id"]: u for u in units}
        for unit in units:
            if unit["modality"] != Modality.TEXT or unit["subject"] is None or unit["field"] is None:
                continue  # images, sentences and table rows have no (subject, field) key
            self._by_key.setdefault((unit["subject"], unit["field"]), []).append(unit)
            self._names.setdefault(unit["subject"], set()).add("subject")
            self._names.setdefault(unit["field"], set()).add("field")

    @property
    def reserved_fields(self) -> frozenset[str]:
        return self._reserved

    @property
    def principal(self) -> Principal | None:
        return self._principal

    def may_see(self, unit: Unit) -> bool:
        # Decided from the labels themselves, so a public unit of a file deleted since stays
        # visible and fails verification (rather than vanishing as if it never existed).
        acl = str(self._acl_of.get(str(unit.get("source")), unit.get("acl", PUBLIC)))
        return self._allowed(acl) and self._allowed(str(unit.get("acl", PUBLIC)))

    def _allowed(self, acl: str) -> bool:
        return acl != NOBODY if self._principal is None else self._principal.may_read(acl)

    def name_kinds(self, candidates: Iterable[str]) -> dict[str, set[str]]:
        return {c: set(self._names[c]) for c in set(candidates) if c in self._names}

    def folded_name_kinds(self, candidates: Iterable[str]) -> dict[str, set[tuple[str, str]]]:
        if self._folded is None:
            self._folded = {}
            for name, kinds in self._names.items():
                self._folded.setdefault(fold(name), set()).update((name, k) for k in kinds)
        return {c: set(self._folded[c]) for c in set(candidates) if c in self._folded}

    def name_length_range(self) -> tuple[int, int]:
        lengths = [n for name in self._names for n in {len(name), len(fold(name))}]
        return (min(lengths), max(lengths)) if lengths else (0, 0)

    def has_key(self, subject: str, field: str) -> bool:
        return (subject, field) in self._by_key

    def fields_of(self, subject: str) -> list[str]:
        return sorted({f for s, f in self._by_key if s == subject})

    def subjects_with_field(self, field: str, limit: int) -> list[str]:
        return sorted({s for s, f in self._by_key if f == field})[:limit]

    def units_for_key(self, subject: str, field: str) -> list[Unit]:
        return list(self._by_key.get((subject, field), []))

    def unit_by_evidence_id(self, evidence_id: str) -> Unit | None:
        return self._by_id.get(evidence_id)

    def images_matching(self, attrs: dict[str, str]) -> list[Unit]:
        return [u for u in self._images if all(u.get(k) == v for k, v in attrs.items())]

    def user_aliases(self) -> list[Alias]:
        return list(self._aliases)

    def field_vector_model(self) -> str | None:
        return neural.MODEL_NAME if neural.available() else None

    def field_vectors(self, names: Sequence[str]) -> dict[str, Vectors]:
        """Embedded on first use (no index to read them from), then kept for this source."""
        missing = sorted(set(names) - set(self._vectors))
        embedder = neural.load_embedder()
        if missing and embedder is not None:
            self._vectors.update(zip(missing, embedder.passages(missing), strict=True))
        return {n: self._vectors[n] for n in names if n in self._vectors}
