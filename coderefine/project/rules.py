"""The project's own rules for the files under review: where they are written and which file gets which.

Rules come from files (``rules-files``: AGENTS.md by default; CLAUDE.md, CONVENTIONS.md,
.github/copilot-instructions.md, ...) and from the ``rules`` setting. A bare file name is looked for at the
project's root and in every folder on the way down to each file under review, so ``pkg/AGENTS.md`` adds to
(and, where they disagree, overrides) the root's for the files below ``pkg/``, as the AGENTS.md convention
says; a name with a folder in it (``.github/copilot-instructions.md``) is read at that path only. Files are
read through a reader (relative path -> text or None), so a door chooses which version of the project its
rules come from: the disk for the user's own runs, the base commit for a pull request's review and HEAD for
the pre-commit hook, where the change under review must not write its own rules.
"""

from __future__ import annotations

import fnmatch
import tomllib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from coderefine.config import RuleEntry, Settings, rule_entries
from coderefine.errors import ConfigError
from coderefine.project.gitio import GitRepo

Reader = Callable[[str], str | None]
PYPROJECT = "pyproject.toml"


@dataclass(frozen=True)
class RuleSource:
    """One place rules are written: a rules file, or an entry of the ``rules`` setting.

    ``path`` is where it is written (an entry's is pyproject.toml, or "" when it came from the environment
    or a flag); ``first_line`` is the line of that file its ``text`` starts on, so a line of ``text`` can be
    cited as ``path:line``. ``applies_to``: the files under review it is for."""

    path: str
    text: str
    first_line: int = 1
    severity: str = ""
    label: str = ""  # how an entry of the setting is named ("rules[2]"); "" for a file
    applies_to: tuple[str, ...] = ()

    def lines(self) -> list[tuple[int, str]]:
        """The non-blank lines with their numbers in the file."""
        return [
            (self.first_line + i, line.rstrip())
            for i, line in enumerate(self.text.splitlines())
            if line.strip()
        ]

    def cite(self, line: int) -> str:
        where = f"{self.path}:{line}" if self.path else self.label
        return f"{where} ({self.label})" if self.path and self.label else where


def disk_reader(root: Path) -> Reader:
    """Files of the project as they are on disk (a missing or unreadable one is None)."""

    def read(rel: str) -> str | None:
        path = root / rel
        try:
            return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None
        except OSError:
            return None

    return read


def commit_reader(repo: GitRepo, rev: str) -> Reader:
    """Files of the project as commit ``rev`` has them: a review's base, or HEAD for the hook."""

    def read(rel: str) -> str | None:
        try:
            blob = repo.blob_at(rev, rel)
        except Exception:
            return None
        return blob.decode("utf-8", errors="replace") if blob is not None else None

    return read


def folders_down_to(path: str) -> list[str]:
    """The root ("") and every folder from it down to ``path``'s own."""
    parts = PurePosixPath(path).parts[:-1]
    return [""] + ["/".join(parts[: i + 1]) for i in range(len(parts))]


def matches(path: str, globs: Sequence[str]) -> bool:
    """Whether ``path`` matches one of ``globs`` (``**`` spans folders; a bare folder matches below it)."""
    if not globs:
        return True
    for glob in globs:
        glob = glob.strip()
        glob = glob[2:] if glob.startswith("./") else glob
        if glob.endswith("/"):
            glob += "**"
        if fnmatch.fnmatchcase(path, glob) or fnmatch.fnmatchcase(path, glob.replace("**/", "")):
            return True
        if "/" not in glob and fnmatch.fnmatchcase(PurePosixPath(path).name, glob):
            return True
    return False


def _entry_line(pyproject: str | None, text: str) -> int:
    """The line of pyproject.toml where an entry's text starts (0: not found there)."""
    if not pyproject or not text.strip():
        return 0
    first = text.strip().splitlines()[0].strip()
    for number, line in enumerate(pyproject.splitlines(), start=1):
        if first in line:
            return number
    return 0


def find_rules(
    paths: Iterable[str],
    read: Reader,
    files: Sequence[str],
    entries: Sequence[RuleEntry],
    entries_from: str = PYPROJECT,
) -> tuple[RuleSource, ...]:
    """The rule sources for the files under review ``paths``: the rules files in the order root first,
    nearest last (each once, with the files it applies to), then the entries that match a file."""
    paths = list(paths)
    found: dict[str, list[str]] = {}
    texts: dict[str, str | None] = {}
    for path in paths:
        for name in files:
            name = name.strip().strip("/")
            if not name:
                continue
            places = [name] if "/" in name else [f"{d}/{name}" if d else name for d in folders_down_to(path)]
            for place in places:
                if place not in texts:
                    texts[place] = read(place)
                if texts[place] and texts[place].strip():  # type: ignore[union-attr]
                    found.setdefault(place, []).append(path)
    # Root first, then deeper folders: the nearest file comes last and is said to win.
    ordered = sorted(found, key=lambda p: (p.count("/"), p))
    sources = [RuleSource(p, texts[p] or "", applies_to=tuple(found[p])) for p in ordered]
    pyproject = read(PYPROJECT) if entries and entries_from else None
    for number, entry in enumerate(entries, start=1):
        applies = tuple(p for p in paths if matches(p, entry.paths))
        if not applies or not entry.text.strip():
            continue
        line = _entry_line(pyproject, entry.text)
        sources.append(
            RuleSource(
                entries_from if line else "",
                entry.text.strip(),
                first_line=line or 1,
                severity=entry.severity,
                label=f"rules[{number}]",
                applies_to=applies,
            )
        )
    return tuple(sources)


def base_settings(settings: Settings, read: Reader) -> Settings:
    """``settings`` with the rules settings read from the trusted version's pyproject.toml (``read``: the
    base commit, or HEAD) instead of the checkout's: a change under review that adds, loosens or removes
    a rule in its own pyproject.toml must not change its own review. Rules set in the environment or by a
    flag are the CI's or the user's own and stay."""
    text = read(PYPROJECT)
    table: dict[str, object] = {}
    if text is not None:
        try:
            tool = tomllib.loads(text).get("tool", {})
        except tomllib.TOMLDecodeError:
            tool = {}
        found = tool.get("coderefine", {}) if isinstance(tool, dict) else {}
        table = found if isinstance(found, dict) else {}
    defaults = Settings()
    changes: dict[str, object] = {}
    for name in ("rules", "rules_files", "rules_tokens"):
        if settings.sources.get(name) in ("environment", "command line"):
            continue
        key = name.replace("_", "-")
        value = table.get(key, getattr(defaults, name))
        try:
            if name == "rules":
                value = rule_entries(value, "the base's [tool.coderefine]")
            elif name == "rules_files":
                value = tuple(str(v) for v in value) if isinstance(value, list | tuple) else (str(value),)
            elif not isinstance(value, int) or isinstance(value, bool):
                value = getattr(defaults, name)
        except ConfigError:
            value = getattr(defaults, name)
        changes[name] = value
    return replace(settings, **changes)  # type: ignore[arg-type]
