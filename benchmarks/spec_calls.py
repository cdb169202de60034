"""The largest call once the failing tests' source is in the requests, on the two cases it must stay
bounded on: tabulate 0.9.0 with ``_padleft`` broken (137 tests fail in one helper, its 2,700-line
module shown in part) and the spec-in-tests tasks of the shipped inflection suite.

tabulate's sdist is pinned and cached under ``~/.cache/coderefine/bench`` (or
``$CODEREFINE_BENCH_CACHE``); the first run downloads it with pip. The models are scripted (tabulate:
a critic that names the broken line, a reviser that fixes it, a confirming critic) or the bench's
oracle (inflection), so every figure is a ``len(text) / 4`` count of what the loop really sends.

    python -m benchmarks.run spec
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from benchmarks.common import Row
from benchmarks.large import cache_dir
from coderefine.models.base import Model, ModelReply, ModelRequest

SDIST = "tabulate-0.9.0.tar.gz"
REQUIREMENT = "tabulate==0.9.0"
MODULE = "tabulate/__init__.py"
GOOD = '    fmt = "{0:>%ds}" % width\n'
BAD = '    fmt = "{0:>%ds}" % (width - 1)\n'
LIMIT = 6_000


def tabulate_sdist() -> Path | None:
    archive = cache_dir() / SDIST
    if not archive.is_file():
        archive.parent.mkdir(parents=True, exist_ok=True)
        argv = [sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps"]
        done = subprocess.run(
            [*argv, REQUIREMENT, "-d", str(archive.parent)], capture_output=True, check=False
        )
        if done.returncode != 0 or not archive.is_file():
            return None
    return archive


def _git(root: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.invalid",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    }
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def tabulate_calls(archive: Path) -> dict[str, int]:
    """The input tokens of each call of a fix of the broken ``_padleft``, by role and order."""
    from coderefine.config import Settings
    from coderefine.models.scripted import ScriptedModel
    from coderefine.project.change import from_worktree
    from coderefine.project.gitio import GitRepo
    from coderefine.project.runner import SubprocessRunner
    from coderefine.project.workspace import project_files
    from coderefine.refiner.loop import refine
    from coderefine.signals.evaluate import Evaluator

    with tempfile.TemporaryDirectory(prefix="coderefine-spec-") as scratch:
        with tarfile.open(archive) as tar:
            tar.extractall(scratch, filter="data")
        root = Path(scratch) / "tabulate-0.9.0"
        _git(root, "init", "-q")
        _git(root, "add", "-A")
        _git(root, "commit", "-qm", "tabulate 0.9.0")
        module = root / MODULE
        text = module.read_text("utf-8")
        module.write_text(text.replace(GOOD, BAD, 1), "utf-8")
        line = text[: text.index(GOOD)].count("\n") + 1
        issue = {
            "title": "_padleft pads on the wrong side",
            "severity": "error",
            "path": MODULE,
            "line": line,
            "end_line": line,
            "evidence": BAD.strip(),
            "suggestion": "flush right: '>'",
        }
        fix = f"{MODULE}\n```python\n<<<<<<< SEARCH\n{BAD}=======\n{GOOD}>>>>>>> REPLACE\n```\n"
        passed = {"verdict": "pass", "summary": "flush right again", "issues": []}
        model = ScriptedModel(({"verdict": "revise", "summary": "padding", "issues": [issue]}, fix, passed))
        repo = GitRepo.find(root)
        change = from_worktree([Path(MODULE)], cwd=root, repo=repo, max_bytes=4 << 20)
        settings = Settings(confirm="always", merge="never", ruff_format=False)
        env = {"PATH": os.environ["PATH"]}
        with Evaluator(change, settings, SubprocessRunner(), env, project_files(root, repo)) as evaluator:
            refine(change, settings, model, evaluator, intent="fix the padding of right-aligned cells")
        return {f"{i + 1}. {r.role}": len(r.prompt_text()) // 4 for i, r in enumerate(model.history)}


def inflection_spec_calls() -> dict[str, int]:
    """The largest call of each spec-in-tests task of the inflection suite, the oracle answering."""
    from benchmarks.calls import BilledOracle
    from coderefine.bench.harness import run_task
    from coderefine.bench.manifest import library_suite, load_manifest
    from coderefine.bench.strategies import STRATEGIES
    from coderefine.config import Settings
    from coderefine.project.runner import SubprocessRunner

    library = next(lib for lib in load_manifest() if lib.name == "inflection")
    tasks, _ = library_suite(library, cache_dir() / "suites", SubprocessRunner(), os.environ, print)
    largest: dict[str, int] = {}
    for task in (t for t in tasks if t.kind == "feature-tests"):
        oracle = BilledOracle(task)
        sizes: list[int] = []

        for strategy in ("one-shot", "coderefine"):
            model = Measured(oracle, sizes)
            run_task(task, STRATEGIES[strategy], model, Settings(), SubprocessRunner(), dict(os.environ))
        largest[task.task_id] = max(sizes)
    return largest


class Measured:
    """A model whose requests' sizes are kept."""

    name = "oracle"

    def __init__(self, inner: Model, sizes: list[int]) -> None:
        self._inner = inner
        self._sizes = sizes

    def complete(self, request: ModelRequest) -> ModelReply:
        self._sizes.append(len(request.prompt_text()) // 4)
        return self._inner.complete(request)


def bench_spec(runs: int) -> list[Row]:
    rows: list[Row] = []
    archive = tabulate_sdist()
    if archive is None:
        rows.append(Row("tabulate 0.9.0, _padleft broken", 0, "", "", None, "skipped: no sdist"))
    else:
        calls = tabulate_calls(archive)
        for name, tokens in calls.items():
            rows.append(
                Row(
                    f"tabulate 0.9.0, _padleft broken: call {name}",
                    tokens,
                    "tok",
                    f"< {LIMIT}",
                    tokens < LIMIT,
                )
            )
    for task_id, tokens in inflection_spec_calls().items():
        rows.append(
            Row(
                f"largest call, {task_id} (one-shot, coderefine)", tokens, "tok", f"< {LIMIT}", tokens < LIMIT
            )
        )
    return rows
