"""Tiny benchmark slices, one overlap pattern each, for regression tests.

    from benchmarks.realistic.slices import small_slice
    summary = small_slice(tmp_path, "nested_subject", seed=0)

writes ``tmp_path/corpus/documents/**/*.md``, ``tmp_path/questions.jsonl`` and
``tmp_path/subjects.jsonl`` in the same format as ``generate.py``, with at most 30
subjects, built with the same machinery (fields, values, templates, ambiguity check)
but hand-picked names. Same seed, same bytes. ``PATTERNS`` lists the slices.
"""

from __future__ import annotations

import sys
from pathlib import Path
from random import Random
from typing import Any

if __package__:
    from . import _vocab as V
    from ._names import NameFilter
    from ._questions import make_questions
    from ._world import SubjectSpec, build_world
    from .generate import write
else:  # loaded from its file path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _vocab as V  # type: ignore[no-redef,import-not-found]
    from _names import NameFilter  # type: ignore[no-redef,import-not-found]
    from _questions import make_questions  # type: ignore[no-redef,import-not-found]
    from _world import SubjectSpec, build_world  # type: ignore[no-redef,import-not-found]
    from generate import write  # type: ignore[no-redef,import-not-found]

MAX_SUBJECTS = 30

_COURSE = ("学分", "总学分", "上课时间", "时间", "负责人")
_PLACE = ("开放时间", "时间", "地址")
_PRODUCT = ("价格", "参考价格")
_PERSON = ("职称", "办公电话", "电话")
_NESTED_COURSES = "计算机应用基础 计算机应用 计算机 应用基础 应用 基础 高等数学 数学 高等数学（上）"
_NESTED_PLACES = "北京 北京大学 北京大学图书馆 北京大学图书馆借阅台 借阅台"
_NESTED_PRODUCTS = "星河 星河手机 星河手机X3 星河手机X3Pro"
_PEOPLE = "王强 王强强 王强伟 张伟 张伟伟 张伟杰 李娜 李娜娜 李娜婷 欧阳帆 欧阳帆帆 陈杰 陈杰超"


def _specs(kind: str, names: str, must: tuple[str, ...], **extra: Any) -> list[SubjectSpec]:
    return [
        SubjectSpec(n, "topic" if n in V.TOPICS else kind, must_fields=must, **extra)
        for n in names.split()
    ]


def _nested_field_specs() -> list[SubjectSpec]:
    return [
        SubjectSpec(
            "线性代数",
            "course",
            must_fields=("学分", "总学分", "时间", "上课时间", "地点", "上课地点"),
        ),
        SubjectSpec("概率论基础", "course", must_fields=("学时", "总学时", "考试时间", "时间")),
        SubjectSpec(
            "上海博物馆",
            "place",
            must_fields=("时间", "开放时间", "价格", "门票价格", "面积", "建筑面积"),
        ),
        SubjectSpec("杭州植物园", "place", must_fields=("人口", "常住人口", "电话", "服务电话")),
        SubjectSpec(
            "围城往事",
            "book",
            must_fields=("时间", "出版时间", "作者", "第一作者", "编辑", "责任编辑"),
        ),
        SubjectSpec(
            "蓝鲸手表",
            "product",
            must_fields=("容量", "电池容量", "功率", "额定功率", "颜色", "外观颜色"),
        ),
        SubjectSpec(
            "周晓梅",
            "person",
            must_fields=("学历", "最高学历", "导师", "博士导师", "电话", "办公电话"),
        ),
    ]


