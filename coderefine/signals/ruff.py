"""ruff check (JSON output) and ruff format, run on the text under review through stdin.

The project's own ruff configuration is used when it has one; otherwise ruff runs isolated with the
named default selection, because ruff's own default rule set changes between releases.
"""

from __future__ import annotations

import json
import shutil
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from coderefine.errors import PatchError, ToolError
from coderefine.project.patch import parse_patch
from coderefine.project.runner import Runner
from coderefine.signals.base import Severity, Signal, SignalSet, SourceStatus, anchor_of

# The classic "stop the build" set of flake8: syntax errors, undefined names, invalid comparisons.
_ERROR_PREFIXES = ("E9", "F63", "F7", "F82")
RUFF_TIMEOUT = 60.0


def find_ruff() -> str | None:
    """The ruff binary of the installed ruff package, else PATH's.

    The scripts folder beside the running interpreter is looked at first: it is where the ruff
    package puts its binary in a virtual environment, and asking the package itself costs 100 ms of
    sysconfig import. ``find_ruff_bin`` fails on some Python builds (sysconfig has no EXE).
    """
    beside = Path(sys.executable).parent / ("ruff.exe" if sys.platform == "win32" else "ruff")
    if beside.is_file():
        return str(beside)
    try:
        from ruff.__main__ import find_ruff_bin  # type: ignore[import-untyped]

        return str(find_ruff_bin())
    except (ImportError, FileNotFoundError, OSError, TypeError, AttributeError):
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


def format_signals(path: str, text: str, diff: str) -> list[Signal]:
    """One signal per run of lines that ``ruff format --diff`` would rewrite."""
    if not diff.strip():
        return []
    lines = text.splitlines()
    signals: list[Signal] = []
    for file_patch in parse_patch(diff):
        for hunk in file_patch.hunks:
            old_line = hunk.old_start
            run_start: int | None = None
            removed = 0
            added: list[str] = []
            for tag, content in (*hunk.lines, (" ", "")):
                if tag == " ":
                    if run_start is not None:
                        first, last = run_start, max(run_start + removed - 1, run_start)
                        signals.append(_format_signal(path, lines, first, last, added))
                        run_start, removed, added = None, 0, []
                    old_line += 1
                    continue
                if run_start is None:
                    run_start = old_line
                if tag == "-":
                    removed += 1
                    old_line += 1
                else:
                    added.append(content)
    return signals


def _format_signal(path: str, lines: list[str], first: int, last: int, added: list[str]) -> Signal:
    span = f"lines {first}-{last}" if last > first else f"line {first}"
    return Signal(
        source="format",
        path=path,
        line=first,
        end_line=last,
        code="format",
        message=f"ruff format would rewrite {span}",
        severity="info",
        fixable=True,
        detail="\n".join(added),
        anchor=anchor_of(lines, first),
    )


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
            fmt = [binary, "format", "--diff", *_config_args(root, path, self._select, check=False)]
            fmt += ["--stdin-filename", path, "-"]
            try:
                done = self._runner.run(fmt, cwd=root, timeout=RUFF_TIMEOUT, stdin=text)
                # Exit 2: ruff cannot parse the file; it has no format verdict, the syntax source reports it.
                if done.code in (0, 1):
                    signals.extend(format_signals(path, text, done.out))
            except (ToolError, PatchError):
                pass
        return signals, notes
