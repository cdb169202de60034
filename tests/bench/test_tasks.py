import subprocess
import sys
from pathlib import Path

import pytest

from coderefine.bench.tasks import EXAMPLES, MODULE, load_tasks, select_tasks
from coderefine.errors import UsageError


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
