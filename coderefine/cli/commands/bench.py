"""`bench`: the quality harness, and `bench make-suite`, which builds its task suites."""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from coderefine.cli.commands import settings_flags, warn
from coderefine.errors import EXIT_CLEAN, UsageError


def command_bench(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    if getattr(args, "bench_command", None) == "make-suite":
        return command_make_suite(args, out)
    if getattr(args, "bench_command", None) == "merge":
        return command_bench_merge(args, out)
    from coderefine.bench.harness import run_bench
    from coderefine.bench.report import markdown, write_reports
    from coderefine.bench.strategies import strategies
    from coderefine.config import load_settings
    from coderefine.errors import UsageError
    from coderefine.project.runner import SubprocessRunner

    settings = load_settings(Path.cwd(), os.environ, settings_flags(args))
    out_dir = Path(args.out)
    runner = SubprocessRunner()
    chosen = strategies(args.strategies)
    if any(s.mixed for s in chosen) and not (settings.critic_model or settings.reviser_model):
        raise UsageError(
            "coderefine-mixed needs --critic-model and/or --reviser-model (or critic-model and "
            "reviser-model in [tool.coderefine]) to mix with --model"
        )
    tasks, notes = load_bench_tasks(args.suite, out_dir, runner, os.environ)
    for note in notes:
        warn(note)
    tasks = _select(tasks, args)
    batch = None
    if args.batch:
        import sys

        from coderefine.models.batch import batch_run

        # The pairs' calls are gathered across the --jobs workers; the batch ids live with the results.
        batch = batch_run(out_dir / "batches.json", workers=args.jobs, progress=sys.stderr)
    model_for = models_for(settings, os.environ, batch=batch)
    meta: dict[str, Any] = {
        "suite": Path(args.suite).name,
        "model": settings.model,
        "tasks": len(tasks),
        "seed": args.seed,
        "strategies": [s.name for s in chosen],
    }
    shard = None
    if args.shard:
        from coderefine.bench.shard import share

        shard = share(args.shard, tasks, chosen, meta)
        meta["shard"] = shard.meta()
    from coderefine.bench.shard import pairs_of

    # A strategy runs only the tasks of its family (review tasks go through `coderefine review`): the
    # count is of the pairs that run, and the tasks no chosen strategy runs are said before any starts.
    total = len(shard.pairs) if shard else len(pairs_of(tasks, chosen))
    for note in _unrun(tasks, chosen):
        warn(note)
    done = 0

    def starting(task: Any, strategy: Any) -> None:
        warn(f"started {strategy.name} {task.task_id}")

    def report(result: Any, cached: bool) -> None:
        nonlocal done
        done += 1
        state = outcome_word(result)
        note = (
            " (cached)"
            if cached
            else f" ({result.rounds} round{'s' if result.rounds != 1 else ''}, ${result.cost:.4f}, "
            f"{result.seconds:.1f}s)"
        )
        warn(f"[{done}/{total}] {result.strategy} {result.task_id}: {state}{note}")

    results = run_bench(
        tasks,
        chosen,
        model_for,
        settings,
        runner,
        os.environ,
        cache_dir=None if args.no_cache else out_dir / "cache",
        jobs=args.jobs,
        on_result=report,
        keep=shard.keeps if shard else None,
        on_start=starting,
    )
    written = write_reports(results, meta, out_dir)
    out.write(markdown(results, meta))
    out.write("\nwrote " + ", ".join(str(p) for p in written) + "\n")
    return EXIT_CLEAN


def command_bench_merge(args: argparse.Namespace, out: TextIO) -> int:
    from coderefine.bench.merge import load_results, merge
    from coderefine.bench.report import markdown, write_reports

    results, meta = merge([load_results(Path(d)) for d in args.dirs])
    written = write_reports(results, meta, Path(args.out))
    out.write(markdown(results, meta))
    out.write("\nwrote " + ", ".join(str(p) for p in written) + "\n")
    return EXIT_CLEAN


def load_bench_tasks(
    suite: str, out_dir: Path, runner: Any, environ: Mapping[str, str]
) -> tuple[list[Any], list[str]]:
    """The tasks of ``suite``: ``libraries`` (the shipped manifest, built and cached under ``out_dir``),
    ``humanevalfix``, a folder made by make-suite, or a JSON-lines file of HumanEvalFix's format."""
    from coderefine.bench.manifest import library_suite, load_manifest
    from coderefine.bench.suite import SUITE_FILE, load_suite
    from coderefine.bench.tasks import DATA, load_tasks

    if suite == "humanevalfix":
        return list(load_tasks(DATA)), []
    if suite == "libraries":
        tasks: list[Any] = []
        notes = []
        for library in load_manifest():
            built, differing = library_suite(library, out_dir / "suites", runner, environ, warn)
            tasks += built
            if differing:
                were = "task was" if len(differing) == 1 else "tasks were"
                notes.append(
                    f"{library.label}: {len(differing)} {were} built differently from the "
                    "manifest (another pytest or ruff version?); the figures are not comparable with "
                    "published ones"
                )
        return tasks, notes
    path = Path(suite)
    if (path / SUITE_FILE).exists():
        return list(load_suite(path)[1]), []
    if path.is_file():
        return list(load_tasks(path)), []
    raise UsageError(
        f"--suite {suite}: not a suite; give libraries, humanevalfix, a folder made by "
        "'coderefine bench make-suite', or a JSON-lines file"
    )


def _select(tasks: Sequence[Any], args: argparse.Namespace) -> list[Any]:
    import random

    chosen = list(tasks)
    if args.tasks:
        wanted = {w.strip() for w in args.tasks.split(",") if w.strip()}
        wanted |= {f"Python/{w}" for w in wanted if w.isdigit()}
        chosen = [t for t in chosen if t.task_id in wanted]
        if not chosen:
            raise UsageError(f"--tasks {args.tasks}: no task of the suite has these ids")
    if args.seed is not None:
        random.Random(args.seed).shuffle(chosen)
    return chosen[: args.limit] if args.limit else chosen


def models_for(settings: Any, environ: Mapping[str, str], batch: Any = None) -> Any:
    """The model of a (task, strategy) pair: the strategy's own (``NAME@MODEL``) or the run's; oracle and
    do-nothing are made per task, real models once per name (through ``batch``, a ``BatchRun``, if given)."""
    from coderefine.bench.models import DoNothingModel, OracleModel
    from coderefine.models.base import Model
    from coderefine.models.factory import make_model, make_role_model

    made: dict[str, Model] = {}

    def model_for(task: Any, strategy: Any) -> Model:
        if strategy.mixed:
            # A model per role (critic-model, reviser-model, default model), made once for the run.
            if "\0mixed" not in made:
                made["\0mixed"] = make_role_model(settings, environ, batch=batch)
            return made["\0mixed"]
        name = strategy.model or settings.model
        if name == "oracle":
            return OracleModel(task)
        if name == "do-nothing":
            return DoNothingModel()
        if name not in made:
            made[name] = make_model(name, settings, environ, batch=batch)
        return made[name]

    return model_for


def command_make_suite(args: argparse.Namespace, out: TextIO) -> int:
    from coderefine.bench.build import Source, make_suite
    from coderefine.project.runner import SubprocessRunner

    if bool(args.requirement) == bool(args.from_path):
        raise UsageError("make-suite: give either NAME==VERSION or --from PATH (one of them)")
    if args.tasks < 1:
        raise UsageError("--tasks must be at least 1")
    requires = with_pytest(tuple(r.strip() for r in args.requires.split(",") if r.strip()))
    deselect = tuple(p.strip() for given in args.deselect or () for p in given.split(",") if p.strip())
    if args.released_after and args.requirement and "==" not in args.requirement:
        return _make_release_suites(args, requires, deselect, out)
    if args.released_after:
        _check_released_after(args)
    name = (args.requirement or "").split("==")[0]
    source = Source(
        requirement=args.requirement or "",
        path=Path(args.from_path) if args.from_path else None,
        requires=requires,
        disguise=args.disguise,
        upgrade_to=args.upgrade_to or "",
        deselect=deselect,
        later=_later_releases(name, args.upgrade_to or ""),
    )
    tasks = make_suite(
        source,
        Path(args.out),
        SubprocessRunner(),
        os.environ,
        tasks=args.tasks,
        seed=args.seed,
        progress=warn,
    )
    _summary(tasks, args.out, out)
    return EXIT_CLEAN


def _check_released_after(args: argparse.Namespace) -> None:
    from coderefine.bench.pypi import parse_date, released

    after = parse_date(args.released_after)
    if not args.upgrade_to or not args.requirement:
        raise UsageError("--released-after: give NAME alone, or NAME==OLD with --upgrade-to NEW")
    name = args.requirement.split("==")[0]
    when = released(name, args.upgrade_to)
    if when.date() <= after:
        raise UsageError(
            f"{name}=={args.upgrade_to} was released on {when.date()}, not after {after}; choose a later "
            "release, or leave --released-after out"
        )


def _later_releases(name: str, version: str) -> Any:
    """A function giving the releases of ``name`` after ``version`` from PyPI, oldest first (asked only
    when a pair changed no code, to name the next pair that does)."""

    def later() -> list[str]:
        from coderefine.bench.pypi import releases, version_key

        # Higher versions in version order: a backport uploaded later is no next pair.
        known = sorted((r.version for r in releases(name)), key=version_key)
        return [v for v in known if version_key(v) > version_key(version)]

    return later


def _make_release_suites(
    args: argparse.Namespace, requires: tuple[str, ...], deselect: tuple[str, ...], out: TextIO
) -> int:
    """``make-suite NAME --released-after DATE``: a release suite for each release after DATE (with the
    release before it), in ``OUT/NAME-NEW``; every pair is tried, and a table says what each gave (its
    tasks, or why none) and the share of pairs that gave tasks. The table is also ``OUT/pairs.md``."""
    from coderefine.bench.build import Source, make_suite
    from coderefine.bench.pairs import TABLE_FILE, PairResult, SweepInterrupted, table, try_pairs
    from coderefine.bench.pypi import pairs_after, parse_date
    from coderefine.project.runner import SubprocessRunner

    if args.upgrade_to or args.from_path:
        raise UsageError("make-suite NAME --released-after DATE picks the versions itself: drop --upgrade-to")
    name = args.requirement
    pairs = pairs_after(name, parse_date(args.released_after))
    if not pairs:
        raise UsageError(f"{name}: no release after {args.released_after}")

    def build(old: str, new: str) -> int:
        folder = Path(args.out) / f"{name}-{new}"
        source = Source(
            requirement=f"{name}=={old}",
            requires=requires,
            upgrade_to=new,
            deselect=deselect,
            later=_later_releases(name, new),
        )
        if folder.exists():
            raise UsageError(f"{folder} exists; remove it or choose another -o")
        tasks = make_suite(
            source, folder, SubprocessRunner(), os.environ, tasks=args.tasks, seed=args.seed, progress=warn
        )
        _summary(tasks, str(folder), out)
        return len(tasks)

    def write_table(results: list[PairResult]) -> str:
        text = table(name, results)
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / TABLE_FILE).write_text(text, "utf-8")
        out.write(text)
        return text

    try:
        results = try_pairs(name, pairs, build, warn)
    except SweepInterrupted as stop:
        write_table(stop.results)  # what the pairs tried so far gave is kept
        raise
    write_table(results)
    if not any(r.tasks for r in results):
        raise UsageError(
            f"{name}: no release after {args.released_after} gave a task (the table above says why)"
        )
    return EXIT_CLEAN


