"""Edit blocks: parse the SEARCH/REPLACE format of the model protocol and apply it in memory.

The format (docs/protocol.md)::

    path/relative/to/repo.py
    ```python
    <<<<<<< SEARCH
    exact lines from the current file
    =======
    replacement lines
    >>>>>>> REPLACE
    ```

Models vary the format; the parser accepts the variations whose meaning is unambiguous (5 to 9
marker characters, ORIGINAL/UPDATED or HEAD/updated labels, the file name inside the fence or on the
fence line, decorations around the file name such as ``**``, backticks, ``#`` or a trailing colon, a
missing fence, a missing name when only one file is under review or the previous block named one) and
refuses the rest with a message the model can act on.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from coderefine.project.textfile import newline_of

_START = re.compile(r"^\s*<{5,9}\s*(SEARCH|ORIGINAL|HEAD)\b.*$", re.I)
_DIVIDER = re.compile(r"^\s*={5,9}\s*$")
_END = re.compile(r"^\s*>{5,9}\s*(REPLACE|UPDATED)\b.*$", re.I)
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*([\w+-]*)\s*(\S*)\s*$")
MAX_REPLY_CHARS = 1_000_000


@dataclass(frozen=True)
class EditBlock:
    path: str
    search: str
    replace: str
    index: int  # 1-based position in the reply, for messages


@dataclass(frozen=True)
class EditFailure:
    index: int
    path: str
    reason: str

    def __str__(self) -> str:
        return f"edit block {self.index} ({self.path or 'no file'}): {self.reason}"


class EditError(Exception):
    """Edit blocks that could not be parsed or applied; ``feedback()`` is written for the model."""

    def __init__(self, failures: Sequence[EditFailure]) -> None:
        super().__init__("; ".join(str(f) for f in failures))
        self.failures = tuple(failures)

    def feedback(self) -> str:
        return "\n\n".join(str(f) for f in self.failures)


def fence_of(line: str) -> tuple[str, str, str] | None:
    """A fence line's marker, language and file name (either may be empty), or None for another line."""
    found = _FENCE.match(line)
    return (found.group(1), found.group(2), found.group(3)) if found else None


def clean_filename(line: str) -> str | None:
    """The file name a line gives, without the decorations models put around it, or None."""
    name = line.strip()
    fence = _FENCE.match(name)
    if fence:
        name = fence.group(3)
    name = name.strip().strip("*`'\"").removeprefix("#").strip().rstrip(":").strip("*`'\" ")
    name = name.removeprefix("./").replace("\\", "/")
    if not name or " " in name or name.startswith(("<", "=", ">")):
        return None
    if "." not in name and "/" not in name:
        return None
    return name


def filename_before(lines: Sequence[str], start: int) -> str | None:
    """Look back up to three lines from a SEARCH marker for the file name."""
    for back in range(1, 4):
        at = start - back
        if at < 0:
            return None
        line = lines[at]
        if not line.strip():
            continue
        fence = _FENCE.match(line)
        if fence and not fence.group(3):
            continue  # a bare ```python line: the name, if any, is above it
        return clean_filename(line)
    return None


def parse_edit_blocks(reply: str, default_path: str | None = None) -> list[EditBlock]:
    """Every edit block of a model reply, in order. Raises EditError on an ambiguous or broken block."""
    if len(reply) > MAX_REPLY_CHARS:
        raise EditError([EditFailure(0, "", f"the reply is {len(reply)} characters, over the limit")])
    lines = reply.splitlines()
    blocks: list[EditBlock] = []
    failures: list[EditFailure] = []
    previous = default_path
    i = 0
    while i < len(lines):
        if not _START.match(lines[i]):
            i += 1
            continue
        index = len(blocks) + len(failures) + 1
        path = filename_before(lines, i) or previous
        j = i + 1
        while j < len(lines) and not _DIVIDER.match(lines[j]) and not _START.match(lines[j]):
            j += 1
        if j >= len(lines) or not _DIVIDER.match(lines[j]):
            failures.append(EditFailure(index, path or "", "has '<<<<<<< SEARCH' but no '=======' after it"))
            i = j
            continue
        k = j + 1
        while k < len(lines) and not _END.match(lines[k]) and not _START.match(lines[k]):
            k += 1
        if k >= len(lines) or not _END.match(lines[k]):
            failures.append(EditFailure(index, path or "", "has '=======' but no '>>>>>>> REPLACE' after it"))
            i = k
            continue
        if path is None:
            failures.append(
                EditFailure(index, "", "names no file; put the file's path on the line before the fence")
            )
        else:
            search = "".join(line + "\n" for line in lines[i + 1 : j])
            replace = "".join(line + "\n" for line in lines[j + 1 : k])
            blocks.append(EditBlock(path, search, replace, index))
            previous = path
        i = k + 1
    if failures:
        raise EditError(failures)
    return blocks


def _strip_eol(line: str) -> str:
    return line.rstrip("\r\n")


def _find(haystack: Sequence[str], needle: Sequence[str]) -> list[int]:
    n = len(needle)
    return [i for i in range(len(haystack) - n + 1) if haystack[i : i + n] == needle]


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _tolerant_matches(file_lines: Sequence[str], search: Sequence[str]) -> list[tuple[int, str, str]]:
    """Matches that differ only in trailing spaces or a uniform indentation: (start, remove, add)."""
    stripped = [line.rstrip() for line in file_lines]
    wanted = [line.rstrip() for line in search]
    found = [(i, "", "") for i in _find(stripped, wanted)]
    if found:
        return found
    first = next((line for line in wanted if line.strip()), None)
    if first is None:
        return []
    for i in range(len(stripped) - len(wanted) + 1):
        window = stripped[i : i + len(wanted)]
        anchor = next(line for line, want in zip(window, wanted, strict=True) if want.strip())
        have, want_indent = _indent(anchor), _indent(first)
        if have == want_indent:
            continue
        if all(
            (not want.strip() and not got.strip())
            or (want.startswith(want_indent) and got == have + want[len(want_indent) :])
            for got, want in zip(window, wanted, strict=True)
        ):
            found.append((i, want_indent, have))
    return found


