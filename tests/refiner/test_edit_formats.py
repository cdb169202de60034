"""The loop with another edit format: what the reviser is asked for, what it answers, and its retry."""

from __future__ import annotations

from coderefine.config import Settings
from tests.conftest import RepoFactory
from tests.refiner.test_loop import FIX, PASS, buggy_change, revise, run, scripted

DEFINITION_FIX = "The fix.\n\npkg/mod.py\n```python\ndef add(a, b):\n    return a + b\n```\n"


def test_a_small_model_writes_the_whole_function_and_the_loop_puts_it_in_place(
    make_repo: RepoFactory,
) -> None:
    change, files = buggy_change(make_repo)
    model = scripted(revise(), DEFINITION_FIX, PASS)
    result = run(change, files, model, Settings(edit_format="definition", confirm="always"))
    assert [r.outcome for r in result.rounds] == ["accepted", "passed"]
    assert (
        result.final["pkg/mod.py"]
        == "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
    )
    assert result.edit_format == "definition"
    reviser = model.history[1]
    system = reviser.system[0].text
    assert "## Complete definitions (AUTHOR and REVISER)" in system and "<<<<<<< SEARCH" not in system
    assert "Answer with complete definitions in code blocks" in reviser.prompt_text()
    # The critic is offered no attached edits: the merged schema's edits are SEARCH/REPLACE blocks.
    assert model.history[0].tool is not None and "edits" not in str(model.history[0].tool.input_schema)


def test_an_answer_with_a_placeholder_is_retried_with_the_reason(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    placeholder = "pkg/mod.py\n```python\ndef add(a, b):\n    # ... rest unchanged\n    return a + b\n```\n"
    model = scripted(revise(), placeholder, DEFINITION_FIX, PASS)
    result = run(change, files, model, Settings(edit_format="definition", confirm="always"))
    assert "return a + b" in result.final["pkg/mod.py"]
    retry = model.history[2].prompt_text()
    assert "Your code blocks could not be used" in retry and "placeholder" in retry


def test_auto_follows_the_model_that_writes_the_edits(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    small = Settings(model="ollama:qwen2.5-coder:1.5b", confirm="always")
    result = run(change, files, scripted(revise(), DEFINITION_FIX, PASS), small)
    assert result.edit_format == "definition" and "return a + b" in result.final["pkg/mod.py"]
    strong = Settings(model="ollama:qwen2.5-coder:1.5b", reviser_model="claude-sonnet-5-5", confirm="always")
    result = run(change, files, scripted(revise(), FIX, PASS), strong)
    assert result.edit_format == "search-replace" and "return a + b" in result.final["pkg/mod.py"]
