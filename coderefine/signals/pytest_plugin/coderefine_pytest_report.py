"""A pytest plugin that coderefine loads into the project's own interpreter.

It writes one JSON line per event to the file named by PYTEST_CODEREFINE_REPORT as soon as the event
happens, so that a run that hangs or kills its own process still tells which tests finished and which
one was running. It also bounds each test phase by PYTEST_CODEREFINE_TIMEOUT seconds with SIGALRM. With
PYTEST_CODEREFINE_CALLS set, it also writes which functions of the project each test called (a "calls"
event per test: file and first line of each code object, and the lines run in the files named by
PYTEST_CODEREFINE_LINES), for fault localization.
This file must import nothing but pytest and the standard library: the project's interpreter may not
have coderefine installed.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import reprlib
import signal
import tempfile
import threading
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for mypy, which reads this folder as part of the package
    from coderefine.signals.pytest_plugin import coderefine_pytest_calls as calls
else:  # in the project's interpreter: beside this file, on the same path, with no coderefine installed
    import coderefine_pytest_calls as calls

import pytest

_REPORT = os.environ.get("PYTEST_CODEREFINE_REPORT", "")
_TIMEOUT = float(os.environ.get("PYTEST_CODEREFINE_TIMEOUT", "0") or 0)
_MAX_TEXT = 2000
_MAX_LOCALS = 8
_MAX_REPR = 300
# Failed asserts whose frame pytest did not rewrite, by (nodeid, phase): their local values.
_LOCALS: dict[tuple[str, str], list[list[str]]] = {}
# Folders whose absolute paths a failure's text names relative to them (the run's root first).
_ROOTS: list[str] = []
# The rootdir's path from the folder pytest was run in, when it lies below it (a subproject's config).
_PREFIX = ""
# Each collected test's file from the run's folder (only while _PREFIX is set), by node id.
_FILES: dict[str, str] = {}
_ADDRESS = re.compile(r"\b(at 0x)[0-9a-fA-F]+\b")
_TOOK = re.compile(r"\btook \d+\.\d+ ?(?:ms|s|seconds)\b")
_TEMP = os.path.realpath(tempfile.gettempdir())
_PYTEST_TEMP = re.compile(re.escape(_TEMP) + r"/pytest-of-[^/\s]+/pytest-\d+/")
_SCRATCH = re.compile(re.escape(_TEMP) + r"/[^/\s'\"]+")


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    if calls.active():
        event = {"event": "calls", "nodeid": _rebased(nodeid), "called": calls.taken()}
        _write(dict(event, lines=calls.taken_lines()))


class TestTimeoutError(BaseException):
    """Raised inside a test that ran past its time limit. A BaseException, so that the code under test
    cannot swallow it with ``except Exception`` and loop on (pytest still reports the test as failed)."""


def _write(event: dict[str, Any]) -> None:
    if not _REPORT:
        return
    with open(_REPORT, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(event) + "\n")
        handle.flush()


def pytest_configure(config: Any) -> None:
    global _PREFIX
    invoked = str(config.invocation_params.dir)
    _PREFIX = _below(str(config.rootpath), invoked)
    # A rootdir below the run's folder (a subproject's own pytest configuration) is named from the run's
    # folder, as its node ids are: the project's paths, whichever configuration pytest found.
    folders = (invoked, os.getcwd()) if _PREFIX else (str(config.rootpath), os.getcwd())
    for folder in folders:
        for found in dict.fromkeys((folder, os.path.realpath(folder))):
            if len(found) > 1 and found not in _ROOTS:
                _ROOTS.append(found)
    _ROOTS.sort(key=len, reverse=True)
    calls.start()


def _below(root: str, invoked: str) -> str:
    """``root`` relative to ``invoked`` with a trailing slash when it lies below it, else ""."""
    try:
        relative = os.path.relpath(os.path.realpath(root), os.path.realpath(invoked))
    except ValueError:  # another drive
        return ""
    if relative == os.curdir or relative.split(os.sep)[0] == os.pardir:
        return ""
    return relative.replace(os.sep, "/") + "/"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session: Any, config: Any, items: Any) -> None:
    """Each test's file from the run's folder, when the rootdir lies below it: a run of a subproject's
    tests beside the project's own names the latter relative to whichever argument found them
    (``sub::test_top`` for tests/test_top.py), so a prefix alone would make a plausible wrong id."""
    if not _PREFIX:
        return
    invoked = str(config.invocation_params.dir)
    for item in items:
        path = getattr(item, "path", None) or getattr(item, "fspath", None)
        if path is None:
            continue
        try:
            relative = os.path.relpath(os.path.realpath(str(path)), os.path.realpath(invoked))
        except ValueError:
            continue
        if relative.split(os.sep)[0] != os.pardir:
            _FILES[item.nodeid] = relative.replace(os.sep, "/")


def _rebased(nodeid: str) -> str:
    """A node id of the rootdir as a path from the run's folder: the test ids coderefine shows, reads
    and passes back to pytest are the project's paths."""
    if not _PREFIX or not nodeid:
        return nodeid
    path, sep, rest = nodeid.partition("::")
    return _file_of(nodeid, path) + sep + rest