def closest_lines(file_lines: Sequence[str], search: Sequence[str], context: int = 0) -> str:
    """The lines of the file most like ``search``, numbered, to show the model what is really there."""
    if not file_lines:
        return "(the file is empty)"
    size = max(len(search), 1)
    target = "\n".join(search)
    best, best_at = -1.0, 0
    for i in range(max(len(file_lines) - size + 1, 1)):
        ratio = difflib.SequenceMatcher(None, "\n".join(file_lines[i : i + size]), target).quick_ratio()
        if ratio > best:
            best, best_at = ratio, i
    lo, hi = max(best_at - context, 0), min(best_at + size + context, len(file_lines))
    return "\n".join(f"{n + 1:>5} | {file_lines[n]}" for n in range(lo, hi))


def apply_block(text: str, block: EditBlock) -> str:
    """Apply one block to ``text``; raise EditError (one failure) when it does not match exactly once."""
    newline = newline_of(text) if text else "\n"
    lines = text.splitlines(keepends=True)
    bare = [_strip_eol(line) for line in lines]
    search = [_strip_eol(line) for line in block.search.splitlines()]
    replace = [_strip_eol(line) for line in block.replace.splitlines()]
    if not search:
        if text.strip():
            raise EditError(
                [
                    EditFailure(
                        block.index,
                        block.path,
                        "SEARCH is empty but the file is not; quote the exact lines to replace",
                    )
                ]
            )
        return "".join(line + newline for line in replace)
    matches = [(i, "", "") for i in _find(bare, search)] or _tolerant_matches(bare, search)
    if len(matches) > 1:
        where = ", ".join(str(m[0] + 1) for m in matches[:5])
        raise EditError(
            [
                EditFailure(
                    block.index,
                    block.path,
                    f"SEARCH matches {len(matches)} places (lines {where}); include more surrounding lines "
                    "so that it matches exactly one",
                )
            ]
        )
    if not matches:
        raise EditError(
            [
                EditFailure(
                    block.index,
                    block.path,
                    "SEARCH does not match the file. The closest lines in the file are:\n"
                    + closest_lines(bare, search, context=2)
                    + "\nCopy the lines to replace exactly, including indentation and comments.",
                )
            ]
        )
    start, remove, add = matches[0]
    if remove or add:
        replace = [
            add + line[len(remove) :] if line.startswith(remove) and line.strip() else line
            for line in replace
        ]
    end = start + len(search)
    # Each new line keeps the ending of the line it replaces, so a file with mixed endings stays as it was.
    endings = [line[len(line.rstrip("\r\n")) :] for line in lines[start:end]]
    fallback = next((e for e in reversed(endings) if e), newline)
    new = [
        line + (endings[i] if i < len(endings) and endings[i] else fallback) for i, line in enumerate(replace)
    ]
    ends_without_newline = end == len(lines) and not lines[-1].endswith(("\n", "\r"))
    if new and ends_without_newline:
        new[-1] = replace[-1]
    return "".join(lines[:start] + new + lines[end:])


# The path of the example in each edit format's rules (prompts/edit_*.txt); a small model copies it.
EXAMPLE_PATH = "path/relative/to/repo.py"


def resolve_path(path: str, allowed: Sequence[str]) -> str:
    """The file under review a block's path means: the path itself when it is one; else the one file
    under review whose path ends with it, folder by folder (``special.py`` for ``slugify/special.py``),
    after any folders of the rules' example (``path/special.py``); else, with one file under review, the
    example path copied as it stands. Any other path is returned as it is and refused as not under review:
    a folder that contradicts the path under review (``pkg/sub/__init__.py``) names another file."""
    if path in allowed:
        return path
    if path == EXAMPLE_PATH and len(allowed) == 1:
        return allowed[0]
    parts = path.split("/")
    example = EXAMPLE_PATH.split("/")[:-1]
    while len(parts) > 1 and parts[0] == example[0]:
        parts, example = parts[1:], example[1:] or [""]
    tail = "/".join(parts)
    ending = [a for a in allowed if a == tail or a.endswith("/" + tail)]
    return ending[0] if len(ending) == 1 else path


def apply_edits(
    files: Mapping[str, str], blocks: Sequence[EditBlock], allowed: Sequence[str]
) -> dict[str, str]:
    """Apply ``blocks`` in order to ``files`` (path -> text); only ``allowed`` paths may change.

    Returns the texts of the files that changed. Every failure is collected, so the model hears of
    all of them at once.
    """
    current = dict(files)
    failures: list[EditFailure] = []
    for block in blocks:
        block = dataclasses.replace(block, path=resolve_path(block.path, allowed))
        if block.path not in allowed:
            failures.append(
                EditFailure(
                    block.index,
                    block.path,
                    f"names a file that is not under review; only these may change: {', '.join(allowed)}",
                )
            )
            continue
        try:
            current[block.path] = apply_block(current.get(block.path, ""), block)
        except EditError as exc:
            failures.extend(exc.failures)
    if failures:
        raise EditError(failures)
    return {path: text for path, text in current.items() if files.get(path) != text}
