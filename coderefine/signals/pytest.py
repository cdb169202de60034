"""pytest on the tests related to the changed files, in a subprocess of the project's interpreter.

The run loads a small plugin (``pytest_plugin/coderefine_pytest_report.py``) that writes each result as a
JSON line when it happens and bounds each test with a timeout; the whole run is bounded too. A run that
hangs or dies still reports what finished, and the source is marked as not having run cleanly.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from coderefine.errors import ToolMissingError, ToolTimeoutError
from coderefine.runner import Runner
from coderefine.signals.base import Signal, SignalSet, SourceStatus
from coderefine.signals.warm import WarmPytest

PLUGIN_DIR = Path(__file__).parent / "pytest_plugin"
PLUGIN = "coderefine_pytest_report"
DEFAULT_COMMAND = ("{python}", "-m", "pytest")
_FROM = re.compile(r"^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]+)", re.M)
_PLAIN = re.compile(r"^[ \t]*import[ \t]+([^\n#]+)", re.M)


def is_test_file(path: str) -> bool:
    name = PurePosixPath(path).name
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def module_name(path: str) -> str:
    """The dotted module name of a repository path (``src/pkg/mod.py`` -> ``pkg.mod``)."""
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if parts and parts[0] in ("src", "lib") and len(parts) > 1:
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imported_modules(source: str) -> set[str]:
    """Every module a test file may import: ``from a import b`` yields both ``a`` and ``a.b``."""
    found: set[str] = set()
    for match in _PLAIN.finditer(source):
        found.update(part.split(" as ")[0].strip() for part in match.group(1).split(","))
    for match in _FROM.finditer(source):
        base = match.group(1)
        found.add(base)
        for name in re.split(r"[\s,()]+", match.group(2)):
            if name and name not in ("*", "as") and not name.startswith("\\"):
                found.add(f"{base}.{name}")
    return {m for m in found if m}


def related_tests(changed: Sequence[str], project_files: Sequence[str], read: Mapping[str, str]) -> list[str]:
    """Test files related to ``changed``: the changed tests themselves, by name, and by import.

    ``read`` gives the text of test files (path -> source); files missing from it count by name only.
    """
    tests = [p for p in project_files if is_test_file(p)]
    related: set[str] = {p for p in changed if is_test_file(p)}
    for path in changed:
        if is_test_file(path):
            continue
        stem = PurePosixPath(path).stem
        if stem == "conftest":
            folder = PurePosixPath(path).parent
            related.update(t for t in tests if PurePosixPath(t).is_relative_to(folder))
            continue
        module = module_name(path)
        for test in tests:
            name = PurePosixPath(test).name
            if name in (f"test_{stem}.py", f"{stem}_test.py") or (
                module
                and any(
                    imported == module or imported.startswith(module + ".")
                    for imported in imported_modules(read.get(test, ""))
                )
            ):
                related.add(test)
    return sorted(related)


def find_interpreter(root: Path, configured: str, environ: Mapping[str, str]) -> str:
    """The project's Python: the setting, then a .venv in the project, then VIRTUAL_ENV, then ours.

    A project's own .venv comes before VIRTUAL_ENV because pre-commit runs hooks with VIRTUAL_ENV set
    to the hook's environment, which lacks the project's dependencies.
    """
    if configured:
        path = Path(configured)
        return str(path if path.is_absolute() or os.sep not in configured else root / path)
    candidates = [root / ".venv", root / "venv"]
    if environ.get("VIRTUAL_ENV"):
        candidates.append(Path(environ["VIRTUAL_ENV"]))
    for venv in candidates:
        for exe in (venv / "bin" / "python", venv / "Scripts" / "python.exe"):
            if exe.is_file():
                return str(exe)
    return sys.executable


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

    def collect(self, tree: Path, tests: Sequence[str]) -> SignalSet:
        if not tests:
            return SignalSet((), (SourceStatus("pytest", "skipped", "no tests related to the change"),))
        with tempfile.TemporaryDirectory(prefix="coderefine-pytest-") as scratch:
            report = Path(scratch) / "report.jsonl"
            argv = [part.replace("{python}", self._config.python) for part in self._config.command]
            argv += ["-p", PLUGIN, "-p", "no:cacheprovider", "-q", "--tb=short", "-rN", *tests]
            env = self._env(tree, report)
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
        return _result(done.code, done.out + done.err, events, self._config.python)

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


def _first_line(text: object) -> str:
    lines = [line for line in str(text or "").splitlines() if line.strip()]
    return lines[0].strip() if lines else ""


def _test_signal(event: dict[str, object], message: str, detail: str = "") -> Signal:
    """A failing-test signal at the test's own definition (pytest reports 0-based lines)."""
    line = int(str(event.get("line") or 0)) + 1
    nodeid = str(event.get("nodeid", ""))
    return Signal("pytest", str(event.get("file", "")), line, line, nodeid, message, "error", detail=detail)


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
            signals.append(_test_signal(event, f"test failed{phase}: {message}", str(event.get("text", ""))))
    if hung:
        why = f"did not finish within {timeout:g}s" if timeout else "crashed the test process"
        for event in started:
            if str(event.get("nodeid", "")) not in finished:
                signals.append(_test_signal(event, f"test {why}"))
    return signals


def _result(code: int, output: str, events: list[dict[str, object]], python: str) -> SignalSet:
    if "No module named pytest" in output:
        note = f"pytest is not installed for {python}; install it there or set 'python' in [tool.coderefine]"
        return SignalSet((), (SourceStatus("pytest", "unavailable", note),))
    if code < 0 or (code not in (0, 1, 2, 5) and not events):
        signals = _signals(events, hung=True)
        tail = " ".join(output.strip().splitlines()[-3:])[:300]
        note = f"pytest exited with code {code}" + (f": {tail}" if tail else "")
        return SignalSet(tuple(signals), (SourceStatus("pytest", "unavailable", note),))
    signals = _signals(events, hung=code != 0 and not any(e.get("event") == "result" for e in events[-1:]))
    note = "no tests ran" if code == 5 else ""
    return SignalSet(tuple(signals), (SourceStatus("pytest", "ok", note),))
