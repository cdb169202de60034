"""The public Python API: check, critique and refine a change; undo the last write.

The CLI, the MCP server and other tools stand on these functions. Their dependencies are passed in: the
model (any object with ``name`` and ``complete``, or a model name), the settings, the runner of external
programs and the environment. What ``coderefine.__all__`` names is the stable surface; nothing else in the
package is promised.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from coderefine.config import Settings
from coderefine.config import load_settings as _load_settings
from coderefine.doors.fix import (
    FixOutcome,
    current_change,
    disk_state,
    run_refine,
    write_decision,
    write_result,
)
from coderefine.edits.gate import path_problem
from coderefine.errors import EXIT_INTERRUPTED, CoderefineError, InputError
from coderefine.models.base import Model
from coderefine.project.change import Change, load_change, project_root
from coderefine.project.gitio import GitRepo
from coderefine.project.lock import run_lock
from coderefine.project.runner import Runner, SubprocessRunner
from coderefine.project.workspace import tree_files
from coderefine.project.writes import Journal, UndoResult, Writer
from coderefine.refiner.loop import review as _review
from coderefine.refiner.records import RefineResult
from coderefine.refiner.session import NoProgress, Progress
from coderefine.signals.check import CheckResult, run_check
from coderefine.signals.evaluate import Evaluator, Pinned
from coderefine.signals.snapshot import ProjectSnapshot
from coderefine.signals.warm import WarmPytest
from coderefine.timings import Timeline, phase

PathArg = str | os.PathLike[str]


class CancelledError(CoderefineError):
    """The run was cancelled (its ``cancel`` event was set); nothing was written."""

    exit_code = EXIT_INTERRUPTED


def load_settings(
    root: PathArg | None = None, *, environ: Mapping[str, str] | None = None, **overrides: Any
) -> Settings:
    """The settings of the project at ``root``: defaults < ``[tool.coderefine]`` < ``CODEREFINE_*`` <
    ``overrides`` (snake-case keys, e.g. ``rounds=2, tests=False``)."""
    base = _root(root)
    return _load_settings(
        project_root(base, GitRepo.find(base)), os.environ if environ is None else environ, overrides
    )


def check(
    files: Sequence[PathArg] = (),
    *,
    root: PathArg | None = None,
    staged: bool = False,
    base: str | None = None,
    patch: str | None = None,
    settings: Settings | None = None,
    runner: Runner | None = None,
    environ: Mapping[str, str] | None = None,
) -> CheckResult:
    """The signals the change introduced (ruff, ruff format, syntax, related tests); no model involved.

    The change is the uncommitted change of ``files`` (the whole file when it has none), the ``staged``
    change, the branch since its merge base with ``base``, or the unified diff ``patch``. Paths are relative
    to ``root`` (default: the current folder) and must stay inside it.
    """
    env = os.environ if environ is None else environ
    change, settings, repo = _load(files, root, staged, base, patch, settings, env)
    return run_check(change, settings, runner or SubprocessRunner(), env, tree_files(change.root, repo))


def critique(
    files: Sequence[PathArg] = (),
    *,
    intent: str | None = None,
    model: Model | str | None = None,
    root: PathArg | None = None,
    staged: bool = False,
    base: str | None = None,
    patch: str | None = None,
    settings: Settings | None = None,
    runner: Runner | None = None,
    environ: Mapping[str, str] | None = None,
) -> RefineResult:
    """The critic's structured review of the change against ``intent``, grounded in its signals.

    Nothing is revised or written: ``result.critique`` holds the verdict and the located issues (None when
    the critique was unusable or the budget ran out; ``result.rounds[0].note`` says why).
    """
    env = os.environ if environ is None else environ
    change, settings, repo = _load(files, root, staged, base, patch, settings, env)
    chosen = resolve_model(model, settings, env)
    files_list = tree_files(change.root, repo)
    with Evaluator(change, settings, runner or SubprocessRunner(), env, files_list) as evaluator:
        return _review(change, settings, chosen, evaluator, intent=intent)


def refine(
    files: Sequence[PathArg] = (),
    *,
    intent: str | None = None,
    model: Model | str | None = None,
    write: bool = False,
    root: PathArg | None = None,
    staged: bool = False,
    base: str | None = None,
    patch: str | None = None,
    settings: Settings | None = None,
    runner: Runner | None = None,
    environ: Mapping[str, str] | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> FixOutcome:
    """Run the self-refine loop on the change; with ``write``, write the accepted result.

    Without ``write`` (a dry run) no file is touched: ``outcome.result.final`` holds the refined texts and
    ``to_data(outcome)["diff"]`` the patch. With ``write``, the changed files are written atomically after an
    undo journal entry (``undo()`` restores them), under the project's run lock, and only if no file changed
    on disk meanwhile. Setting ``cancel`` stops the run at its next step; nothing is written after it is set.
    """
    env = os.environ if environ is None else environ
    change, settings, repo = _load(files, root, staged, base, patch, settings, env)
    chosen = resolve_model(model, settings, env)
    return refine_change(
        change,
        settings,
        chosen,
        repo,
        write=write,
        runner=runner or SubprocessRunner(),
        environ=env,
        intent=intent,
        progress=progress,
        cancel=cancel,
        on_wait=on_wait,
    )


def refine_change(
    change: Change,
    settings: Settings,
    model: Model,
    repo: GitRepo | None,
    *,
    write: bool,
    runner: Runner,
    environ: Mapping[str, str],
    intent: str | None = None,
    draft: bool = False,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    on_wait: Callable[[str], None] | None = None,
    on_recover: Callable[[tuple[str, ...]], None] | None = None,
    warm: WarmPytest | None = None,
    files: Sequence[str] | None = None,
    timeline: Timeline | None = None,
    reload: Callable[[], Change] | None = None,
) -> FixOutcome:
    """``refine`` for a change already loaded: the run lock, recovery of an interrupted write, the loop,
    and the journalled write. The CLI's ``fix`` and ``draft`` stand on this too. ``warm``: a warm test
    server already started for the project (``signals.prestart``), which the run then owns.
    ``files``: the project's files when the caller listed them already (one git call, not two);
    ``timeline`` gets the run's phases (``--timings``). The change's files are looked at again once the
    lock is held: if another run (or its recovery) changed them meanwhile, the change is read again with
    ``reload``, or without it the run is refused, before any model call."""
    try:
        with contextlib.ExitStack() as held:
            seen = disk_state(change)
            with phase(timeline, "run lock and journal"):
                journal = held.enter_context(
                    project_journal(change.root, repo, on_wait=on_wait, on_recover=on_recover)
                )
            _Cancellable(NoProgress(), cancel).check()
            change = current_change(change, seen, reload)
            if files is None:
                with phase(timeline, "project files"):
                    files = tree_files(change.root, repo)
            return refine_and_write(
                change,
                settings,
                model,
                files,
                writer=journal if write else None,
                runner=runner,
                environ=environ,
                intent=intent,
                draft=draft,
                progress=progress,
                cancel=cancel,
                warm=warm,
                timeline=timeline,
            )
    finally:
        if warm is not None:
            warm.close()  # the run lock or a cancel may stop it before an Evaluator takes the server


@contextlib.contextmanager
def project_journal(
    root: Path,
    repo: GitRepo | None,
    *,
    on_wait: Callable[[str], None] | None = None,
    on_recover: Callable[[tuple[str, ...]], None] | None = None,
) -> Iterator[Journal]:
    """The project's undo journal, under its run lock, after recovering what a crashed write left."""
    journal = Journal.for_project(root, repo.git_dir if repo else None)
    with run_lock(journal.lock_path, on_wait=on_wait):
        restored = journal.recover()
        if restored and on_recover is not None:
            on_recover(restored)
        yield journal


