"""Every gitpython call of coderefine, in one place, with git's failures turned into GitError."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from coderefine.errors import GitError


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
    return _git_module() is not None


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
    """A git working tree, seen through gitpython."""

    def __init__(self, repo: Any) -> None:
        self._repo = repo
        self.root = Path(repo.working_tree_dir or ".").resolve()

    @classmethod
    def find(cls, start: Path) -> GitRepo | None:
        """The repository that contains ``start``, or None outside git, in a bare repository, or when
        git is not installed (then every file is reviewed whole)."""
        git = _git_module()
        if git is None:
            return None
        try:
            repo = git.Repo(start, search_parent_directories=True)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            return None
        if repo.bare or repo.working_tree_dir is None:
            return None
        return cls(repo)

    @property
    def git_dir(self) -> Path:
        """The repository's private folder (``.git``, or the worktree's folder under it)."""
        return Path(self._repo.git_dir).resolve()

    def has_head(self) -> bool:
        return bool(self._repo.head.is_valid())

    def is_shallow(self) -> bool:
        return (Path(self._repo.common_dir) / "shallow").exists()

    def blob_at(self, rev: str, rel: str) -> bytes | None:
        """The bytes of ``rel`` at ``rev``, or None when the file does not exist there."""
        if rev == "HEAD" and not self.has_head():
            return None
        with _git_errors(f"cannot read {rel} at {rev}"):
            commit = self._repo.commit(rev)
        try:
            blob = commit.tree / rel
        except KeyError:
            return None
        data: bytes = blob.data_stream.read()
        return data

    def index_blob(self, rel: str) -> bytes | None:
        """The staged bytes of ``rel``, or None when it is not in the index."""
        try:
            entry = self._repo.index.entries[(rel, 0)]
        except KeyError:
            return None
        data: bytes = self._repo.odb.stream(entry.binsha).read()
        return data

    def staged_paths(self) -> list[str]:
        """Paths added or modified in the index against HEAD (deletions have nothing to review)."""
        with _git_errors("cannot list staged files"):
            out = self._repo.git.diff("--cached", "--name-only", "--diff-filter=ACMR", "-z")
        return [p for p in out.split("\0") if p]

    def worktree_changed_paths(self) -> list[str]:
        """Modified tracked files against HEAD plus untracked files that are not ignored."""
        with _git_errors("cannot list changed files"):
            args = ["--name-only", "--diff-filter=ACMR", "-z"]
            out = self._repo.git.diff("HEAD", *args) if self.has_head() else ""
            untracked = self._repo.git.ls_files("--others", "--exclude-standard", "-z")
        return sorted({p for p in (out + "\0" + untracked).split("\0") if p})

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
        with _git_errors(f"cannot diff {base}..{head}"):
            out = self._repo.git.diff("--name-only", "--diff-filter=ACMR", "-z", base, head)
        return [p for p in out.split("\0") if p]

    def commit_messages(self, base: str, head: str = "HEAD") -> list[str]:
        with _git_errors(f"cannot read the commits {base}..{head}"):
            return [str(c.message).strip() for c in self._repo.iter_commits(f"{base}..{head}")]

    def project_files(self) -> list[str]:
        """Tracked files and untracked files that are not ignored: what a copy of the project needs."""
        with _git_errors("cannot list the project's files"):
            out = self._repo.git.ls_files("--cached", "--others", "--exclude-standard", "-z")
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
        with _git_errors("cannot export the index"):
            self._repo.git.checkout_index("--all", "--force", f"--prefix={prefix}")

    def hooks_dir(self) -> Path:
        """Where git looks for hooks (honours core.hooksPath)."""
        with _git_errors("cannot find the hooks folder"):
            out = self._repo.git.rev_parse("--git-path", "hooks")
        path = Path(out.strip())
        return path if path.is_absolute() else (self.root / path).resolve()

    def export_commit(self, rev: str, dest: Path) -> None:
        """Write the files of commit ``rev`` below ``dest`` (a review's head, checked out or not)."""
        import io
        import tarfile

        with _git_errors(f"cannot export {rev}"):
            data = self._repo.git.archive("--format=tar", rev, stdout_as_string=False)

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
