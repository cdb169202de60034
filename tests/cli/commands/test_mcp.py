"""``coderefine mcp`` on the command line: its help teaches the tools; a missing SDK is a clear error."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from coderefine.cli.main import main


def test_help_names_the_tools_and_the_command_a_host_runs() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "coderefine", "mcp", "--help"], capture_output=True, text=True, check=True
    )
    for word in ("check", "critique", "refine", "undo", "sampling", "coderefine mcp --root"):
        assert word in done.stdout


def test_without_the_sdk_it_says_what_to_install() -> None:
    # A fresh interpreter in which the SDK cannot be imported, as if it were not installed.
    probe = (
        "import sys; sys.modules['mcp'] = None; from coderefine.cli.main import main; sys.exit(main(['mcp']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 2
    assert "pip install 'coderefine[mcp]'" in done.stderr


def test_a_root_that_is_not_a_folder_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "--root", "/nonexistent/project"], out=io.StringIO()) == 2
    assert "not a folder" in capsys.readouterr().err
