"""A run's held copies: handed from one evaluation to the next, kept in step with what each run changed
in them, the project taken as the run first saw it, and released (with their manifests) at the end."""

from __future__ import annotations

from pathlib import Path

from coderefine.project.basetree import TreeCache
from coderefine.project.treepool import TreePool
from coderefine.project.workspace import IsolatedTree
from tests.conftest import write_files
from tests.project.test_basetree import FILES, _project, _tree_files


def test_a_released_slot_is_handed_to_the_next_tree_still_held(tmp_path: Path) -> None:
    root = _project(tmp_path)
    cache = TreeCache(tmp_path / "cache", slots=2)
    with TreePool(cache) as pool:
        with IsolatedTree(root, list(FILES), {"pkg/mod.py": b"X = 2\n"}, cache=pool) as first:
            path = first.path
        # Still held by the pool: a second run of coderefine cannot take it meanwhile.
        other = cache.acquire(root)
        assert other is not None and other.path != path
        other.release()
        with IsolatedTree(root, list(FILES), cache=pool) as second:
            assert second.path == path
            assert (second.path / "pkg/mod.py").read_bytes() == b"X = 1\n"  # the last run's write undone
    # Closed: released, and its manifest saved, so the next run's sync copies nothing.
    slot = cache.acquire(root)
    assert slot is not None and slot.path == path
    report = slot.sync(root, list(FILES))
    slot.release()
    assert (report.copied, report.kept) == (0, 3)


def test_what_a_test_did_in_a_held_copy_is_put_back(tmp_path: Path) -> None:
    root = _project(tmp_path)
    with TreePool(TreeCache(tmp_path / "cache")) as pool:
        with IsolatedTree(root, list(FILES), cache=pool) as tree:
            with open(tree.path / "pkg/mod.py", "r+b") as handle:
                handle.write(b"Y")  # in place
            write_files(tree.path, {"junk.txt": "x", "pkg/out/result.json": "{}"})
            (tree.path / "tests/test_mod.py").unlink()
        with IsolatedTree(root, list(FILES), cache=pool) as tree:
            assert _tree_files(tree.path) == {k: v.encode() for k, v in FILES.items()}


def test_the_project_is_taken_as_the_run_first_saw_it(tmp_path: Path) -> None:
    root = _project(tmp_path)
    with TreePool(TreeCache(tmp_path / "cache")) as pool:
        with IsolatedTree(root, list(FILES), cache=pool):
            pass
        (root / "tests/test_mod.py").write_text("def test(): assert False\n")  # edited during the run
        write_files(root, {"pkg/new.py": "Z = 1\n"})
        with IsolatedTree(root, [*FILES, "pkg/new.py"], cache=pool) as tree:
            assert (tree.path / "tests/test_mod.py").read_text() == FILES["tests/test_mod.py"]
            assert (tree.path / "pkg/new.py").read_text() == "Z = 1\n"  # a file new to the list is read
    # The next run sees the edit.
    with IsolatedTree(root, list(FILES), cache=TreeCache(tmp_path / "cache")) as tree:
        assert (tree.path / "tests/test_mod.py").read_text() == "def test(): assert False\n"


def test_two_trees_at_once_get_two_slots_and_the_pool_keeps_both(tmp_path: Path) -> None:
    root = _project(tmp_path)
    with TreePool(TreeCache(tmp_path / "cache")) as pool:
        first = IsolatedTree(root, list(FILES), cache=pool)
        second = IsolatedTree(root, list(FILES), cache=pool)
        assert first.path != second.path
        first.close()
        second.close()
        paths = set()
        for _ in range(2):
            tree = IsolatedTree(root, list(FILES), cache=pool)
            paths.add(tree.path)
            tree.close()
        assert paths <= {first.path, second.path}


def test_a_slot_given_back_after_close_is_released(tmp_path: Path) -> None:
    root = _project(tmp_path)
    cache = TreeCache(tmp_path / "cache", slots=1)
    pool = TreePool(cache)
    tree = IsolatedTree(root, list(FILES), cache=pool)
    pool.close()
    tree.close()
    slot = cache.acquire(root)
    assert slot is not None
    slot.release()


def test_what_another_process_did_in_a_held_copy_is_put_back(tmp_path: Path) -> None:
    """A test's subprocess writes in place, and a test removes a whole folder the copy holds: the first
    is seen by the folder watch, the second makes the slot fall back to a stat of every file."""
    import subprocess

    root = _project(tmp_path)
    with TreePool(TreeCache(tmp_path / "cache")) as pool:
        with IsolatedTree(root, list(FILES), cache=pool) as tree:
            subprocess.run(
                ["sh", "-c", "printf 'X = 9\\n' > pkg/mod.py; mkdir -p out; : > out/log"], cwd=tree.path
            )
        with IsolatedTree(root, list(FILES), cache=pool) as tree:
            assert _tree_files(tree.path) == {k: v.encode() for k, v in FILES.items()}
            subprocess.run(["rm", "-rf", "pkg"], cwd=tree.path)
        with IsolatedTree(root, list(FILES), cache=pool) as tree:
            assert _tree_files(tree.path) == {k: v.encode() for k, v in FILES.items()}
