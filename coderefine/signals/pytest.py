"""pytest on the tests related to the changed files, in a subprocess of the project's interpreter.

The run loads a small plugin (``pytest_plugin/coderefine_pytest_report.py``) that writes each result as a
JSON line when it happens and bounds each test with a timeout; the whole run is bounded too. A run that
hangs or dies still reports what finished, and the source is marked as not having run cleanly.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from coderefine.errors import ToolMissingError, ToolTimeoutError
from coderefine.project.redact import Redactor, secret_name
from coderefine.project.runner import Runner
from coderefine.signals.base import CallRecord, Signal, SignalSet, SourceStatus
from coderefine.signals.failures import LOCALS_HEADER, innermost
from coderefine.signals.interpreter import find_interpreter
from coderefine.signals.related import imported_modules, is_test_file, module_name, related_tests
from coderefine.signals.warm import WarmPytest

# Kept importable from here, where they used to live.
__all__ = ["PytestConfig", "PytestSignals", "find_interpreter", "imported_modules", "is_test_file"]
__all__ += ["module_name", "related_tests"]

PLUGIN_DIR = Path(__file__).parent / "pytest_plugin"
PLUGIN = "coderefine_pytest_report"
DEFAULT_COMMAND = ("{python}", "-m", "pytest")


@dataclass(frozen=True)
class PytestConfig:
    python: str
    command: tuple[str, ...]
    test_timeout: float
    run_timeout: float


class PytestSignals:
    """Runs the related tests of a tree and turns failures into signals."""

    def __init__(
        self,
        runner: Runner,
        config: PytestConfig,
        environ: Mapping[str, str],
        warm: WarmPytest | None = None,
    ) -> None:
        """``warm``: a warm runner to fork runs from, used when the test command is the default one."""
        self._runner = runner
        self._config = config
        self._environ = dict(environ)
        self._warm = warm if tuple(config.command) == DEFAULT_COMMAND else None

    def collect(
        self, tree: Path, tests: Sequence[str], calls: bool = False, lines: Sequence[str] = ()
    ) -> SignalSet:
        """The signals of ``tests`` run in ``tree``; with ``calls``, also the functions each test called
        and the lines it ran of the files ``lines`` names (a trace hook in the test process: only the
        run that localizes a failure pays for it)."""
        if not tests:
            return SignalSet((), (SourceStatus("pytest", "skipped", "no tests related to the change"),))
        with tempfile.TemporaryDirectory(prefix="coderefine-pytest-") as scratch:
            report = Path(scratch) / "report.jsonl"
            argv = [part.replace("{python}", self._config.python) for part in self._config.command]
            # A run for the calls needs each test's outcome, not its traceback: formatting 137 of them
            # took longer than the tests.
            tb = "--tb=no" if calls else "--tb=short"
            argv += ["-p", PLUGIN, "-p", "no:cacheprovider", "-q", tb, "-rN", *tests]
            env = self._env(tree, report)
            if calls:
                env["PYTEST_CODEREFINE_CALLS"] = "1"
                env["PYTEST_CODEREFINE_LINES"] = os.pathsep.join(lines)
            try:
                done = None
                if self._warm is not None:
                    done = self._warm.run(argv[3:], cwd=tree, timeout=self._config.run_timeout, env=env)
                if done is None:
                    done = self._runner.run(argv, cwd=tree, timeout=self._config.run_timeout, env=env)
            except ToolMissingError:
                note = f"cannot start {argv[0]}; set 'python' or 'test-command' in [tool.coderefine]"
                return SignalSet((), (SourceStatus("pytest", "unavailable", note),))
            except ToolTimeoutError:
                events = _read_events(report)
                signals = _signals(events, hung=True, timeout=self._config.run_timeout)
                note = f"the test run passed its limit of {self._config.run_timeout:g}s and was stopped"
                return SignalSet(tuple(signals), (SourceStatus("pytest", "timeout", note),))
            events = _read_events(report)
        result = _result(done.code, done.out + done.err, events, self._config.python, tests)
        return dataclasses.replace(result, calls=test_calls(events)) if calls else result

    def _env(self, tree: Path, report: Path) -> dict[str, str]:
        env = dict(self._environ)
        paths = [str(PLUGIN_DIR), str(tree)]
        if (tree / "src").is_dir():
            paths.append(str(tree / "src"))
        if env.get("PYTHONPATH"):
            paths.append(env["PYTHONPATH"])
        env["PYTHONPATH"] = os.pathsep.join(paths)
        # Bytecode caches are validated by mtime and size: a candidate written within the same second as
        # the version before it, with the same size, would run the old bytecode. Never write them here.
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["PYTEST_CODEREFINE_REPORT"] = str(report)
        env["PYTEST_CODEREFINE_TIMEOUT"] = f"{self._config.test_timeout:g}"
        return env


def _read_events(report: Path) -> list[dict[str, object]]:
    if not report.exists():
        return []
    events = []
    for line in report.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # the last line of a killed run may be cut short
    return events


def test_calls(events: Sequence[Mapping[str, object]]) -> tuple[CallRecord, ...]:
    """The plugin's "calls" events, each with whether its test failed (in any phase)."""
    failed = {
        str(e.get("nodeid", ""))
        for e in events
        if e.get("event") == "result" and e.get("outcome") == "failed"
    }
    found: list[CallRecord] = []
    for event in events:
        called = event.get("called")
        if event.get("event") != "calls" or not isinstance(called, list):
            continue
        nodeid = str(event.get("nodeid", ""))
        found.append(CallRecord(nodeid, nodeid in failed, _places(called), _places(event.get("lines"))))
    return tuple(found)


