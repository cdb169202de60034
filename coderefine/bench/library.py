"""A real library for the benchmark: its source distribution, a venv of its own, and its test suite.

Everything here runs external programs through a ``Runner``; every failure is a ``UsageError`` that names
the library and says what to do, so that ``make-suite`` never leaves a half-built suite behind.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from coderefine.bench.contain import end_marked, marked
from coderefine.bench.pip_failure import install_failure
from coderefine.bench.pypi import sdist_from_index
from coderefine.bench.pytest_config import selection_addopts
from coderefine.bench.stable import stable_environ
from coderefine.errors import ToolError, UsageError
from coderefine.project.runner import Completed, Runner
from coderefine.signals.pytest import PLUGIN, PLUGIN_DIR
from coderefine.signals.warm import WarmPytest

LINES_PLUGIN_DIR = Path(__file__).parent / "plugin"
LINES_PLUGIN = "coderefine_bench_lines"
ONLY_PLUGIN = "coderefine_bench_only"
PIP_TIMEOUT = 600.0
SUITE_TIMEOUT = 120.0
# A large suite on a busy machine can pass its limits: every whole-suite limit of a build or a scoring is
# multiplied by this variable of the environment (e.g. 3 for 360 s).
TIMEOUT_SCALE = "CODEREFINE_BENCH_TIMEOUT_SCALE"


def timeout_scale(environ: Mapping[str, str]) -> float:
    """The factor ``CODEREFINE_BENCH_TIMEOUT_SCALE`` sets (1 when unset or not a positive number)."""
    try:
        scale = float(environ.get(TIMEOUT_SCALE, "") or 1)
    except ValueError:
        return 1.0
    return scale if scale > 0 else 1.0


TEST_TIMEOUT = 10.0


@dataclass(frozen=True)
class TestOutcome:
    nodeid: str
    outcome: str  # passed, failed, skipped
    message: str = ""


@dataclass(frozen=True)
class SuiteRun:
    """One run of a test suite: each test's outcome, and whether the run itself finished."""

    outcomes: tuple[TestOutcome, ...]
    finished: bool
    output: str = ""
    # Files that could not be collected (an import error): the file, and the last line of its error.
    errors: tuple[TestOutcome, ...] = ()

    def hung(self) -> bool:
        return any("ran longer than" in o.message for o in self.outcomes)

    def failed(self) -> frozenset[str]:
        return frozenset(o.nodeid for o in self.outcomes if o.outcome == "failed")

    def passed(self) -> frozenset[str]:
        return frozenset(o.nodeid for o in self.outcomes if o.outcome == "passed")

    def message(self, nodeid: str) -> str:
        return next((o.message for o in self.outcomes if o.nodeid == nodeid), "")


@dataclass(frozen=True)
class Coverage:
    """Which tests run which lines of the library's own files (relative paths), from one traced run."""

    tests: tuple[str, ...] = ()
    lines: Mapping[str, Mapping[int, tuple[int, ...]]] = field(default_factory=dict)
    outside: Mapping[str, frozenset[int]] = field(default_factory=dict)  # run at import, by no test

    def __bool__(self) -> bool:
        return bool(self.lines)

    def lines_of(self, path: str) -> set[int]:
        """The lines of ``path`` that run at all."""
        return set(self.lines.get(path, {})) | set(self.outside.get(path, ()))

    def tests_for(self, path: str, lines: Iterable[int]) -> tuple[str, ...] | None:
        """The tests that run any of ``lines`` of ``path``; None when one of them runs outside every test
        (at import: a change there may reach them all) or nothing was traced."""
        if not self.lines:
            return None
        by_line, outside = self.lines.get(path, {}), self.outside.get(path, frozenset())
        found: set[int] = set()
        for line in lines:
            if line in outside:
                return None
            found.update(by_line.get(line, ()))
        return tuple(self.tests[i] for i in sorted(found))


