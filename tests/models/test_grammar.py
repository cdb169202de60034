"""The schema sent as a grammar: open arrays and free strings bounded, everything else as it was."""

from __future__ import annotations

from coderefine.models.grammar import bounded
from coderefine.refiner.critique import CRITIQUE_SCHEMA, MERGED_CRITIQUE_TOOL


def test_open_ends_are_bounded_and_choices_kept() -> None:
    schema = bounded(CRITIQUE_SCHEMA)
    assert schema["properties"]["summary"]["maxLength"] == 600
    assert schema["properties"]["verdict"] == CRITIQUE_SCHEMA["properties"]["verdict"]  # an enum
    issues = schema["properties"]["issues"]
    assert issues["maxItems"] == 8
    assert issues["items"]["properties"]["title"]["maxLength"] == 600
    assert issues["items"]["properties"]["line"] == {"type": "integer", "minimum": 1}
    assert issues["items"]["required"] == CRITIQUE_SCHEMA["properties"]["issues"]["items"]["required"]
    assert "maxItems" not in CRITIQUE_SCHEMA["properties"]["issues"]  # the original is not changed


def test_own_bounds_and_edit_blocks_are_left() -> None:
    assert bounded({"type": "array", "maxItems": 2, "items": {"type": "string"}}) == {
        "type": "array",
        "maxItems": 2,
        "items": {"type": "string", "maxLength": 600},
    }
    merged = bounded(MERGED_CRITIQUE_TOOL.input_schema)
    assert "maxLength" not in merged["properties"]["edits"]
