"""--batch over Anthropic's Message Batches API, with the real SDK over a mock transport."""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from coderefine.errors import EXIT_PROVIDER, ModelError, ProviderUnavailableError, UsageError
from coderefine.models.anthropic import AnthropicModel
from coderefine.models.base import Block, Message, ModelReply, ModelRequest
from coderefine.models.batch import BatchRun, custom_id
from coderefine.models.batch_state import BatchStore
from coderefine.models.scripted import ScriptedModel
from tests.fake_api import text_message
from tests.fake_batches import FakeAnthropicBatches

ENV = {"ANTHROPIC_API_KEY": "sk-ant-test"}


def request(text: str) -> ModelRequest:
    return ModelRequest(
        role="critic", system=(Block("protocol", cache=True),), messages=(Message.user(text),), max_tokens=100
    )


def echo(cid: str, body: dict[str, Any]) -> dict[str, Any] | str:
    return text_message("answer to " + body["messages"][0]["content"][0]["text"])


def make(fake: FakeAnthropicBatches, state: Path, workers: int = 1, **kw: Any) -> tuple[Any, BatchRun]:
    run = BatchRun(
        BatchStore(state),
        workers=workers,
        gather=5.0,
        progress=kw.pop("progress", None),
        sleep=kw.pop("sleep", lambda s: None),
    )
    retries = kw.pop("retries", 2)
    inner = AnthropicModel("claude-sonnet-5-5", environ=ENV, http_client=fake.client(), max_retries=retries)
    return run.wrap(inner), run


