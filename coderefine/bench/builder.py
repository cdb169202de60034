"""The tasks of a suite, from a library whose baseline is green: mutants the tests notice, removed
bodies, the test split of each, clean twins and review pairs. Every candidate is checked by running the
library's suite with it in place.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path, PurePosixPath

from coderefine.bench.counts import Shortfall, plural
from coderefine.bench.intents import STRENGTHS, bug_intent, clean_twins
from coderefine.bench.library import Coverage, SuiteRun, run_suite
from coderefine.bench.multi import each_shown, multi_location_tasks, pair_mutants
from coderefine.bench.mutate import (
    FunctionInfo,
    Site,
    changed_function,
    function_text,
    remove_body,
    sites,
)
from coderefine.bench.reviews import review_pairs, review_tasks
from coderefine.bench.spec_tests import spec_test_tasks
from coderefine.bench.suite import Edit, LibraryTask, differing_lines, test_function
from coderefine.errors import ToolError, UsageError
from coderefine.project.runner import Runner
from coderefine.signals.pytest import is_test_file
from coderefine.signals.ruff import find_ruff
from coderefine.signals.warm import WarmPytest

Progress = Callable[[str], None]
_NOT_LIBRARY = {"test", "tests", "testing", "docs", "doc", "scripts", "examples", "benchmarks", "build"}
_NOT_MODULE = {"setup.py", "conftest.py", "benchmark.py", "_version.py", "version.py", "noxfile.py"}
MAX_PER_FUNCTION = 3
MUTANT_RUN_TIMEOUT = 30.0
MUTANT_TEST_TIMEOUT = 2.0
SLOW_RETRY = 5  # a test that passed its limit runs once more with a limit this many times longer


def library_modules(tree: Path, label: str) -> list[str]:
    """The library's own modules under ``tree`` (not its tests, docs, scripts or build files)."""
    found = []
    for path in sorted(tree.rglob("*.py")):
        rel = PurePosixPath(path.relative_to(tree).as_posix())
        if is_test_file(rel.name) or rel.name in _NOT_MODULE or set(rel.parts[:-1]) & _NOT_LIBRARY:
            continue
        if rel.parts[0].startswith(".") or len(path.read_text("utf-8", errors="replace")) < 200:
            continue
        found.append(str(rel))
    if not found:
        raise UsageError(f"{label}: no library module found beside its tests")
    return found


