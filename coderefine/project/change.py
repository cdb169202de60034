"""The change under review: which files, their text before and after, and where it came from.

A change comes from git (the working tree or the index against HEAD, a branch against its merge base),
from a unified diff, or from plain files outside git. A file with nothing to compare against (no change,
no git, a new file) is reviewed whole: every signal in it counts.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from coderefine.errors import GitError, InputError, PatchError
from coderefine.project.gitio import GitRepo, git_available
from coderefine.project.patch import apply_patch, parse_patch
from coderefine.project.textfile import SourceText, decode_source, read_source

PYTHON_SUFFIXES = (".py", ".pyi")
Kind = Literal["modified", "added", "whole"]


@dataclass(frozen=True)
class FileChange:
    """One file under review. ``before`` is None when there is nothing to compare against."""

    path: str
    before: SourceText | None
    after: SourceText
    kind: Kind

    def with_after(self, text: str) -> FileChange:
        return FileChange(self.path, self.before, self.after.with_text(text), self.kind)


@dataclass(frozen=True)
class Change:
    """The files under review, relative to ``root`` (the git top level or the project folder)."""

    root: Path
    files: tuple[FileChange, ...]
    source: Literal["worktree", "staged", "branch", "patch", "files"]
    base: str | None = None
    messages: tuple[str, ...] = ()

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(f.path for f in self.files)

    def file(self, path: str) -> FileChange:
        for f in self.files:
            if f.path == path:
                return f
        raise KeyError(path)

    def diff(self, context: int = 3) -> str:
        """The change as one unified diff (whole-file reviews show no diff)."""
        parts: list[str] = []
        for f in self.files:
            if f.kind == "whole":
                continue
            old = f.before.text if f.before else ""
            parts.extend(
                difflib.unified_diff(
                    old.splitlines(keepends=True),
                    f.after.text.splitlines(keepends=True),
                    fromfile=f"a/{f.path}" if f.before else "/dev/null",
                    tofile=f"b/{f.path}",
                    n=context,
                )
            )
            if parts and not parts[-1].endswith("\n"):
                parts[-1] += "\n\\ No newline at end of file\n"
        return "".join(parts)


def project_root(start: Path, repo: GitRepo | None) -> Path:
    """The git top level, else the nearest folder with a pyproject.toml, else ``start`` itself."""
    if repo is not None:
        return repo.root
    folder = start if start.is_dir() else start.parent
    for candidate in (folder, *folder.parents):
        if (candidate / "pyproject.toml").is_file():
            return candidate
    return folder


def relative_path(path: Path, root: Path, cwd: Path) -> str:
    """``path`` as a POSIX path relative to ``root``; refuse what lies outside it."""
    absolute = Path(os.path.normpath(cwd / path))
    try:
        rel = absolute.relative_to(root)
    except ValueError:
        try:
            rel = absolute.resolve().relative_to(root.resolve())
        except ValueError:
            raise InputError(f"{path}: outside the project at {root}; run coderefine inside it") from None
    return PurePosixPath(rel).as_posix()


def _require_python(name: str) -> None:
    if name.endswith(".ipynb"):
        raise InputError(f"{name}: notebooks are not supported yet; export the code to a .py file")
    if not name.endswith(PYTHON_SUFFIXES):
        raise InputError(f"{name}: not a Python file (.py or .pyi); coderefine reviews Python source")


def _decode(data: bytes, name: str, max_bytes: int) -> SourceText:
    if len(data) > max_bytes:
        raise InputError(
            f"{name}: {len(data) // 1024} KiB is over the limit of {max_bytes // 1024} KiB; "
            "raise max-file-kib in [tool.coderefine] to review it"
        )
    return decode_source(data, name)


def _under(rel: str, wanted: Iterable[str]) -> bool:
    """Whether ``rel`` is one of ``wanted`` or inside one of them (a folder)."""
    return any(w == "." or rel == w or PurePosixPath(rel).is_relative_to(w) for w in wanted)


def _expand_folders(paths: Sequence[Path], root: Path, cwd: Path, repo: GitRepo | None) -> list[Path]:
    """``paths`` with each folder replaced by the Python files in it (those git tracks or would add)."""
    from coderefine.project.workspace import project_files

    expanded: list[Path] = []
    listing: list[str] | None = None
    for path in paths:
        absolute = Path(os.path.normpath(cwd / path))
        if not absolute.is_dir():
            expanded.append(path)
            continue
        folder = relative_path(path, root, cwd)
        if listing is None:
            listing = project_files(root, repo)
        inside = [
            rel
            for rel in listing
            if rel.endswith(PYTHON_SUFFIXES) and (folder == "." or PurePosixPath(rel).is_relative_to(folder))
        ]
        if not inside:
            raise InputError(f"{path}: a directory with no Python files in it; name the files to review")
        expanded.extend(Path(os.path.relpath(root / rel, cwd)) for rel in inside)
    return expanded


def _file_change(path: str, before: SourceText | None, after: SourceText, tracked: bool) -> FileChange:
    if before is None:
        return FileChange(path, None, after, "added" if tracked else "whole")
    if before.text == after.text:
        return FileChange(path, None, after, "whole")
    return FileChange(path, before, after, "modified")


def from_worktree(
    paths: Sequence[Path], *, cwd: Path, repo: GitRepo | None, max_bytes: int, root: Path | None = None
) -> Change:
    """The files' uncommitted change against HEAD, or the whole files when there is none (``root``: the
    project folder, when named; else the files' git top level or nearest pyproject.toml)."""
    if not paths:
        raise InputError("no files given; name the Python files to review")
    root = root or project_root(Path(os.path.normpath(cwd / paths[0])), repo)
    files: list[FileChange] = []
    for path in _expand_folders(paths, root, cwd, repo):
        rel = relative_path(path, root, cwd)
        _require_python(str(path))
        after = read_source(root / rel, str(path), max_bytes)
        before = None
        in_head = False
        if repo is not None:
            data = repo.blob_at("HEAD", rel)
            if data is not None:
                in_head = True
                before = _decode(data, f"{path} (HEAD)", max_bytes)
        # A file git does not know yet is a new file only inside a repository with history.
        is_new = repo is not None and repo.has_head() and not in_head
        files.append(_file_change(rel, before, after, tracked=is_new))
    return Change(root=root, files=_unique(files), source="worktree" if repo else "files")


