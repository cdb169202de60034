"""--batch over OpenAI's Batch API (a JSON-lines input file, output and error files), with the real SDK."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from coderefine.errors import ModelError, ProviderUnavailableError
from coderefine.models.base import Message, ModelReply, ModelRequest
from coderefine.models.batch import BatchRun
from coderefine.models.batch_state import BatchStore
from coderefine.models.openai_chat import OpenAIChatModel
from coderefine.models.providers import parse_spec
from coderefine.refiner.critique import CRITIQUE_TOOL
from tests.fake_batches import FakeOpenAIBatches
from tests.fake_openai import chat, chat_usage, tool_call

CRITIQUE = {"verdict": "pass", "summary": "ok", "issues": []}


def request(text: str, tool: bool = False) -> ModelRequest:
    return ModelRequest(
        role="critic",
        system=(),
        messages=(Message.user(text),),
        max_tokens=100,
        tool=CRITIQUE_TOOL if tool else None,
    )


def echo(cid: str, body: dict[str, Any]) -> dict[str, Any] | str:
    text = body["messages"][-1]["content"]
    if "tools" in body:
        return tool_call(CRITIQUE, use=chat_usage(1000, 50, cached=800))
    return chat(f"answer to {text}")


def make(fake: FakeOpenAIBatches, state: Path, workers: int = 1) -> Any:
    run = BatchRun(BatchStore(state), workers=workers, gather=5.0, sleep=lambda s: None)
    inner = OpenAIChatModel(
        parse_spec("openai:gpt-5-mini"),
        environ={"OPENAI_API_KEY": "sk-test"},
        timeout=30,
        http_client=fake.client(),
    )
    return run.wrap(inner)


def ask_all(model: Any, requests: dict[str, ModelRequest]) -> dict[str, ModelReply | BaseException]:
    out: dict[str, ModelReply | BaseException] = {}

    def one(key: str) -> None:
        try:
            out[key] = model.complete(requests[key])
        except BaseException as exc:  # handed to the test
            out[key] = exc

    threads = [threading.Thread(target=one, args=(k,)) for k in requests]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return out


def test_one_batch_file_answers_from_the_output_file(tmp_path: Path) -> None:
    fake = FakeOpenAIBatches(echo, polls=2)
    model = make(fake, tmp_path / "b.json", workers=2)
    replies = ask_all(model, {"plain": request("a"), "critic": request("b", tool=True)})
    assert len(fake.created) == 1 and len(fake.created[0]) == 2
    assert "POST /v1/files" in fake.paths and "POST /v1/batches" in fake.paths
    plain, critic = replies["plain"], replies["critic"]
    assert isinstance(plain, ModelReply) and plain.text == "answer to a" and plain.batch
    assert isinstance(critic, ModelReply) and critic.tool_input == CRITIQUE
    assert critic.usage.cache_read_tokens == 800 and critic.usage.input_tokens == 200
    # The body of each line is the chat completion a direct call sends.
    bodies = dict(fake.created[0])
    assert all(b["model"] == "gpt-5-mini" and "max_completion_tokens" in b for b in bodies.values())


def test_errors_from_the_error_file_and_error_statuses(tmp_path: Path) -> None:
    fake = FakeOpenAIBatches(echo, polls=0)

    def answer(cid: str, body: dict[str, Any]) -> dict[str, Any] | str:
        text = body["messages"][-1]["content"]
        if text == "b" and len(fake.created) == 1:
            return "status 500"  # in the output file, with its status: sent once more
        if text == "c" and len(fake.created) == 1:
            return "batch_expired"  # in the error file: sent once more
        if text == "d":
            return "status 400"  # refused: a second try cannot mend it
        return echo(cid, body)

    fake.answer = answer
    model = make(fake, tmp_path / "b.json", workers=4)
    replies = ask_all(model, {t: request(t) for t in "abcd"})
    assert len(fake.created) == 2 and sorted(b["messages"][-1]["content"] for _, b in fake.created[1]) == [
        "b",
        "c",
    ]
    assert [replies[t].text for t in "abc"] == ["answer to a", "answer to b", "answer to c"]  # type: ignore[union-attr]
    refused = replies["d"]
    assert isinstance(refused, ModelError) and not isinstance(refused, ProviderUnavailableError)
    assert BatchStore(tmp_path / "b.json").batch_ids() == []


def test_an_expired_batch_keeps_its_finished_answers(tmp_path: Path) -> None:
    fake = FakeOpenAIBatches(echo, polls=0, batch_state="expired")
    model = make(fake, tmp_path / "b.json", workers=2)
    replies = ask_all(model, {t: request(t) for t in "ab"})
    first = fake.created[0][0][1]["messages"][-1]["content"]
    assert len(fake.created) == 2 and [b["messages"][-1]["content"] for _, b in fake.created[1]] != [first]
    assert len(fake.created[1]) == 1
    assert sorted(r.text for r in replies.values()) == ["answer to a", "answer to b"]  # type: ignore[union-attr]


def test_a_batch_that_failed_validation_is_a_model_error(tmp_path: Path) -> None:
    fake = FakeOpenAIBatches(echo, polls=0, batch_state="failed")
    model = make(fake, tmp_path / "b.json")
    with pytest.raises(ModelError, match="bad line"):
        model.complete(request("a"))
    assert len(fake.created) == 1


def test_a_local_server_has_no_batch_api(tmp_path: Path) -> None:
    from coderefine.errors import UsageError

    inner = OpenAIChatModel(parse_spec("ollama:m"), environ={"OLLAMA_HOST": "http://127.0.0.1:1"}, timeout=5)
    with pytest.raises(UsageError, match="no batch API"):
        BatchRun(BatchStore(tmp_path / "b.json")).wrap(inner)
