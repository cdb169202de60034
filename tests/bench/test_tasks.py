import os
import subprocess
import sys
from pathlib import Path

import pytest

from coderefine.bench.tasks import EXAMPLES, MODULE, load_tasks, select_tasks
from coderefine.errors import UsageError
from coderefine.project.runner import SubprocessRunner


def test_the_suite_is_humanevalfix_python() -> None:
    tasks = load_tasks()
    assert len(tasks) == 164
    assert {t.bug_type for t in tasks} == {
        "value misuse",
        "missing logic",
        "excess logic",
        "operator misuse",
        "variable misuse",
        "function misuse",
    }
    assert tasks[0].task_id == "Python/0"


def test_selection() -> None:
    tasks = load_tasks()
    assert [t.task_id for t in select_tasks(tasks, ids=["3", "Python/5"])] == ["Python/3", "Python/5"]
    assert len(select_tasks(tasks, limit=7)) == 7
    assert select_tasks(tasks, limit=5, seed=1) == select_tasks(tasks, limit=5, seed=1)
    assert select_tasks(tasks, limit=5, seed=1) != select_tasks(tasks, limit=5)
    with pytest.raises(UsageError, match="unknown task ids: Python/999"):
        select_tasks(tasks, ids=["999"])


def test_a_materialised_task_fails_its_examples_and_hidden_tests_until_fixed(tmp_path: Path) -> None:
    task = load_tasks()[0]
    folder = task.materialise(tmp_path / "t")
    assert (folder / MODULE).read_text() == task.buggy_program
    assert task.test not in (folder / EXAMPLES).read_text()  # the hidden tests never enter the project
    examples = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", EXAMPLES],
        cwd=folder,
        capture_output=True,
        text=True,
    )
    assert examples.returncode == 1, examples.stdout
    fixed = subprocess.run(
        [sys.executable, "-c", task.hidden_program(task.canonical_program)], capture_output=True
    )
    broken = subprocess.run(
        [sys.executable, "-c", task.hidden_program(task.buggy_program)], capture_output=True
    )
    assert fixed.returncode == 0 and broken.returncode != 0


def test_every_canonical_solution_passes_its_example_file() -> None:
    for task in load_tasks():
        compile(task.example_tests(), "test_examples.py", "exec")
        assert (
            "check(" + task.entry_point + ")" in task.example_tests() or "def check" not in task.example_test
        )


def test_failing_visible_is_the_example_check_only_where_it_fails_on_the_buggy_code(tmp_path: Path) -> None:
    tasks = {t.task_id: t for t in load_tasks()}
    runner = SubprocessRunner()
    for task_id, fails in (("Python/0", True), ("Python/32", False)):
        folder = tasks[task_id].materialise(tmp_path / task_id.replace("/", "-"))
        before = sorted(p.name for p in folder.iterdir())
        shown = tasks[task_id].failing_visible(folder, runner, {"PATH": os.environ["PATH"]})
        assert shown == (tasks[task_id].visible if fails else ())
        assert sorted(p.name for p in folder.iterdir()) == before  # nothing written into the project
