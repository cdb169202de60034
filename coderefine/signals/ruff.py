"""ruff check (JSON output) and ruff format, run on the text under review through stdin.

The project's own ruff configuration is used when it has one; otherwise ruff runs isolated with the
named default selection, because ruff's own default rule set changes between releases.
"""

from __future__ import annotations

import difflib
import json
import shutil
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from coderefine.errors import ToolError
from coderefine.runner import Runner
from coderefine.signals.base import Severity, Signal, SignalSet, SourceStatus, anchor_of

# The classic "stop the build" set of flake8: syntax errors, undefined names, invalid comparisons.
_ERROR_PREFIXES = ("E9", "F63", "F7", "F82")
RUFF_TIMEOUT = 60.0


def find_ruff() -> str | None:
    """The ruff binary of the installed ruff package, else the one beside Python, else PATH."""
    try:
        from ruff.__main__ import find_ruff_bin

        return str(find_ruff_bin())
    except (ImportError, FileNotFoundError, OSError, TypeError, AttributeError):
        # find_ruff_bin fails on Python builds whose sysconfig has no EXE.
        pass
    beside = Path(sys.executable).parent / "ruff"
    if beside.is_file():
        return str(beside)
    return shutil.which("ruff")


def has_ruff_config(root: Path, rel: str) -> bool:
    """Whether ruff would find a configuration for ``rel`` inside the project."""
    folder = (root / rel).parent
    while True:
        if (folder / "ruff.toml").is_file() or (folder / ".ruff.toml").is_file():
            return True
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            try:
                if "ruff" in tomllib.loads(pyproject.read_text("utf-8")).get("tool", {}):
                    return True
            except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError):
                pass
        if folder == root or folder == folder.parent:
            return False
        folder = folder.parent


def _config_args(root: Path, rel: str, select: tuple[str, ...], check: bool) -> list[str]:
    if has_ruff_config(root, rel):
        return []
    args = ["--isolated"]
    if check:
        args += ["--select", ",".join(select)]
    return args


def _severity(code: str) -> Severity:
    return "error" if code.startswith(_ERROR_PREFIXES) else "warning"


def parse_check_output(path: str, text: str, output: str) -> list[Signal]:
    """Signals from ``ruff check --output-format json``; syntax errors are left to the syntax source."""
    lines = text.splitlines()
    signals: list[Signal] = []
    for item in json.loads(output or "[]"):
        code = item.get("code")
        if not code or code == "invalid-syntax":
            continue
        line = int(item["location"]["row"])
        fix = item.get("fix") or {}
        signals.append(
            Signal(
                source="ruff",
                path=path,
                line=line,
                end_line=max(int(item["end_location"]["row"]), line),
                code=code,
                message=item["message"],
                severity=_severity(code),
                fixable=bool(fix),
                column=int(item["location"]["column"]),
                detail=fix.get("message") or "",
                anchor=anchor_of(lines, line),
            )
        )
    return signals


def format_signals(path: str, text: str, formatted: str) -> list[Signal]:
    """One signal per block of lines that ruff format would rewrite."""
    old, new = text.splitlines(), formatted.splitlines()
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    signals: list[Signal] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        first = i1 + 1
        last = max(i2, first)
        proposed = "\n".join(new[j1:j2])
        signals.append(
            Signal(
                source="format",
                path=path,
                line=first,
                end_line=last,
                code="format",
                message=f"ruff format would rewrite line{'s' if last > first else ''} {first}"
                + (f"-{last}" if last > first else ""),
                severity="info",
                fixable=True,
                detail=proposed,
                anchor=anchor_of(old, first),
            )
        )
    return signals


class RuffSignals:
    """Collects ruff check and ruff format signals for files given as text."""

    def __init__(self, runner: Runner, select: tuple[str, ...], with_format: bool = True) -> None:
        self._runner = runner
        self._select = select
        self._with_format = with_format

    def collect(self, root: Path, files: dict[str, str]) -> SignalSet:
        binary = find_ruff()
        if binary is None:
            note = "ruff not found; install it with 'pip install ruff'"
            states = [SourceStatus("ruff", "unavailable", note)]
            if self._with_format:
                states.append(SourceStatus("format", "unavailable", note))
            return SignalSet((), tuple(states))
        with ThreadPoolExecutor(max_workers=4) as pool:
            results = list(pool.map(lambda job: self._one(binary, root, *job), files.items()))
        signals = [s for part, _ in results for s in part]
        failures = [note for _, notes in results for note in notes]
        statuses = [
            SourceStatus("ruff", "unavailable", "; ".join(failures))
            if failures
            else SourceStatus("ruff", "ok")
        ]
        if self._with_format:
            statuses.append(SourceStatus("format", "ok"))
        return SignalSet(tuple(signals), tuple(statuses))

    def _one(self, binary: str, root: Path, path: str, text: str) -> tuple[list[Signal], list[str]]:
        notes: list[str] = []
        signals: list[Signal] = []
        check = [binary, "check", "--output-format", "json", "--no-fix", "--exit-zero", "--quiet"]
        check += _config_args(root, path, self._select, check=True)
        check += ["--stdin-filename", path, "-"]
        try:
            done = self._runner.run(check, cwd=root, timeout=RUFF_TIMEOUT, stdin=text)
            if done.code != 0:
                notes.append(f"ruff check failed on {path}: {done.err.strip()[:300]}")
            else:
                signals.extend(parse_check_output(path, text, done.out))
        except (ToolError, json.JSONDecodeError, KeyError) as exc:
            notes.append(f"ruff check failed on {path}: {exc}")
        if self._with_format:
            fmt = [binary, "format", *_config_args(root, path, self._select, check=False)]
            fmt += ["--stdin-filename", path, "-"]
            try:
                done = self._runner.run(fmt, cwd=root, timeout=RUFF_TIMEOUT, stdin=text)
                # A file ruff cannot parse has no format verdict; the syntax source reports it.
                if done.code == 0:
                    signals.extend(format_signals(path, text, done.out))
            except ToolError:
                pass
        return signals, notes
