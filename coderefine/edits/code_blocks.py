"""A reply's fenced code blocks, each with the file it is for: what the ``definition`` and ``whole`` edit
formats read before anything is placed (``definitions.py``).

Small models' slips are read rather than refused where their meaning is plain: a path written as a block's
first line, a fence opened twice (and closed twice), a fence after a path line, a reply of bare code for
the one file under review. A reply cut off at the output token limit is refused where its last block
never closed: that definition ends where the limit fell.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass

from coderefine.edits.blocks import EditError, EditFailure, clean_filename, fence_of, filename_before
from coderefine.pyast import parse_module


@dataclass(frozen=True)
class CodeBlock:
    path: str
    code: str
    index: int  # 1-based position in the reply, for messages
    # Read from a reply without a fence: its start is a guess, so it is never taken as the whole file
    # (whatever stood above its first definition, a docstring or a constant, would be lost).
    bare: bool = False


def parse_code_blocks(
    reply: str, default_path: str | None = None, *, cut_off: bool = False
) -> list[CodeBlock]:
    """Every fenced code block of a reply with the file it is for: the path on the line before the fence
    (or on the fence line itself), else the previous block's, else ``default_path``. ``cut_off``: the
    reply stopped at the output token limit, so a last block whose fence never closed (or a reply of bare
    code) ends wherever the limit fell, mid-function perhaps, and is refused rather than put in place."""
    lines = reply.splitlines()
    blocks: list[CodeBlock] = []
    failures: list[EditFailure] = []
    previous = default_path
    i = 0
    while i < len(lines):
        opening = fence_of(lines[i])
        if opening is None:
            i += 1
            continue
        marker, language, named = opening
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == marker), len(lines))
        index = len(blocks) + len(failures) + 1
        inner = lines[i + 1 : end]
        body = list(_unnested(inner))
        reopened = _leading_fences(inner)
        # A path written as the block's first line (`pkg/mod.py`, **pkg/mod.py**) names the file; kept,
        # its backticks would make line 1 no Python.
        inside = clean_filename(body[0]) if body else None
        if inside is None or not inside.endswith(".py"):
            inside = None
        elif not body[0].lstrip().startswith(("#", '"', "'")):  # a comment or docstring naming it stays
            if _is_python(body[0]):
                inside = None
            else:
                # A fence may follow the path line too (```, the path, ```python): no Python either.
                reopened += _leading_fences(body[1:])
                body = list(_unnested(body[1:]))
        # A fence opened twice is closed twice: the second closing line is no new block's opening, unless
        # code follows it (then it opens the next block, and the first was closed once).
        after = end + 1
        while reopened and after < len(lines) and lines[after].strip() == marker:
            if after + 1 < len(lines) and _CODE_START.match(lines[after + 1]):
                break
            after, reopened = after + 1, reopened - 1
        path = (clean_filename(named) if named else None) or inside or filename_before(lines, i) or previous
        code = "".join(line + "\n" for line in body)
        if language.lower() not in ("", "python", "py", "python3") or not code.strip():
            i = after  # another language's block, or a stray fence with nothing in it
            continue
        if path is None:
            failures.append(
                EditFailure(index, "", "names no file; put the file's path on the line before the fence")
            )
        elif cut_off and end == len(lines):
            failures.append(EditFailure(index, path, _CUT_OFF))
        else:
            blocks.append(CodeBlock(path, code, index))
            previous = path
        i = after
    if failures:
        raise EditError(failures)
    if not blocks and (found := _unfenced(lines, default_path)) is not None:
        if cut_off:
            raise EditError([EditFailure(1, found.path, _CUT_OFF)])
        return [found]
    if not blocks:
        raise EditError(
            [EditFailure(0, "", "the reply has no code block; write each definition in a ```python fence")]
        )
    return blocks


_CUT_OFF = (
    "was cut off at the output token limit before it ended, so its last definition may be incomplete; "
    "write only the definitions that change, each complete, in a closed fence"
)


def _is_python(line: str) -> bool:
    """Whether ``line`` alone is a Python statement other than a bare name or attribute expression (a
    path such as pkg/mod.py parses as a division, and is no code anyone writes)."""
    try:
        tree = parse_module(line.strip())
    except SyntaxError:
        return False
    return not (len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr))


def _unnested(lines: Sequence[str]) -> Sequence[str]:
    """A block's lines without fence lines at its start or end: a small model opens a fence twice
    (```` ```python ```` on two lines), and the second one is no Python."""
    start, end = 0, len(lines)
    while start < end and fence_of(lines[start]) is not None:
        start += 1
    while end > start and fence_of(lines[end - 1]) is not None:
        end -= 1
    return lines[start:end]


def _leading_fences(lines: Sequence[str]) -> int:
    return next((k for k, line in enumerate(lines) if fence_of(line) is None), len(lines))


_CODE_START = re.compile(r"(@\w|def |async def |class |import \w|from [\w.]+ import )")
_MAX_TRIMMED = 60  # prose lines after the code that are cut one by one, at most
_MAX_STARTS = 4  # lines that look like the start of code, tried in turn


def _unfenced(lines: Sequence[str], default_path: str | None) -> CodeBlock | None:
    """A reply with no fence at all that is still code (a small model's), for the one file under review:
    from a line that starts a top-level definition or import (the first of those the rest parses from;
    prose such as "class Shape has a bug" may come before) to the last line that leaves it Python
    (trailing prose cut line by line). None unless that code defines a function or class, or when the cut
    tail holds more code (prose between two definitions): a partial edit would be applied unsaid."""
    if default_path is None:
        return None
    starts = [i for i, line in enumerate(lines) if _CODE_START.match(line)][:_MAX_STARTS]
    for start in starts:
        for end in range(len(lines), max(start, len(lines) - _MAX_TRIMMED), -1):
            code = "".join(line + "\n" for line in lines[start:end])
            try:
                tree = parse_module(code)
            except SyntaxError:
                continue
            defines = any(
                isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) for n in tree.body
            )
            if not defines or any(_CODE_START.match(line) for line in lines[end:]):
                return None
            return CodeBlock(default_path, code, 1, bare=True)
    return None
