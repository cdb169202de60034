"""Counts that say what they mean: nouns that agree, kinds apart from shapes, and why a suite is short."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from coderefine.bench.counts import Shortfall, by_kind, plural, shapes, shortfall_message


def of(*pairs: tuple[str, str]) -> list[Any]:
    return [SimpleNamespace(kind=kind, shape=shape) for kind, shape in pairs]


def test_plural() -> None:
    assert (plural(1, "task"), plural(0, "task"), plural(2, "task")) == ("1 task", "0 tasks", "2 tasks")
    assert plural(3, "child", "children") == "3 children"


def test_a_suite_is_counted_by_kind_and_its_shapes_on_their_own() -> None:
    tasks = of(
        ("bug", "single"),
        ("bug", "single"),
        ("bug", "multi"),
        ("feature", "feature"),
        ("feature-tests", "feature-tests"),
        ("clean", "clean"),
        ("review", "rename+extract"),
        ("review-clean", "rename+extract"),
    )
    # Review tasks are not counted as their rewrites' names (they were, as "rename").
    assert by_kind(tasks) == "8 tasks: 3 bug, 1 feature, 1 feature-tests, 1 clean, 1 review, 1 review-clean"
    assert shapes(tasks) == "bug: 1 multi, 2 single; review: 1 rename+extract"
    release = of(("release", "one-file"))
    assert (by_kind(release), shapes(release)) == ("1 task: 1 release", "release: 1 one-file")
    assert (by_kind([]), shapes(of(("clean", "clean")))) == ("0 tasks", "")


def test_a_shortfall_says_why() -> None:
    short = (
        Shortfall("bug", 25, 16, "not enough mutable code: 40 mutation sites on lines the tests run"),
        Shortfall("feature", 7, 7, ""),
    )
    assert shortfall_message("lib", 32, 23, short) == (
        "lib: 23 of the 32 bug and feature tasks asked for (--tasks): 16 of 25 bug (not enough mutable "
        "code: 40 mutation sites on lines the tests run)"
    )
    assert shortfall_message("lib", 30, 30, short) == ""
