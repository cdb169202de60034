"""The scale benchmark's tree rows: preparing a candidate's tree, and choosing its related tests."""

from __future__ import annotations

import statistics
import tarfile
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.large import cache_dir
from benchmarks.scale_repo import _git, modules
from benchmarks.scale_report import TreeRow

DJANGO_SDIST = "Django-5.1.4.tar.gz"


def tree_rows(label: str, root: Path, changes: Sequence[int], candidates: Sequence[str]) -> list[TreeRow]:
    from coderefine.project.basetree import TreeCache
    from coderefine.project.gitio import GitRepo
    from coderefine.project.workspace import IsolatedTree, project_files

    files = project_files(root, GitRepo.find(root))
    start = time.perf_counter()
    with IsolatedTree(root, files):
        copy_s = time.perf_counter() - start
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        cache = TreeCache(Path(scratch))
        start = time.perf_counter()
        with IsolatedTree(root, files, cache=cache):
            first = time.perf_counter() - start
        for changed in changes:
            chosen = list(candidates[:changed])
            samples, cpu, written = [], [], 0
            for round_ in range(3):
                overrides = {
                    rel: (root / rel).read_bytes() + f"\n# candidate {round_}\n".encode() for rel in chosen
                }
                written = sum(len(v) for v in overrides.values())
                start, start_cpu = time.perf_counter(), time.process_time()
                with IsolatedTree(root, files, overrides, cache=cache):
                    samples.append(time.perf_counter() - start)
                    cpu.append(time.process_time() - start_cpu)
            rows.append(
                TreeRow(
                    label,
                    len(files),
                    changed,
                    copy_s,
                    first,
                    statistics.median(samples),
                    statistics.median(cpu),
                    written / 1024,
                )
            )
    return rows


def selection_row(root: Path) -> tuple[int, float, float, float]:
    """(Python files, seconds reading every one, seconds with a cold index, with a warm one) for the
    related tests of one changed module (imports are followed through every module)."""
    from coderefine.project.gitio import GitRepo
    from coderefine.project.workspace import project_files
    from coderefine.signals.import_index import ImportIndex
    from coderefine.signals.related import is_python, select_tests

    files = project_files(root, GitRepo.find(root))
    changed = [modules(len(files))[0]]
    start = time.perf_counter()
    texts = {rel: (root / rel).read_text("utf-8", errors="replace") for rel in files if is_python(rel)}
    by_text = select_tests(changed, files, texts)
    read_s = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as scratch:
        index = ImportIndex(Path(scratch) / "imports.marshal")
        walls = []
        for _ in range(3):
            start = time.perf_counter()
            by_index = select_tests(changed, files, {}, imports=index.imports(root, files))
            walls.append(time.perf_counter() - start)
            assert by_index == by_text
    return len(texts), read_s, walls[0], min(walls[1:])


def django_root(parent: Path) -> Path | None:
    """Django's sdist as a git repository below ``parent``, or None when the sdist is not cached."""
    archive = cache_dir() / DJANGO_SDIST
    if not archive.is_file():
        return None
    with tarfile.open(archive) as tar:
        tar.extractall(parent, filter="data")
    root = next(parent.iterdir())
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "django")
    return root
