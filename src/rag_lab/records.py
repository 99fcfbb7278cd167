"""Value types shared by every stage: statuses, reasons, modalities, support types.

Evidence units, candidates and results cross the seed API as plain dicts (the
seeds pass dicts); the keys are documented here once.

Evidence unit (text)::

    evidence_id, source, sha256, span [start, end) in code points, line,
    text, subject, field, value, modality="text"

Evidence unit (image)::

    evidence_id, source, sha256, span=None, line=None, text (measured phrase),
    subject=None, field=None, value (= text), modality="image",
    color, size, shape, area, mean_color, bbox, width, height

Prose and table units (data/prose.py, data/tables.py) are text units with a ``kind``
(``sentence``, ``table_row``, ``table_cell``; absent means ``field_line``) and
``span`` reading exactly ``text``; see docs/corpus-format.md.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

Unit = dict[str, Any]
Candidate = dict[str, Any]
Result = dict[str, Any]


class Status(StrEnum):
    """What the user sees."""

    ANSWERED = "answered"
    PARTIAL = "partial"
    REFUSED = "refused"
    NEEDS_CLARIFICATION = "needs_clarification"


class Reason(StrEnum):
    """The engineering diagnosis behind a non-answer (or a partial answer)."""

    INDEX_STALE = "index_stale"
    SOURCE_VERIFICATION_FAILED = "source_verification_failed"
    CONFLICTING_EVIDENCE = "conflicting_evidence"
    NO_SUPPORTING_EVIDENCE = "no_supporting_evidence"
    EVIDENCE_NOT_RETRIEVED = "evidence_not_retrieved"
    EXCLUDED_BY_BUDGET = "excluded_by_budget"
    UNSUPPORTED_ATTRIBUTE = "unsupported_attribute"
    RESERVED_FIELD = "reserved_field"
    SUBJECT_WITHOUT_FIELD = "subject_without_field"
    FIELD_WITHOUT_SUBJECT = "field_without_subject"
    AMBIGUOUS_SUBJECT = "ambiguous_subject"
    AMBIGUOUS_FIELD = "ambiguous_field"
    PARTIAL_SUPPORT = "partial_support"
    VALIDITY_UNREADABLE = "validity_unreadable"
    INSUFFICIENT_EVIDENCE = "insufficient_evidence"
    UNSUPPORTED_CLAIM = "unsupported_claim"


class Modality(StrEnum):
    TEXT = "text"
    IMAGE = "image"


class SupportType(StrEnum):
    VERBATIM_LINE = "verbatim_line"
    REMEASURED_PIXELS = "remeasured_pixels"
    VERBATIM_SENTENCE = "verbatim_sentence"
    VERBATIM_CELL = "verbatim_cell"


SUPPORT_SCOPE = "complete_current_subject_field_source_set"
VISIBLE_SUPPORT_SCOPE = "complete_current_visible_subject_field_source_set"
IMAGE_SUPPORT_SCOPE = "complete_current_image_attribute_set"
PROSE_SUPPORT_SCOPE = "retrieved_sentences_passing_support_check"
#: a prose answer over an index: also its conflict audit (lexical top 50, retrieval/prose_audit.py)
PROSE_AUDIT_SUPPORT_SCOPE = "retrieved_and_lexical_top_50_sentences_passing_support_check"

#: Fields kept in the index as data but never returned as an answer value.
DEFAULT_RESERVED_FIELDS: frozenset[str] = frozenset({"原文", "性质", "版本说明", "权限"})
SUBJECT_FIELD = "主题"
FULLWIDTH_COLON = "\uff1a"
