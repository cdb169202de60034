"""Context windows by model name, and the signals budget a small context gets."""

from __future__ import annotations

import pytest

from coderefine.models.windows import (
    FLOOR,
    LOCAL_CONTEXT,
    REQUEST_OVERHEAD,
    context_window,
    signal_budget,
    view_budget,
)


@pytest.mark.parametrize(
    ("model", "window"),
    [
        ("claude-sonnet-4-5", 200_000),
        ("anthropic:claude-haiku-4-5", 200_000),
        ("bedrock:anthropic.claude-sonnet-4-5", None),  # a Bedrock id starts with its vendor: unknown
        ("openai:gpt-4o-mini", 128_000),
        ("openrouter:openai/gpt-4.1", 1_000_000),
        ("gguf:qwen2.5-coder-0.5b", LOCAL_CONTEXT),
        ("gguf:/models/any.gguf", LOCAL_CONTEXT),
        ("ollama:qwen2.5-coder:1.5b", LOCAL_CONTEXT),
        ("vllm:Qwen/Qwen2.5-Coder-7B-Instruct", LOCAL_CONTEXT),
        ("vllm:Qwen/Qwen2.5-Coder-32B-Instruct", None),
        ("my-own-model", None),
    ],
)
def test_context_window_by_name(model: str, window: int | None) -> None:
    assert context_window(model) == window


def test_the_default_budget_shrinks_to_the_smallest_context_of_the_roles() -> None:
    assert signal_budget(1500, False, ["claude-sonnet-4-5"]) == 1500
    assert signal_budget(1500, False, ["my-own-model", ""]) == 1500  # unknown windows keep the default
    # A strong critic and a small local reviser: the reviser's 8k context decides.
    assert signal_budget(1500, False, ["claude-sonnet-4-5", "gguf:qwen2.5-coder-0.5b"]) == LOCAL_CONTEXT // 16
    assert signal_budget(300, False, ["gguf:x.gguf"]) == FLOOR  # never below what one failure needs


def test_a_budget_the_user_chose_is_kept_whatever_the_model() -> None:
    assert signal_budget(3000, True, ["gguf:qwen2.5-coder-0.5b"]) == 3000
    assert signal_budget(0, False, ["gguf:qwen2.5-coder-0.5b"]) == 0  # 0 is no limit, not "auto"


def test_the_views_budget_leaves_room_for_the_reply_and_the_other_sections() -> None:
    # A gguf: model's server is asked for 1,024 tokens of reply unless the user chose a limit.
    assert view_budget(["gguf:m"], 8192, False, 1024) == 8192 - 1024 - 1024 - REQUEST_OVERHEAD
    assert view_budget(["gguf:m"], 2048, True, 1024) == 8192 - 2048 - 1024 - REQUEST_OVERHEAD
    assert view_budget(["gguf:m", "claude-sonnet-4-5"], 8192, False, 0) == 8192 - 1024 - REQUEST_OVERHEAD
    assert view_budget(["ollama:qwen2.5-coder:1.5b"], 8192, False, 0) == 8192 - 1024 - REQUEST_OVERHEAD
    assert view_budget(["ollama:qwen2.5-coder:1.5b"], 8192, True, 0) == FLOOR  # 8k of reply asked for
    assert view_budget(["someone/unknown-model"], 8192, False, 0) is None
