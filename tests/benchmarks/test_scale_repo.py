"""The scale benchmark's generated repositories: the same size gives the same files, a real git repository
whose tests pass, and a change of N modules selects N test files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from benchmarks.scale import Row, TreeRow, markdown, write_docs
from benchmarks.scale_repo import cached_repo, layout, modules
from coderefine.signals.related import select_tests


def test_the_same_size_gives_the_same_files() -> None:
    assert layout(60) == layout(60)
    assert len(layout(60)) == 60 and len(layout(61)) == 61
    assert len(set(modules(200))) == len(modules(200))


def test_a_cached_repository_is_built_once_and_its_tests_pass(tmp_path: Path) -> None:
    root = cached_repo(40, tmp_path)
    (root / modules(40)[0]).write_text("broken = \n")
    again = cached_repo(40, tmp_path)  # reset to main
    assert again == root
    assert (root / modules(40)[0]).read_text() == layout(40)[modules(40)[0]]
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=root)
    assert done.returncode == 0


def test_a_change_of_n_modules_selects_n_test_files() -> None:
    files = layout(400)
    for n in (1, 5, 30):
        changed = modules(400)[:n]
        assert len(select_tests(changed, sorted(files), files).files) == n


def test_the_at_scale_section_replaces_itself(tmp_path: Path) -> None:
    (tmp_path / "benchmarks.md").write_text(
        "# Benchmarks\n\n## Before\n\ntext\n\n## At scale\n\nold\n\n## After\n\nx\n"
    )
    rows = [Row("check", 1000, 1, 1.5, 40.0)]
    trees = [TreeRow("generated", 1000, 1, 1.0, 1.0, 0.05, 0.01, 0.3)]
    section = "## At scale\n\n" + markdown("Machine: test.", trees, ["a line"], rows, [])
    write_docs(section, tmp_path)
    write_docs(section, tmp_path)
    text = (tmp_path / "benchmarks.md").read_text()
    assert text.count("## At scale") == 1 and "old" not in text
    assert "## Before" in text and "## After" in text and "| check | 1000 | 1 | 1.50 s |" in text
