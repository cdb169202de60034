"""Code on request: an answer of `SHOW: name` lines is answered with those definitions."""

from __future__ import annotations

from pathlib import Path

from coderefine.config import Settings
from coderefine.models.scripted import ScriptedModel
from coderefine.project.change import from_worktree
from coderefine.project.gitio import GitRepo
from coderefine.project.runner import SubprocessRunner
from coderefine.project.workspace import project_files
from coderefine.refiner.asks import MAX_ASKS, Ask, answer, asks_in
from coderefine.refiner.code_section import excerpt
from coderefine.refiner.context import FileView
from coderefine.refiner.loop import refine
from coderefine.signals.evaluate import Evaluator
from tests.conftest import SMALL_PROJECT, RepoFactory, write_files
from tests.refiner.test_loop import PASS, revise
from tests.refiner.test_session import big_module

TEXT = "import os\n\n\nclass Box:\n    def shut(self):\n        return 1\n\n\ndef open_(x):\n    return x\n"


def test_only_an_answer_made_of_asks_is_an_ask() -> None:
    assert asks_in("SHOW: Box.shut\n\nSHOW: `pkg/mod.py:open_`\n") == [
        Ask(None, "Box.shut"),
        Ask("pkg/mod.py", "open_"),
    ]
    assert asks_in("SHOW: open_\nmod.py\n```python\n<<<<<<< SEARCH\n") == []
    assert asks_in("") == []


def test_the_answer_shows_the_definitions_verbatim_and_says_what_is_not_there() -> None:
    texts = {"pkg/mod.py": TEXT}
    views = {"pkg/mod.py": FileView("pkg/mod.py", TEXT, ((1, 2),))}
    text = answer([Ask("mod.py", "shut"), Ask(None, "nowhere")], views, texts, 10_000, excerpt)
    assert "lines=5-6" in text and "    def shut(self):\n        return 1\n" in text
    assert "No definition named `nowhere`" in text
    assert "too long to show here" in answer([Ask(None, "Box")], views, texts, 10, excerpt)


def test_a_definition_too_long_for_the_room_is_shown_from_its_start_as_far_as_it_goes() -> None:
    body = "".join(f"        step_{n} = {n}\n" for n in range(200))
    text = "import os\n\n\nclass Big:\n    def run(self):\n" + body + "        return 1\n"
    texts = {"pkg/mod.py": text}
    views = {"pkg/mod.py": FileView("pkg/mod.py", text, ((1, 2),))}
    whole = answer([Ask(None, "Big.run")], views, texts, 100_000, excerpt)
    room = len(whole) // 3
    shown = answer([Ask(None, "Big.run")], views, texts, room, excerpt)
    assert "    def run(self):\n        step_0 = 0\n" in shown and "step_199 = 199" not in shown
    cut = int(shown.split("lines=5-")[1].split(" ")[0].split(">")[0])
    assert f"lines 5-{cut} are shown; lines {cut + 1}-206 are too long for this request" in shown
    # The part shown is the longest that fits the room.
    assert (
        len(excerpt(views["pkg/mod.py"], (5, cut))) <= room < len(excerpt(views["pkg/mod.py"], (5, cut + 1)))
    )


def test_a_reviser_that_asks_is_shown_the_definition_in_the_same_round(make_repo: RepoFactory) -> None:
    tests = "from pkg.mod import f7\n\n\ndef test_f7():\n    assert f7(1, 2) == 3\n"
    root = make_repo({**SMALL_PROJECT, "tests/test_mod.py": tests, "pkg/mod.py": big_module(34, False)})
    write_files(root, {"pkg/mod.py": big_module(34, True)})
    repo = GitRepo.find(root)
    change = from_worktree([Path("pkg/mod.py")], cwd=root, repo=repo, max_bytes=1 << 20)
    fix = "pkg/mod.py\n```python\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n```\n"
    asks = ["SHOW: f30"] * (MAX_ASKS + 1)
    model = ScriptedModel([PASS, *asks, fix, PASS])
    settings = Settings(model="claude-sonnet-4-5", confirm="always", merge="never")
    with Evaluator(
        change, settings, SubprocessRunner(), {"PATH": "/usr/bin:/bin"}, project_files(root, repo)
    ) as ev:
        result = refine(change, settings, model, ev, intent="f7 must add")
    reviser = model.history[1]
    assert "SHOW: name" in reviser.prompt_text()  # the reviser is told how to ask
    assert "def f30(a, b):" not in reviser.prompt_text()
    asked = model.history[2]
    assert "def f30(a, b):" in asked.prompt_text() and asked.role == "reviser"
    # At most MAX_ASKS asks are answered; the answer after them is read as an edit (and fails, once).
    assert result.asks == MAX_ASKS