def ask_all(model: Any, texts: list[str]) -> dict[str, ModelReply | BaseException]:
    out: dict[str, ModelReply | BaseException] = {}

    def one(text: str) -> None:
        try:
            out[text] = model.complete(request(text))
        except BaseException as exc:  # handed to the test
            out[text] = exc

    threads = [threading.Thread(target=one, args=(t,)) for t in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return out


def test_concurrent_calls_share_one_batch_polled_until_it_ends(tmp_path: Path) -> None:
    fake = FakeAnthropicBatches(echo, polls=3)
    progress = io.StringIO()
    model, _ = make(fake, tmp_path / "batches.json", workers=3, progress=progress)
    replies = ask_all(model, ["a", "b", "c"])
    assert len(fake.created) == 1 and len(fake.created[0]) == 3
    for text in "abc":
        reply = replies[text]
        assert isinstance(reply, ModelReply)
        assert reply.text == f"answer to {text}" and reply.batch
    # Three in progress, then ended, then once more by the SDK's results() for the results URL.
    assert fake.status_calls["msgbatch_0"] == 5
    # The request sent is the one a direct call sends; its custom_id is a hash of it.
    cid, params = fake.created[0][0]
    assert params["model"] == "claude-sonnet-5-5" and cid == custom_id(params)
    assert "msgbatch_0" in progress.getvalue() and "0/3 requests done" in progress.getvalue()
    assert BatchStore(tmp_path / "batches.json").batch_ids() == []  # all delivered


def test_identical_concurrent_requests_are_sent_once(tmp_path: Path) -> None:
    fake = FakeAnthropicBatches(echo, polls=0)
    model, _ = make(fake, tmp_path / "b.json", workers=2)
    out: list[ModelReply] = []
    threads = [threading.Thread(target=lambda: out.append(model.complete(request("same")))) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert [r.text for r in out] == ["answer to same"] * 2
    assert len(fake.created[0]) == 1


@pytest.mark.parametrize("state", ["expired", "canceled"])
def test_an_expired_or_canceled_batch_is_sent_once_more(tmp_path: Path, state: str) -> None:
    fake = FakeAnthropicBatches(echo, polls=1, batch_state=state)
    model, _ = make(fake, tmp_path / "b.json", workers=2)
    replies = ask_all(model, ["a", "b"])
    assert len(fake.created) == 2 and len(fake.created[1]) == 2
    assert [replies[t].text for t in "ab"] == ["answer to a", "answer to b"]  # type: ignore[union-attr]


def test_a_partly_failed_batch_resends_only_the_failed_requests(tmp_path: Path) -> None:
    fake = FakeAnthropicBatches(echo, polls=0)

    def answer(cid: str, body: dict[str, Any]) -> dict[str, Any] | str:
        text = body["messages"][0]["content"][0]["text"]
        if text == "b" and len(fake.created) == 1:
            return "overloaded_error"
        if text == "c":
            return "invalid_request_error"  # a second try cannot mend it
        return echo(cid, body)

    fake.answer = answer
    model, _ = make(fake, tmp_path / "b.json", workers=3)
    replies = ask_all(model, ["a", "b", "c"])
    assert len(fake.created) == 2
    assert [body["messages"][0]["content"][0]["text"] for _, body in fake.created[1]] == ["b"]
    assert replies["a"].text == "answer to a"  # type: ignore[union-attr]
    assert replies["b"].text == "answer to b"  # type: ignore[union-attr]
    error = replies["c"]
    assert isinstance(error, ModelError) and not isinstance(error, ProviderUnavailableError)
    assert "invalid_request_error" in str(error)


def test_a_request_that_fails_twice_is_provider_unavailable(tmp_path: Path) -> None:
    fake = FakeAnthropicBatches(lambda cid, body: "expired", polls=0)
    model, _ = make(fake, tmp_path / "b.json")
    with pytest.raises(ProviderUnavailableError, match="no answer after a second try") as caught:
        model.complete(request("a"))
    assert caught.value.exit_code == EXIT_PROVIDER
    assert len(fake.created) == 2


def test_a_few_failed_polls_are_waited_out_and_many_end_the_run(tmp_path: Path) -> None:
    fake = FakeAnthropicBatches(echo, polls=1)
    fake.overloaded_polls = 3
    model, _ = make(fake, tmp_path / "b.json", retries=0)
    assert model.complete(request("a")).text == "answer to a"
    fake.overloaded_polls = 99
    with pytest.raises(ProviderUnavailableError, match="run the same command again") as caught:
        model.complete(request("b"))
    assert caught.value.exit_code == EXIT_PROVIDER
    assert BatchStore(tmp_path / "b.json").batch_ids() == ["msgbatch_1"]  # kept for the rerun


def test_when_the_second_try_cannot_be_sent_the_answers_in_hand_are_kept(tmp_path: Path) -> None:
    fake = FakeAnthropicBatches(echo, polls=0)
    fake.answer = lambda cid, body: (
        "api_error" if body["messages"][0]["content"][0]["text"] == "b" else echo(cid, body)
    )
    fake.max_batches = 1
    model, _ = make(fake, tmp_path / "b.json", workers=2, retries=0)
    replies = ask_all(model, ["a", "b"])
    assert replies["a"].text == "answer to a"  # type: ignore[union-attr]
    assert isinstance(replies["b"], ProviderUnavailableError) and "second try" in str(replies["b"])


class Interrupted(BaseException):
    pass


def test_an_interrupted_wait_resumes_the_stored_batch(tmp_path: Path) -> None:
    fake = FakeAnthropicBatches(echo, polls=3)
    state = tmp_path / "batches.json"

    def interrupt(seconds: float) -> None:
        raise Interrupted

    first, _ = make(fake, state, sleep=interrupt)
    with pytest.raises(Interrupted):
        first.complete(request("a"))
    stored = json.loads(state.read_text())["batches"]
    assert [b["id"] for b in stored] == ["msgbatch_0"] and stored[0]["model"] == "claude-sonnet-5-5"
    # A new process: a new store, run and model over the same state file.
    again, _ = make(fake, state)
    assert again.complete(request("a")).text == "answer to a"
    assert len(fake.created) == 1  # nothing paid twice
    assert BatchStore(state).batch_ids() == []


def test_a_stored_batch_the_api_no_longer_knows_is_sent_again(tmp_path: Path) -> None:
    state = tmp_path / "batches.json"
    fake = FakeAnthropicBatches(echo, polls=0)
    inner = AnthropicModel("claude-sonnet-5-5", environ=ENV, http_client=fake.client())
    BatchStore(state).add("claude-sonnet-5-5", "msgbatch_7", [custom_id(inner.params(request("a")))])
    model, _ = make(fake, state)
    assert model.complete(request("a")).text == "answer to a"
    assert len(fake.created) == 1 and BatchStore(state).batch_ids() == []


def test_a_model_without_a_batch_api_is_a_usage_error(tmp_path: Path) -> None:
    run = BatchRun(BatchStore(tmp_path / "b.json"))
    with pytest.raises(UsageError, match="no batch API"):
        run.wrap(ScriptedModel([]))
    vertex = AnthropicModel("claude-x", environ={"CLOUD_ML_REGION": "us-east5"}, platform="vertex")
    with pytest.raises(UsageError, match="--batch"):
        run.wrap(vertex)


def test_a_refine_through_the_factory_is_billed_at_half_price(make_repo: Any, tmp_path: Path) -> None:
    import coderefine
    from coderefine.models.factory import make_role_model
    from coderefine.models.prices import cost_of
    from tests.conftest import SMALL_PROJECT, write_files
    from tests.fake_api import tool_message, usage
    from tests.refiner.test_loop import BUGGY, FIX, PASS, revise

    root = make_repo(SMALL_PROJECT)
    write_files(root, {"pkg/mod.py": BUGGY})
    settings = coderefine.load_settings(root, environ={}, tests=False, model="claude-sonnet-5-5")
    critiques = [revise(), PASS]

    def answer(cid: str, body: dict[str, Any]) -> dict[str, Any] | str:
        if body.get("tool_choice", {}).get("type") == "tool":
            # Answered once per custom_id: the status polls ask again, so the script is keyed by request.
            if cid not in answers:
                answers[cid] = critiques.pop(0)
            return tool_message(answers[cid], usage(1000, 100))
        return text_message(FIX, usage(1000, 100))

    answers: dict[str, Any] = {}
    fake = FakeAnthropicBatches(answer, polls=1)
    run = BatchRun(BatchStore(tmp_path / "batches.json"), sleep=lambda s: None)
    model = make_role_model(settings, ENV, http_client=fake.client(), batch=run)
    outcome = coderefine.refine(["pkg/mod.py"], root=root, model=model, settings=settings, write=True)
    assert "return a + b" in (root / "pkg/mod.py").read_text()
    assert len(fake.created) == 3  # critic, reviser, critic: one batch each (one worker)
    full = cost_of("claude-sonnet-5-5", outcome.result.usage["critic"], settings.prices)
    charges = {c.role: c for c in outcome.result.charges}
    assert charges["critic"].model == "claude-sonnet-5-5 (batch)"
    assert charges["critic"].cost == pytest.approx(full / 2)
    assert outcome.result.cost == pytest.approx(sum(c.cost for c in outcome.result.charges))
