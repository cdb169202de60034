"""The plain git hook, for projects that do not use the pre-commit framework."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from coderefine.errors import UsageError
from coderefine.project.writes import atomic_write

MARKER = "# coderefine pre-commit hook"

HOOK_TEMPLATE = """#!/bin/sh
# coderefine pre-commit hook: reviews what is staged, never unstaged work.
# Installed by 'coderefine install-hook'; delete this file to uninstall.
# Skip it once: SKIP=coderefine git commit ...  (or git commit --no-verify)
# What it does: [tool.coderefine] hook-mode = "fix" | "check" | "signals" in pyproject.toml.
case ",${SKIP:-}," in *,coderefine,*) exit 0 ;; esac
coderefine_python='{python}'
if [ -n "$coderefine_python" ] && [ -x "$coderefine_python" ]; then
    exec "$coderefine_python" -m coderefine hook
elif command -v coderefine >/dev/null 2>&1; then
    exec coderefine hook
else
    echo "coderefine: not found; 'pip install coderefine', or delete $0 to uninstall the hook" >&2
    exit 1
fi
"""


def hook_script(python: str = "") -> str:
    """The hook; ``python`` is the interpreter that has coderefine (empty: find it on PATH)."""
    return HOOK_TEMPLATE.replace("{python}", python.replace("'", ""))


def install_hook(hooks_dir: Path, python: str, force: bool) -> Path:
    """Write the pre-commit hook into ``hooks_dir``; refuse to replace another hook unless ``force``."""
    target = hooks_dir / "pre-commit"
    if target.exists():
        current = target.read_text(encoding="utf-8", errors="replace")
        if MARKER not in current and not force:
            raise UsageError(
                f"{target} already exists and is not coderefine's; "
                "move it aside, or use --force to replace it"
            )
    hooks_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(target, hook_script(python).encode("utf-8"))
    mode = target.stat().st_mode
    os.chmod(target, mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return target
