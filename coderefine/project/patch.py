"""Parse unified diffs (``git diff``, ``diff -u``) and apply them to text in memory."""

from __future__ import annotations

import re
from dataclasses import dataclass

from coderefine.errors import PatchError
from coderefine.project.textfile import newline_of

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class Hunk:
    old_start: int
    new_start: int
    lines: tuple[tuple[str, str], ...]  # (" " | "-" | "+", text without its line ending)
    old_no_newline_at_end: bool = False
    new_no_newline_at_end: bool = False

    def old_lines(self) -> list[str]:
        return [text for tag, text in self.lines if tag in " -"]

    def new_lines(self) -> list[str]:
        return [text for tag, text in self.lines if tag in " +"]

    def reversed(self) -> Hunk:
        flip = {" ": " ", "-": "+", "+": "-"}
        return Hunk(
            old_start=self.new_start,
            new_start=self.old_start,
            lines=tuple((flip[tag], text) for tag, text in self.lines),
            old_no_newline_at_end=self.new_no_newline_at_end,
            new_no_newline_at_end=self.old_no_newline_at_end,
        )


@dataclass(frozen=True)
class FilePatch:
    old_path: str | None  # None: the file is created
    new_path: str | None  # None: the file is deleted
    hunks: tuple[Hunk, ...]

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or ""

    def reversed(self) -> FilePatch:
        return FilePatch(self.new_path, self.old_path, tuple(h.reversed() for h in self.hunks))


def _strip_prefix(raw: str) -> str | None:
    name = raw.split("\t")[0].strip()
    if name == "/dev/null":
        return None
    if name.startswith('"') and name.endswith('"'):
        name = name[1:-1]
    if name.startswith(("a/", "b/")):
        name = name[2:]
    return name


def parse_patch(text: str) -> list[FilePatch]:
    """Parse a unified diff; raise PatchError with the line number when it is malformed."""
    lines = text.splitlines()
    patches: list[FilePatch] = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith("--- ") or i + 1 >= len(lines) or not lines[i + 1].startswith("+++ "):
            i += 1
            continue
        old_path, new_path = _strip_prefix(lines[i][4:]), _strip_prefix(lines[i + 1][4:])
        i += 2
        hunks: list[Hunk] = []
        while i < len(lines) and lines[i].startswith("@@"):
            match = _HUNK.match(lines[i])
            if not match:
                raise PatchError(f"patch line {i + 1}: malformed hunk header {lines[i]!r}")
            old_len = int(match.group(2) or "1")
            new_len = int(match.group(4) or "1")
            i += 1
            body: list[tuple[str, str]] = []
            old_seen = new_seen = 0
            no_nl_old = no_nl_new = False
            while i < len(lines) and (old_seen < old_len or new_seen < new_len):
                line = lines[i]
                tag, rest = (line[:1] or " "), line[1:]
                if tag == "\\":
                    i += 1
                    continue
                if tag not in " -+":
                    raise PatchError(f"patch line {i + 1}: expected ' ', '-' or '+', got {line!r}")
                body.append((tag, rest.rstrip("\r")))
                old_seen += tag in " -"
                new_seen += tag in " +"
                i += 1
                if i < len(lines) and lines[i].startswith("\\"):
                    no_nl_old = no_nl_old or tag in " -"
                    no_nl_new = no_nl_new or tag in " +"
                    i += 1
            if old_seen != old_len or new_seen != new_len:
                raise PatchError(f"patch line {i}: hunk is shorter than its header says")
            hunks.append(Hunk(int(match.group(1)), int(match.group(3)), tuple(body), no_nl_old, no_nl_new))
        patches.append(FilePatch(old_path, new_path, tuple(hunks)))
    if not patches:
        raise PatchError("no file changes found in the patch; give a unified diff (git diff, diff -u)")
    return patches


def apply_patch(patch: FilePatch, text: str) -> str:
    """Apply ``patch`` to ``text``; hunks may have moved a few lines, but their lines must match."""
    newline = newline_of(text) if text else "\n"
    lines = text.splitlines(keepends=True)
    stripped = [line.rstrip("\r\n") for line in lines]
    offset = 0
    for number, hunk in enumerate(patch.hunks, start=1):
        old = hunk.old_lines()
        expected = max(hunk.old_start - 1, 0) + offset
        start = _find_block(stripped, old, expected)
        if start is None:
            raise PatchError(
                f"{patch.path}: hunk {number} (line {hunk.old_start}) does not apply to the current file"
            )
        new = [line + newline for line in hunk.new_lines()]
        at_end = start + len(old) >= len(lines)
        if new and at_end and hunk.new_no_newline_at_end:
            new[-1] = new[-1][: -len(newline)]
        lines[start : start + len(old)] = new
        stripped[start : start + len(old)] = hunk.new_lines()
        offset += len(new) - len(old)
    return "".join(lines)


def _find_block(haystack: list[str], needle: list[str], expected: int) -> int | None:
    if not needle:
        return min(expected, len(haystack))
    limit = len(haystack) - len(needle)
    for distance in range(0, len(haystack) + 1):
        for start in (expected - distance, expected + distance):
            if 0 <= start <= limit and haystack[start : start + len(needle)] == needle:
                return start
        if expected - distance < 0 and expected + distance > limit:
            break
    return None