def _file_of(nodeid: str, path: str) -> str:
    """The file of ``nodeid`` (reported as ``path`` from the rootdir) from the run's folder."""
    if not _PREFIX:
        return path
    known = _FILES.get(nodeid)
    if known is not None:
        return known
    return posixpath.normpath(_PREFIX + path.replace("\\", "/")) if path else path


def _targets(config: Any) -> list[str]:
    """The absolute paths the run was asked for (node ids cut to their files), as given and resolved;
    empty when any of them is no path (``--pyargs``), so that nothing is pruned."""
    cached = getattr(config, "_coderefine_targets", None)
    if cached is not None:
        return list(cached)
    found: list[str] = []
    base = str(config.invocation_params.dir)
    for arg in config.args:
        path = os.path.abspath(os.path.join(base, str(arg).split("::")[0]))
        if not os.path.exists(path):
            found = []
            break
        found += dict.fromkeys((path, os.path.realpath(path)))
    config._coderefine_targets = found
    return found


def _on_the_way(path: str, targets: list[str]) -> bool:
    return any(t == path or t.startswith(path + os.sep) or path.startswith(t + os.sep) for t in targets)


if int(pytest.__version__.split(".")[0]) >= 7:  # ``collection_path``: older pytest names it ``path``

    @pytest.hookimpl(tryfirst=True)
    def pytest_ignore_collect(collection_path: Any, config: Any) -> bool | None:
        """A folder or file beside the way to the asked-for tests is never collected, yet pytest's own
        hook matches it against every ``norecursedirs`` pattern and looks for a virtualenv in it: 0.1 s
        a run for one test file in a folder of 800 packages. Saying so first skips that work; the tests
        collected are the same."""
        targets = _targets(config)
        if not targets or _on_the_way(str(collection_path), targets):
            return None
        return True


def stable_text(text: str) -> str:
    """A failure's text as it reads on every run of the same code: paths below the project relative to
    it, pytest's ``tmp_path`` folders and other temporary folders as ``<tmp>``, object addresses as
    ``at 0x...``, hypothesis' measured timings as ``took <time>``. The same replies must reproduce the
    same run (``--record`` / replay), so what a model is shown may not carry a run's accidents."""
    for root in _ROOTS:
        text = text.replace(root + os.sep, "")
    text = _PYTEST_TEMP.sub("<tmp>/", text)
    if len(_TEMP) > 1:
        text = _SCRATCH.sub("<tmp>", text)
    text = _ADDRESS.sub(r"\g<1>...", text)
    return _TOOK.sub("took <time>", text)


def _on_alarm(signum: int, frame: object) -> None:
    raise TestTimeoutError(f"test ran longer than {_TIMEOUT:g}s (coderefine per-test timeout)")


def _timed() -> bool:
    return (
        bool(_TIMEOUT)
        and hasattr(signal, "SIGALRM")
        and threading.current_thread() is threading.main_thread()
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    previous = None
    if _timed():
        previous = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        yield
    finally:
        if _timed():
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous or signal.SIG_DFL)


def _phase(item: pytest.Item) -> Any:
    if _timed():
        signal.setitimer(signal.ITIMER_REAL, _TIMEOUT)
    calls.recording(True)
    try:
        yield
    finally:
        calls.recording(False)
        if _timed():
            signal.setitimer(signal.ITIMER_REAL, 0)


