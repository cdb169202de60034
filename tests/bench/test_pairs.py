"""make-suite NAME --released-after DATE: every pair tried, and a table of what each gave."""

from __future__ import annotations

from coderefine.bench.pairs import table, try_pairs
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
