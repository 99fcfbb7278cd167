"""The packages' lazy names (rag_lab/_lazy.py): imported on first use, each once, and only then."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import rag_lab
import rag_lab.evaluation


def _fresh(code: str) -> dict[str, object]:
    """Run ``code`` in a new interpreter (nothing imported yet) and return what it printed as JSON."""
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return json.loads(done.stdout)


def test_importing_the_packages_loads_no_pipeline_module_until_a_name_is_used() -> None:
    seen = _fresh(
        "import json, sys\n"
        "import rag_lab, rag_lab.evaluation\n"
        "before = sorted(m for m in ('rag_lab.retrieval', 'rag_lab.evaluation.run') if m in sys.modules)\n"
        "rag_lab.query_once; rag_lab.evaluation.evaluate\n"
        "after = sorted(m for m in ('rag_lab.retrieval', 'rag_lab.evaluation.run') if m in sys.modules)\n"
        "print(json.dumps({'before': before, 'after': after}))\n"
    )
    assert seen == {"before": [], "after": ["rag_lab.evaluation.run", "rag_lab.retrieval"]}


def test_a_lazy_name_is_the_module_s_own_object_and_is_then_set_on_the_package() -> None:
    from rag_lab.evaluation.run import evaluate
    from rag_lab.retrieval import query_once

    assert rag_lab.query_once is query_once
    assert rag_lab.evaluation.evaluate is evaluate
    assert vars(rag_lab)["query_once"] is query_once  # later lookups do not reach __getattr__
    assert {"query_once", "Index", "answer"} <= set(dir(rag_lab))
    assert {"evaluate", "render_report"} <= set(dir(rag_lab.evaluation))


def test_a_subpackage_is_reached_as_an_attribute_and_an_unknown_name_is_an_attribute_error() -> None:
    import rag_lab.index

    assert vars(rag_lab)["__getattr__"]("index") is rag_lab.index  # what `rag_lab.index` finds
    with pytest.raises(AttributeError, match="module 'rag_lab' has no attribute 'no_such_name'"):
        vars(rag_lab)["__getattr__"]("no_such_name")
    with pytest.raises(AttributeError, match="module 'rag_lab.evaluation' has no attribute '_private'"):
        vars(rag_lab.evaluation)["__getattr__"]("_private")
    assert not hasattr(rag_lab.evaluation, "no_such_module")
