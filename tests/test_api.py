"""The public Python API, used only through the names ``coderefine`` exports."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import coderefine
from tests.conftest import SMALL_PROJECT, RepoFactory, write_files
from tests.refiner.test_loop import BUGGY, FIX, PASS, revise


def test_every_exported_name_resolves_and_importing_is_cheap() -> None:
    for name in coderefine.__all__:
        assert getattr(coderefine, name) is not None
    probe = "import sys, coderefine; print(sorted(m for m in ('libcst', 'git', 'anthropic', 'mcp') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        coderefine.nothing  # noqa: B018


def test_check_a_buggy_change(make_repo: RepoFactory) -> None:
    root = make_repo(SMALL_PROJECT)
    write_files(root, {"pkg/mod.py": BUGGY})
    result = coderefine.check(["pkg/mod.py"], root=root)
    assert isinstance(result, coderefine.CheckResult)
    assert result.failed("warning")
    assert [s.code for s in result.evaluation.comparison.introduced] == ["tests/test_mod.py::test_add"]
    data = coderefine.to_data(result)
    assert data["failed"] is True and json.loads(json.dumps(data)) == data


def test_critique_writes_nothing(make_repo: RepoFactory) -> None:
    root = make_repo(SMALL_PROJECT)
    write_files(root, {"pkg/mod.py": BUGGY})
    settings = coderefine.load_settings(root, environ={}, tests=False)
    model = coderefine.ScriptedModel([revise()])
    result = coderefine.critique(["pkg/mod.py"], root=root, model=model, settings=settings, intent="add adds")
    assert isinstance(result, coderefine.RefineResult)
    assert result.critique is not None and result.critique.verdict == "revise"
    assert result.critique.issues[0] == coderefine.Issue(
        "add subtracts", "error", "pkg/mod.py", 2, 2, "return a - b", "use +"
    )
    assert "add adds" in model.history[0].prompt_text()
    assert (root / "pkg/mod.py").read_text() == BUGGY


def test_refine_dry_run_then_write_then_undo(make_repo: RepoFactory) -> None:
    root = make_repo(SMALL_PROJECT)
    write_files(root, {"pkg/mod.py": BUGGY})
    settings = coderefine.load_settings(root, environ={}, tests=False)

    dry = coderefine.refine(
        ["pkg/mod.py"], root=root, model=coderefine.ScriptedModel([revise(), FIX, PASS]), settings=settings
    )
    assert isinstance(dry, coderefine.FixOutcome)
    assert dry.written == () and "return a + b" in dry.result.final["pkg/mod.py"]
    assert "+    return a + b" in str(coderefine.to_data(dry)["diff"])
    assert (root / "pkg/mod.py").read_text() == BUGGY

    written = coderefine.refine(
        ["pkg/mod.py"],
        root=root,
        model=coderefine.ScriptedModel([revise(), FIX, PASS]),
        settings=settings,
        write=True,
    )
    assert written.written == ("pkg/mod.py",)
    assert "return a + b" in (root / "pkg/mod.py").read_text()
    undone = coderefine.undo(root=root)
    assert isinstance(undone, coderefine.UndoResult) and undone.restored == ("pkg/mod.py",)
    assert (root / "pkg/mod.py").read_text() == BUGGY


def test_a_cancelled_refine_writes_nothing(make_repo: RepoFactory) -> None:
    root = make_repo(SMALL_PROJECT)
    write_files(root, {"pkg/mod.py": BUGGY})
    cancel = threading.Event()

    def critic_then_cancel(request: coderefine.ModelRequest) -> dict[str, object]:
        cancel.set()  # as if the user gave up while the critic was thinking
        return revise()

    with pytest.raises(coderefine.CancelledError):
        coderefine.refine(
            ["pkg/mod.py"],
            root=root,
            model=coderefine.ScriptedModel([critic_then_cancel, FIX, PASS]),
            settings=coderefine.load_settings(root, environ={}, tests=False),
            write=True,
            cancel=cancel,
        )
    assert (root / "pkg/mod.py").read_text() == BUGGY


def _held_lock(root: Path) -> tuple[threading.Event, threading.Thread]:
    """Another run holding the project's lock until the returned event is set."""
    from coderefine.project.gitio import GitRepo
    from coderefine.project.lock import run_lock
    from coderefine.project.writes import Journal

    repo = GitRepo.find(root)
    assert repo is not None
    lock = Journal.for_project(root, repo.git_dir).lock_path
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with run_lock(lock):
            holding.set()
            release.wait(30)

    thread = threading.Thread(target=hold)
    thread.start()
    holding.wait(30)
    return release, thread


