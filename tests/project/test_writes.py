import json
import os
from pathlib import Path

import pytest

from coderefine.errors import UndoError, WriteError
from coderefine.project.writes import FileWrite, Journal, atomic_write


def test_atomic_write_keeps_mode_and_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "run.py"
    target.write_bytes(b"old")
    target.chmod(0o751)
    atomic_write(target, b"new")
    assert target.read_bytes() == b"new"
    assert target.stat().st_mode & 0o777 == 0o751
    assert [p.name for p in tmp_path.iterdir()] == ["run.py"]


def test_write_then_undo_restores_exact_bytes(tmp_path: Path) -> None:
    old = b"x = 1\r\n\xef\xbb\xbf"
    (tmp_path / "m.py").write_bytes(old)
    journal = Journal(tmp_path / ".git" / "coderefine" / "journal", tmp_path)
    journal.write([FileWrite("m.py", old, b"x = 2\n"), FileWrite("new.py", None, b"y = 1\n")])
    assert (tmp_path / "m.py").read_bytes() == b"x = 2\n"
    result = journal.undo()
    assert set(result.restored) == {"m.py", "new.py"}
    assert (tmp_path / "m.py").read_bytes() == old
    assert not (tmp_path / "new.py").exists()
    with pytest.raises(UndoError, match="nothing left to undo") as info:
        journal.undo()
    assert "has not written" not in str(info.value)  # it has: those writes are undone


def test_undo_before_any_write_says_so(tmp_path: Path) -> None:
    journal = Journal(tmp_path / ".git" / "coderefine" / "journal", tmp_path)
    with pytest.raises(UndoError, match="has not written any file"):
        journal.undo()


def test_undo_refuses_when_the_file_changed_since(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_bytes(b"a")
    journal = Journal(tmp_path / "j", tmp_path)
    journal.write([FileWrite("m.py", b"a", b"b")])
    (tmp_path / "m.py").write_bytes(b"user edit")
    with pytest.raises(UndoError, match="changed since"):
        journal.undo()
    assert journal.undo(force=True).restored == ("m.py",)
    assert (tmp_path / "m.py").read_bytes() == b"a"


def test_failed_write_rolls_back_when_replace_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.py").write_bytes(b"a")
    (tmp_path / "b.py").write_bytes(b"b")
    journal = Journal(tmp_path / "j", tmp_path)
    real_replace = os.replace

    def flaky_replace(src: str, dst: str) -> None:
        if str(dst).endswith("b.py"):
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", flaky_replace)
    with pytest.raises(WriteError, match="No space left"):
        journal.write([FileWrite("a.py", b"a", b"A"), FileWrite("b.py", b"b", b"B")])
    monkeypatch.setattr(os, "replace", real_replace)
    assert (tmp_path / "a.py").read_bytes() == b"a"
    assert (tmp_path / "b.py").read_bytes() == b"b"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "b.py", "j"]


def test_pending_entry_from_a_crash_can_be_undone(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"a")
    (tmp_path / "b.py").write_bytes(b"b")
    journal = Journal(tmp_path / "j", tmp_path)
    entry = journal._record([FileWrite("a.py", b"a", b"A"), FileWrite("b.py", b"b", b"B")])
    atomic_write(tmp_path / "a.py", b"A")  # the crash came before b.py was written
    assert journal.undo().restored == ("a.py",)
    assert (tmp_path / "a.py").read_bytes() == b"a"
    assert entry.exists()


def test_journal_is_bounded(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_bytes(b"0")
    journal = Journal(tmp_path / "j", tmp_path)
    for n in range(25):
        journal.write([FileWrite("m.py", str(n).encode(), str(n + 1).encode())])
    assert len(journal.entries()) == 20


def test_outside_git_the_journal_is_ignored_by_git(tmp_path: Path) -> None:
    journal = Journal.for_project(tmp_path, None)
    assert journal.folder == tmp_path / ".coderefine" / "journal"
    assert (tmp_path / ".coderefine" / ".gitignore").read_text() == "*\n"


def test_a_run_entry_grows_file_by_file_and_one_undo_restores_the_run(tmp_path: Path) -> None:
    from coderefine.project.writes import FileWrite, Journal

    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text(f"{name} old\n")
    journal = Journal.for_project(tmp_path, None)
    run = journal.open_run()
    run.write([FileWrite("a.py", b"a.py old\n", b"a new\n")])
    run.write([FileWrite("b.py", b"b.py old\n", b"b new\n")])
    # A crash while c.py is being written: its record says pending, the file holds the new bytes.
    manifest = json.loads((run.entry / "manifest.json").read_text())
    manifest["files"].append(
        {"path": "c.py", "blob": None, "before_sha": None, "after_sha": None, "state": "pending"}
    )
    (tmp_path / "c.py").write_text("c half\n")
    assert journal.recover() == ()  # c.py holds neither side: left alone
    assert (tmp_path / "a.py").read_text() == "a new\n"  # finished files of the run stay written
    assert journal.undo().restored == ("a.py", "b.py")
    assert (tmp_path / "a.py").read_text() == "a.py old\n" and (tmp_path / "b.py").read_text() == "b.py old\n"


def test_recover_restores_only_the_file_a_crashed_run_was_writing(tmp_path: Path) -> None:
    from coderefine.project.writes import FileWrite, Journal

    (tmp_path / "a.py").write_text("a old\n")
    (tmp_path / "b.py").write_text("b old\n")
    journal = Journal.for_project(tmp_path, None)
    run = journal.open_run()
    run.write([FileWrite("a.py", b"a old\n", b"a new\n")])
    run.write([FileWrite("b.py", b"b old\n", b"b new\n")])
    manifest = json.loads((run.entry / "manifest.json").read_text())
    manifest["files"][1]["state"] = "pending"  # as if the process died before marking b.py done
    (run.entry / "manifest.json").write_text(json.dumps(manifest))
    assert journal.recover() == ("b.py",)
    assert (tmp_path / "a.py").read_text() == "a new\n" and (tmp_path / "b.py").read_text() == "b old\n"
    assert journal.undo().restored == ("a.py",)


def test_a_run_that_wrote_nothing_leaves_no_entry(tmp_path: Path) -> None:
    from coderefine.project.writes import Journal

    journal = Journal.for_project(tmp_path, None)
    journal.open_run().close()
    assert journal.entries() == []
