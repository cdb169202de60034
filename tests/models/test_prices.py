from __future__ import annotations

import pytest

from coderefine.errors import ConfigError
from coderefine.models.base import Usage
from coderefine.models.prices import cost_of, price_of

MILLION = Usage(input_tokens=1_000_000, output_tokens=1_000_000)


@pytest.mark.parametrize(
    "model", ["ollama:qwen3", "vllm:x", "llamacpp:gemma", "lmstudio:y", "replay:r.jsonl"]
)
def test_local_models_cost_nothing(model: str) -> None:
    assert cost_of(model, MILLION) == 0.0


def test_anthropic_families_on_every_platform() -> None:
    assert cost_of("claude-sonnet-5-5", MILLION) == 18.0
    assert cost_of("bedrock:anthropic.claude-sonnet-4-5-v1:0", MILLION) == 18.0
    assert cost_of("vertex:claude-haiku-4-5@2025", MILLION) == 6.0


def test_openai_prices_and_cached_input() -> None:
    assert price_of("openai:gpt-4.1-mini-2025").input == 0.4
    cached = Usage(cache_read_tokens=1_000_000)
    assert cost_of("openai:gpt-4o", cached) == pytest.approx(1.25)  # half the input price
    assert cost_of("openai:some-new-model", MILLION) == 90.0  # unknown: the most expensive, to stop early


def test_a_configured_price_wins() -> None:
    table = {"openai-compatible:*": {"input": 0.5, "output": 1.5, "cache-read": 0.05}}
    assert cost_of("openai-compatible:llama-70b", MILLION, table) == 2.0
    assert price_of("openai-compatible:x", table).cache_read == pytest.approx(0.05)
    assert cost_of("ollama:x", MILLION, {"ollama:*": {"input": 1, "output": 1}}) == 2.0


@pytest.mark.parametrize(
    ("entry", "message"),
    [({"input": 1}, "input and output"), ({"input": 1, "output": -2}, "price in dollars"), ("x", "table")],
)
def test_bad_price_entries(entry: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        price_of("a:b", {"a:*": entry})


def test_a_batch_request_costs_half() -> None:
    usage = Usage(1_000_000, 1_000_000, 1_000_000, 1_000_000)
    for model in ("claude-sonnet-5-5", "openai:gpt-5-mini"):
        assert cost_of(model, usage, batch=True) == pytest.approx(cost_of(model, usage) / 2)