def refine_and_write(
    change: Change,
    settings: Settings,
    model: Model,
    files: Sequence[str],
    *,
    writer: Writer | None,
    runner: Runner,
    environ: Mapping[str, str],
    intent: str | None = None,
    draft: bool = False,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    pinned: Pinned | None = None,
    warm: WarmPytest | None = None,
    snapshot: ProjectSnapshot | None = None,
    timeline: Timeline | None = None,
) -> FixOutcome:
    """The loop on ``change`` and, when ``writer`` is given and the result is shown better, its write.

    The caller holds the run lock (``project_journal``); a sweep calls this once per file, concurrently,
    with one journal entry for the whole run as the writer. Nothing is written once ``cancel`` is set.
    ``pinned`` names files whose content in the test trees is given, not read (see ``Evaluator``), and
    ``snapshot`` is the project read once for all of a sweep's files, with the test trees they share.
    """
    refuse_outside(change)
    watched = _Cancellable(progress or NoProgress(), cancel)
    result = run_refine(
        change,
        settings,
        model,
        runner,
        environ,
        files,
        intent=intent,
        draft=draft,
        progress=watched,
        pinned=pinned,
        warm=warm,
        snapshot=snapshot,
        timeline=timeline,
    )
    written: tuple[str, ...] = ()
    entry = ""
    decision = write_decision(result)
    if decision.write and writer is not None:
        watched.check()
        with phase(timeline, "write"):
            written, entry = write_result(result, writer)
    return FixOutcome(result, written, entry, decision.reason)


