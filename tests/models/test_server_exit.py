"""What a dead server's error says: the signal, the log's tail, and the portable rebuild for a CPU fault."""

from __future__ import annotations

import re
import signal
from pathlib import Path

import pytest

from coderefine.models.server_exit import (
    LLAMA_CPP_PYTHON,
    PORTABLE_CMAKE_ARGS,
    ServerExit,
    died_message,
    last_lines,
    rebuild_command,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("code", "found"),
    [
        (-4, signal.SIGILL),
        (132, signal.SIGILL),
        (-11, signal.SIGSEGV),
        (139, signal.SIGSEGV),
        (1, None),
        (0, None),
    ],
)
def test_the_signal_from_popen_or_a_shell(code: int, found: signal.Signals | None) -> None:
    assert ServerExit(code, "").signal is found


def test_a_fault_in_the_log_counts_as_one() -> None:
    assert ServerExit(-4, "").fault and ServerExit(-11, "").fault
    assert ServerExit(1, "traps: python[123] general protection fault ip:7f").fault
    assert ServerExit(1, "sh: line 1: 42 Illegal instruction (core dumped)").fault
    assert not ServerExit(1, "Traceback ...\nValueError: bad model").fault
    assert not ServerExit(-9, "").fault


def test_the_message_shows_the_tail_and_offers_the_rebuild_only_for_a_fault() -> None:
    log = "".join(f"line {n}\n" for n in range(40))
    text = died_message(Path("m.gguf"), "py", ServerExit(-4, log), answered=True)
    assert "was killed by SIGILL (illegal instruction) while this run used it" in text
    assert "\n  line 39" in text and "\n  line 20" in text and "line 19\n" not in text
    assert text.endswith(rebuild_command("py"))
    plain = died_message(Path("m.gguf"), "py", ServerExit(1, ""), answered=False)
    assert plain == "llama.cpp's server for m.gguf exited (1) before it answered. Its log is empty."
    killed = died_message(Path("m.gguf"), "py", ServerExit(-9, "x"), answered=True)
    assert "out-of-memory" in killed and "CMAKE_ARGS" not in killed


def test_long_and_carriage_return_lines_are_cut() -> None:
    assert last_lines("a\r" + "b" * 1000 + "\n\n", width=10) == "a\nbbbbbbbbbb"


def test_the_rebuild_is_the_build_ci_makes_of_the_pinned_version() -> None:
    """The error, CI and the install docs name one build: the same CMAKE_ARGS, the extra's version."""
    assert f"llama-cpp-python[server]=={LLAMA_CPP_PYTHON}" in (ROOT / "pyproject.toml").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert f'CMAKE_ARGS="{PORTABLE_CMAKE_ARGS}"' in ci and f"llama-cpp-python=={LLAMA_CPP_PYTHON}" in ci
    for doc in ("README.md", "docs/models.md"):
        installs = re.findall(r".*pip install.*local-model.*", (ROOT / doc).read_text())
        assert installs and all(PORTABLE_CMAKE_ARGS in line for line in installs), (doc, installs)
    assert rebuild_command("py") == (
        f'CMAKE_ARGS="{PORTABLE_CMAKE_ARGS}" py -m pip install --force-reinstall --no-cache-dir '
        f"llama-cpp-python=={LLAMA_CPP_PYTHON}"
    )
