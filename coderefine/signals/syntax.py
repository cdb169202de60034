"""Syntax: libcst must parse the file and CPython must compile it.

Both are needed: libcst accepts some code that CPython rejects (``return`` at module level,
duplicate parameters) and ignores its python_version setting.
"""

from __future__ import annotations

import warnings

from coderefine.signals.base import Signal, SignalSet, SourceStatus, anchor_of


def syntax_error(path: str, text: str) -> Signal | None:
    """The first syntax error of ``text``, or None when libcst and compile() both accept it."""
    # compile() first: its locations are the more precise; libcst then catches what it cannot parse.
    return compile_error(path, text) or parse_error(path, text)


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


def check_syntax(files: dict[str, str]) -> SignalSet:
    """Syntax signals for every file (``path -> text``)."""
    signals = tuple(s for path, text in files.items() if (s := syntax_error(path, text)) is not None)
    return SignalSet(signals, (SourceStatus("syntax", "ok"),))


def check_compile(files: dict[str, str]) -> SignalSet:
    """compile() alone for every file: the baseline's check. libcst's parse of a baseline matters only
    where the candidate has a syntax error to compare with, and is then done for that file alone."""
    signals = tuple(s for path, text in files.items() if (s := compile_error(path, text)) is not None)
    return SignalSet(signals, (SourceStatus("syntax", "ok"),))