def _places(items: object) -> frozenset[tuple[str, int]]:
    """(file, line) pairs of a "calls" event, anything else left out."""
    if not isinstance(items, list):
        return frozenset()
    return frozenset(
        (str(item[0]), item[1])
        for item in items
        if isinstance(item, list) and len(item) == 2 and isinstance(item[1], int)
    )


def _first_line(text: object) -> str:
    lines = [line for line in str(text or "").splitlines() if line.strip()]
    return lines[0].strip() if lines else ""


def _test_signal(event: dict[str, object], message: str, detail: str = "") -> Signal:
    """A failing-test signal at the line of the test function that failed (its first frame: the assert,
    or the call that raised), else at the test's definition (pytest reports that one 0-based)."""
    path = str(event.get("file", ""))
    line = int(str(event.get("line") or 0)) + 1
    frames = event.get("frames")
    for frame in frames if isinstance(frames, list) else []:
        if isinstance(frame, dict) and _same_file(str(frame.get("path", "")), path):
            line = int(str(frame.get("line") or line))
            break
    nodeid = str(event.get("nodeid", ""))
    return Signal("pytest", path, line, line, nodeid, message, "error", detail=detail)


def _same_file(frame_path: str, test_path: str) -> bool:
    frame, test = frame_path.replace("\\", "/"), test_path.replace("\\", "/")
    return bool(test) and (frame == test or frame.endswith("/" + test))


def _signals(events: list[dict[str, object]], *, hung: bool, timeout: float = 0.0) -> list[Signal]:
    signals: list[Signal] = []
    finished: set[object] = set()
    started: list[dict[str, object]] = []
    for event in events:
        kind = event.get("event")
        nodeid = str(event.get("nodeid", ""))
        if kind == "start":
            started.append(event)
        elif kind == "collect_error":
            text = str(event.get("text", ""))
            last = [line for line in text.splitlines() if line.startswith("E ")]
            message = last[-1][1:].strip() if last else _first_line(text) or "cannot be collected"
            signals.append(
                Signal(
                    "pytest",
                    nodeid,
                    1,
                    1,
                    f"collect:{nodeid}",
                    f"collection error: {message}",
                    "error",
                    detail=text,
                )
            )
        elif kind == "result":
            finished.add(nodeid)
            if event.get("outcome") != "failed":
                continue
            phase = "" if event.get("when") == "call" else f" (in {event.get('when')})"
            message = _first_line(event.get("message")) or "failed"
            detail = str(event.get("text", "")) + locals_block(event)
            signals.append(_test_signal(event, f"test failed{phase}: {message}", detail))
    if hung:
        why = f"did not finish within {timeout:g}s" if timeout else "crashed the test process"
        for event in started:
            if str(event.get("nodeid", "")) not in finished:
                signals.append(_test_signal(event, f"test {why}"))
    return signals


def locals_block(event: Mapping[str, object]) -> str:
    """The local values the plugin took where an unrewritten assert failed, as the end of the test's
    detail, secrets redacted (a name that says secret hides its value whole)."""
    values = event.get("locals")
    if not isinstance(values, list) or not values:
        return ""
    redactor = Redactor()
    rows = []
    for item in values:
        if not (isinstance(item, list) and len(item) == 2):
            continue
        name, value = str(item[0]), str(item[1])
        value = "«redacted»" if secret_name(name) else redactor.redact(f"{name} = {value}")[len(name) + 3 :]
        rows.append(f"    {name} = {value}")
    # The traceback's own name of the frame: relative to the project, where crash_path is the tree's.
    where = innermost(str(event.get("text", "")))
    header = LOCALS_HEADER + (f" ({where})" if where else "")
    return f"\n{header}:\n" + "\n".join(rows) if rows else ""


def ran_note(events: list[dict[str, object]], tests: Sequence[str]) -> str:
    """How many tests ran, from which files: the reports say it so that "ok" is never a blank cheque."""
    count = len({e.get("nodeid") for e in events if e.get("event") == "result"})
    shown = ", ".join(tests[:5]) + (f" and {len(tests) - 5} more files" if len(tests) > 5 else "")
    note = f"{count} test{'s' if count != 1 else ''} ran from {shown}"
    broken = len({e.get("nodeid") for e in events if e.get("event") == "collect_error"})
    if count == 0 and broken:
        # Errors already there before the change are not counted against it, so without this the report
        # read "pytest ok ... Clean" for a change no test had run.
        files = f"{broken} test file{'s' if broken != 1 else ''}"
        note += f": {files} failed to collect, so nothing tested the change"
    return note


def _result(
    code: int, output: str, events: list[dict[str, object]], python: str, tests: Sequence[str] = ()
) -> SignalSet:
    if "No module named pytest" in output:
        note = f"pytest is not installed for {python}; install it there or set 'python' in [tool.coderefine]"
        return SignalSet((), (SourceStatus("pytest", "unavailable", note),))
    # A failing run that recorded no test and no collection error broke before collecting (a conftest.py
    # that pytest rejects, say): that is no verdict on the tests, whatever the exit code.
    reported = any(e.get("event") in ("result", "collect_error", "start") for e in events)
    if code < 0 or (code not in (0, 5) and not reported):
        signals = _signals(events, hung=True)
        tail = " ".join(output.strip().splitlines()[-3:])[:300]
        note = f"pytest exited with code {code}" + (f": {tail}" if tail else "")
        return SignalSet(tuple(signals), (SourceStatus("pytest", "unavailable", note),))
    signals = _signals(events, hung=code != 0 and not any(e.get("event") == "result" for e in events[-1:]))
    note = f"no tests ran from {', '.join(tests[:5])}" if code == 5 else ran_note(events, tests)
    return SignalSet(tuple(signals), (SourceStatus("pytest", "ok", note),))
