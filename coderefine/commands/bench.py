"""`bench`: the quality harness."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any, TextIO

from coderefine.commands import settings_flags, warn
from coderefine.errors import EXIT_CLEAN


def command_bench(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    from coderefine.bench.harness import run_bench
    from coderefine.bench.models import DoNothingModel, OracleModel
    from coderefine.bench.report import markdown, write_reports
    from coderefine.bench.strategies import strategies
    from coderefine.bench.tasks import DATA, load_tasks, select_tasks
    from coderefine.config import load_settings
    from coderefine.errors import UsageError
    from coderefine.models.base import Model
    from coderefine.models.factory import make_model, make_role_model
    from coderefine.runner import SubprocessRunner

    settings = load_settings(Path.cwd(), os.environ, settings_flags(args))
    suite = Path(args.suite) if args.suite else DATA
    tasks = select_tasks(
        load_tasks(suite), ids=args.tasks.split(",") if args.tasks else (), limit=args.limit, seed=args.seed
    )
    chosen = strategies(args.strategies)
    if settings.model == "oracle":
        oracles: dict[str, Model] = {t.task_id: OracleModel(t) for t in tasks}
        model_for = lambda task: oracles[task.task_id]  # noqa: E731
    elif settings.model == "do-nothing":
        nothing = DoNothingModel()
        model_for = lambda task: nothing  # noqa: E731
    else:
        shared = make_model(settings.model, settings, os.environ)
        model_for = lambda task: shared  # noqa: E731
    mixed = [s for s in chosen if s.mixed]
    if mixed:
        chosen = [s for s in chosen if not s.mixed]
        if not (settings.critic_model or settings.reviser_model):
            raise UsageError(
                f"{mixed[0].name} needs --critic-model and/or --reviser-model (or critic-model and "
                "reviser-model in [tool.coderefine]) to mix with --model"
            )
        pair = make_role_model(settings, os.environ)
    total = len(tasks) * len(chosen)
    done = 0

    def report(result: Any, cached: bool) -> None:
        nonlocal done
        done += 1
        state = "fixed" if result.fixed else ("error: " + result.error if result.error else "not fixed")
        note = (
            " (cached)" if cached else f" ({result.rounds} rounds, ${result.cost:.4f}, {result.seconds:.1f}s)"
        )
        warn(f"[{done}/{total}] {result.strategy} {result.task_id}: {state}{note}")

    out_dir = Path(args.out)
    # The mixed strategies run apart, with the model of each role; the others with the one model.
    runs = [(chosen, model_for)] + ([(mixed, lambda task: pair)] if mixed else [])
    results = [
        result
        for group, models in runs
        if group
        for result in run_bench(
            tasks,
            group,
            models,
            settings,
            SubprocessRunner(),
            os.environ,
            cache_dir=None if args.no_cache else out_dir / "cache",
            jobs=args.jobs,
            on_result=report,
        )
    ]
    meta = {
        "suite": suite.name,
        "model": settings.model,
        "tasks": len(tasks),
        "seed": args.seed,
        "strategies": [s.name for s in chosen + mixed],
    }
    written = write_reports(results, meta, out_dir)
    out.write(markdown(results, meta))
    out.write("\nwrote " + ", ".join(str(p) for p in written) + "\n")
    return EXIT_CLEAN