def _slice_specs(pattern: str) -> tuple[list[SubjectSpec], list[tuple[str, str, int]]]:
    if pattern == "nested_subject":
        specs = (
            _specs("course", _NESTED_COURSES, _COURSE)
            + _specs("place", _NESTED_PLACES, _PLACE)
            + _specs("product", _NESTED_PRODUCTS, _PRODUCT)
        )
        return specs, [("answerable", "nested_subject", 40)]
    if pattern == "prefix_person":
        return _specs("person", _PEOPLE, _PERSON), [("answerable", "prefix_person", 30)]
    if pattern == "nested_field":
        return _nested_field_specs(), [("answerable", "nested_field", 30)]
    if pattern == "common_word_subject":
        specs = (
            _specs("topic", "应用 基础 中国 学习", V.REQUIRED_FIELDS["topic"])
            + _specs(
                "course",
                "中国历史 学习方法 应用数学 基础化学 计算机应用基础 中国文学",
                ("负责人", "学分"),
            )
            + _specs("place", "中国银行 北京", ("负责人", "地址"))
        )
        return specs, [("answerable", "common_word_subject", 30)]
    if pattern == "conflict":
        specs = (
            _specs("course", "计算机应用 高等数学 数学", _COURSE[:2], n_docs=3, n_conflicts=2)
            + _specs("place", "北京大学图书馆 借阅台", _PLACE[:2], n_docs=2, n_conflicts=2)
            + _specs("person", "王强 王强强", _PERSON[:2], n_docs=4, n_conflicts=1)
            + _specs("course", "计算机 应用基础 高等数学（上）", _COURSE[:2], n_docs=3)
            + _specs("place", "北京大学", _PLACE[:2], n_docs=2)
        )
        return specs, [("conflict", "conflict", 12), ("answerable", "agreeing_documents", 10)]
    if pattern == "multi_subject":
        specs = (
            _specs("course", _NESTED_COURSES, _COURSE[:3])
            + _specs("person", "王强 王强强 张伟 张伟伟", _PERSON[:2])
            + _specs("product", _NESTED_PRODUCTS, _PRODUCT)
        )
        return specs, [("multi_subject", "multi_subject", 30)]
    if pattern == "multi_field":
        return _nested_field_specs(), [("multi_field", "multi_field", 30)]
    if pattern == "field_missing":
        specs = (
            _specs("course", _NESTED_COURSES, ("学分",))
            + _specs("place", _NESTED_PLACES, ("时间",), exclude_fields=("开放时间",))
            + _specs("person", "王强 王强强 张伟", ("电话",), exclude_fields=("办公电话",))
            + _nested_field_specs()[:3]
        )
        return specs, [("field_missing", "field_missing", 25)]
    if pattern == "unknown_subject":
        specs = _specs("person", _PEOPLE, _PERSON) + _specs("place", _NESTED_PLACES, _PLACE)
        return specs, [("unknown_subject", "unknown_subject", 20)]
    raise ValueError(f"unknown pattern {pattern!r}; expected one of {', '.join(PATTERNS)}")


PATTERNS = (
    "nested_subject",
    "prefix_person",
    "nested_field",
    "common_word_subject",
    "conflict",
    "multi_subject",
    "multi_field",
    "field_missing",
    "unknown_subject",
)


def build_slice(pattern: str, seed: int = 0) -> tuple[Any, list[dict[str, Any]]]:
    specs, plan = _slice_specs(pattern)
    assert len(specs) <= MAX_SUBJECTS, (pattern, len(specs))
    accept = NameFilter()
    rejected = [s.name for s in specs if not accept(s.name)]
    if rejected:
        raise AssertionError(f"slice {pattern}: names break the naming rules: {rejected}")
    rng = Random(seed)
    world = build_world(specs, rng)
    return world, make_questions(world, sum(c for *_, c in plan), rng, plan=plan, strict=False)


def small_slice(
    out_dir: str | Path, pattern: str, seed: int = 0, overwrite: bool = False
) -> dict[str, Any]:
    """Write a tiny corpus (<= 30 subjects) and its questions for one overlap pattern.

    Returns the summary of ``generate.write`` (counts, labels, sha256 of the outputs).
    """
    world, questions = build_slice(pattern, seed)
    summary = write(Path(out_dir), world, questions, overwrite=overwrite)
    summary.update(pattern=pattern, seed=seed)
    return summary
