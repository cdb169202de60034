"""One budget for a run's requests: the fact sections' tokens, one code budget, the author's window."""

from __future__ import annotations

from coderefine.config import Settings
from coderefine.models.windows import REQUEST_OVERHEAD, prompt_limit
from coderefine.refiner.budget import CODE_ROOM_FLOOR, RequestBudget, request_budget
from coderefine.refiner.spec import CHARS_PER_TOKEN


def test_a_small_window_holds_every_section_and_the_code_together() -> None:
    settings = Settings(model="gguf:qwen2.5-coder-1.5b", view_tokens=0)
    budget = request_budget(settings)
    # Each fact section is scaled to the 8k window, the rules among them.
    assert budget.signal_tokens == budget.spec_tokens == budget.rules_tokens == 512
    limit = prompt_limit(["gguf:qwen2.5-coder-1.5b"], settings.max_output_tokens, False)
    assert limit is not None and budget.code_chars is not None
    sections = budget.signal_tokens + budget.spec_tokens + budget.rules_tokens
    assert budget.code_chars // CHARS_PER_TOKEN + sections + REQUEST_OVERHEAD <= limit


def test_view_tokens_bounds_the_code_whatever_the_window_but_not_the_author() -> None:
    budget = request_budget(Settings(model="claude-sonnet-4-5"))
    assert budget.code_chars == 3_000 * CHARS_PER_TOKEN
    assert budget.author_chars is not None and budget.author_chars > 40 * budget.code_chars
    chosen = request_budget(
        Settings(model="claude-sonnet-4-5", signal_tokens=700, sources={"signal_tokens": "pyproject"})
    )
    assert chosen.signal_tokens == 700


def test_no_known_window_and_no_view_budget_is_no_limit() -> None:
    budget = request_budget(Settings(model="scripted", view_tokens=0))
    assert budget.code_chars is None and budget.author_chars is None and budget.prompt_chars is None
    assert budget.code_room(10**9) is None


def test_what_the_views_leave_of_the_code_budget_has_a_floor() -> None:
    budget = RequestBudget(1_500, 1_200, 1_000, 12_000, None, None)
    assert budget.code_room(2_000) == 10_000
    assert budget.code_room(11_900) == CODE_ROOM_FLOOR


def test_a_windows_limit_is_counted_at_the_characters_a_token_a_local_tokenizer_gives() -> None:
    # Qwen2.5-Coder counted tomlkit's requests at 2.96 characters a token: a retry sized at four a token
    # was refused by its 8k server. Counted at three, a prompt that fills the budget still fits.
    budget = request_budget(Settings(model="gguf:qwen2.5-coder-1.5b"))
    limit = prompt_limit(["gguf:qwen2.5-coder-1.5b"], Settings().max_output_tokens, False)
    assert budget.prompt_chars is not None and limit is not None
    assert budget.prompt_chars / 2.96 <= limit * 1.02
    assert budget.author_chars is not None and budget.author_chars / 2.96 <= limit


def test_request_tokens_is_the_total_a_critic_or_reviser_request_aims_at() -> None:
    assert request_budget(Settings(model="claude-sonnet-4-5")).request_chars == 6_000 * CHARS_PER_TOKEN
    assert request_budget(Settings(model="claude-sonnet-4-5", request_tokens=0)).request_chars is None
