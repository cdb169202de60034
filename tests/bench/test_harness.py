"""The harness on real task projects (real ruff, pytest and hidden tests), with the self-check models."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from coderefine.bench.harness import run_bench
from coderefine.bench.models import DoNothingModel, OracleModel
from coderefine.bench.result import TaskResult
from coderefine.bench.strategies import STRATEGIES, Strategy, strategies
from coderefine.bench.summary import summary
from coderefine.bench.task import BenchTask
from coderefine.bench.tasks import load_tasks, select_tasks
from coderefine.config import Settings
from coderefine.errors import UsageError
from coderefine.models.base import ModelReply, ModelRequest
from coderefine.project.runner import SubprocessRunner

ENV = {"PATH": os.environ["PATH"]}


def oracle(task: object, strategy: object = None) -> OracleModel:
    return OracleModel(task)  # type: ignore[arg-type]


@pytest.mark.slow
def test_every_strategy_with_the_oracle_fixes_every_task(tmp_path: Path) -> None:
    tasks = select_tasks(load_tasks(), ids=["0", "1", "26"])
    results = run_bench(
        tasks,
        list(STRATEGIES.values()),
        oracle,
        Settings(),
        SubprocessRunner(),
        ENV,
        cache_dir=tmp_path,
        jobs=2,
    )
    table = summary(results)
    # `review` runs only review tasks (HumanEvalFix has none); its oracle check is in test_build.
    assert set(table) == set(STRATEGIES) - {"review"}
    assert all(row["fix_rate"] == 1.0 for row in table.values()), table
    assert all(row["regressions"] == 0 for row in table.values())
    assert table["one-shot"]["mean_rounds"] == 0
    assert table["coderefine"]["mean_rounds"] >= 1


def test_the_do_nothing_model_fixes_nothing(tmp_path: Path) -> None:
    tasks = select_tasks(load_tasks(), limit=3)
    nothing = DoNothingModel()
    results = run_bench(
        tasks,
        strategies("one-shot,coderefine"),
        lambda t, s: nothing,
        Settings(),
        SubprocessRunner(),
        ENV,
        cache_dir=None,
        jobs=2,
    )
    assert summary(results)["coderefine"]["fixed"] == 0
    assert all(not r.passed_before for r in results)


def test_each_result_says_its_edit_format_and_the_table_its_seconds_per_task() -> None:
    from coderefine.bench.report import markdown

    tasks = select_tasks(load_tasks(), limit=1)
    settings = Settings(model="gguf:qwen2.5-coder-0.5b")  # "auto" chooses by this name: definition
    results = run_bench(
        tasks, strategies("one-shot"), oracle, settings, SubprocessRunner(), ENV, cache_dir=None, jobs=1
    )
    assert [r.edit_format for r in results] == ["definition"]
    row = summary(results)["one-shot"]
    assert row["edit_formats"] == ["definition"] and row["seconds_per_task"] == results[0].seconds
    table = markdown(results, {"suite": "s", "model": "m"})
    assert "| time / task |" in table and "| definition |" in table


def test_runs_resume_from_the_cache(tmp_path: Path) -> None:
    tasks = select_tasks(load_tasks(), ids=["2"])
    seen: list[bool] = []
    args = (tasks, strategies("one-shot"), oracle, Settings(), SubprocessRunner(), ENV)
    first = run_bench(*args, cache_dir=tmp_path, jobs=1, on_result=lambda r, cached: seen.append(cached))
    second = run_bench(*args, cache_dir=tmp_path, jobs=1, on_result=lambda r, cached: seen.append(cached))
    assert seen == [False, True]
    assert first == second


def test_each_pair_run_is_announced_as_it_starts_and_a_cached_one_is_not(tmp_path: Path) -> None:
    tasks = select_tasks(load_tasks(), ids=["2", "3"])
    events: list[str] = []
    args = (tasks, strategies("one-shot"), oracle, Settings(), SubprocessRunner(), ENV)

    def started(task: BenchTask, strategy: Strategy) -> None:
        events.append(f"start {task.task_id}")

    def finished(result: TaskResult, cached: bool) -> None:
        events.append(f"{'cached' if cached else 'done'} {result.task_id}")

    run_bench(*args, cache_dir=tmp_path, jobs=1, on_result=finished, on_start=started)
    # The worker may start the next pair before the main thread hears of the last one's result.
    assert sorted(events) == ["done Python/2", "done Python/3", "start Python/2", "start Python/3"]
    assert events.index("start Python/2") < events.index("done Python/2") < events.index("done Python/3")
    assert events.index("start Python/3") < events.index("done Python/3")
    events.clear()
    run_bench(*args, cache_dir=tmp_path, jobs=1, on_result=finished, on_start=started)
    assert events == ["cached Python/2", "cached Python/3"]


def test_unknown_strategy() -> None:
    with pytest.raises(UsageError, match="unknown strategy 'magic'"):
        strategies("coderefine,magic")


HUMANEVALFIX_CI_SAMPLE = 20


@pytest.mark.slow
@pytest.mark.parametrize(("name", "expected"), [("oracle", 1.0), ("do-nothing", 0.0)])
def test_self_checks_on_humanevalfix(tmp_path: Path, name: str, expected: float) -> None:
    """The harness is honest: the oracle scores 100% and the do-nothing model 0%, on a fixed sample of
    20 of the 164 tasks (seed 0) to keep CI's time for the library suites; the whole suite is
    ``coderefine bench --suite humanevalfix --model oracle``."""
    nothing = DoNothingModel()
    model_for = oracle if name == "oracle" else (lambda task, strategy: nothing)
    results = run_bench(
        select_tasks(load_tasks(), seed=0, limit=HUMANEVALFIX_CI_SAMPLE),
        strategies("coderefine"),
        model_for,
        Settings(),
        SubprocessRunner(),
        ENV,
        cache_dir=None,
        jobs=2,
    )
    row = summary(results)["coderefine"]
    assert row["tasks"] == HUMANEVALFIX_CI_SAMPLE
    assert row["fix_rate"] == expected, [r.task_id for r in results if r.fixed != bool(expected)]
    assert row["errors"] == 0


def test_the_merged_strategy_fixes_with_the_critic_call_alone(tmp_path: Path) -> None:
    tasks = select_tasks(load_tasks(), ids=["0", "26"])
    roles: list[str] = []

    class Counting(OracleModel):
        def complete(self, request: ModelRequest) -> ModelReply:
            roles.append(request.role)
            return super().complete(request)

    assert STRATEGIES["coderefine-merged"].merge == "one-issue"
    results = run_bench(
        tasks,
        strategies("coderefine-merged"),
        lambda t, s: Counting(t),  # type: ignore[arg-type]
        Settings(),
        SubprocessRunner(),
        ENV,
        cache_dir=None,
        jobs=1,
    )
    assert all(r.fixed for r in results)
    assert roles == ["critic", "critic"]  # one call per task: the critic carried the fix


def test_a_reply_that_is_no_edit_is_recorded_with_its_reason() -> None:
    from coderefine.bench.harness import run_task
    from coderefine.models.scripted import ScriptedModel

    task = select_tasks(load_tasks(), ids=["0"])[0]
    missing = "task.py\n<<<<<<< SEARCH\n    return no_such_line\n=======\n    return True\n>>>>>>> REPLACE\n"
    model = ScriptedModel([missing] * 4)
    result = run_task(task, STRATEGIES["one-shot"], model, Settings(), SubprocessRunner(), ENV)
    assert not result.fixed
    assert result.round_notes and result.round_notes[0].startswith("0 "), result.round_notes
    assert ":" in result.round_notes[0]  # the outcome and why


def test_a_gate_failure_is_recorded_with_the_problem_not_the_heading() -> None:
    from coderefine.bench.harness import run_task
    from coderefine.models.scripted import ScriptedModel

    task = select_tasks(load_tasks(), ids=["0"])[0]
    broken = "task.py\n<<<<<<< SEARCH\n    return False\n=======\n    return (False +\n>>>>>>> REPLACE\n"
    model = ScriptedModel([broken] * 4)
    result = run_task(task, STRATEGIES["one-shot"], model, Settings(), SubprocessRunner(), ENV)
    [note] = result.round_notes
    assert note.startswith("0 gate-failed: The edited code does not pass the gate: "), note
    assert len(note) > len("0 gate-failed: The edited code does not pass the gate: ") + 10
