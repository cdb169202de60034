"""The openai SDK, for real, over a mock transport: OpenAI itself and the quirks of local servers."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from coderefine.errors import (
    AuthError,
    ConnectionFailedError,
    MissingKeyError,
    ModelError,
    OverloadedError,
    ProviderUnavailableError,
    RateLimitError,
)
from coderefine.models.base import Block, Message, ModelRequest
from coderefine.models.openai_chat import OpenAIChatModel
from coderefine.models.prices import cost_of
from coderefine.models.providers import parse_spec
from coderefine.refiner.critique import CRITIQUE_TOOL, CritiqueError, parse_critique
from tests.fake_openai import FakeOpenAI, chat, chat_usage, openai_error, tool_call

CRITIQUE = {"verdict": "pass", "summary": "ok", "issues": []}


def request(force: bool = True) -> ModelRequest:
    return ModelRequest(
        role="critic" if force else "reviser",
        system=(Block("protocol"), Block("the code", cache=True)),
        messages=(Message.user("the task"),),
        max_tokens=1000,
        tool=CRITIQUE_TOOL,
        force_tool=force,
    )


def model(
    fake: FakeOpenAI,
    spec: str = "openai:gpt-5-mini",
    environ: dict[str, str] | None = None,
    retries: int = 0,
    providers: dict[str, dict[str, object]] | None = None,
) -> OpenAIChatModel:
    env = {"OPENAI_API_KEY": "sk-test-openai"} if environ is None else environ
    return OpenAIChatModel(
        parse_spec(spec, providers), environ=env, timeout=30, max_retries=retries, http_client=fake.client()
    )


def test_openai_critic_is_a_forced_tool_call_and_cached_tokens_are_reported() -> None:
    fake = FakeOpenAI([tool_call(CRITIQUE, use=chat_usage(1000, 50, cached=800))])
    reply = model(fake).complete(request())
    sent = fake.requests[0]
    assert fake.urls[0] == "https://api.openai.com/v1/chat/completions"
    assert sent["model"] == "gpt-5-mini"
    assert sent["max_completion_tokens"] == 1000 and "max_tokens" not in sent
    assert sent["messages"][0] == {"role": "system", "content": "protocol\n\nthe code"}
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "report_critique"}}
    assert sent["tools"][0]["function"]["parameters"]["required"] == ["verdict", "summary", "issues"]
    assert fake.headers[0]["authorization"] == "Bearer sk-test-openai"
    assert reply.tool_input == CRITIQUE
    assert (reply.usage.input_tokens, reply.usage.cache_read_tokens, reply.usage.output_tokens) == (
        200,
        800,
        50,
    )
    assert reply.model == "openai:gpt-5-mini" and reply.stop_reason == "tool_use"
    # gpt-5-mini: $0.25 in, $2 out, cached input at a tenth
    assert cost_of(reply.model, reply.usage) == pytest.approx((200 * 0.25 + 800 * 0.025 + 50 * 2.0) / 1e6)


def test_openai_reviser_lists_the_tool_but_does_not_use_it() -> None:
    fake = FakeOpenAI([chat("edit blocks here")])
    reply = model(fake).complete(request(force=False))
    assert fake.requests[0]["tool_choice"] == "none"
    assert reply.text == "edit blocks here" and reply.tool_input is None


def test_ollama_gets_a_json_schema_and_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeOpenAI([chat('{"verdict": "revise", "summary": "s", "issues": []}')])
    reply = model(fake, "ollama:gemma3:270m", environ={"OLLAMA_HOST": "10.1.2.3:11434"}).complete(request())
    sent = fake.requests[0]
    assert fake.urls[0] == "http://10.1.2.3:11434/v1/chat/completions"
    assert sent["model"] == "gemma3:270m" and sent["max_tokens"] == 1000
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["schema"]["required"] == ["verdict", "summary", "issues"]
    assert "tools" not in sent
    assert "answer with its input as one JSON object" in sent["messages"][-1]["content"]
    assert reply.tool_input == {"verdict": "revise", "summary": "s", "issues": []}
    assert reply.model == "ollama:gemma3:270m" and cost_of(reply.model, reply.usage) == 0.0


def test_llamacpp_gets_json_mode_with_the_schema_and_its_default_url() -> None:
    fake = FakeOpenAI([chat('```json\n{"verdict": "pass", "summary": "s", "issues": []}\n```')])
    reply = model(fake, "llamacpp:gemma", environ={}).complete(request())
    assert fake.urls[0] == "http://localhost:8080/v1/chat/completions"
    assert fake.requests[0]["response_format"]["type"] == "json_object"
    assert fake.requests[0]["response_format"]["schema"]["type"] == "object"
    # The schema becomes the server's grammar, bounded so that a looping model still closes the JSON.
    issues = fake.requests[0]["response_format"]["schema"]["properties"]["issues"]
    assert issues["maxItems"] == 8 and issues["items"]["properties"]["evidence"]["maxLength"] == 600
    # No system message: Gemma's template in llama-cpp-python drops it, and the code under review with it.
    assert [m["role"] for m in fake.requests[0]["messages"]] == ["user"]
    assert fake.requests[0]["messages"][0]["content"].startswith("protocol\n\nthe code\n\nthe task")
    assert reply.tool_input == {"verdict": "pass", "summary": "s", "issues": []}


def test_the_reviser_of_a_json_provider_gets_no_response_format() -> None:
    fake = FakeOpenAI([chat("blocks")])
    model(fake, "vllm:qwen", environ={}).complete(request(force=False))
    assert "response_format" not in fake.requests[0] and "tools" not in fake.requests[0]


def test_reasoning_fields_and_think_tags_are_left_out_of_the_answer() -> None:
    answer = '{"verdict": "pass", "summary": "s", "issues": []}'
    fake = FakeOpenAI(
        [
            chat(answer, extra={"reasoning_content": "let me think {not json"}),
            chat("<think>hmm {bad}</think>\n" + answer),
        ]
    )
    vllm = model(fake, "vllm:deepseek-r1", environ={})
    assert vllm.complete(request()).tool_input == {"verdict": "pass", "summary": "s", "issues": []}
    second = vllm.complete(request(force=False))
    assert second.text == answer


def test_content_null_and_a_length_cut_are_told_apart() -> None:
    fake = FakeOpenAI(
        [
            chat(None, finish="length"),
            chat(None, extra={"reasoning": "thinking only"}),
            chat('{"verdict": "pa', finish="length"),
        ]
    )
    m = model(fake, "ollama:m", environ={})
    first, second, third = (m.complete(request()) for _ in range(3))
    assert (first.text, first.tool_input, first.stop_reason) == ("", None, "max_tokens")
    assert (second.text, second.stop_reason) == ("", "reasoning-only")
    assert third.tool_input is None and third.stop_reason == "max_tokens"
    with pytest.raises(CritiqueError, match="no JSON object"):
        parse_critique(third.tool_input, third.text, {"a.py": "x = 1\n"})


def test_a_tool_call_with_malformed_json_reaches_the_parser_as_text() -> None:
    fake = FakeOpenAI([tool_call('{"verdict": "pass", "summary": "s", "issues": [}')])
    reply = model(fake).complete(request())
    assert reply.tool_input is None
    with pytest.raises(CritiqueError, match="not valid JSON"):
        parse_critique(reply.tool_input, reply.text, {"a.py": "x = 1\n"})


def test_a_server_that_refuses_structured_output_is_asked_one_step_lower() -> None:
    answer = '{"verdict": "pass", "summary": "s", "issues": []}'
    fake = FakeOpenAI(
        [
            openai_error(400, "response_format json_schema is not supported"),
            openai_error(400, "unknown field: schema"),
            chat(answer),
        ]
    )
    m = model(fake, "openai-compatible:m", environ={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    reply = m.complete(request())
    assert [r.get("response_format", {}).get("type") for r in fake.requests] == [
        "json_schema",
        "json_object",
        None,
    ]
    assert reply.tool_input is not None and m.structured == "text"
    fake.replies.append(chat(answer))
    m.complete(request())
    assert "response_format" not in fake.requests[-1]  # the lower mode is kept


def test_a_plain_bad_request_is_a_clear_error() -> None:
    fake = FakeOpenAI([openai_error(400, "context length exceeded")])
    with pytest.raises(ModelError, match="context length exceeded"):
        model(fake).complete(request(force=False))


@pytest.mark.parametrize(
    ("status", "error", "message"),
    [
        (401, AuthError, "OPENAI_API_KEY"),
        (403, AuthError, "may not use"),
        (404, ModelError, "does not know the model"),
        (429, RateLimitError, "rate limited"),
        (500, OverloadedError, "overloaded"),
    ],
)
def test_errors_are_translated(status: int, error: type[Exception], message: str) -> None:
    fake = FakeOpenAI([openai_error(status)])
    with pytest.raises(error, match=message):
        model(fake).complete(request())


def test_an_outage_exits_with_the_provider_code() -> None:
    fake = FakeOpenAI([openai_error(503)])
    with pytest.raises(ProviderUnavailableError) as caught:
        model(fake, "vllm:m", environ={}).complete(request())
    assert caught.value.exit_code == 4


def test_a_local_server_that_is_not_running() -> None:
    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=request)

    m = OpenAIChatModel(
        parse_spec("ollama:m"),
        environ={},
        timeout=5,
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(refuse)),
    )
    with pytest.raises(ConnectionFailedError, match="is the server running at OLLAMA_HOST"):
        m.complete(request())


def test_missing_key_lists_every_way_in() -> None:
    with pytest.raises(MissingKeyError) as caught:
        OpenAIChatModel(parse_spec("openai:gpt-5"), environ={}, timeout=5)
    message = str(caught.value)
    for variable in (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "AWS_REGION",
        "CLOUD_ML_REGION",
        "ANTHROPIC_VERTEX_PROJECT_ID",
        "OLLAMA_HOST",
        "VLLM_BASE_URL",
        "LLAMACPP_BASE_URL",
        "LMSTUDIO_BASE_URL",
        "OPENAI_BASE_URL",
    ):
        assert variable in message


def test_openai_compatible_needs_a_base_url() -> None:
    with pytest.raises(MissingKeyError, match="needs a base URL: export OPENAI_BASE_URL"):
        OpenAIChatModel(parse_spec("openai-compatible:m"), environ={}, timeout=5)


def test_the_configured_base_url_and_mode_are_used() -> None:
    fake = FakeOpenAI([chat('{"verdict": "pass", "summary": "", "issues": []}')])
    providers: dict[str, dict[str, Any]] = {
        "lmstudio": {"base-url": "http://box:4321/v1", "structured-output": "text"}
    }
    model(fake, "lmstudio:qwen", environ={}, providers=providers).complete(request())
    assert fake.urls[0] == "http://box:4321/v1/chat/completions"
    assert "response_format" not in fake.requests[0]