def test_a_name_asked_with_its_module_in_front_is_found() -> None:
    # The 1.5B reviser asked for `tomlkit.items.Item.value` in tomlkit/items.py and was told it was not there.
    texts = {"src/pkg/mod.py": TEXT}
    views = {"src/pkg/mod.py": FileView("src/pkg/mod.py", TEXT, ((1, 2),))}
    for name in ("pkg.mod.Box.shut", "mod.Box.shut", "src.pkg.mod.Box.shut"):
        assert "        return 1\n" in answer([Ask(None, name)], views, texts, 10_000, excerpt)
    assert "No definition named `other.Box.shut`" in answer(
        [Ask(None, "other.Box.shut")], views, texts, 10_000, excerpt
    )


def _asking_run(make_repo: RepoFactory, answers: list[object]) -> tuple[ScriptedModel, int]:
    tests = "from pkg.mod import f7\n\n\ndef test_f7():\n    assert f7(1, 2) == 3\n"
    root = make_repo({**SMALL_PROJECT, "tests/test_mod.py": tests, "pkg/mod.py": big_module(34, False)})
    write_files(root, {"pkg/mod.py": big_module(34, True)})
    repo = GitRepo.find(root)
    change = from_worktree([Path("pkg/mod.py")], cwd=root, repo=repo, max_bytes=1 << 20)
    model = ScriptedModel(answers)
    settings = Settings(model="claude-sonnet-4-5", confirm="always", merge="never")
    with Evaluator(
        change, settings, SubprocessRunner(), {"PATH": "/usr/bin:/bin"}, project_files(root, repo)
    ) as ev:
        result = refine(change, settings, model, ev, intent="f7 must add")
    return model, result.asks


ASK_F30 = {"verdict": "revise", "summary": "I need f30", "issues": [], "show": ["f30"]}


def test_a_critic_asks_through_the_critique_tool_and_judges_in_the_same_round(make_repo: RepoFactory) -> None:
    fix = "pkg/mod.py\n```python\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n```\n"
    model, asks = _asking_run(make_repo, [ASK_F30, revise(), fix, PASS])
    first, second = model.history[0], model.history[1]
    assert first.role == second.role == "critic"
    assert "give its name in `show`" in first.prompt_text() and "def f30(a, b):" not in first.prompt_text()
    # The same conversation: its answer (the tool's input, as text), then the definition it asked for.
    assert '"show": ["f30"]' in second.messages[1].blocks[0].text
    assert "def f30(a, b):" in second.messages[2].blocks[0].text
    assert asks == 1 and [r.role for r in model.history] == ["critic", "critic", "reviser", "critic"]


def test_a_critic_is_answered_at_most_max_asks_times_and_told_when_it_is_the_last(
    make_repo: RepoFactory,
) -> None:
    text_ask = "SHOW: f31\n"  # the text form: a provider without tools, or a model that ignores them
    model, asks = _asking_run(make_repo, [ASK_F30, text_ask, ASK_F30, PASS])
    assert asks == MAX_ASKS
    answers = [m.blocks[0].text for m in model.history[MAX_ASKS].messages[2::2]]
    assert "def f30(a, b):" in answers[0] and "def f31(a, b):" in answers[1]
    assert "may not ask again" in answers[-1] and "may not ask again" not in answers[0]
    # The answer after the last ask is read as the critique: asking again is not answered.
    assert all(r.role == "critic" for r in model.history[: MAX_ASKS + 1])
