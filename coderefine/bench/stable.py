"""The environment of every pytest run the bench starts: its plugin folder on ``PYTHONPATH`` and the
plugin that turns off hypothesis' chance and deadlines (``plugin/coderefine_bench_stable.py``) listed in
``PYTEST_PLUGINS``, which pytest loads in a cold run and in a fork of the warm server alike."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

PLUGIN_DIR = Path(__file__).parent / "plugin"
STABLE_PLUGIN = "coderefine_bench_stable"


def stable_environ(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` with the bench's plugin folder on ``PYTHONPATH`` and its stable plugin listed in
    ``PYTEST_PLUGINS`` (idempotent; what the environment already lists stays, first)."""
    env = dict(environ)
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if str(PLUGIN_DIR) not in paths:
        env["PYTHONPATH"] = os.pathsep.join([*paths, str(PLUGIN_DIR)])
    plugins = [p.strip() for p in env.get("PYTEST_PLUGINS", "").split(",") if p.strip()]
    if STABLE_PLUGIN not in plugins:
        env["PYTEST_PLUGINS"] = ",".join([*plugins, STABLE_PLUGIN])
    return env