pytest_runtest_setup = pytest.hookimpl(hookwrapper=True)(_phase)
pytest_runtest_call = pytest.hookimpl(hookwrapper=True)(_phase)
pytest_runtest_teardown = pytest.hookimpl(hookwrapper=True)(_phase)


# A tuple, not ``A | B``: the project's interpreter may be older than 3.10.
_SKIPPED = (types.ModuleType, types.FunctionType, type)


def _short_repr(value: object) -> str:
    """A bounded repr: containers cut by reprlib (a huge list is never rendered whole), then the text."""
    shorter = reprlib.Repr()
    shorter.maxstring = shorter.maxother = _MAX_REPR
    shorter.maxlist = shorter.maxtuple = shorter.maxdict = shorter.maxset = 10
    shorter.maxlevel = 3
    try:
        text = shorter.repr(value)
    except Exception as exc:  # a broken __repr__ of the code under test
        text = f"<repr failed: {type(exc).__name__}>"
    return text if len(text) <= _MAX_REPR else text[: _MAX_REPR - 3] + "..."


def _plain_assert_locals(excinfo: Any) -> list[list[str]]:
    """The local values of the frame where an assert failed that pytest did not rewrite (a helper such
    as ``assert_equal(expected, result)`` in a module that is no test file): pytest shows the values of
    a rewritten assert, and of this one nothing but ``AssertionError``."""
    if excinfo is None or not isinstance(excinfo.value, AssertionError):
        return []
    tb = excinfo.tb
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return []
    names = tb.tb_frame.f_locals
    if any(name.startswith("@py_assert") for name in names) or str(excinfo.value).startswith("assert "):
        return []  # rewritten: pytest's own message has the values
    values = []
    for name, value in list(names.items()):
        if name.startswith("__") or isinstance(value, _SKIPPED):
            continue
        values.append([name, stable_text(_short_repr(value))])
        if len(values) >= _MAX_LOCALS:
            break
    return values


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Any:
    # The project's interpreter may be older than coderefine's: no syntax newer than Python 3.7 here.
    outcome = yield
    report = outcome.get_result()
    if report.failed and call.excinfo is not None:
        try:
            values = _plain_assert_locals(call.excinfo)
        except Exception:  # never let the report of a failure fail
            values = []
        if values:
            _LOCALS[(report.nodeid, report.when)] = values


def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    calls.next_test()
    file = _file_of(nodeid, location[0])
    _write({"event": "start", "nodeid": _rebased(nodeid), "file": file, "line": location[1]})


def _crash(report: Any) -> dict[str, Any]:
    crash = getattr(report.longrepr, "reprcrash", None)
    frames = []
    for entry in getattr(getattr(report.longrepr, "reprtraceback", None), "reprentries", []) or []:
        loc = getattr(entry, "reprfileloc", None)
        if loc is not None:
            frames.append({"path": str(loc.path), "line": loc.lineno})
    return {
        "message": stable_text(crash.message) if crash is not None else "",
        "crash_path": str(crash.path) if crash is not None else "",
        "crash_line": crash.lineno if crash is not None else 0,
        "frames": frames[-8:],
    }


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when != "call" and not report.failed:
        return
    event: dict[str, Any] = {
        "event": "result",
        "nodeid": _rebased(report.nodeid),
        "when": report.when,
        "outcome": report.outcome,
        "file": _file_of(report.nodeid, report.location[0]),
        "line": report.location[1],
        "duration": report.duration,
    }
    if report.failed:
        event.update(_crash(report))
        text = stable_text(report.longreprtext)
        if not event["message"]:
            # A setup error (a fixture that is not there) has no crash: its first "E" line says what
            # failed, and may be far from the text's end (pytest lists every fixture after it).
            event["message"] = next(
                (line[1:].strip() for line in text.splitlines() if line.startswith("E ")), ""
            )
        event["text"] = text[-_MAX_TEXT:]
        values = _LOCALS.pop((report.nodeid, report.when), None)
        if values:
            event["locals"] = values
    _write(event)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        text = stable_text(str(report.longrepr))
        _write({"event": "collect_error", "nodeid": _rebased(report.nodeid), "text": text[-_MAX_TEXT:]})
