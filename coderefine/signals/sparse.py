"""What of a project a run of some test files needs: the first test tree of a big project, made small.

The first copy of a project is on the path of a user's first run, and of every CI job: at 20,000 files it
read and wrote every file (4 to 6 s on two cores with the files not in the page cache, where aider's
whole fix took 4.5 s). A run of a few test files needs far less: the test files, the modules they import
(followed through the project's own modules, import line by import line, relative imports resolved), the
``__init__.py`` and ``conftest.py`` files on the way to each, the files at the top of the project (its
configuration), and the data beside them (every file that is not Python below the folder of a file
taken). The reading is static, so an import it cannot see (``importlib`` of a computed name, a plugin
named in a string) leaves a module out: ``missing_files`` tells such a run by its failures, and the
caller runs it again in a whole copy.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from coderefine.signals.base import SignalSet
from coderefine.signals.related import imported_modules, package_of

# A sparse tree is worth it from this many files; below, a whole copy costs a few milliseconds.
SPARSE_MIN = 2_000
# Failures that a file left out of the copy would cause.
_MISSING = re.compile(
    r"ModuleNotFoundError|ImportError|FileNotFoundError|No such file or directory|NotADirectoryError"
    r"|fixture '[^']+' not found|file or directory not found|found no collectors"
)


def _ancestors(rel: str) -> list[str]:
    parts = rel.split("/")[:-1]
    return ["/".join(parts[:end]) for end in range(1, len(parts) + 1)]


def _module_of(rel: str) -> str:
    """``module_name`` in string work: it runs for every file of a 20,000-file project."""
    stem = rel[:-3]
    head, sep, rest = stem.partition("/")
    if sep and head in ("src", "lib"):
        stem = rest
    if stem == "__init__":
        return ""
    return stem.removesuffix("/__init__").replace("/", ".")


class ProjectFiles:
    """A project's file list indexed for ``needed``: by module name, and its files that are not Python."""

    def __init__(self, files: Sequence[str]) -> None:
        self.files = list(files)
        self.present = set(self.files)
        self.modules: dict[str, list[str]] = {}
        self.data: list[tuple[str, list[str]]] = []  # a file that is not Python, and its folders
        for rel in self.files:
            if rel.endswith(".py"):
                self.modules.setdefault(_module_of(rel), []).append(rel)
            elif "/" in rel:
                self.data.append((rel, _ancestors(rel)))
        self.top = {rel for rel in self.files if "/" not in rel}

    def needed(self, tests: Iterable[str], read: Callable[[str], str | None]) -> set[str]:
        """The files that a run of ``tests`` can reach (see the module's docstring); ``read`` gives a
        file's text (None: unreadable)."""
        present = self.present
        needed = set(self.top)
        queue = [rel for rel in tests if rel in present]
        queue += [rel for rel in needed if rel.endswith(".py")]
        seen: set[str] = set()
        while queue:
            rel = queue.pop()
            if rel in seen:
                continue
            seen.add(rel)
            needed.add(rel)
            for folder in _ancestors(rel):
                for name in ("__init__.py", "conftest.py"):
                    if f"{folder}/{name}" in present:
                        queue.append(f"{folder}/{name}")
            if not rel.endswith(".py"):
                continue
            text = read(rel)
            if text is None:
                continue
            for imported in imported_modules(text, package_of(rel)):
                parts = imported.split(".")
                for end in range(1, len(parts) + 1):
                    queue += self.modules.get(".".join(parts[:end]), ())
        # Data beside what was taken: every file that is not Python below the folder of a file taken (the
        # top folder itself only for its own files, taken above).
        folders = {rel.rsplit("/", 1)[0] for rel in needed if "/" in rel}
        needed.update(rel for rel, above in self.data if any(folder in folders for folder in above))
        return needed & present


def needed_files(files: Sequence[str], tests: Iterable[str], read: Callable[[str], str | None]) -> set[str]:
    """``ProjectFiles(files).needed(tests, read)``."""
    return ProjectFiles(files).needed(tests, read)


def missing_files(result: SignalSet) -> bool:
    """Whether a run in a sparse tree failed as a file left out of it would make it fail (then it is run
    again in a whole copy), or could not tell."""
    for status in result.statuses:
        if status.source == "pytest" and status.state != "ok":
            return True
    for signal in result.signals:
        if signal.source != "pytest":
            continue
        if signal.code.startswith("collect:") or _MISSING.search(f"{signal.message}\n{signal.detail}"):
            return True
    return False
