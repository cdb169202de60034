"""What make-suite tells a user when a library gives no suite: what went wrong, and what to try.

Each message names what was found (the failing tests' first lines, the files that changed) and the option
or the pair of versions that would help, so that a user does not have to guess.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from coderefine.bench.counts import plural
from coderefine.bench.declared import NOTHING, Declared, distribution_for
from coderefine.bench.library import TIMEOUT_SCALE, SuiteRun

SHOWN = 3  # failing tests named in a message


def has_tests(tree: Path) -> bool:
    """Whether ``tree`` holds a test file pytest would collect by default (``test_*.py``, ``*_test.py``)."""
    return any(
        p.name.startswith("test_") or p.name.endswith("_test.py")
        for p in tree.rglob("*.py")
        if ".venv" not in p.parts
    )


def no_tests(label: str) -> str:
    return (
        f"{label}: its source distribution ships no tests (no test_*.py or *_test.py in it), and a suite is "
        "made from a library's tests; its tests live only in its repository: build from a checkout of it "
        "with --from PATH"
    )


def not_green(label: str, runs: Sequence[SuiteRun], needs: Declared = NOTHING) -> str:
    """Why the baseline is not green, with the first lines of what failed and the option that fixes it:
    ``--requires`` for a module that is not installed, ``--deselect`` for a test file that cannot run
    here (it checks a compiled extension the source build did not make) or a failing test. A missing
    module is named by the distribution that brings it (``needs``: what the library declares)."""
    errors = [e for run in runs for e in run.errors]
    failed = [o for run in runs for o in run.outcomes if o.outcome == "failed"]
    shown: list[str] = []
    for item in [*errors, *failed]:
        line = f"{item.nodeid}: {_first_line(item.message)}" if item.message else item.nodeid
        if line not in shown:
            shown.append(line)
    stopped = next((r.output for r in runs if "ran longer than" in r.output), "")
    if stopped:
        ran = max(len(r.outcomes) for r in runs)
        return (
            f"{label}: its test suite ran past its time limit ({_first_line(stopped)}; {ran} tests had "
            f"run): a large suite, or a busy machine. Give it more time with {TIMEOUT_SCALE}=3 in the "
            "environment (every suite limit times 3), or leave its slowest folders out with --deselect"
        )
    if not shown:
        tail = " ".join(next((r.output for r in runs if r.output), "").strip().splitlines()[-3:])[:300]
        if not any(r.outcomes for r in runs):
            return (
                f"{label}: pytest ran no test ({tail or 'no output'}); if its tests are in a folder its "
                "configuration does not name, or not in its source distribution, build from a checkout "
                "with --from PATH"
            )
        shown = [tail or "no test passed"]
    advice = []
    missing = sorted({m for e in [*errors, *failed] for m in _missing_modules(e.message)})
    plugins = missing_plugins(o.message for o in [*errors, *failed])
    if missing or plugins:
        named = [distribution_for(module, needs) for module in missing]
        # A module from an optional extra rarely comes alone (pyparsing's diagram tests import railroad,
        # then jinja2): the extra's other packages are named now, not one failed build at a time.
        siblings = [member for name, _ in named for member in needs.extra_members(name)]
        packages = ",".join(dict.fromkeys([*(name for name, _ in named), *siblings, *plugins]))
        notes = [f"{name}: {where}" for name, where in dict.fromkeys(named) if where]
        why = f"; {'; '.join(notes)}" if notes else ""
        advice.append(
            f"adding {packages} to --requires (what its tests import, and the pytest plugins whose "
            f"fixtures or async tests they use{why})"
        )
        # A name the library declares nowhere may be no package at all: pycodestyle's tests import its
        # repository's `testing/` folder, which its source distribution leaves out.
        undeclared = [module for module, (_, where) in zip(missing, named, strict=True) if not where]
        if undeclared:
            advice.append(
                f"if {' or '.join(undeclared)} is a folder of the project's repository that its source "
                "distribution leaves out, building from a checkout with --from PATH"
            )
    patterns = sorted({e.nodeid.split("::")[0] for e in errors if not _needs_package(e.message)})
    patterns += sorted({f.nodeid for f in failed if not _needs_package(f.message)})[: SHOWN - len(patterns)]
    if patterns:
        advice.append(
            " ".join(f"--deselect {p}" for p in patterns[:SHOWN])
            + " (leave out what cannot run here, e.g. a test of a compiled extension)"
        )
    fix = "; try " + ", or ".join(advice) if advice else "; check --requires and that pytest can collect them"
    more = f" and {len(shown) - SHOWN} more" if len(shown) > SHOWN else ""
    return (
        f"{label}: its test suite does not run green on the clean code: {'; '.join(shown[:SHOWN])}{more}{fix}"
    )


def no_source_change(label: str, name: str, new: str, later: tuple[str, str] | None) -> str:
    """A release that changed no library module; ``later``: the next pair that changes one, if found."""
    text = f"{label}: only docs, tests or packaging changed (no library module of the old release differs)"
    if later is None:
        return text + "; choose another pair of versions"
    old, newer = later
    return text + f"; try {name}=={old} --upgrade-to {newer} instead, the next pair that changes the code"


def next_changed(
    modules: Iterable[str], tree: Path, versions: Sequence[str], fetch: Callable[[str], Path | None]
) -> str | None:
    """The first of ``versions`` (later releases, oldest first) whose tree (``fetch``; None when it
    cannot be had) changes one of the library ``modules`` of ``tree``."""
    texts = {m: (tree / m).read_text("utf-8", errors="replace") for m in modules}
    for version in versions:
        later = fetch(version)
        if later is None:
            return None
        for module, text in texts.items():
            other = later / module
            if other.is_file() and other.read_text("utf-8", errors="replace") != text:
                return version
    return None


def _first_line(message: str) -> str:
    line = next((t.strip() for t in message.splitlines() if t.strip()), "")
    return line[:160]


# Fixtures that pytest plugins provide, by the package to install: a library's tests use them without an
# import line, so a missing plugin reads "fixture 'mocker' not found", naming no package.
PLUGIN_FIXTURES = {
    "mocker": "pytest-mock",
    "class_mocker": "pytest-mock",
    "module_mocker": "pytest-mock",
    "session_mocker": "pytest-mock",
    "benchmark": "pytest-benchmark",
    "httpx_mock": "pytest-httpx",
    "httpserver": "pytest-httpserver",
    "requests_mock": "requests-mock",
    "freezer": "pytest-freezer",
    "time_machine": "time-machine",
    "snapshot": "syrupy",
    "datadir": "pytest-datadir",
    "shared_datadir": "pytest-datadir",
    "aiohttp_client": "pytest-aiohttp",
    "event_loop": "pytest-asyncio<1",  # the fixture was removed in pytest-asyncio 1.0
    "subtests": "pytest-subtests",
    "xprocess": "pytest-xprocess",
    "faker": "faker",
}
_ASYNC_UNSUPPORTED = "async def functions are not natively supported"


def missing_plugins(messages: Iterable[str]) -> list[str]:
    """The pytest plugins that failures say are missing: a fixture one provides, or an async test."""
    found: set[str] = set()
    for message in messages:
        found.update(
            PLUGIN_FIXTURES[f]
            for f in re.findall(r"fixture '(\w+)' not found", message)
            if f in PLUGIN_FIXTURES
        )
        if _ASYNC_UNSUPPORTED in message:
            found.add("pytest-asyncio")
    return sorted(found)


def plugins_left_out(label: str, run: SuiteRun, left_out: Sequence[str]) -> str:
    """A warning when tests left out of a built suite failed for a missing pytest plugin, else ""."""
    wanted = set(left_out)
    failed = [o for o in run.outcomes if o.outcome == "failed" and o.nodeid in wanted]
    plugins = missing_plugins(o.message for o in failed)
    if not plugins:
        return ""
    needing = sum(1 for o in failed if missing_plugins([o.message]))
    return (
        f"{label}: {needing} of the tests left out need {', '.join(plugins)} (a pytest plugin); "
        f"add {','.join(plugins)} to --requires to keep them"
    )


def _needs_package(message: str) -> bool:
    return bool(_missing_modules(message) or missing_plugins([message]))


def _missing_modules(message: str) -> list[str]:
    """Top-level modules an error says are not installed: a package to require. A missing submodule
    (``pkg._speedups``) is the library's own compiled extension, which ``--requires`` cannot bring."""
    return [m for m in re.findall(r"No module named '([\w.]+)'", message) if "." not in m]


