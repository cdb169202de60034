from __future__ import annotations

import pytest

from coderefine.errors import ConfigError
from coderefine.models.providers import LOCAL_TIMEOUT, PROVIDERS, base_url, parse_spec


@pytest.mark.parametrize(
    ("spec", "provider", "model", "name"),
    [
        ("claude-sonnet-5-5", "anthropic", "claude-sonnet-5-5", "claude-sonnet-5-5"),
        ("anthropic:claude-haiku-4-5", "anthropic", "claude-haiku-4-5", "claude-haiku-4-5"),
        ("openai:gpt-5", "openai", "gpt-5", "openai:gpt-5"),
        ("ollama:gemma3:270m", "ollama", "gemma3:270m", "ollama:gemma3:270m"),
        ("bedrock:anthropic.claude-sonnet-4-5-v1:0", "bedrock", "anthropic.claude-sonnet-4-5-v1:0", None),
        ("vertex:claude-sonnet-4-5@20250929", "vertex", "claude-sonnet-4-5@20250929", None),
        ("openai-compatible:qwen/qwen3-8b", "openai-compatible", "qwen/qwen3-8b", None),
        # A Bedrock model id given bare still means Anthropic, as before: its colon is no provider.
        ("us.anthropic.claude-v1:0", "anthropic", "us.anthropic.claude-v1:0", "us.anthropic.claude-v1:0"),
    ],
)
def test_names(spec: str, provider: str, model: str, name: str | None) -> None:
    parsed = parse_spec(spec)
    assert (parsed.provider.name, parsed.model) == (provider, model)
    assert parsed.name == (name or spec)


def test_an_unknown_provider_names_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown model provider 'olama'.*ollama"):
        parse_spec("olama:gemma3")


def test_no_model_after_the_provider() -> None:
    with pytest.raises(ConfigError, match="names no model"):
        parse_spec("vllm:")


def test_presets_declare_capabilities() -> None:
    assert PROVIDERS["openai"].structured == "tools"
    assert PROVIDERS["llamacpp"].structured == "json-object"
    assert all(
        PROVIDERS[p].free and PROVIDERS[p].timeout == LOCAL_TIMEOUT for p in ("ollama", "vllm", "llamacpp")
    )
    assert not PROVIDERS["openai"].free


def test_overrides_from_the_config() -> None:
    spec = parse_spec(
        "vllm:m", {"vllm": {"base-url": "https://gpu:8000/v1", "structured-output": "tools", "timeout": 60}}
    )
    assert (spec.provider.base_url, spec.provider.structured, spec.provider.timeout) == (
        "https://gpu:8000/v1",
        "tools",
        60.0,
    )


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"api-key": "sk-..."}, "keys are never read from pyproject.toml.*VLLM_API_KEY"),
        ({"base-url": "gpu:8000"}, "must be an http"),
        ({"structured-output": "xml"}, "must be one of tools, json-schema"),
        ({"timeout": -1}, "positive number"),
        ({"colour": "red"}, "unknown key 'colour'"),
    ],
)
def test_bad_overrides(table: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_spec("vllm:m", {"vllm": table})


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("127.0.0.1:11434", "http://127.0.0.1:11434/v1"),
        ("http://gpu:11434", "http://gpu:11434/v1"),
        ("https://gpu/v1/", "https://gpu/v1/"),
        ("", "http://localhost:11434/v1"),
    ],
)
def test_ollama_host(host: str, url: str) -> None:
    assert base_url(PROVIDERS["ollama"], {"OLLAMA_HOST": host}) == url
