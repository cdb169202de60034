"""``coderefine bench --batch``: real models of the pairs share one BatchRun; oracle and do-nothing do not."""

from pathlib import Path

from coderefine.cli.commands.bench import models_for
from coderefine.config import load_settings
from coderefine.models.batch import BatchModel, BatchRun
from coderefine.models.batch_state import BatchStore


class Strategy:
    mixed = False

    def __init__(self, model: str) -> None:
        self.model = model


def test_bench_models_go_through_the_batch_run(tmp_path: Path) -> None:
    env = {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}
    settings = load_settings(tmp_path, env, {})
    run = BatchRun(BatchStore(tmp_path / "batches.json"), workers=4)
    model_for = models_for(settings, env, batch=run)
    assert isinstance(model_for(None, Strategy("claude-sonnet-5-5")), BatchModel)
    assert isinstance(model_for(None, Strategy("openai:gpt-5-mini")), BatchModel)
    assert not isinstance(model_for(None, Strategy("do-nothing")), BatchModel)