def test_a_run_whose_file_changed_while_it_waited_for_the_lock_pays_no_model_call(
    make_repo: RepoFactory,
) -> None:
    root = make_repo(SMALL_PROJECT)
    write_files(root, {"pkg/mod.py": BUGGY})
    release, thread = _held_lock(root)
    model = coderefine.ScriptedModel([revise(), FIX, PASS])

    def other_run_writes(message: str) -> None:  # called once this run starts waiting
        write_files(root, {"pkg/mod.py": BUGGY.replace("a - b", "a + b")})
        release.set()

    try:
        with pytest.raises(coderefine.CoderefineError, match="changed while this run waited") as raised:
            coderefine.refine(
                ["pkg/mod.py"],
                root=root,
                model=model,
                settings=coderefine.load_settings(root, environ={}, tests=False),
                write=True,
                on_wait=other_run_writes,
            )
    finally:
        release.set()
        thread.join()
    assert "nothing was sent to the model" in str(raised.value)
    assert model.history == []


def test_a_run_that_can_read_its_change_again_refines_what_the_other_run_wrote(
    make_repo: RepoFactory,
) -> None:
    from coderefine.api import refine_change
    from coderefine.project.change import Change, load_change
    from coderefine.project.gitio import GitRepo
    from coderefine.project.runner import SubprocessRunner

    root = make_repo(SMALL_PROJECT)
    write_files(root, {"pkg/mod.py": BUGGY})
    repo = GitRepo.find(root)

    def read() -> Change:
        return load_change(["pkg/mod.py"], cwd=root, repo=repo, max_bytes=1 << 20)

    stale = read()
    release, thread = _held_lock(root)
    model = coderefine.ScriptedModel([PASS])

    def other_run_writes(message: str) -> None:
        write_files(root, {"pkg/mod.py": BUGGY.replace("a - b", "a - b  # checked")})
        release.set()

    try:
        outcome = refine_change(
            stale,
            coderefine.load_settings(root, environ={}, tests=False),
            model,
            repo,
            write=True,
            runner=SubprocessRunner(),
            environ={"PATH": "/usr/bin:/bin"},
            on_wait=other_run_writes,
            reload=read,
        )
    finally:
        release.set()
        thread.join()
    assert "# checked" in model.history[0].messages[0].text  # the critic saw the file as it is now
    assert outcome.result.change.file("pkg/mod.py").after.text.endswith("a * b\n")


def test_bad_input_is_a_clear_error(make_repo: RepoFactory, tmp_path: Path) -> None:
    root = make_repo(SMALL_PROJECT)
    with pytest.raises(coderefine.CoderefineError, match="outside the project root"):
        coderefine.check(["../elsewhere.py"], root=root)
    with pytest.raises(coderefine.CoderefineError, match="name the files"):
        coderefine.check(root=root)
    with pytest.raises(coderefine.CoderefineError, match="nothing to undo"):
        coderefine.undo(root=root)
    with pytest.raises(coderefine.CoderefineError, match="unknown setting 'colour'"):
        coderefine.load_settings(root, environ={}, colour="red")


def test_the_worked_example_of_the_docs_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = (Path(__file__).parent.parent / "docs" / "api.md").read_text()
    example = doc.split("```python\n", 1)[1].split("```\n\n", 1)[0]
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=project, check=True)
    write_files(project, {k: v for k, v in SMALL_PROJECT.items() if k != "tests/test_other.py"})
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "initial"], cwd=project, check=True)
    write_files(project, {"pkg/mod.py": BUGGY})
    monkeypatch.chdir(tmp_path)
    exec(compile(example, "docs/api.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    for line in example.splitlines():
        if "  # " in line and "print(" in line:
            expected = line.split("  # ", 1)[1].strip()
            assert any(expected in row for row in printed), (expected, printed)
    assert (project / "pkg/mod.py").read_text() == BUGGY