_MISSING_FILE = re.compile(r"FileNotFoundError|No such file or directory")
# A path in a failure's message: one folder at least, quoted or not.
_PATH = re.compile(r"""(?:^|[\s'"(:=])(/?[\w.-]+(?:/[\w.-]+)+)""")
MISSING_FILE = (
    "missing a file the source distribution does not ship (build from a checkout with --from to keep them)"
)


def left_out_summary(
    label: str,
    runs: Sequence[SuiteRun],
    left_out: Sequence[str],
    given: Sequence[str],
    needs: Declared = NOTHING,
    tree: Path | None = None,
) -> str:
    """The baseline's line: the tests green, and those left out grouped by why (a missing plugin, a
    missing module, a file the sdist lacks, a flake, a plain failure), and the patterns --deselect gave.
    ``tree``: the library's folder, where a path a failure names is looked for."""
    green = frozenset.intersection(*(run.passed() for run in runs)) if runs else frozenset()
    groups: dict[str, int] = {}
    examples: dict[str, str] = {}
    for nodeid in left_out:
        outcomes = {o.outcome for run in runs for o in run.outcomes if o.nodeid == nodeid}
        message = "\n".join(run.message(nodeid) for run in runs)
        why = _why_left_out(outcomes, message, needs)
        if why == "failing" and tree is not None and (missing := absent_path(message, tree)):
            why = MISSING_FILE
            examples.setdefault(why, missing)
        elif why == MISSING_FILE and tree is not None and (missing := absent_path(message, tree)):
            examples.setdefault(why, missing)
        groups[why] = groups.get(why, 0) + 1
    parts = [
        f"{n} {why}" + (f", e.g. {examples[why]}" if why in examples else "")
        for why, n in sorted(groups.items(), key=lambda item: (-item[1], item[0]))
    ]
    text = f"{label}: {plural(len(green), 'test')} green, {len(left_out)} left out"
    text += f": {'; '.join(parts)}" if parts else ""
    if given:
        text += f" (and what --deselect's {plural(len(given), 'pattern')} left out from the start)"
    return text


def absent_path(message: str, tree: Path) -> str:
    """The first path a failure's message names inside ``tree`` (relative to it, or absolute under it)
    that does not exist there: a fixture file the source distribution left out; "" when none."""
    root = tree.resolve()
    for found in _PATH.findall(message):
        path = Path(found)
        if path.is_absolute():
            try:
                relative = path.relative_to(root)
            except ValueError:
                continue
        elif (root / path.parts[0]).exists():
            relative = path
        else:
            continue
        if not (root / relative).exists():
            return relative.as_posix()
    return ""


def _why_left_out(outcomes: set[str], message: str, needs: Declared) -> str:
    if "passed" in outcomes:
        return "flaky (passed in one run, failed in the other)"
    if plugins := missing_plugins([message]):
        return f"missing {', '.join(plugins)} (a pytest plugin: add it to --requires)"
    if modules := _missing_modules(message):
        names = ", ".join(dict.fromkeys(distribution_for(m, needs)[0] for m in modules))
        return f"missing {names} (not installed: add it to --requires)"
    if _MISSING_FILE.search(message):
        return MISSING_FILE
    return "failing"
