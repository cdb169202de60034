"""Every call of git by coderefine, in one place, with git's failures turned into GitError.

The paths that every command takes (finding the repository, reading HEAD's and the index's bytes, listing
files, exporting the index) run the ``git`` program directly: importing gitpython costs about 70 ms,
mostly its own ``git version`` check at import, which a ``check`` or a hook's cache hit would pay for
nothing. gitpython is imported on first use by what only a review needs (merge bases, commit messages,
exporting a commit).
"""

from __future__ import annotations

import functools
import os
import posixpath
import shutil
import subprocess
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from coderefine.errors import GitError


@functools.cache
def _git_program() -> str | None:
    return shutil.which("git")


@functools.cache
def _git_module() -> Any:
    """gitpython, or None when the git program cannot be found (gitpython refuses to import then)."""
    os.environ.setdefault("GIT_PYTHON_REFRESH", "quiet")
    try:
        import git
    except ImportError:
        return None
    try:
        git.Git().version_info  # noqa: B018 - runs git once: gitpython imports quietly without it
    except Exception:
        return None
    return git


def git_available() -> bool:
    return _git_program() is not None


def _git(
    cwd: Path, args: Sequence[str], what: str, *, data: bytes | None = None, check: bool = True
) -> subprocess.CompletedProcess[bytes]:
    """``git ARGS`` in ``cwd``; a failure (when ``check``) is a GitError that says ``what`` failed."""
    program = _git_program()
    if program is None:
        raise GitError(f"{what}: git is not installed; install git or review files outside a repository")
    # No pager, no prompt for credentials: git runs unattended here.
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat"}
    try:
        done = subprocess.run(
            [program, *args], cwd=cwd, input=data, capture_output=True, env=env, check=False
        )
    except OSError as exc:
        raise GitError(f"{what}: {exc}") from exc
    if check and done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip()
        raise GitError(f"{what}: {detail or f'git exited with {done.returncode}'}")
    return done


def _names(out: bytes) -> list[str]:
    return [p for p in os.fsdecode(out).split("\0") if p]


@contextmanager
def _git_errors(what: str) -> Iterator[None]:
    git = _git_module()
    try:
        yield
    except git.GitCommandError as exc:
        detail = (exc.stderr or "").strip().removeprefix("stderr:").strip(" '\n")
        raise GitError(f"{what}: {detail or exc}") from exc
    except (git.BadName, ValueError) as exc:
        raise GitError(f"{what}: {exc}") from exc


