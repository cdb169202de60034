"""make-suite NAME --released-after DATE: every pair tried, and a table of what each gave."""

from __future__ import annotations

import pytest

from coderefine.bench.pairs import SweepInterrupted, table, try_pairs
from coderefine.errors import UsageError


def test_every_pair_is_tried_and_the_table_says_why_one_gave_none() -> None:
    def build(old: str, new: str) -> int:
        if new == "1.2":
            raise UsageError(f"lib=={old} -> {new}: only docs, tests or packaging changed | see")
        return {"1.1": 3, "1.3": 0}[new]

    results = try_pairs("lib", [("1.0", "1.1"), ("1.1", "1.2"), ("1.2", "1.3")], build)
    assert [(r.new, r.tasks) for r in results] == [("1.1", 3), ("1.2", 0), ("1.3", 0)]
    assert results[1].reason == "only docs, tests or packaging changed | see"
    text = table("lib", results)
    assert "| lib 1.0 -> 1.1 | 3 |  |" in text
    assert "| lib 1.1 -> 1.2 | 0 | only docs, tests or packaging changed \\| see |" in text
    assert text.endswith("lib: 1 of 3 pairs gave tasks (33%), 3 tasks\n")


def test_two_pairs_lacking_the_same_packages_stop_the_sweep_and_say_how_to_go_on() -> None:
    tried: list[str] = []
    said: list[str] = []

    def build(old: str, new: str) -> int:
        tried.append(new)
        raise UsageError(
            f"lib=={old} -> {new}: its test suite does not run green; try adding yaml to --requires"
        )

    pairs = [("1.0", "1.1"), ("1.1", "1.2"), ("1.2", "1.3"), ("1.3", "1.4")]
    results = try_pairs("lib", pairs, build, said.append)
    assert tried == ["1.1", "1.2"]
    assert (
        said[-1]
        == "stopped: two pairs in a row lack yaml for their tests; run again with --requires yaml (the 2 pairs left were not tried)"
    )
    assert [r.tried for r in results] == [True, True, False, False]
    assert table("lib", results).endswith("lib: 0 of 2 pairs gave tasks (0%), 0 tasks; 2 not tried\n")


def test_an_interrupted_sweep_keeps_the_rows_of_the_pairs_it_tried() -> None:
    def build(old: str, new: str) -> int:
        if new == "1.2":
            raise KeyboardInterrupt
        return 2

    with pytest.raises(SweepInterrupted) as stop:
        try_pairs("lib", [("1.0", "1.1"), ("1.1", "1.2"), ("1.2", "1.3")], build)
    assert [(r.new, r.tasks, r.reason) for r in stop.value.results] == [
        ("1.1", 2, ""),
        ("1.2", 0, "interrupted"),
        ("1.3", 0, "not tried: interrupted"),
    ]
    assert table("lib", stop.value.results).endswith(
        "lib: 1 of 1 pairs gave tasks (100%), 2 tasks; 2 not tried\n"
    )
