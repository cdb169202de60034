"""The warm test runner: the same results as a cold run, fresh imports per run, timeouts and crashes."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from coderefine.config import Settings
from coderefine.errors import ToolTimeoutError
from coderefine.project.runner import SubprocessRunner
from coderefine.signals.evaluate import Evaluator
from coderefine.signals.pytest import PLUGIN_DIR, PytestConfig, PytestSignals
from coderefine.signals.warm import WarmPytest
from tests.conftest import RepoFactory
from tests.refiner.test_loop import BUGGY, buggy_change

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the warm runner needs fork()")
ENV = {"PATH": "/usr/bin:/bin"}


def project(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def test_warm_and_cold_evaluations_agree_and_see_each_candidate(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    results = []
    for warm in (True, False):
        with Evaluator(change, Settings(warm_tests=warm), SubprocessRunner(), ENV, files) as evaluator:
            buggy = evaluator.evaluate({"pkg/mod.py": BUGGY})
            # The module changed between runs: a child imports it fresh, never a cached copy.
            fixed = evaluator.evaluate({"pkg/mod.py": BUGGY.replace("a - b", "a + b")})
            results.append((buggy.comparison, fixed.comparison))
    assert results[0] == results[1]
    assert [s.code for s in results[0][0].introduced] == ["tests/test_mod.py::test_add"]
    assert results[0][1].clean


def test_a_run_that_passes_its_limit_is_stopped(tmp_path: Path) -> None:
    root = project(tmp_path, {"test_slow.py": "import time\n\n\ndef test_slow():\n    time.sleep(60)\n"})
    warm = WarmPytest(sys.executable, ENV)
    try:
        with pytest.raises(ToolTimeoutError):
            warm.run(["-q", "test_slow.py"], cwd=root, timeout=1.0, env=ENV)
        # The server still serves the next run.
        (root / "test_ok.py").write_text("def test_ok():\n    pass\n")
        done = warm.run(["-q", "-p", "no:cacheprovider", "test_ok.py"], cwd=root, timeout=30, env=ENV)
        assert done is not None and done.code == 0 and "." in done.out
    finally:
        warm.close()


def test_a_run_is_done_when_its_session_finishes_not_when_its_summary_does(tmp_path: Path) -> None:
    """What pytest does after the session (the terminal summary, other plugins' reports) is not waited
    for: a summary hook that would take a minute does not reach the run's 30-second limit. A run whose
    tests did not run (a collection error) still ends as pytest ends it, with pytest's own summary."""
    slow_summary = "import time\n\n\ndef pytest_terminal_summary():\n    time.sleep(60)\n"
    root = project(tmp_path, {"conftest.py": slow_summary, "test_ok.py": "def test_ok():\n    pass\n"})
    warm = WarmPytest(sys.executable, ENV)
    try:
        done = warm.run(["-q", "-p", "no:cacheprovider", "test_ok.py"], cwd=root, timeout=30, env=ENV)
        assert done is not None and done.code == 0
        (root / "conftest.py").write_text("")
        (root / "test_broken.py").write_text("import nowhere_to_be_found\n")
        done = warm.run(["-q", "-p", "no:cacheprovider", "test_broken.py"], cwd=root, timeout=30, env=ENV)
        assert done is not None and done.code == 2 and "nowhere_to_be_found" in done.out
    finally:
        warm.close()


def test_a_test_that_kills_its_process_is_reported_as_unavailable(tmp_path: Path) -> None:
    root = project(tmp_path, {"test_die.py": "import os\n\n\ndef test_die():\n    os._exit(9)\n"})
    warm = WarmPytest(sys.executable, ENV)
    config = PytestConfig(sys.executable, ("{python}", "-m", "pytest"), 10.0, 60.0)
    try:
        result = PytestSignals(SubprocessRunner(), config, ENV, warm).collect(root, ["test_die.py"])
    finally:
        warm.close()
    assert result.statuses[0].state == "unavailable"
    assert [s.code for s in result.signals] == ["test_die.py::test_die"]


def test_a_server_that_cannot_start_falls_back_to_cold_runs(tmp_path: Path) -> None:
    root = project(tmp_path, {"test_ok.py": "def test_ok():\n    assert False\n"})
    warm = WarmPytest(str(tmp_path / "no-python"), ENV)
    config = PytestConfig(sys.executable, ("{python}", "-m", "pytest"), 10.0, 60.0)
    try:
        assert not warm.available()
        result = PytestSignals(SubprocessRunner(), config, ENV, warm).collect(root, ["test_ok.py"])
    finally:
        warm.close()
    assert [s.code for s in result.signals] == ["test_ok.py::test_ok"]


def test_the_report_plugin_is_found_from_the_request_environment(tmp_path: Path) -> None:
    root = project(tmp_path, {"test_ok.py": "def test_ok():\n    pass\n"})
    warm = WarmPytest(sys.executable, ENV)
    env = {**ENV, "PYTHONPATH": str(PLUGIN_DIR)}
    try:
        done = warm.run(["-p", "coderefine_pytest_report", "-q", "test_ok.py"], cwd=root, timeout=30, env=env)
    finally:
        warm.close()
    assert done is not None and done.code == 0, done


def test_a_project_that_provides_a_preloaded_module_runs_cold(tmp_path: Path) -> None:
    warm = WarmPytest(sys.executable, ENV, avoid={"pluggy", "pkg"})
    try:
        assert not warm.available()  # pytest imports pluggy: the tree's copy must win, so no server
    finally:
        warm.close()


def test_a_project_whose_warnings_are_errors_runs_warm(tmp_path: Path) -> None:
    # The server preloads installed plugins (hypothesis, anyio, ...) before pytest can mark them for
    # assertion rewriting; pytest's start-up warning about that must not fail a project whose
    # filterwarnings is "error", as it did for this repository's own docs/example.
    root = project(
        tmp_path,
        {
            "pyproject.toml": '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n',
            "test_ok.py": "def test_ok():\n    pass\n",
        },
    )
    warm = WarmPytest(sys.executable, ENV)
    try:
        done = warm.run(["-q", "-p", "no:cacheprovider", "test_ok.py"], cwd=root, timeout=60, env=ENV)
        assert done is not None and done.code == 0, done.out if done else None
        assert "Warning" not in done.out + done.err
    finally:
        warm.close()


def test_a_server_started_before_its_names_are_known_serves_once_given_them(tmp_path: Path) -> None:
    root = project(tmp_path, {"test_ok.py": "def test_ok():\n    pass\n"})
    warm = WarmPytest(sys.executable, ENV, avoid=None)
    try:
        warm.provide({"pkg"})
        with pytest.raises(ValueError):
            warm.provide({"other"})
        done = warm.run(["-q", "-p", "no:cacheprovider", "test_ok.py"], cwd=root, timeout=30, env=ENV)
        assert done is not None and done.code == 0 and "." in done.out
    finally:
        warm.close()


def test_a_server_never_given_its_names_is_not_used() -> None:
    warm = WarmPytest(sys.executable, ENV, avoid=None)
    try:
        assert not warm.available()  # it would otherwise wait for them forever
    finally:
        warm.close()


def test_names_given_late_still_keep_a_clashing_project_cold() -> None:
    warm = WarmPytest(sys.executable, ENV, avoid=None)
    try:
        warm.provide({"pluggy"})
        assert not warm.available()
    finally:
        warm.close()


def test_prestart_hands_over_a_matching_server_and_replaces_a_wrong_guess(tmp_path: Path) -> None:
    from coderefine.signals.prestart import early, prestart

    started = early(tmp_path, ENV)
    assert started is not None and started.avoid is None
    same = prestart(tmp_path, Settings(), ENV, ["pkg/mod.py"], started)
    assert same is started and same.avoid == {"pkg"}
    same.close()
    guessed = WarmPytest(str(tmp_path / "another-python"), ENV, avoid=None)
    replaced = prestart(tmp_path, Settings(), ENV, ["pkg/mod.py"], guessed)
    assert replaced is not None and replaced is not guessed and replaced.python == sys.executable
    assert not guessed.available()  # stopped
    replaced.close()
    off = early(tmp_path, ENV)
    assert prestart(tmp_path, Settings(tests=False), ENV, ["pkg/mod.py"], off) is None
    assert off is not None and not off.available()


def test_a_warm_run_ends_with_the_exit_code_a_cold_one_gives(tmp_path: Path) -> None:
    """pytest's --max-warnings changes the exit status after every sessionfinish hook: such a run is
    not cut short, so the warm run's code is the cold run's."""
    import subprocess

    root = project(
        tmp_path, {"test_w.py": "import warnings\n\n\ndef test_w():\n    warnings.warn('careful')\n"}
    )
    args = ["-q", "-p", "no:cacheprovider", "--max-warnings", "0", "test_w.py"]
    cold = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=root, capture_output=True, text=True)
    if "unrecognized arguments: --max-warnings" in cold.stderr:
        pytest.skip("this pytest has no --max-warnings")
    warm = WarmPytest(sys.executable, ENV)
    try:
        done = warm.run(args, cwd=root, timeout=30, env=ENV)
        assert done is not None and done.code == cold.returncode != 0
    finally:
        warm.close()
