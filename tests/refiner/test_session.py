"""A session's requests fit the context of the models that read them."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from coderefine.config import Settings
from coderefine.models.base import ModelReply, Usage
from coderefine.models.scripted import ScriptedModel
from coderefine.project.change import Change, FileChange, from_worktree
from coderefine.project.gitio import GitRepo
from coderefine.project.runner import SubprocessRunner
from coderefine.project.textfile import SourceText
from coderefine.project.workspace import project_files
from coderefine.refiner.loop import refine
from coderefine.refiner.session import NoProgress, RejectedEdit, Session
from coderefine.signals.evaluate import Evaluator
from tests.conftest import SMALL_PROJECT, RepoFactory, write_files
from tests.refiner.test_loop import PASS

DOC = "    " + "A long docstring line that a small model's context has to pay for, " * 2 + "\n"


def big_module(functions: int, bug: bool) -> str:
    """Under the 400 lines of a whole view, but some 40,000 characters: 10k tokens, past an 8k window."""
    parts = []
    for n in range(functions):
        body = "    return a - b\n" if n == 7 and bug else "    return a + b\n"
        parts.append(f'def f{n}(a, b):\n    """\n{DOC * 5}    """\n{body}')
    return "\n\n".join(parts)


def critic_text(make_repo: RepoFactory, model_name: str, view_tokens: int = 3_000) -> str:
    tests = "from pkg.mod import f7\n\n\ndef test_f7():\n    assert f7(1, 2) == 3\n"
    root = make_repo({**SMALL_PROJECT, "tests/test_mod.py": tests, "pkg/mod.py": big_module(34, False)})
    write_files(root, {"pkg/mod.py": big_module(34, True)})  # a one-line change that breaks f7
    repo = GitRepo.find(root)
    change = from_worktree([Path("pkg/mod.py")], cwd=root, repo=repo, max_bytes=1 << 20)
    # The critic passes; the tests still fail, so a reviser is asked, and writes nothing usable.
    model = ScriptedModel([PASS, *["No change."] * 6])
    settings = Settings(model=model_name, confirm="never", merge="never", view_tokens=view_tokens)
    with Evaluator(
        change, settings, SubprocessRunner(), {"PATH": "/usr/bin:/bin"}, project_files(root, repo)
    ) as ev:
        refine(change, settings, model, ev, intent="f7 must add")
    critic = model.history[0]
    assert critic.role == "critic"
    return critic.prompt_text()


def test_a_file_too_big_for_a_local_models_context_is_shown_in_excerpts(make_repo: RepoFactory) -> None:
    text = critic_text(make_repo, "gguf:qwen2.5-coder-1.5b")
    # Whole, the request was 11k tokens and the server refused it; the reply's 1,024 must fit too.
    assert len(text) // 4 + 1024 <= 8192, len(text) // 4
    assert "def f7(a, b):" in text and "return a - b" in text  # the failing code stays in view
    assert "f30(a, b)" in text  # in the outline of what is left out
    assert text.count(DOC.strip()) < 34 * 5 // 2


def test_a_hosted_models_request_without_a_view_budget_keeps_the_file_whole(make_repo: RepoFactory) -> None:
    text = critic_text(make_repo, "claude-sonnet-4-5", view_tokens=0)
    assert text.count(DOC.strip()) >= 34 * 5  # the file whole (and the diff's context lines)


def test_a_hosted_models_request_is_sized_by_the_evidence_not_the_window(make_repo: RepoFactory) -> None:
    # A 1M-token window is no reason to send 10k tokens of a module whose one failing test runs f7.
    text = critic_text(make_repo, "claude-sonnet-4-5")
    assert len(text) // 4 < 6_000, len(text) // 4
    assert "def f7(a, b):" in text and "return a - b" in text
    assert "f30(a, b)" in text  # in the outline of what is left out
    assert "f7: run by 1 of 1 failing tests, 0 of 0 passing" in text


def test_an_author_without_signals_is_shown_what_the_given_tests_call(make_repo: RepoFactory) -> None:
    # The bench's one-shot: no test runs, the failing tests are given; the file whole would not fit.
    tests = "from pkg.mod import f7\n\n\ndef test_f7():\n    assert f7(1, 2) == 3\n"
    root = make_repo({**SMALL_PROJECT, "tests/test_mod.py": tests, "pkg/mod.py": big_module(34, True)})
    repo = GitRepo.find(root)
    change = from_worktree([Path("pkg/mod.py")], cwd=root, repo=repo, max_bytes=1 << 20)
    model = ScriptedModel(["No change."] * 3)
    settings = Settings(model="gguf:qwen2.5-coder-1.5b", tests=False)
    with Evaluator(
        change, settings, SubprocessRunner(), {"PATH": "/usr/bin:/bin"}, project_files(root, repo)
    ) as ev:
        refine(
            change,
            settings,
            model,
            ev,
            intent="f7 must add",
            draft=True,
            max_rounds=0,
            spec_tests=["tests/test_mod.py::test_f7"],
        )
    author = model.history[0]
    assert author.role == "author"
    text = author.prompt_text()
    assert len(text) // 4 + 1024 <= 8192, len(text) // 4
    assert "def f7(a, b):" in text and "return a - b" in text and "def test_f7():" in text
    # In the definition format, the rule for a file shown in part is about definitions, not SEARCH
    # lines; the author's retry says which parts it was shown.
    assert "write only definitions shown here, each complete" in text and "a SEARCH" not in text
    retry = model.history[1].prompt_text()
    assert model.history[1].role == "author" and "Only parts of the files were shown to you" in retry


def session_for(
    before: str, after: str, model: str, edit_format: str = "auto", answers: ScriptedModel | None = None
) -> Session:
    change = Change(
        Path("/nonexistent"),
        (FileChange("mod.py", SourceText(before), SourceText(after), "modified"),),
        "files",
    )
    # Only the model's window bounds these views: the view budget (view-tokens) is tested apart.
    settings = Settings(model=model, edit_format=edit_format, view_tokens=0, sources={"model": "flag"})
    return Session(
        change,
        settings,
        model=answers,
        evaluator=None,
        intent="f7 adds",
        progress=NoProgress(),
        clock=time.monotonic,
    )


def module_of(functions: int, changed: set[int]) -> str:
    parts = []
    for n in range(functions):
        doc = DOC.replace("long", "LONG") if n in changed else DOC
        parts.append(f'def f{n}(a, b):\n    """\n{doc * 5}    """\n    return a + b\n')
    return "\n\n".join(parts)


def test_a_reply_cut_off_at_the_token_limit_is_not_put_in_place_and_its_retry_says_why() -> None:
    before = "def price(items, tax):\n    total = sum(items)\n    if total < 0:\n        raise ValueError(total)\n    return round(total * (1 + tax), 2)\n"
    cut = "mod.py\n```python\ndef price(items, tax):\n    total = sum(items)\n    if total < 0:\n"
    model = ScriptedModel(
        [ModelReply(cut, Usage(100, 1024), "gguf:qwen2.5-coder-1.5b", stop_reason="max_tokens"), "No change."]
    )
    session = session_for(before, before, "gguf:qwen2.5-coder-1.5b", answers=model)
    request = session.prompts.author({"mod.py": before}, intent="round")
    with pytest.raises(RejectedEdit):
        session.edit(request, {"mod.py": before}, 1)
    retry = model.history[1].prompt_text()
    assert "cut off at the output token limit" in retry


def test_a_retry_fits_the_small_models_context_the_error_first_then_what_is_left_of_the_answer() -> None:
    # A 1.5B model's 867-token answer echoed into the retry of a 7.3k-token request: its 8k server refused.
    text = module_of(23, set())
    runaway = "Here is the fix.\n" + "This function should add instead. " * 200
    model = ScriptedModel([runaway, "No change."])
    session = session_for(text, text, "gguf:qwen2.5-coder-1.5b", answers=model)
    request = session.prompts.author({"mod.py": text}, intent="f7 adds")
    assert session.budget.prompt_chars is not None
    assert len(request.prompt_text()) + len(runaway) > session.budget.prompt_chars
    with pytest.raises(RejectedEdit):
        session.edit(request, {"mod.py": text}, 1)
    retry = model.history[1].prompt_text()
    assert len(retry) <= session.budget.prompt_chars + 100
    assert "the reply has no code block" in retry and "more characters cut" in retry
