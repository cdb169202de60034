import json
from pathlib import Path

import pytest

from coderefine.errors import ReplayError
from coderefine.models.base import Message, ModelRequest
from coderefine.models.replay import RecordingModel, ReplayModel
from coderefine.models.scripted import ScriptedModel


def req(role: str, text: str) -> ModelRequest:
    return ModelRequest(role=role, system=(), messages=(Message.user(text),), max_tokens=100)  # type: ignore[arg-type]


def test_record_then_replay_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    recorder = RecordingModel(ScriptedModel([{"verdict": "pass"}, "edit blocks"]), path)
    first = recorder.complete(req("critic", "review this"))
    second = recorder.complete(req("reviser", "revise this"))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["role"] for line in lines] == ["critic", "reviser"]
    assert lines[0]["request"]["messages"][0]["blocks"][0]["text"] == "review this"
    replay = ReplayModel(path)
    assert replay.complete(req("critic", "review this")).tool_input == first.tool_input
    assert replay.complete(req("reviser", "revise this")).text == second.text
    assert replay.remaining() == 0


def test_replay_prefers_the_same_request_then_the_same_role(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    recorder = RecordingModel(ScriptedModel(["one", "two"]), path)
    recorder.complete(req("reviser", "first"))
    recorder.complete(req("reviser", "second"))
    replay = ReplayModel(path)
    assert replay.complete(req("reviser", "second")).text == "two"
    assert replay.complete(req("reviser", "something else")).text == "one"
    with pytest.raises(ReplayError, match="no reviser reply left"):
        replay.complete(req("reviser", "third"))


def test_bad_replay_files(tmp_path: Path) -> None:
    with pytest.raises(ReplayError, match="cannot read"):
        ReplayModel(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"role": "critic"}\nnot json\n')
    with pytest.raises(ReplayError, match=r"bad\.jsonl:1"):
        ReplayModel(bad)


def test_scripted_model_records_history_and_runs_out() -> None:
    model = ScriptedModel([lambda request: f"saw {request.role}"])
    assert model.complete(req("author", "x")).text == "saw author"
    assert model.history[0].role == "author"
    with pytest.raises(ReplayError, match="no reply left"):
        model.complete(req("author", "y"))
