"""The README's ``python -m pytest`` skips the slow tests, saying how to run them; CI runs them."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SLOW = "tests/bench/test_harness.py::test_self_checks_on_humanevalfix"


def test_slow_tests_are_skipped_with_a_reason_unless_ci_is_set() -> None:
    from tests.conftest import run_slow

    class Config:
        def __init__(self, flag: bool) -> None:
            self.flag = flag

        def getoption(self, name: str) -> bool:
            assert name == "--run-slow"
            return self.flag

    assert not run_slow(Config(False), {})  # type: ignore[arg-type]
    assert not run_slow(Config(False), {"CI": "false"})  # type: ignore[arg-type]
    assert run_slow(Config(False), {"CI": "true"})  # type: ignore[arg-type]
    assert run_slow(Config(True), {})  # type: ignore[arg-type]


def test_the_readme_command_skips_them_and_says_how_to_run_them() -> None:
    environ = {k: v for k, v in os.environ.items() if k != "CI"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", SLOW, "-q", "-rs", "-p", "no:cacheprovider"],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        check=False,
    )
    assert "2 skipped" in done.stdout, done.stdout
    assert "runs with --run-slow, or when CI is set" in done.stdout
