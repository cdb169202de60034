"""Syntax: CPython must compile the file (the signal), and libcst must parse it (the gate of a write).

Both are needed before a write: libcst accepts some code that CPython rejects (``return`` at module
level, duplicate parameters) and ignores its python_version setting, and a file libcst cannot parse cannot
be edited safely. As a signal, compile() alone says whether the code can run.
"""

from __future__ import annotations

import warnings

from coderefine.signals.base import Signal, SignalSet, SourceStatus, anchor_of


def compile_error(path: str, text: str) -> Signal | None:
    """The error of ``compile(text)``, or None: the half of the syntax check that decides whether the
    code can run at all (milliseconds, where libcst's parse takes tenths of a second on a large file)."""
    lines = text.splitlines()
    try:
        with warnings.catch_warnings():
            # An invalid escape sequence warns at compile time; it is ruff's business, not a syntax error.
            warnings.simplefilter("ignore")
            compile(text, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None) or 1
        end = getattr(exc, "end_lineno", None) or line
        message = getattr(exc, "msg", None) or str(exc)
        return Signal(
            source="syntax",
            path=path,
            line=line,
            end_line=max(end, line),
            code="syntax-error",
            message=f"compile() rejects it: {message}",
            severity="error",
            column=getattr(exc, "offset", None) or 0,
            anchor=anchor_of(lines, line),
        )
    return None


def parse_error(path: str, text: str) -> Signal | None:
    """The error of libcst's parse of ``text``, or None."""
    lines = text.splitlines()
    # Imported here: 0.15 s that a caller can overlap with the test run it has already started.
    import libcst

    try:
        libcst.parse_module(text)
    except libcst.ParserSyntaxError as exc:
        line = max(exc.raw_line, 1)
        return Signal(
            source="syntax",
            path=path,
            line=line,
            end_line=line,
            code="syntax-error",
            message=f"libcst cannot parse: {exc.message}",
            severity="error",
            column=exc.raw_column + 1,
            anchor=anchor_of(lines, line),
        )
    return None


def check_compile(files: dict[str, str]) -> SignalSet:
    """The syntax signal of every file (``path -> text``): compile()'s errors."""
    signals = tuple(s for path, text in files.items() if (s := compile_error(path, text)) is not None)
    return SignalSet(signals, (SourceStatus("syntax", "ok"),))
