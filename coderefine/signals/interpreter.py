"""Which Python runs the project's tests."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path


def find_interpreter(root: Path, configured: str, environ: Mapping[str, str]) -> str:
    """The project's Python: the setting, then a .venv in the project, then VIRTUAL_ENV, then ours.

    A project's own .venv comes before VIRTUAL_ENV because pre-commit runs hooks with VIRTUAL_ENV set
    to the hook's environment, which lacks the project's dependencies.
    """
    if configured:
        path = Path(configured)
        return str(path if path.is_absolute() or os.sep not in configured else root / path)
    candidates = [root / ".venv", root / "venv"]
    if environ.get("VIRTUAL_ENV"):
        candidates.append(Path(environ["VIRTUAL_ENV"]))
    for venv in candidates:
        for exe in (venv / "bin" / "python", venv / "Scripts" / "python.exe"):
            if exe.is_file():
                return str(exe)
    return sys.executable