class GitRepo:
    """A git working tree."""

    def __init__(self, root: Path, git_dir: Path, common_dir: Path) -> None:
        self.root = root
        self._git_dir = git_dir
        self._common_dir = common_dir

    @classmethod
    def find(cls, start: Path) -> GitRepo | None:
        """The repository that contains ``start``, or None outside git, in a bare repository, or when
        git is not installed (then every file is reviewed whole)."""
        if _git_program() is None:
            return None
        start = start.resolve()
        while not start.is_dir():
            if start.parent == start:
                return None
            start = start.parent
        args = ["rev-parse", "--is-bare-repository", "--show-toplevel", "--absolute-git-dir"]
        done = _git(start, [*args, "--git-common-dir"], "cannot find the repository", check=False)
        lines = os.fsdecode(done.stdout).splitlines()
        if done.returncode != 0 or len(lines) != 4 or lines[0] != "false":
            return None  # not a repository, a bare one, or inside .git
        top, git_dir, common = (Path(line) for line in lines[1:])
        common = common if common.is_absolute() else start / common
        return cls(top.resolve(), git_dir.resolve(), common.resolve())

    @functools.cached_property
    def _repo(self) -> Any:
        git = _git_module()
        if git is None:
            raise GitError("git is not installed; install git to review a branch")
        return git.Repo(self.root)

    def _run(self, args: Sequence[str], what: str, data: bytes | None = None) -> bytes:
        return _git(self.root, args, what, data=data).stdout

    @property
    def git_dir(self) -> Path:
        """The repository's private folder (``.git``, or the worktree's folder under it)."""
        return self._git_dir

    def has_head(self) -> bool:
        done = _git(self.root, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], "", check=False)
        return done.returncode == 0

    def is_shallow(self) -> bool:
        return (self._common_dir / "shallow").exists()

    def _object(self, name: str, what: str) -> bytes | None:
        """The bytes of the blob ``name`` (``REV:PATH`` or ``:PATH``), or None when there is none."""
        out = self._run(["cat-file", "--batch"], what, (name + "\n").encode())
        header, _, rest = out.partition(b"\n")
        fields = header.split()
        if len(fields) != 3 or fields[1] != b"blob":
            return None
        return rest[: int(fields[2])]

    def blob_at(self, rev: str, rel: str) -> bytes | None:
        """The bytes of ``rel`` at ``rev``, or None when the file does not exist there."""
        if rev == "HEAD" and not self.has_head():
            return None
        what = f"cannot read {rel} at {rev}"
        # HEAD was just verified; another name may be a typo, which must not read as "no such file".
        if rev != "HEAD":
            self._verify(rev, what)
        return self._object(f"{rev}:{rel}", what)

    def _verify(self, rev: str, what: str) -> None:
        args = ["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"]
        if rev.startswith("-") or _git(self.root, args, what, check=False).returncode != 0:
            raise GitError(f"{what}: unknown revision '{rev}'; name a branch, tag or commit that exists")

    def index_blob(self, rel: str) -> bytes | None:
        """The staged bytes of ``rel``, or None when it is not in the index."""
        return self._object(f":0:{rel}", f"cannot read the staged {rel}")

    def staged_paths(self) -> list[str]:
        """Paths added or modified in the index against HEAD (deletions have nothing to review)."""
        args = ["diff", "--cached", "--name-only", "--diff-filter=ACMR", "-z"]
        return _names(self._run(args, "cannot list staged files"))

    def tracked_changes(self) -> list[str]:
        """Tracked files whose staged or working-tree content differs from HEAD."""
        if not self.has_head():
            return []
        return _names(self._run(["diff", "HEAD", "--name-only", "-z"], "cannot list changed files"))

    def worktree_changed_paths(self) -> list[str]:
        """Modified tracked files against HEAD plus untracked files that are not ignored."""
        what = "cannot list changed files"
        args = ["diff", "HEAD", "--name-only", "--diff-filter=ACMR", "-z"]
        changed = _names(self._run(args, what)) if self.has_head() else []
        untracked = _names(self._run(["ls-files", "--others", "--exclude-standard", "-z"], what))
        return sorted({*changed, *untracked})

    def merge_base(self, base: str, head: str = "HEAD") -> str:
        """The merge base of ``base`` and ``head``; a clear message when a shallow clone lacks it."""
        for rev in (base, head):
            with _git_errors(f"unknown revision '{rev}'; name a branch, tag or commit that exists"):
                self._repo.commit(rev)
        try:
            bases = self._repo.merge_base(base, head)
        except _git_module().GitCommandError as exc:
            bases = []
            if not self.is_shallow():
                raise GitError(f"cannot find the merge base of {base} and {head}: {exc}") from exc
        if not bases:
            hint = (
                " This is a shallow clone: fetch the full history (actions/checkout with "
                "fetch-depth: 0, or 'git fetch --unshallow')."
                if self.is_shallow()
                else ""
            )
            raise GitError(f"{base} and {head} have no common ancestor.{hint}")
        return str(bases[0].hexsha)

    def changed_between(self, base: str, head: str = "HEAD") -> list[str]:
        """Paths added or modified from ``base`` to ``head``."""
        args = ["diff", "--name-only", "--diff-filter=ACMR", "-z", base, head, "--"]
        return _names(self._run(args, f"cannot diff {base}..{head}"))

    def commit_messages(self, base: str, head: str = "HEAD") -> list[str]:
        with _git_errors(f"cannot read the commits {base}..{head}"):
            return [str(c.message).strip() for c in self._repo.iter_commits(f"{base}..{head}")]

    def project_files(self) -> list[str]:
        """Tracked files and untracked files that are not ignored: what a copy of the project needs."""
        args = ["ls-files", "--cached", "--others", "--exclude-standard", "-z"]
        return sorted(set(_names(self._run(args, "cannot list the project's files"))))

    def ignored_sources(self, listed: Iterable[str]) -> list[str]:
        """Ignored Python files beside the ``listed`` ones: what a build wrote into a package and git
        ignores (setuptools-scm's ``version.py``, a compiled ``_version.py``). A package imports them, so a
        copy without them fails every test at collection. ``--directory`` keeps a wholly ignored folder
        (a virtual environment, ``build/``) one line, so only files in the project's own folders count."""
        args = ["ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "-z"]
        folders = {posixpath.dirname(rel) for rel in listed if rel.endswith(".py")}
        return sorted(
            rel
            for rel in _names(self._run(args, "cannot list the project's ignored files"))
            if rel.endswith(".py") and posixpath.dirname(rel) in folders
        )

    def clean_at(self, rev: str) -> list[str] | None:
        """The tracked files when the working tree holds exactly commit ``rev`` (checked out, no tracked
        file changed or staged), else None. A review can then copy its tree from the working tree,
        reusing a persistent copy, instead of exporting the whole commit."""
        with _git_errors("cannot read the working tree's state"):
            if str(self._repo.head.commit.hexsha) != self.rev_parse(rev):
                return None
            if self._repo.git.status("--porcelain", "--untracked-files=no", "-z"):
                return None
            out = self._repo.git.ls_files("--cached", "-z")
        return sorted({p for p in out.split("\0") if p})

    def tracked_files(self) -> list[str]:
        """The files git tracks (in the index), sorted."""
        with _git_errors("cannot list the tracked files"):
            out = self._repo.git.ls_files("--cached", "-z")
        return sorted({p for p in out.split("\0") if p})

    def blob_ids(self, rev: str = "HEAD") -> dict[str, str]:
        """Path -> blob id of every file at ``rev`` (empty without commits): one git call for a tree."""
        if not self.has_head():
            return {}
        with _git_errors(f"cannot list the files of {rev}"):
            out = self._repo.git.ls_tree("-r", "-z", rev)
        ids: dict[str, str] = {}
        for row in out.split("\0"):
            meta, _, path = row.partition("\t")
            if path:
                ids[path] = meta.split()[2]
        return ids

    def export_index(self, dest: Path) -> None:
        """Write every file of the index (what the next commit will hold) below ``dest``."""
        prefix = str(dest).rstrip("/") + "/"
        self._run(["checkout-index", "--all", "--force", f"--prefix={prefix}"], "cannot export the index")

    def hooks_dir(self) -> Path:
        """Where git looks for hooks (honours core.hooksPath)."""
        out = self._run(["rev-parse", "--git-path", "hooks"], "cannot find the hooks folder")
        path = Path(os.fsdecode(out).strip())
        return path if path.is_absolute() else (self.root / path).resolve()

    def export_commit(self, rev: str, dest: Path) -> None:
        """Write the files of commit ``rev`` below ``dest`` (a review's head, checked out or not)."""
        import io
        import tarfile

        data = self._run(["archive", "--format=tar", rev], f"cannot export {rev}")

        def safe(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
            # A link that points outside the tree (an absolute target, or ../ past the top) is left out,
            # not followed: tests run in the copy, and the data filter would refuse the whole commit.
            try:
                return tarfile.data_filter(member, path)
            except tarfile.FilterError:
                return None

        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            archive.extractall(dest, filter=safe)

    def rev_parse(self, rev: str) -> str:
        with _git_errors(f"unknown revision '{rev}'"):
            return str(self._repo.commit(rev).hexsha)
