"""Re-verifying citations independently of the answering code (hashlib + the pixel function).

A citation is *valid* when its path stays inside ROOT, the file's current SHA-256
equals the cited one, and the span still reads a ``字段：值`` line (text) or the image
re-measures to the cited bbox (image), or still reads non-empty text (a sentence, table row
or cell). It *supports* an answer when the cited line's value (or the image's phrase)
equals the answered value; a cited sentence supports a prose answer when it holds the
answer's typed value (``answer_span``), or is the answer.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from rag_lab.data.images import ImageMeasureError, measure_png


def recheck(root: Path, cite: dict[str, Any]) -> tuple[str | None, str | None]:
    """``(problem, cited_value)``: problem is None when the citation is valid."""
    source = cite.get("source")
    if not isinstance(source, str) or source.startswith("/") or ".." in source.split("/"):
        return f"bad path {source!r}", None
    path = (root / source).resolve()
    if not path.is_relative_to(root.resolve()):
        return f"{source} resolves outside ROOT", None
    try:
        data = path.read_bytes()
    except OSError:
        return f"{source} cannot be read", None
    if hashlib.sha256(data).hexdigest() != cite.get("sha256"):
        return f"{source} sha256 differs", None
    if cite.get("modality") == "image":
        try:
            measured = measure_png(data)
        except ImageMeasureError as exc:
            return f"{source} cannot be re-measured: {exc}", None
        if measured["bbox"] != cite.get("bbox"):
            return f"{source} bbox differs", None
        return None, str(measured["text"])
    start, end = cite.get("span") or (0, 0)
    line = data.decode("utf-8", errors="replace")[start:end].strip()
    if cite.get("kind") in ("sentence", "table_row", "table_cell"):  # prose and tables: the span is the text
        return (None, line) if line else (f"{source} span [{start}, {end}) reads nothing", None)
    if "：" not in line:
        return f"{source} span [{start}, {end}) does not read a field line", None
    return None, line.split("：", 1)[1]
