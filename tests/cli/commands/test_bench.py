"""``coderefine bench``: real models of the pairs share one BatchRun (``--batch``), oracle and do-nothing do
not; a local server that dies stops the run."""

import sys
from pathlib import Path

import pytest

from coderefine.cli.commands.bench import models_for
from coderefine.cli.main import main
from coderefine.config import load_settings
from coderefine.models.batch import BatchModel, BatchRun
from coderefine.models.batch_state import BatchStore
from tests.models.fake_llama_server import SCRIPT as FAKE_SERVER
from tests.models.gguf_files import gguf_bytes


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


def test_a_dead_local_server_stops_the_run_after_its_first_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``LLAMA_SERVER_PYTHON`` is a wrapper of the fake server, which dies with SIGILL on its first request:
    the run stops with exit 2 and the crash, instead of telling every task that gguf cannot be reached."""
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_SERVER}" "$@"\n')
    wrapper.chmod(0o755)
    model = tmp_path / "m.gguf"
    model.write_bytes(gguf_bytes({"general.architecture": "qwen2", "general.name": "M"}))
    requests = tmp_path / "requests"
    monkeypatch.setenv("LLAMA_SERVER_PYTHON", str(wrapper))
    monkeypatch.setenv("FAKE_LLAMA_REQUESTS", str(requests))
    monkeypatch.chdir(tmp_path)
    argv = ["bench", "--suite", "humanevalfix", "--tasks", "0,1,2", "--strategies", "one-shot"]
    argv += ["--model", f"gguf:{model}", "--jobs", "1", "--no-cache", "--out", str(tmp_path / "out")]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "was killed by SIGILL (illegal instruction)" in err and "repacking the weights" in err
    assert "-DGGML_NATIVE=OFF" in err and "cannot reach" not in err
    assert requests.read_text().splitlines() == ["/v1/chat/completions"]  # one task tried, not three
    assert "[1/3]" not in err  # no task was reported as done with an error


def test_requires_adds_to_pytest_unless_it_pins_pytest() -> None:
    from coderefine.cli.commands.bench import with_pytest

    assert with_pytest(("railroad-diagrams", "jinja2")) == ("pytest", "railroad-diagrams", "jinja2")
    assert with_pytest(("pytest==8.3.4", "hypothesis")) == ("pytest==8.3.4", "hypothesis")
    assert with_pytest(("PyTest>=8",)) == ("PyTest>=8",)
    assert with_pytest(("pytest-mock",)) == ("pytest", "pytest-mock")
    assert with_pytest(()) == ("pytest",)