def download_sdist(
    requirement: str,
    folder: Path,
    runner: Runner,
    fetch_sdist: Callable[[str, str, Path], Path] = sdist_from_index,
) -> Path:
    """The source distribution of ``NAME==VERSION``, downloaded with pip into ``folder``.

    Only the library itself is forced to be a source distribution: its build back end may come as a
    wheel, which makes the download seconds instead of minutes (pip builds the metadata).
    """
    name = requirement.split("==")[0].strip()
    argv = [sys.executable, "-m", "pip", "download", "--no-binary", name, "--no-deps", "-q"]
    argv += ["-d", str(folder), requirement]
    try:
        done = runner.run(argv, cwd=folder, timeout=PIP_TIMEOUT)
    except ToolError as exc:
        raise UsageError(f"{requirement}: cannot run pip download ({exc})") from exc
    archives = sorted(p for p in folder.iterdir() if p.name.endswith((".tar.gz", ".zip", ".tgz")))
    if done.code != 0 or not archives:
        tail = " ".join((done.err or done.out).strip().splitlines()[-3:])[:400]
        version = requirement.partition("==")[2].strip()
        if version and "installing build dependencies" in (done.err + done.out):
            # pip could not install the build back end to prepare the metadata; the archive itself
            # needs no build: take it from PyPI's JSON API, checked by its sha256.
            return fetch_sdist(name, version, folder)
        reason = install_failure(done.err + "\n" + done.out, [requirement]) if done.code else ""
        raise UsageError(
            f"{requirement}: pip download of its source distribution failed: "
            + (reason or f"no archive ({tail or 'pip said nothing'})")
        )
    return archives[0]


