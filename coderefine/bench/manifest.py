"""The shipped suites: a manifest of pinned libraries and their tasks, never the code itself.

Each library's suite (or a release suite: the changes between two of its releases) is built on first
use with ``make_suite`` (its seed and task count come from the manifest) and cached under the results
folder. The built tasks are compared with the manifest's records, so a build that came out differently
(another pytest or ruff changed what is kept) is reported, not silently used as if it were the published
suite.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from coderefine.bench.build import Progress, Source, make_suite
from coderefine.bench.suite import SUITE_FILE, LibraryTask, load_suite
from coderefine.errors import UsageError
from coderefine.project.runner import Runner

MANIFEST = Path(__file__).parent / "suites.json"
RECORD_FIELDS = ("task_id", "kind", "shape", "strength", "mutation", "path", "function", "line")


@dataclass(frozen=True)
class Library:
    name: str
    version: str
    licence: str
    requires: tuple[str, ...]
    tasks: int
    seed: int
    style: str
    records: tuple[dict[str, object], ...]
    upgrade_to: str = ""  # a release suite: the changes from ``version`` to this release
    deselect: tuple[str, ...] = ()  # tests left out from the start (make-suite --deselect)
    released: str = ""  # a release suite: the day ``upgrade_to`` reached PyPI (YYYY-MM-DD)

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"

    @property
    def folder_name(self) -> str:
        upgrade = f"-to-{self.upgrade_to}" if self.upgrade_to else ""
        return f"{self.name}-{self.version}{upgrade}-seed{self.seed}-n{self.tasks}"

    @property
    def label(self) -> str:
        return f"{self.requirement} -> {self.upgrade_to}" if self.upgrade_to else self.requirement


def load_manifest(path: Path = MANIFEST) -> list[Library]:
    try:
        data = json.loads(path.read_text("utf-8"))
        return [
            Library(
                str(row["name"]),
                str(row["version"]),
                str(row["licence"]),
                tuple(row["requires"]),
                int(row["tasks"]),
                int(row["seed"]),
                str(row.get("style", "")),
                tuple(row.get("records", ())),
                str(row.get("upgrade_to", "")),
                tuple(row.get("deselect_given", ())),
                str(row.get("released", "")),
            )
            for row in data["libraries"]
        ]
    except (OSError, KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"cannot read the suite manifest {path}: {exc}") from exc


def record(task: LibraryTask) -> dict[str, object]:
    """What the manifest keeps of a task: where and what, and its test split, without the code."""
    row: dict[str, object] = {name: getattr(task, name) for name in RECORD_FIELDS}
    row["visible"] = list(task.visible)
    row["hidden"] = list(task.hidden)
    if task.files:
        row["files"] = list(task.files)
    return row


def library_suite(
    library: Library,
    cache: Path,
    runner: Runner,
    environ: Mapping[str, str],
    progress: Progress,
) -> tuple[list[LibraryTask], list[str]]:
    """The library's tasks, built into ``cache`` if not there yet, and the differences from the manifest."""
    folder = cache / library.folder_name
    if not (folder / SUITE_FILE).exists():
        source = Source(
            requirement=library.requirement,
            requires=library.requires,
            licence=library.licence,
            upgrade_to=library.upgrade_to,
            deselect=library.deselect,
        )
        make_suite(source, folder, runner, environ, tasks=library.tasks, seed=library.seed, progress=progress)
    _, tasks = load_suite(folder)
    return tasks, differences(library, tasks)


def differences(library: Library, tasks: Sequence[LibraryTask]) -> list[str]:
    if not library.records:
        return []
    shipped = {str(r["task_id"]): r for r in library.records}
    # Records made before a kind of task existed (review tasks) do not list it: those built tasks are
    # additions, not differences, and the figures of the recorded kinds stay comparable.
    kinds = {str(r["kind"]) for r in library.records}
    built = {str(r["task_id"]): r for r in map(record, tasks) if str(r["kind"]) in kinds}
    found = []
    for task_id in sorted(set(built) | set(shipped)):
        if built.get(task_id) != shipped.get(task_id):
            found.append(task_id)
    return found