def refuse_outside(change: Change) -> None:
    """Refuse, before any model call, a file the gate would refuse to write (a symlink that leads
    outside the project): the critic and the reviser were paid for a result that could never land."""
    for file in change.files:
        problem = path_problem(file.path, change.root, change.paths)
        if problem is not None:
            raise InputError(f"{problem}; refine the file where it lives, inside its own project")


def undo(
    *, root: PathArg | None = None, force: bool = False, on_wait: Callable[[str], None] | None = None
) -> UndoResult:
    """Restore the files of coderefine's last write in the project at ``root``.

    Refuses (``UndoError``) to restore over a file that changed since, unless ``force``.
    """
    base = _root(root)
    repo = GitRepo.find(base)
    journal = Journal.for_project(project_root(base, repo), repo.git_dir if repo else None)
    with run_lock(journal.lock_path, on_wait=on_wait):
        return journal.undo(force=force)


def to_data(
    result: CheckResult | RefineResult | FixOutcome, *, fail_on: str = "warning"
) -> dict[str, object]:
    """The JSON-ready data of a result, in the shape of ``--format json`` (see docs/output.md)."""
    if isinstance(result, CheckResult):
        from coderefine.report.jsonout import check_data

        return check_data(result, fail_on)
    from coderefine.report.refine import refine_data

    if isinstance(result, FixOutcome):
        return refine_data(result.result, written=result.written, not_written=result.not_written)
    return refine_data(result)


def resolve_model(model: Model | str | None, settings: Settings, environ: Mapping[str, str]) -> Model:
    """A model object as given, else the one a name (or the ``model`` setting) stands for."""
    if model is not None and not isinstance(model, str):
        return model
    from coderefine.models.factory import make_model

    return make_model(model or settings.model, settings, environ)


class _Cancellable:
    """Passes progress on, and stops the run at its next step once ``cancel`` is set."""

    def __init__(self, inner: Progress, cancel: threading.Event | None) -> None:
        self._inner = inner
        self._cancel = cancel

    def check(self) -> None:
        if self._cancel is not None and self._cancel.is_set():
            raise CancelledError("the run was cancelled; no file was written")

    def phase(self, name: str, round_number: int, tokens: int) -> None:
        self.check()
        self._inner.phase(name, round_number, tokens)


def _root(root: PathArg | None) -> Path:
    base = Path(os.path.abspath(root if root is not None else Path.cwd()))
    if not base.is_dir():
        raise InputError(f"{base}: not a folder; pass the project folder as root")
    return base


def inside(root: Path, path: PathArg) -> Path:
    """``path`` (relative to ``root``, or absolute) as an absolute path, refused when it leaves ``root``,
    also through a symbolic link."""
    absolute = Path(os.path.normpath(root / path))
    for candidate, boundary in ((absolute, root), (absolute.resolve(), root.resolve())):
        if not candidate.is_relative_to(boundary):
            raise InputError(f"{path}: outside the project root {root}; name files inside it")
    return absolute


def _load(
    files: Sequence[PathArg],
    root: PathArg | None,
    staged: bool,
    base: str | None,
    patch: str | None,
    settings: Settings | None,
    environ: Mapping[str, str],
) -> tuple[Change, Settings, GitRepo | None]:
    top = _root(root)
    paths = [inside(top, f) for f in files]
    first = paths[0] if paths else top
    repo = GitRepo.find(first if first.exists() else first.parent)
    if settings is None:
        settings = _load_settings(project_root(first, repo), environ)
    if base is not None and (base.startswith("-") or not base.strip()):
        raise InputError(f"{base!r} is not a git ref; name a branch, tag or commit (e.g. main)")
    if not paths and not staged and base is None and patch is None:
        raise InputError("name the files to review, or use staged, base or patch")
    change = load_change(
        paths,
        cwd=top,
        repo=repo,
        staged=staged,
        base=base,
        patch_text=patch,
        max_bytes=settings.max_file_kib * 1024,
    )
    for file in change.files:
        inside(top, change.root / file.path)
    if not change.files:
        raise InputError("no Python files in the change; nothing to review")
    return change, settings, repo
