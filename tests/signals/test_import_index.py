"""The cached import index: an unchanged file is not read again, a changed, new or deleted one is
followed, and the selection it gives is the one the texts give."""

from __future__ import annotations

import os
from pathlib import Path

from coderefine.signals.import_index import ImportIndex
from coderefine.signals.related import file_imports, select_tests
from tests.conftest import write_files

PROJECT = {
    "pkg/__init__.py": "from pkg.core import run\n",
    "pkg/core.py": "def run(): pass\n",
    "pkg/other.py": "X = 1\n",
    "tests/test_core.py": "from pkg.core import run\n",
    "tests/test_pkg.py": "import pkg\n",
    "tests/test_other.py": "from pkg import other\n",
    "tests/helpers_test.py": "def helper():\n    import pkg.other\n",
}


def _project(tmp_path: Path) -> tuple[Path, list[str]]:
    root = tmp_path / "proj"
    write_files(root, PROJECT)
    return root, sorted(PROJECT)


def test_a_second_run_reads_nothing_and_agrees_with_the_texts(tmp_path: Path) -> None:
    root, files = _project(tmp_path)
    index = ImportIndex(tmp_path / "imports.marshal")
    first = index.imports(root, files)
    assert index.reads == 7  # every Python file: tests, the package __init__.py and its modules
    again = index.imports(root, files)
    assert index.reads == 0
    assert first == again == file_imports(files, PROJECT)


def test_changed_new_and_deleted_files_are_followed(tmp_path: Path) -> None:
    root, files = _project(tmp_path)
    index = ImportIndex(tmp_path / "imports.marshal")
    index.imports(root, files)
    write_files(
        root, {"tests/test_core.py": "from pkg.other import X\n", "tests/test_new.py": "import json\n"}
    )
    (root / "tests/test_pkg.py").unlink()
    now = [*files, "tests/test_new.py"]  # a stale listing still naming the deleted file
    found = index.imports(root, now)
    assert index.reads == 2
    assert found["tests/test_core.py"] == {"pkg.other", "pkg.other.X"}
    assert found["tests/test_new.py"] == {"json"}
    assert "tests/test_pkg.py" not in found


def test_a_file_rewritten_unchanged_is_read_but_not_parsed_again(tmp_path: Path) -> None:
    root, files = _project(tmp_path)
    index = ImportIndex(tmp_path / "imports.marshal")
    before = index.imports(root, files)
    path = root / "tests/test_core.py"
    path.write_bytes(path.read_bytes())
    stamp = path.stat().st_mtime_ns + 5_000_000_000
    os.utime(path, ns=(stamp, stamp))
    assert index.imports(root, files) == before
    assert index.reads == 1


def test_texts_under_review_win_and_are_not_cached(tmp_path: Path) -> None:
    root, files = _project(tmp_path)
    index = ImportIndex(tmp_path / "imports.marshal")
    edited = index.imports(root, files, {"pkg/__init__.py": "from pkg.other import X\n"})
    assert edited["pkg/__init__.py"] == {"pkg.other", "pkg.other.X"}
    assert index.imports(root, files)["pkg/__init__.py"] == {"pkg.core", "pkg.core.run"}


def test_a_damaged_index_is_rebuilt_and_crlf_files_count(tmp_path: Path) -> None:
    root, files = _project(tmp_path)
    write_files(root, {"tests/test_core.py": b"import os\r\nfrom pkg.core import run\r\n"})
    (tmp_path / "imports.marshal").write_bytes(b"\x00garbage")
    index = ImportIndex(tmp_path / "imports.marshal")
    found = index.imports(root, files)
    assert found["tests/test_core.py"] == {"os", "pkg.core", "pkg.core.run"}
    assert index.reads == 7


def test_the_selection_from_the_index_is_the_selection_from_the_texts(tmp_path: Path) -> None:
    root, files = _project(tmp_path)
    imports = ImportIndex(None).imports(root, files)
    for changed in (["pkg/core.py"], ["pkg/other.py"], ["pkg/__init__.py"], ["pkg/core.py", "pkg/other.py"]):
        assert select_tests(changed, files, {}, imports=imports) == select_tests(changed, files, PROJECT)
    # ``from pkg import other`` imports ``pkg`` too, whose __init__.py re-exports pkg.core.
    assert select_tests(["pkg/core.py"], files, {}, imports=imports).files == (
        "tests/test_core.py",
        "tests/test_other.py",
        "tests/test_pkg.py",
    )


def test_a_snapshot_reads_the_index_once_and_lets_a_change_stand_in_for_its_files(tmp_path: Path) -> None:
    from coderefine.signals.import_index import ImportIndex, ImportSnapshot

    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_a.py").write_text("import pkg.a\n")
    (tmp_path / "tests/test_b.py").write_text("import pkg.b\n")
    index = ImportIndex(tmp_path / "index.marshal")
    files = ["tests/test_a.py", "tests/test_b.py", "pkg/a.py", "pkg/b.py"]
    snapshot = ImportSnapshot(index, tmp_path, files)
    assert snapshot.select(["pkg/a.py"], {"pkg/a.py": "import os\n"}).files == ("tests/test_a.py",)
    (tmp_path / "tests/test_a.py").write_text("import pkg.z\n")  # the sweep's view stays as it began
    assert snapshot.select(["pkg/a.py"], {"pkg/a.py": ""}).files == ("tests/test_a.py",)
    # A test file under review imports what its new text says.
    both = snapshot.select(
        ["pkg/a.py", "tests/test_b.py"], {"tests/test_b.py": "import pkg.a\n", "pkg/a.py": ""}
    )
    assert both.files == ("tests/test_a.py", "tests/test_b.py")
    assert snapshot.select(["pkg/b.py"], {"pkg/b.py": ""}).files == ("tests/test_b.py",)
    # A new test file, not yet among the project's files, is its own test and counts in the suite.
    new = snapshot.select(["tests/test_c.py"], {"tests/test_c.py": "import pkg.c\n"})
    assert new.files == ("tests/test_c.py",) and new.suite == 3
    assert index.reads == 2  # the two test files, read once