def _summary(tasks: Sequence[Any], folder: str, out: TextIO) -> None:
    from coderefine.bench.counts import by_kind, shapes
    from coderefine.bench.suite import REVIEW_KINDS

    out.write(f"wrote {folder}: {by_kind(tasks)}\n")
    if shaped := shapes(tasks):
        out.write(f"shapes: {shaped}\n")
    # Review tasks run with the review strategy only: a hint without it would leave them out unsaid.
    reviews = any(task.kind in REVIEW_KINDS for task in tasks)
    strategies = "one-shot,coderefine,review" if reviews else "one-shot,coderefine"
    out.write(f"run it:  coderefine bench --suite {folder} --strategies {strategies}\n")


def _unrun(tasks: Sequence[Any], chosen: Sequence[Any]) -> list[str]:
    """What the chosen strategies leave out: review tasks without the review strategy, and the other
    tasks when review is the only one."""
    from coderefine.bench.counts import plural
    from coderefine.bench.suite import REVIEW_KINDS

    reviews = sum(1 for task in tasks if task.kind in REVIEW_KINDS)
    others = len(tasks) - reviews
    notes = []
    if reviews and not any(s.review for s in chosen):
        notes.append(
            f"{plural(reviews, 'review task')} (review and review-clean) not run: run them with "
            "--strategies review (they run through coderefine review, not the fix loop)"
        )
    if others and all(s.review for s in chosen):
        notes.append(f"{plural(others, 'task')} not run: the review strategy runs only the review tasks")
    return notes


def outcome_word(result: Any) -> str:
    """A pair's outcome in its family's words: correct code left correct is "kept (correct)", not
    "fixed"; a review task is caught or missed; a review of a clean change raised a false alarm or none."""
    from coderefine.bench.counts import plural

    if result.error:
        return f"error: {result.error}"
    if result.kind == "clean":
        if not result.passed_after:
            return "broken (correct code now fails)"
        return "changed, still correct" if result.changed else "kept (correct)"
    if result.kind == "review":
        return "caught" if result.caught else "missed"
    if result.kind == "review-clean":
        return plural(result.false_alarms, "false alarm") if result.false_alarms else "no false alarm"
    return "fixed" if result.fixed else "not fixed"


def with_pytest(requires: tuple[str, ...]) -> tuple[str, ...]:
    """``requires`` with pytest first unless it names pytest itself (a pin, say): ``--requires jinja2``
    added jinja2 and left pytest out, and the baseline said only that pytest ran no test."""
    names = {re.split(r"[\s<>=!~;\[]", r, maxsplit=1)[0].lower() for r in requires}
    return requires if "pytest" in names else ("pytest", *requires)
