"""Strategies that mix models: the value of each role's model is measured, with tokens and cost per role."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from coderefine.bench.harness import run_bench
from coderefine.bench.models import DoNothingModel, OracleModel
from coderefine.bench.report import markdown
from coderefine.bench.strategies import STRATEGIES
from coderefine.bench.summary import summary
from coderefine.bench.tasks import Task, load_tasks, select_tasks
from coderefine.cli.main import main
from coderefine.config import Settings
from coderefine.models.roles import RoleModels
from coderefine.project.runner import SubprocessRunner


def test_a_good_critic_with_a_useless_reviser_is_measured_as_such(tmp_path: Path) -> None:
    tasks = select_tasks(load_tasks(), ids=["0"])

    def mixed(task: Task, strategy: object) -> RoleModels:
        oracle = OracleModel(task)
        return RoleModels({"author": oracle, "critic": oracle, "reviser": DoNothingModel()})

    results = run_bench(
        tasks,
        [STRATEGIES["coderefine-mixed"]],
        mixed,
        Settings(),
        SubprocessRunner(),
        {"PATH": os.environ["PATH"]},
        cache_dir=None,
        jobs=1,
    )
    row = summary(results)["coderefine-mixed"]
    assert row["fix_rate"] == 0.0
    assert set(row["by_model"]) == {"critic oracle", "reviser do-nothing"}
    assert results[0].model == "author=oracle critic=oracle reviser=do-nothing"
    assert "| coderefine-mixed | reviser do-nothing |" in markdown(results, {"suite": "s", "model": "m"})


def test_a_mixed_strategy_needs_a_second_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    code = main(
        [
            "bench",
            "--suite",
            "humanevalfix",
            "--strategies",
            "coderefine-mixed",
            "--model",
            "oracle",
            "--limit",
            "1",
        ],
        out=io.StringIO(),
    )
    assert code == 2
    assert "needs --critic-model and/or --reviser-model" in err.getvalue()