def from_staged(paths: Sequence[Path] | None, *, cwd: Path, repo: GitRepo | None, max_bytes: int) -> Change:
    """The staged content of ``paths`` (default: every staged Python file) against HEAD."""
    if repo is None:
        raise _no_repo("--staged")
    staged_python = [p for p in repo.staged_paths() if p.endswith(PYTHON_SUFFIXES)]
    names: list[str] = []
    for path in paths or ():
        rel = relative_path(path, repo.root, cwd)
        if (cwd / path).is_dir():
            inside = [p for p in staged_python if _under(p, [rel])]
            if not inside:
                raise InputError(f"{path}: a directory with no staged Python files in it")
            names.extend(inside)
        else:
            names.append(rel)
    if not paths:
        names = staged_python
    files: list[FileChange] = []
    for rel in names:
        _require_python(rel)
        staged = repo.index_blob(rel)
        if staged is None:
            raise InputError(f"{rel}: not in the index; 'git add' it first")
        after = _decode(staged, f"{rel} (staged)", max_bytes)
        head = repo.blob_at("HEAD", rel)
        before = _decode(head, f"{rel} (HEAD)", max_bytes) if head is not None else None
        files.append(_file_change(rel, before, after, tracked=head is None and repo.has_head()))
    return Change(root=repo.root, files=_unique(files), source="staged")


