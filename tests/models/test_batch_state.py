"""The stored batch ids: found by model and custom_id, dropped once delivered or too old; a bad file is empty."""

from pathlib import Path

from coderefine.models.batch_state import KEEP_SECONDS, BatchStore, state_path


def test_find_deliver_and_drop(tmp_path: Path) -> None:
    store = BatchStore(tmp_path / "s" / "batches.json")
    store.add("claude-x", "b1", ["r1", "r2"])
    assert store.find("claude-x", "r1") == "b1"
    assert store.find("openai:gpt-5", "r1") is None  # another model's batch is not this request's
    store.deliver("b1", ["r1"])
    assert store.find("claude-x", "r1") is None and store.find("claude-x", "r2") == "b1"
    store.deliver("b1", ["r2"])
    assert store.batch_ids() == []


def test_old_entries_are_dropped_and_a_damaged_file_holds_nothing(tmp_path: Path) -> None:
    now = [1_000_000.0]
    store = BatchStore(tmp_path / "batches.json", clock=lambda: now[0])
    store.add("m", "old", ["r"])
    now[0] += KEEP_SECONDS + 1
    store.add("m", "new", ["r"])
    assert store.batch_ids() == ["new"]
    (tmp_path / "batches.json").write_text("{not json")
    assert store.find("m", "r") is None and store.batch_ids() == []


def test_state_lives_beside_the_journal(tmp_path: Path) -> None:
    assert state_path(tmp_path, tmp_path / ".git") == tmp_path / ".git" / "coderefine" / "batches.json"
    assert state_path(tmp_path, None) == tmp_path / ".coderefine" / "batches.json"
