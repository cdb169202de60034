import pytest

from coderefine.errors import (
    AuthError,
    ConnectionFailedError,
    MissingKeyError,
    ModelError,
    OverloadedError,
    RateLimitError,
)
from coderefine.models.anthropic import AnthropicModel
from coderefine.models.base import Block, Message, ModelRequest
from coderefine.refiner.critique import CRITIQUE_TOOL
from tests.fake_api import FakeAnthropic, api_error, text_message, tool_message, usage

ENV = {"ANTHROPIC_API_KEY": "sk-ant-test"}


def request(force: bool = True) -> ModelRequest:
    return ModelRequest(
        role="critic" if force else "reviser",
        system=(Block("protocol"), Block("the code", cache=True)),
        messages=(Message.user("the task"),),
        max_tokens=1000,
        tool=CRITIQUE_TOOL,
        force_tool=force,
    )


def model(fake: FakeAnthropic, retries: int = 2) -> AnthropicModel:
    return AnthropicModel("claude-sonnet-5-5", environ=ENV, max_retries=retries, http_client=fake.client())


def test_critic_request_shape_and_reply() -> None:
    fake = FakeAnthropic(
        [tool_message({"verdict": "pass", "summary": "ok", "issues": []}, usage(10, 5, 7, 3))]
    )
    reply = model(fake).complete(request())
    sent = fake.requests[0]
    assert sent["model"] == "claude-sonnet-5-5"
    assert sent["system"][1] == {"type": "text", "text": "the code", "cache_control": {"type": "ephemeral"}}
    assert "cache_control" not in sent["system"][0]
    assert sent["tool_choice"] == {"type": "tool", "name": "report_critique"}
    assert sent["tools"][0]["name"] == "report_critique"
    assert "sk-ant-test" in (fake.headers[0].get("x-api-key", "") + fake.headers[0].get("authorization", ""))
    assert reply.tool_input == {"verdict": "pass", "summary": "ok", "issues": []}
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (10, 5)
    assert (reply.usage.cache_write_tokens, reply.usage.cache_read_tokens) == (7, 3)


def test_reviser_lists_the_tool_but_does_not_use_it() -> None:
    fake = FakeAnthropic([text_message("edit blocks here")])
    reply = model(fake).complete(request(force=False))
    assert fake.requests[0]["tool_choice"] == {"type": "none"}
    assert fake.requests[0]["tools"][0]["name"] == "report_critique"
    assert reply.text == "edit blocks here" and reply.tool_input is None


def test_429_with_retry_after_is_retried() -> None:
    fake = FakeAnthropic([api_error(429, "rate_limit_error", {"retry-after-ms": "1"}), text_message("ok")])
    assert model(fake).complete(request(False)).text == "ok"
    assert len(fake.requests) == 2


def test_529_overloaded_is_retried_then_reported() -> None:
    overloaded = api_error(529, "overloaded_error", {"retry-after-ms": "1"})
    fake = FakeAnthropic([overloaded, overloaded, overloaded])
    with pytest.raises(OverloadedError, match="overloaded"):
        model(fake).complete(request())
    assert len(fake.requests) == 3


def test_persistent_429_is_a_rate_limit_error() -> None:
    limited = api_error(429, "rate_limit_error", {"retry-after-ms": "1"})
    fake = FakeAnthropic([limited, limited])
    with pytest.raises(RateLimitError, match="wait a minute"):
        model(fake, retries=1).complete(request())


@pytest.mark.parametrize(
    ("status", "kind", "error", "message"),
    [
        (401, "authentication_error", AuthError, "ANTHROPIC_API_KEY"),
        (403, "permission_error", AuthError, "--model"),
        (404, "not_found_error", ModelError, "does not know the model"),
        (400, "invalid_request_error", ModelError, "rejected the request"),
    ],
)
def test_errors_are_translated(status: int, kind: str, error: type[Exception], message: str) -> None:
    fake = FakeAnthropic([api_error(status, kind)])
    with pytest.raises(error, match=message):
        model(fake).complete(request())


def test_connection_failure() -> None:
    import httpx2

    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused")

    client = httpx2.Client(transport=httpx2.MockTransport(refuse))
    broken = AnthropicModel("claude-sonnet-5-5", environ=ENV, max_retries=0, http_client=client)
    with pytest.raises(ConnectionFailedError, match="ANTHROPIC_BASE_URL"):
        broken.complete(request())


def test_missing_key_says_what_to_do() -> None:
    with pytest.raises(MissingKeyError) as info:
        AnthropicModel("claude-sonnet-5-5", environ={})
    message = str(info.value)
    assert (
        "ANTHROPIC_API_KEY" in message and "ANTHROPIC_BASE_URL" in message and "coderefine check" in message
    )
    assert info.value.exit_code == 2


def test_base_url_alone_is_enough_for_a_local_server() -> None:
    local = AnthropicModel("local-model", environ={"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
    assert local.name == "local-model"


def test_critic_and_reviser_requests_share_the_cached_prefix_byte_for_byte() -> None:
    """Anthropic caches tools, then system, then messages; tool_choice invalidates only the messages.
    The reviser lists the critic's tool (choice "none") so that tools + system + code are one prefix."""
    import json

    from coderefine.models.anthropic import request_params
    from coderefine.refiner.critique import Critique, Issue
    from coderefine.refiner.prompting import PromptBuilder
    from coderefine.signals.base import Comparison, SourceStatus

    files = {"m.py": "def add(a, b):\n    return a - b\n"}
    clean = Comparison((), (), (), (SourceStatus("ruff", "ok"),))
    prompts = PromptBuilder(1000)
    critic = request_params("m", prompts.critic(files, intent="i", diff="", changed=[], comparison=clean))
    critique = Critique("revise", "s", (Issue("t", "error", "m.py", 2, 2, "return a - b", "use +"),))
    reviser = request_params("m", prompts.reviser(files, intent="i", critique=critique, comparison=clean))
    assert json.dumps(critic["tools"]) == json.dumps(reviser["tools"])
    assert json.dumps(critic["system"]) == json.dumps(reviser["system"])
    assert reviser["system"][-1]["cache_control"] == {"type": "ephemeral"}  # the prefix ends with the code
    assert (critic["tool_choice"]["type"], reviser["tool_choice"]["type"]) == ("tool", "none")
    assert critic["messages"] != reviser["messages"]