def unpack(archive: Path, folder: Path, label: str) -> Path:
    """The archive's single top folder, unpacked into ``folder`` (paths outside it are refused)."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        if archive.name.endswith(".zip"):
            with zipfile.ZipFile(archive) as handle:
                names = handle.namelist()
                _check_members(names, label)
                handle.extractall(folder)
        else:
            with tarfile.open(archive) as handle:
                names = handle.getnames()
                _check_members(names, label)
                handle.extractall(folder, filter="data")
    except (OSError, tarfile.TarError, zipfile.BadZipFile) as exc:
        raise UsageError(f"{label}: cannot unpack {archive.name}: {exc}") from exc
    tops = [p for p in folder.iterdir() if p.is_dir()]
    if len(tops) != 1:
        raise UsageError(f"{label}: {archive.name} does not hold one top folder")
    return tops[0]


def _check_members(names: Sequence[str], label: str) -> None:
    for name in names:
        if name.startswith("/") or ".." in Path(name).parts:
            raise UsageError(f"{label}: the archive holds an unsafe path {name!r}")


def make_venv(
    folder: Path,
    requirements: Sequence[str],
    runner: Runner,
    label: str,
    declared: Sequence[str] = (),
    optional: Sequence[str] = (),
    warn: Callable[[str], None] = lambda message: None,
) -> str:
    """A venv at ``folder`` with the library's ``declared`` dependencies, its test extra's
    (``optional``) and the test ``requirements`` (``--requires``) installed together, so that pip
    resolves them as one set; returns its interpreter. When that fails and the test extra was in it, the
    rest is installed without it (a test extra may hold a tool this Python cannot have), and ``warn``
    says why."""
    try:
        made = runner.run([sys.executable, "-m", "venv", str(folder)], cwd=folder.parent, timeout=PIP_TIMEOUT)
        if made.code != 0:
            raise UsageError(f"{label}: cannot create a venv: {made.err.strip()[-300:]}")
        python = str(folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python"))
        every = [*declared, *optional]
        done = _pip_install(python, [*every, *requirements], runner, folder)
        if done is not None and done.code != 0 and optional:
            first = _install_error(label, every, requirements, done.err + "\n" + done.out)
            done = _pip_install(python, [*declared, *requirements], runner, folder)
            if done is None or done.code == 0:
                warn(f"{first}; installed without its test extra ({', '.join(optional)})")
                return python
            every = list(declared)
        if done is not None and done.code != 0:
            raise UsageError(_install_error(label, every, requirements, done.err + "\n" + done.out))
    except ToolError as exc:
        raise UsageError(f"{label}: cannot set up its venv ({exc})") from exc
    return python


def _pip_install(python: str, wanted: Sequence[str], runner: Runner, folder: Path) -> Completed | None:
    """``pip install`` of ``wanted`` (each once) into the venv of ``python``; None when there is none."""
    wanted = list(dict.fromkeys(wanted))
    if not wanted:
        return None
    argv = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", *wanted]
    return runner.run(argv, cwd=folder.parent, timeout=PIP_TIMEOUT)


def _install_error(label: str, declared: Sequence[str], requires: Sequence[str], output: str) -> str:
    reason = install_failure(output, [*declared, *requires])
    failed = reason.partition(":")[0]
    if failed in declared and failed not in requires:
        origin = "one of the dependencies the library declares"
    elif failed in requires:
        origin = "from --requires"
    else:
        origin = ""
    named = ", ".join(dict.fromkeys([*declared, *requires]))
    where = f" ({origin})" if origin else ""
    return f"{label}: cannot install what its tests need ({named}): {reason}{where}"


def run_suite(
    python: str,
    tree: Path,
    runner: Runner,
    environ: Mapping[str, str],
    *,
    tests: Sequence[str] = (),
    only: Sequence[str] | None = None,
    deselect: Sequence[str] = (),
    stop_first: bool = False,
    timeout: float = SUITE_TIMEOUT,
    test_timeout: float = TEST_TIMEOUT,
    warm: WarmPytest | None = None,
    extra: Sequence[str] = (),
) -> SuiteRun:
    """Run the tests of ``tree`` (all, or ``tests``; of those, only the node ids ``only``) with
    ``python``; one outcome per test. ``warm`` runs them in a fork of a server that has imported pytest
    (a cold run when it is gone).

    The project's own ``addopts`` are dropped (coverage, colours: the outcomes are what matters) but for
    those that choose its tests (``-m 'not stress'``; bench/pytest_config.py).
    """
    timeout *= timeout_scale(environ)
    with tempfile.TemporaryDirectory(prefix="coderefine-suite-") as scratch:
        report = Path(scratch) / "report.jsonl"
        args = ["-p", PLUGIN, "-p", "no:cacheprovider", "-q", "-o", "addopts=", *selection_addopts(tree)]
        args += ["--tb=short", "-rN"] + (["-x"] if stop_first else []) + list(extra)
        args += deselect_args(tree, deselect)
        env = _env(tree, report, environ, test_timeout)
        if only is not None:
            listed = Path(scratch) / "only.txt"
            listed.write_text("\n".join(only) + "\n", "utf-8")
            env["CODEREFINE_BENCH_ONLY"] = str(listed)
            env["PYTHONPATH"] = os.pathsep.join([str(LINES_PLUGIN_DIR), env["PYTHONPATH"]])
            args += ["-p", ONLY_PLUGIN]
            # Only the files that hold them are collected.
            tests = list(tests) or sorted({nodeid.split("::")[0] for nodeid in only})
        args += list(tests)
        try:
            done = warm.run(args, cwd=tree, timeout=timeout, env=env) if warm is not None else None
            if done is None:
                done = runner.run([python, "-m", "pytest", *args], cwd=tree, timeout=timeout, env=env)
        except ToolError as exc:
            return SuiteRun(_outcomes(report), False, str(exc), _collect_errors(report))
        finally:
            end_marked(env)
        outcomes, errors = _outcomes(report), _collect_errors(report)
    finished = done.code in (0, 1) and bool(outcomes)
    return SuiteRun(outcomes, finished, done.out[-2000:] + done.err[-2000:], errors)


def deselect_args(tree: Path, deselect: Sequence[str]) -> list[str]:
    """pytest's arguments that leave ``deselect`` out: a node id (``FILE::TEST``, a prefix) is
    deselected; a file or folder (a glob, relative to ``tree``) is not even collected, so that a test
    file that cannot be imported here (it needs a compiled extension) is left out too."""
    return [
        f"--deselect={entry}" if "::" in entry else f"--ignore-glob={(tree / entry).as_posix()}"
        for entry in deselect
    ]


def covered_lines(
    python: str, tree: Path, runner: Runner, environ: Mapping[str, str], deselect: Sequence[str]
) -> Coverage:
    """The lines of the library's own files (not its tests) that its tests run, and which tests run
    each; empty when the traced run fails."""
    with tempfile.TemporaryDirectory(prefix="coderefine-lines-") as scratch:
        lines = Path(scratch) / "lines.json"
        env = _env(tree, Path(scratch) / "report.jsonl", environ, TEST_TIMEOUT * 5)
        env["PYTHONPATH"] = os.pathsep.join([str(LINES_PLUGIN_DIR), env["PYTHONPATH"]])
        env["CODEREFINE_BENCH_LINES"] = str(lines)
        env["CODEREFINE_BENCH_ROOT"] = str(tree)
        argv = [python, "-m", "pytest", "-p", LINES_PLUGIN, "-p", "no:cacheprovider", "-q", "-o", "addopts="]
        argv += selection_addopts(tree)
        argv += deselect_args(tree, deselect)
        try:
            try:
                runner.run(argv, cwd=tree, timeout=SUITE_TIMEOUT * 5, env=env)
            finally:
                end_marked(env)
            data = json.loads(lines.read_text("utf-8"))
            return Coverage(
                tuple(data["tests"]),
                {
                    Path(name).as_posix(): {int(line): tuple(tests) for line, tests in by_line.items()}
                    for name, by_line in data["lines"].items()
                },
                {Path(name).as_posix(): frozenset(found) for name, found in data["outside"].items()},
            )
        except (ToolError, OSError, ValueError, KeyError, TypeError):
            return Coverage()


def _env(tree: Path, report: Path, environ: Mapping[str, str], test_timeout: float) -> dict[str, str]:
    env = {k: v for k, v in environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    paths = [str(PLUGIN_DIR), str(tree)] + ([str(tree / "src")] if (tree / "src").is_dir() else [])
    # Every run the bench starts has hypothesis derandomized and without deadlines (``stable.py``).
    # A mark of the run's own, so that what its tests start in a session of their own is ended with it.
    env = marked(stable_environ({**env, "PYTHONPATH": os.pathsep.join(paths)}))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTEST_CODEREFINE_REPORT"] = str(report)
    env["PYTEST_CODEREFINE_TIMEOUT"] = f"{test_timeout:g}"
    return env


def _outcomes(report: Path) -> tuple[TestOutcome, ...]:
    if not report.exists():
        return ()
    found: dict[str, TestOutcome] = {}
    for line in report.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if event.get("event") != "result":
            continue
        nodeid = str(event.get("nodeid", ""))
        outcome = str(event.get("outcome", ""))
        previous = found.get(nodeid)
        # A test has up to three phases; a failure in any of them fails the test.
        if previous is None or (previous.outcome == "passed" and outcome != "passed"):
            # Whole lines: an intent written from it drops hypothesis' blocks line by line (intents.py).
            message = str(event.get("message") or "").strip()[:4000]
            found[nodeid] = TestOutcome(nodeid, outcome, message)
    return tuple(found.values())


def _collect_errors(report: Path) -> tuple[TestOutcome, ...]:
    if not report.exists():
        return ()
    found: list[TestOutcome] = []
    for line in report.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if event.get("event") == "collect_error":
            text = str(event.get("text") or "")
            last = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
            message = last[-1] if last else next((t for t in text.splitlines() if t.strip()), "")
            found.append(TestOutcome(str(event.get("nodeid", "")), "error", message.strip()[:300]))
    return tuple(found)


def copy_tree(source: Path, target: Path) -> Path:
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".venv"))
    return target
