"""The bench's pytest runs: hypothesis derandomized, without deadlines, its database or explain phase,
whatever the project's own settings say; the environment that loads the plugin."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from coderefine.bench.library import run_suite
from coderefine.bench.stable import PLUGIN_DIR, STABLE_PLUGIN, stable_environ
from coderefine.project.runner import SubprocessRunner
from tests.conftest import write_files

ENV = {"PATH": os.environ["PATH"]}

TESTS = """import os
import time

from hypothesis import given, settings
from hypothesis import strategies as st


def busy(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


@settings(deadline=1, max_examples=5)
@given(st.integers())
def test_past_its_own_deadline(number):
    busy(0.005)


@given(st.integers(0, 10**9))
def test_records_its_examples(number):
    with open(os.environ["EXAMPLES_FILE"], "a") as handle:
        handle.write(f"{number}\\n")


class TestInAClass:
    @settings(deadline=1, max_examples=3)
    @given(st.booleans())
    def test_method_past_its_deadline(self, flag):
        busy(0.005)
"""

CONFTEST = """from hypothesis import settings

settings.register_profile("own", deadline=1)
settings.load_profile("own")
"""


def test_the_environment_lists_the_plugin_once_and_keeps_what_was_there() -> None:
    env = stable_environ({"PYTHONPATH": "/x", "PYTEST_PLUGINS": "other"})
    assert env["PYTHONPATH"].split(os.pathsep) == ["/x", str(PLUGIN_DIR)]
    assert env["PYTEST_PLUGINS"] == f"other,{STABLE_PLUGIN}"
    assert stable_environ(env) == env


def test_hypothesis_runs_without_deadlines_and_draws_the_same_examples(tmp_path: Path) -> None:
    tree = tmp_path / "project"
    write_files(tree, {"tests/test_h.py": TESTS, "tests/conftest.py": CONFTEST, "pytest.ini": "[pytest]\n"})
    drawn = []
    for number in range(2):
        examples = tmp_path / f"examples-{number}.txt"
        env = {**ENV, "EXAMPLES_FILE": str(examples)}
        run = run_suite(sys.executable, tree, SubprocessRunner(), env)
        assert run.finished and not run.failed(), (run.outcomes, run.output)
        assert len(run.passed()) == 3, (run.outcomes, run.output)
        drawn.append(examples.read_text())
    assert drawn[0] == drawn[1], drawn
    assert len(drawn[0].splitlines()) >= 10
    assert not (tree / ".hypothesis" / "examples").exists()  # no database: no past failure is replayed
