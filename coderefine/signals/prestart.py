"""Start the warm test server early: its import of pytest then overlaps coderefine's own start.

``early`` runs first thing in a command that will test, with a guess at the project's interpreter (the one
``find_interpreter`` gives for the working folder) and before the project's files are known. ``prestart``
then either completes that server with the names it must not preload, or, when the guess was wrong or the
tests are off, stops it and starts the right one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from coderefine.signals.interpreter import find_interpreter
from coderefine.signals.warm import WarmPytest, top_level_names

if TYPE_CHECKING:  # its import (tomllib) would delay the early start
    from coderefine.config import Settings


def early(cwd: Path, environ: Mapping[str, str]) -> WarmPytest | None:
    """A server of the interpreter a project at ``cwd`` would use, waiting for its names to avoid."""
    if not hasattr(os, "fork"):
        return None
    return WarmPytest(find_interpreter(cwd, "", environ), environ, avoid=None)


def prestart(
    root: Path,
    settings: Settings,
    environ: Mapping[str, str],
    project_files: Sequence[str],
    started: WarmPytest | None = None,
) -> WarmPytest | None:
    """The warm server for an ``Evaluator`` about to be made for ``root``: ``started`` (from ``early``)
    when it is of the right interpreter, else a new one; None when runs would not use one."""
    if not (settings.tests and settings.warm_tests and hasattr(os, "fork")):
        if started is not None:
            started.close()
        return None
    python = find_interpreter(root, settings.python, environ)
    avoid = top_level_names(project_files)
    if started is not None and started.python == python and started.avoid is None:
        started.provide(avoid)
        return started
    if started is not None:
        started.close()
    return WarmPytest(python, environ, avoid)