def from_branch(
    repo: GitRepo, base: str, *, head: str = "HEAD", paths: Iterable[str] = (), max_bytes: int
) -> Change:
    """The Python files that ``head`` changed since its merge base with ``base``."""
    merge_base = repo.merge_base(base, head)
    wanted = set(paths)
    files: list[FileChange] = []
    for rel in repo.changed_between(merge_base, head):
        if not rel.endswith(PYTHON_SUFFIXES) or (wanted and not _under(rel, wanted)):
            continue
        new = repo.blob_at(head, rel)
        if new is None:
            continue
        old = repo.blob_at(merge_base, rel)
        after = _decode(new, f"{rel} ({head})", max_bytes)
        before = _decode(old, f"{rel} ({base})", max_bytes) if old is not None else None
        files.append(_file_change(rel, before, after, tracked=old is None))
    messages = tuple(repo.commit_messages(merge_base, head))
    return Change(repo.root, _unique(files), "branch", base=merge_base, messages=messages)


def from_patch(patch_text: str, *, root: Path, max_bytes: int) -> Change:
    """A unified diff against the files under ``root``.

    The diff may be not yet applied (the files hold the old side) or already applied (they hold the
    new side, as after ``git diff``): whichever side the files match is taken as the one on disk.
    """
    files: list[FileChange] = []
    for file_patch in parse_patch(patch_text):
        rel = file_patch.path
        _require_python(rel)
        if PurePosixPath(rel).is_absolute() or ".." in PurePosixPath(rel).parts:
            raise InputError(f"{rel}: the patch names a path outside the project")
        on_disk = root / rel
        if file_patch.old_path is None and not on_disk.exists():
            after_text = apply_patch(file_patch, "")
            files.append(FileChange(rel, None, SourceText(after_text), "added"))
            continue
        if file_patch.new_path is None:
            continue
        current = read_source(on_disk, rel, max_bytes)
        try:
            after = current.with_text(apply_patch(file_patch, current.text))
            before: SourceText | None = current
        except PatchError:
            before = current.with_text(apply_patch(file_patch.reversed(), current.text))
            after = current
        files.append(_file_change(rel, before, after, tracked=False))
    return Change(root=root, files=_unique(files), source="patch")


def _unique(files: list[FileChange]) -> tuple[FileChange, ...]:
    seen: dict[str, FileChange] = {}
    for f in files:
        seen.setdefault(f.path, f)
    return tuple(seen.values())


def load_change(
    paths: Sequence[Path],
    *,
    cwd: Path,
    repo: GitRepo | None,
    staged: bool = False,
    base: str | None = None,
    patch_text: str | None = None,
    max_bytes: int,
    root: Path | None = None,
) -> Change:
    """The change the command line asks for: a patch, the index, a branch, or the files' own change.
    ``root``: the project folder when the user named it (``--root``), else found from the files."""
    start = Path(os.path.normpath(cwd / paths[0])) if paths else cwd
    if patch_text is not None:
        return from_patch(patch_text, root=root or project_root(start, repo), max_bytes=max_bytes)
    if base is not None:
        if repo is None:
            raise _no_repo("--base")
        wanted = [relative_path(p, repo.root, cwd) for p in paths]
        return from_branch(repo, base, paths=wanted, max_bytes=max_bytes)
    if staged:
        return from_staged(paths, cwd=cwd, repo=repo, max_bytes=max_bytes)
    return from_worktree(paths, cwd=cwd, repo=repo, max_bytes=max_bytes, root=root)


def draft_change(
    path: Path, *, cwd: Path, repo: GitRepo | None, max_bytes: int, root: Path | None = None
) -> Change:
    """A change for ``coderefine draft``: the file as it is, or a new empty file."""
    absolute = Path(os.path.normpath(cwd / path))
    if absolute.exists():
        return from_worktree([path], cwd=cwd, repo=repo, max_bytes=max_bytes, root=root)
    _require_python(str(path))
    if not absolute.parent.is_dir():
        raise InputError(f"{path}: its folder does not exist; create it first")
    root = root or project_root(absolute.parent, repo)
    rel = relative_path(path, root, cwd)
    return Change(root=root, files=(FileChange(rel, None, SourceText(""), "added"),), source="files")


def _no_repo(flag: str) -> GitError:
    if not git_available():
        return GitError(f"{flag} needs git, which is not installed or not on PATH; install git")
    return GitError(f"{flag} needs a git repository; run coderefine inside one, or name files without {flag}")
