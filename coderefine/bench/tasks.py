"""Benchmark tasks: HumanEvalFix (Python) by default, each materialised as a small project.

A task's project holds the buggy module (``task.py``), its example tests (the docstring's examples,
``test_examples.py``), which coderefine may run as its signal, and a ``pyproject.toml``. The full tests are
kept out of the project: they only score the result, and never reach the model or the signals.
"""

from __future__ import annotations

import gzip
import json
import random
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from coderefine.errors import ToolError, UsageError
from coderefine.project.runner import Runner

DATA = Path(__file__).parent / "humanevalfix-python.jsonl.gz"
MODULE = "task.py"
EXAMPLES = "test_examples.py"
HIDDEN_TIMEOUT = 20.0


@dataclass(frozen=True)
class Task:
    task_id: str
    entry_point: str
    prompt: str
    buggy_solution: str
    canonical_solution: str
    test: str
    example_test: str
    bug_type: str
    docstring: str

    path = MODULE
    kind = "bug"
    shape = "humanevalfix"
    strength = "docstring"
    python = ""

    @property
    def mutation(self) -> str:
        return self.bug_type

    def oracle_edits(self) -> list[tuple[str, str]]:
        """(text the task starts with, text that fixes it) pairs, for the oracle model."""
        return [(self.buggy_solution, self.canonical_solution)]

    def passes(
        self, module_text: str, scratch: Path, runner: Runner, environ: Mapping[str, str], slack: float = 1
    ) -> bool:
        """Whether the full hidden tests pass with ``module_text`` as the module (``slack`` multiplies
        the time limit)."""
        program = scratch / "hidden_check.py"
        program.write_text(self.hidden_program(module_text), encoding="utf-8")
        try:
            done = runner.run([sys.executable, str(program)], cwd=scratch, timeout=HIDDEN_TIMEOUT * slack)
        except ToolError:
            return False
        finally:
            program.unlink(missing_ok=True)
        return done.code == 0

    @property
    def buggy_program(self) -> str:
        return self.prompt + self.buggy_solution

    @property
    def canonical_program(self) -> str:
        return self.prompt + self.canonical_solution

    @property
    def intent(self) -> str:
        return (
            f"Fix bugs in {self.entry_point}. It must do what its docstring says:\n{self.docstring.strip()}"
        )

    @property
    def visible(self) -> tuple[str, ...]:
        """The tests the task's project holds (the example check); the full tests stay hidden."""
        return (f"{EXAMPLES}::test_examples",)

    def failing_visible(self, folder: Path, runner: Runner, environ: Mapping[str, str]) -> tuple[str, ...]:
        """The example check if it fails on the materialised ``folder``'s buggy module, else nothing: on
        14 of the 164 tasks the docstring's examples pass on the buggy code, and a one-shot author told
        that they fail would be misled."""
        # Run from ``-c`` with the folder put on the path by hand (PYTHONSAFEPATH would leave the cwd
        # out), so the check imports its task module and writes nothing into the project.
        program = (
            f"import sys\nsys.path.insert(0, {str(folder)!r})\n{self.example_tests()}\n\ntest_examples()\n"
        )
        try:
            done = runner.run(
                [sys.executable, "-B", "-c", program], cwd=folder, timeout=HIDDEN_TIMEOUT, env=environ
            )
        except ToolError:
            return self.visible  # a check that hangs or cannot run does not pass
        return () if done.code == 0 else self.visible

    def example_tests(self) -> str:
        """The example check as a pytest file (without the module-level call of the original)."""
        lines = self.example_test.splitlines()
        # The check function is the last top-level "def check(": one task's data carries a stray copy of
        # its solution, with an indented helper of the same name, before it.
        starts = [i for i, line in enumerate(lines) if line.startswith("def check(")]
        if not starts:
            return "from task import *  # noqa: F403\n"
        body = "\n".join(line for line in lines[starts[-1] :] if line.strip() != f"check({self.entry_point})")
        return (
            "from task import *  # noqa: F403\n\n\n"
            f"{body.strip()}\n\n\ndef test_examples():\n    check({self.entry_point})\n"
        )

    def hidden_program(self, module: str) -> str:
        """The program that scores ``module``: it plus the full tests."""
        return f"{module}\n\n{self.test}\n\ncheck({self.entry_point})\n"

    def materialise(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / MODULE).write_text(self.buggy_program, encoding="utf-8")
        (folder / EXAMPLES).write_text(self.example_tests(), encoding="utf-8")
        (folder / "pyproject.toml").write_text('[project]\nname = "task"\nversion = "0"\n', encoding="utf-8")
        return folder


def load_tasks(path: Path = DATA) -> list[Task]:
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            return [Task(**{k: row[k] for k in Task.__dataclass_fields__}) for row in map(json.loads, handle)]
    except (OSError, KeyError, ValueError) as exc:
        raise UsageError(f"cannot read the task suite {path}: {exc}") from exc


def select_tasks(
    tasks: Sequence[Task], *, ids: Sequence[str] = (), limit: int = 0, seed: int | None = None
) -> list[Task]:
    """The tasks named by ``ids`` (Python/3 or 3), else all; shuffled by ``seed``; the first ``limit``."""
    chosen = list(tasks)
    if ids:
        wanted = {i if "/" in i else f"Python/{i}" for i in ids}
        unknown = wanted - {t.task_id for t in tasks}
        if unknown:
            raise UsageError(f"unknown task ids: {', '.join(sorted(unknown))}")
        chosen = [t for t in chosen if t.task_id in wanted]
    if seed is not None:
        random.Random(seed).shuffle(chosen)
    return chosen[:limit] if limit else chosen
