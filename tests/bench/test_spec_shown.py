"""The spec the bench grades by reaches the model: the visible failing tests' source, in the requests of
every family's tasks; the hidden tests never do (they are not in the task's project, which is all that
is read)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from coderefine.bench.build import Source, make_suite
from coderefine.bench.harness import run_task
from coderefine.bench.models import OracleModel
from coderefine.bench.strategies import STRATEGIES
from coderefine.bench.suite import LibraryTask, load_suite
from coderefine.bench.tasks import Task, load_tasks
from coderefine.config import Settings
from coderefine.models.base import ModelReply, ModelRequest
from coderefine.project.runner import SubprocessRunner
from coderefine.refiner.spec import HEADING
from tests.bench.test_build import make_project
from tests.bench.test_release import make_release

ENV = {"PATH": os.environ["PATH"]}


class Recording:
    """The oracle, every request kept."""

    def __init__(self, task: object) -> None:
        self._inner = OracleModel(task)  # type: ignore[arg-type]
        self.requests: list[ModelRequest] = []

    @property
    def name(self) -> str:
        return "oracle"

    def complete(self, request: ModelRequest) -> ModelReply:
        self.requests.append(request)
        return self._inner.complete(request)


def requests_of(task: Task | LibraryTask, strategy: str) -> list[ModelRequest]:
    model = Recording(task)
    run_task(task, STRATEGIES[strategy], model, Settings(), SubprocessRunner(), ENV)
    return model.requests


def text_of(request: ModelRequest) -> str:
    return "".join(b.text for b in request.system) + "".join(m.text for m in request.messages)


def function_name(nodeid: str) -> str:
    return nodeid.partition("[")[0].split("::")[-1]


def check_library_task(task: LibraryTask) -> None:
    hidden = {function_name(n) for n in task.hidden_tests()}
    visible = {function_name(n) for n in task.visible}
    for strategy in ("one-shot", "coderefine"):
        requests = requests_of(task, strategy)
        assert requests, (task.task_id, strategy)
        for request in requests:
            for name in hidden - visible:
                assert f"def {name}(" not in text_of(request), (task.task_id, strategy, request.role, name)
        if task.kind == "clean":
            continue
        # The author of one-shot, and the loop's first critic and its reviser, read the failing visible
        # tests (the oracle's reviser fixes the task, so the confirming critic has none left to read).
        for request in requests[:2]:
            message = request.messages[0].text
            assert HEADING in message, (task.task_id, strategy, request.role)
            assert any(f"def {name}(" in message for name in visible), (task.task_id, strategy, request.role)


@pytest.fixture(scope="module")
def library_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("spec-suite")
    make_suite(
        Source(path=make_project(root / "textkit-src")),
        root / "suite",
        SubprocessRunner(),
        ENV,
        tasks=8,
        seed=3,
    )
    return root / "suite"


@pytest.fixture(scope="module")
def release_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("spec-release")
    old, new = make_release(root / "old" / "textkit", False), make_release(root / "new" / "textkit", True)
    make_suite(
        Source(path=new, old_path=old, upgrade_to="1.1"),
        root / "suite",
        SubprocessRunner(),
        ENV,
        tasks=10,
        seed=2,
    )
    return root / "suite"


@pytest.mark.slow
def test_every_library_family_shows_its_visible_failing_tests_and_none_of_the_hidden(
    library_suite: Path,
) -> None:
    _, tasks = load_suite(library_suite)
    families = {t.kind for t in tasks if t.kind in ("bug", "feature", "feature-tests", "clean")}
    assert {"bug", "feature", "feature-tests"} <= families
    for kind in sorted(families):
        for task in [t for t in tasks if t.kind == kind][:2]:
            check_library_task(task)


@pytest.mark.slow
def test_release_tasks_show_their_visible_tests_and_never_the_pass_to_pass_suite(release_suite: Path) -> None:
    _, tasks = load_suite(release_suite)
    assert tasks
    for task in tasks:
        check_library_task(task)


def test_humanevalfix_shows_the_example_check_and_never_the_full_tests() -> None:
    task = load_tasks()[0]
    hidden = [line.strip() for line in task.test.splitlines() if line.strip().startswith("assert")]
    shown = {line.strip() for line in task.example_test.splitlines()}
    secret = [line for line in hidden if line not in shown]
    assert secret
    for strategy in ("one-shot", "coderefine"):
        requests = requests_of(task, strategy)
        first = requests[0].messages[0].text
        assert HEADING in first and "def check(" in first, strategy
        for request in requests:
            assert not any(line in text_of(request) for line in secret), strategy


def test_humanevalfix_one_shot_is_not_shown_an_example_check_that_passes_on_the_buggy_code() -> None:
    # Python/32's docstring examples pass on its buggy code: telling the author they fail would mislead.
    task = next(t for t in load_tasks() if t.task_id == "Python/32")
    first = requests_of(task, "one-shot")[0].messages[0].text
    assert HEADING not in first and "def check(" not in first