class Builder:
    def __init__(
        self,
        label: str,
        tree: Path,
        python: str,
        runner: Runner,
        environ: Mapping[str, str],
        deselect: tuple[str, ...],
        rng: random.Random,
        progress: Progress,
        coverage: Coverage,
        warm: WarmPytest | None = None,
    ) -> None:
        self.coverage = coverage
        self.warm = warm
        self._functions: dict[str, dict[str, FunctionInfo]] = {}
        self.label, self.tree, self.python = label, tree, python
        self.runner, self.environ, self.deselect = runner, environ, deselect
        self.rng, self.progress = rng, progress
        self.ruff = find_ruff()
        # Why a family has fewer tasks than asked for, said when the suite is built (``tasks``).
        self._why_short = {"bug": "", "feature": ""}
        self.shortfalls: tuple[Shortfall, ...] = ()

    def modules(self) -> list[str]:
        return library_modules(self.tree, self.label)

    def failing(self, path: str, text: str) -> SuiteRun | None:
        """The suite's run with ``text`` as ``path``; None when it cannot finish (``failing_files``)."""
        return self.failing_files({path: text})

    def failing_files(self, texts: Mapping[str, str]) -> SuiteRun | None:
        """The suite's run with each file of ``texts`` changed to its text; None when it cannot finish.

        Only the tests that run the changed lines run (all of them when a changed line runs at import):
        a test that never reaches a line cannot see it change. A run in which a test passed its time
        limit, or which passed its own, runs once more with a per-test limit five times longer and a
        run limit four times longer, so that a busy machine does not decide what is kept; a change that
        still makes a test hang, or makes the whole run pass its own limit (many times a normal run's
        length), is no task: scoring must stay fast and certain."""
        originals = {path: (self.tree / path).read_text("utf-8") for path in texts}
        # In the coverage's order, as one file's selection has always been run.
        selections = [self.coverage.tests_for(p, differing_lines(t, originals[p])) for p, t in texts.items()]
        selected = (
            None
            if any(only is None for only in selections)
            else tuple(dict.fromkeys(n for only in selections for n in only or ()))
        )
        if selected is not None and not selected:
            return SuiteRun((), True, "no test runs the changed lines")
        try:
            for path, text in texts.items():
                (self.tree / path).write_text(text, "utf-8")
            run = self._run(selected, 1)
            # A run cut short by its own limit is retried too: on a busy machine a mutant that fails many
            # tests (each with its traceback) passed 30 s and was dropped, so the kept mutants, and every
            # task after them, depended on the load.
            if not run.finished or run.hung():
                run = self._run(selected, SLOW_RETRY)
        finally:
            for path, text in originals.items():
                (self.tree / path).write_text(text, "utf-8")
        return run if run.finished and not run.hung() else None

    def _run(self, only: tuple[str, ...] | None, slack: int) -> SuiteRun:
        return run_suite(
            self.python,
            self.tree,
            self.runner,
            self.environ,
            only=only,
            deselect=self.deselect,
            timeout=MUTANT_RUN_TIMEOUT * (4 if slack > 1 else 1),
            test_timeout=MUTANT_TEST_TIMEOUT * slack,
            warm=self.warm,
        )

    def ruff_codes(self, path: str, text: str) -> list[str]:
        if self.ruff is None:
            return []
        argv = [self.ruff, "check", "--isolated", "--select", "E4,E7,E9,F,B", "--output-format", "json"]
        argv += ["--stdin-filename", path, "-"]
        try:
            done = self.runner.run(argv, cwd=self.tree, timeout=60, stdin=text)
            return sorted(f"{d['code']}:{d['message']}" for d in json.loads(done.out or "[]"))
        except (ToolError, ValueError, KeyError):
            return ["unknown"]

    def tasks(self, name: str, count: int) -> list[LibraryTask]:
        modules = self.modules()
        texts = {m: (self.tree / m).read_text("utf-8") for m in modules}
        features = count // 4
        multi = count // 6
        singles = count - features - multi
        bugs = self.mutants(texts, singles + multi)
        feature_tasks = self.features(texts, features)
        split = len(bugs) - min(multi, len(bugs) // 4)
        found: list[LibraryTask] = []
        for number, (path, site, run) in enumerate(bugs[:split]):
            found.append(self.bug_task(name, len(found), texts[path], path, [site], run, number))
        combined = pair_mutants(self, bugs[split:], bugs[:split], texts)
        paired = [(path, site, run, other) for path, site, run, other, _, _ in combined]
        for path, site, _, other, together, alone in combined:
            found.append(
                self.bug_task(name, len(found), texts[path], path, [site, other], together, len(found), alone)
            )
        if len(bugs) - split > len(paired):
            unpaired = len(bugs) - split - len(paired)
            self._why_short["bug"] += (
                f"; {plural(unpaired, 'mutant')} for two-bug tasks had no second one in another function of "
                "its module that leaves it failing a test the way it fails alone"
            )
        self.shortfalls = (
            Shortfall("bug", singles + multi, split + len(paired), self._why_short["bug"].lstrip("; ")),
            Shortfall("feature", features, len(feature_tasks), self._why_short["feature"]),
        )
        for path, info, text, run in feature_tasks:
            found.append(self.feature_task(name, len(found), texts[path], text, path, info, run))
        found += clean_twins(found, count)
        # Last, so that adding review tasks left every earlier task (and the seed's draws) as it was; and
        # the feature-tests tasks after them, for the same reason.
        found += review_tasks(self, name, found, texts, review_pairs(count))
        found += spec_test_tasks(self, name, texts, found, count)
        # Last of all, for the same reason: bugs in several places of a long module, or in two files.
        return found + multi_location_tasks(self, name, len(found), bugs[:split], paired, texts, count)

    def mutants(self, texts: Mapping[str, str], want: int) -> list[tuple[str, Site, SuiteRun]]:
        by_operator: dict[str, list[tuple[str, Site]]] = {}
        clean_codes = {}
        for path, text in texts.items():
            clean_codes[path] = self.ruff_codes(path, text)
            lines = self.coverage.lines_of(path)
            for site in sites(text)[0]:
                if self.coverage and site.line not in lines:
                    continue
                by_operator.setdefault(site.operator, []).append((path, site))
        queues = [by_operator[k] for k in sorted(by_operator)]
        for queue in queues:
            self.rng.shuffle(queue)
        # Round robin over the operators, so that the common ones (a name, a constant) do not crowd out
        # the rest.
        order = [q[i] for i in range(max(map(len, queues), default=0)) for q in queues if i < len(q)]
        kept: list[tuple[str, Site, SuiteRun]] = []
        seen: set[tuple[str, frozenset[str]]] = set()
        per_function: dict[tuple[str, str], int] = {}
        tried = 0
        dropped = {"lint": 0, "unnoticed": 0, "duplicate": 0, "hung": 0}
        for path, site in order:
            if len(kept) >= want or tried >= want * 6:
                break
            key = (path, site.function)
            if per_function.get(key, 0) >= MAX_PER_FUNCTION:
                continue
            tried += 1
            mutated = site.apply(texts[path])
            if not _compiles(mutated) or self.ruff_codes(path, mutated) != clean_codes[path]:
                dropped["lint"] += 1
                continue
            run = self.failing(path, mutated)
            if run is None or not run.failed() or (path, run.failed()) in seen:
                dropped["hung" if run is None else "duplicate" if run.failed() else "unnoticed"] += 1
                continue
            seen.add((path, run.failed()))
            per_function[key] = per_function.get(key, 0) + 1
            kept.append((path, site, run))
            self.progress(f"{self.label}: mutant {len(kept)}/{want} ({site.operator} in {site.function})")
        if len(kept) < want:
            self._why_short["bug"] = _mutants_short(len(order), tried, want, dropped)
        return kept

    def features(self, texts: Mapping[str, str], want: int) -> list[tuple[str, FunctionInfo, str, SuiteRun]]:
        candidates = [
            (path, info)
            for path, text in texts.items()
            for info in sites(text)[1]
            if (
                not self.coverage
                or set(range(info.line + 1, info.end_line + 1)) & self.coverage.lines_of(path)
            )
            and info.docstring
            and info.statements >= 2
            and "." not in info.qualname.strip("_")
        ]
        self.rng.shuffle(candidates)
        kept: list[tuple[str, FunctionInfo, str, SuiteRun]] = []
        tried = 0
        for path, info in candidates:
            if len(kept) >= want:
                break
            tried += 1
            text = remove_body(texts[path], info.qualname)
            run = self.failing(path, text)
            if run is None or not run.failed():
                continue
            kept.append((path, info, text, run))
            self.progress(f"{self.label}: feature {len(kept)}/{want} ({info.qualname})")
        if len(kept) < want:
            missed = tried - len(kept)
            unnoticed = f"; no test noticed the removed body of {missed}" if missed else ""
            self._why_short["feature"] = (
                f"only {plural(len(candidates), 'function')} with a docstring and two statements or more "
                f"that the tests run{unnoticed}"
            )
        return kept

    def functions(self, path: str, text: str) -> dict[str, FunctionInfo]:
        """The functions of a clean module, parsed once (a parse of 2,700 lines takes a second)."""
        if path not in self._functions:
            self._functions[path] = {info.qualname: info for info in sites(text)[1]}
        return self._functions[path]

    def split(self, run: SuiteRun) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The failing tests, split by test function: about half stay visible (at least one)."""
        functions = sorted({test_function(n) for n in run.failed()})
        self.rng.shuffle(functions)
        hidden_functions = set(functions[: len(functions) // 2])
        # A held-back test is deleted from the task's project, and a visible test of a class that inherits
        # it (pyflakes reruns every test class under a doctest mixin) would go with it: a test named like
        # a visible one stays visible.
        names = {_method(f) for f in functions if f not in hidden_functions}
        hidden_functions = {f for f in hidden_functions if _method(f) not in names}
        # A test that another calls (toolz: an introspection test calls another to reuse its checks)
        # would leave its caller failing with a NameError once deleted: it stays visible too.
        hidden_functions = {f for f in hidden_functions if not self.called_by_another(f)}
        visible = tuple(sorted(n for n in run.failed() if test_function(n) not in hidden_functions))
        hidden = tuple(sorted(n for n in run.failed() if test_function(n) in hidden_functions))
        return visible, hidden

    def called_by_another(self, function: str) -> bool:
        """Whether the test ``function``'s own name is in its file more than once (called, not only
        defined)."""
        try:
            text = (self.tree / function.split("::", 1)[0]).read_text("utf-8", errors="replace")
        except OSError:
            return False
        return len(re.findall(rf"\b{re.escape(_method(function))}\b", text)) > 1

    def bug_task(
        self,
        name: str,
        index: int,
        text: str,
        path: str,
        chosen: list[Site],
        run: SuiteRun,
        number: int,
        alone: Sequence[SuiteRun] = (),
    ) -> LibraryTask:
        """``run``: the bugs' run together; ``alone``: each bug's own run, for a task of several; every bug
        keeps a visible failing test (a bug only a held-back test shows is a task about guessing:
        ``multi.each_shown``)."""
        visible, hidden = each_shown(*self.split(run), alone, run)
        infos = self.functions(path, text)
        edits = tuple(
            Edit(function_text(text, infos[f]), changed_function(text, infos[f], chosen))
            for f in dict.fromkeys(s.function for s in chosen)
        )
        strength = STRENGTHS[number % len(STRENGTHS)]
        function = chosen[0].function
        return LibraryTask(
            task_id=f"{name}/{index:03d}",
            kind="bug",
            shape="multi" if len(chosen) > 1 else "single",
            strength=strength,
            mutation="+".join(s.operator for s in chosen),
            path=path,
            function=function,
            line=chosen[0].line,
            intent=bug_intent(strength, function, path, run, visible),
            edits=edits,
            visible=visible,
            hidden=hidden,
            module_lines=len(text.splitlines()),
        )

    def feature_task(
        self, name: str, index: int, text: str, changed: str, path: str, info: FunctionInfo, run: SuiteRun
    ) -> LibraryTask:
        visible, hidden = self.split(run)
        delta = len(changed.splitlines()) - len(text.splitlines())
        after = replace(info, end_line=info.end_line + delta)
        return LibraryTask(
            task_id=f"{name}/{index:03d}",
            kind="feature",
            shape="feature",
            strength="feature",
            mutation="removed-body",
            path=path,
            function=info.qualname,
            line=info.line,
            intent=f"Implement `{info.qualname}` in {path} as documented in its docstring.",
            edits=(Edit(function_text(text, info), function_text(changed, after)),),
            visible=visible,
            hidden=hidden,
            module_lines=len(text.splitlines()),
        )


def _method(function: str) -> str:
    """A test function's own name: ``tests/test_x.py::TestA::test_b`` -> ``test_b``."""
    return function.rsplit("::", 1)[-1]


def _mutants_short(sites: int, tried: int, want: int, dropped: Mapping[str, int]) -> str:
    """Why fewer mutants than wanted were kept: too little code, or too few that a test notices."""
    start = (
        f"stopped after {plural(tried, 'candidate')} ({want} wanted, six tries each)"
        if tried >= want * 6
        else f"not enough mutable code: {plural(sites, 'mutation site')} on lines the tests run, at most "
        f"{MAX_PER_FUNCTION} per function, {tried} tried"
    )
    why = [
        f"{dropped['unnoticed']} no test noticed",
        f"{dropped['duplicate']} failed the same tests as one kept",
        f"{dropped['lint']} did not compile or ruff flagged",
        f"{dropped['hung']} made the run hang",
    ]
    return f"{start}: {', '.join(w for w in why if not w.startswith('0 '))}"


def _compiles(text: str) -> bool:
    try:
        compile(text, "<mutant>", "exec")
    except (SyntaxError, ValueError):
        return False
    return True
