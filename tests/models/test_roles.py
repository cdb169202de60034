"""A model per role, through the real loop: each role's requests reach its own model, and tokens and cost
are counted per role and model."""

from __future__ import annotations

import io
import os
from pathlib import Path

from coderefine.cli.main import main
from coderefine.config import Settings
from coderefine.models.base import Usage
from coderefine.models.prices import cost_of
from coderefine.models.roles import RoleModels, models_key, role_specs
from coderefine.models.scripted import ScriptedModel
from tests.conftest import RepoFactory
from tests.fake_api import FakeAnthropic, loopback_server, tool_message, usage
from tests.fake_openai import FakeOpenAI, chat, chat_usage
from tests.hostile import make_project
from tests.refiner.test_loop import FIX, PASS, buggy_change, revise, run


def test_role_specs_default_to_the_model() -> None:
    settings = Settings(model="openai:gpt-5", critic_model="claude-opus-5-5")
    assert role_specs(settings) == {
        "author": "openai:gpt-5",
        "critic": "claude-opus-5-5",
        "reviser": "openai:gpt-5",
    }
    assert models_key(Settings(model="m")) == "m"
    assert models_key(settings) == {
        "author": "openai:gpt-5",
        "critic": "claude-opus-5-5",
        "reviser": "openai:gpt-5",
    }


def test_a_strong_critic_and_a_cheap_reviser_through_the_loop(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    critic = ScriptedModel([revise(), PASS], name="claude-opus-5-5")
    reviser = ScriptedModel([FIX], name="ollama:qwen3-coder")
    model = RoleModels({"author": reviser, "critic": critic, "reviser": reviser})
    result = run(change, files, model, Settings(confirm="always"))
    assert result.stop == "passed" and "return a + b" in result.final["pkg/mod.py"]
    assert [r.role for r in critic.history] == ["critic", "critic"]
    assert [r.role for r in reviser.history] == ["reviser"]
    charges = {(c.role, c.model): c for c in result.charges}
    assert set(charges) == {("critic", "claude-opus-5-5"), ("reviser", "ollama:qwen3-coder")}
    assert charges[("reviser", "ollama:qwen3-coder")].cost == 0.0
    assert charges[("critic", "claude-opus-5-5")].cost > 0
    assert result.cost == charges[("critic", "claude-opus-5-5")].cost
    assert model.name == "author=ollama:qwen3-coder critic=claude-opus-5-5 reviser=ollama:qwen3-coder"


def test_a_model_per_role_from_the_command_line(tmp_path: Path) -> None:
    """The critic on Anthropic's API, the reviser on a local Ollama: two real SDKs, two loopback servers."""
    root = make_project(tmp_path)
    answers = [tool_message(revise(), usage(1000, 100)), tool_message(PASS, usage(1000, 50))]
    critic = FakeAnthropic([{**a, "model": "claude-opus-5-5"} for a in answers])
    reviser = FakeOpenAI([chat(FIX, use=chat_usage(900, 80))])
    out = io.StringIO()
    saved_cwd, saved_env = Path.cwd(), dict(os.environ)
    try:
        with loopback_server(critic) as anthropic_url, loopback_server(reviser) as ollama_url:
            os.chdir(root)
            os.environ.update(
                {
                    "CODEREFINE_TESTS": "false",
                    "ANTHROPIC_BASE_URL": anthropic_url,
                    "ANTHROPIC_API_KEY": "sk-ant-test",
                    "OLLAMA_HOST": ollama_url,
                }
            )
            argv = [
                "fix",
                "pkg/mod.py",
                "--critic-model",
                "claude-opus-5-5",
                "--reviser-model",
                "ollama:qwen3",
            ]
            code = main(argv, out=out, stdin=io.StringIO())
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    output = out.getvalue()
    assert code == 0, output
    assert "return a + b" in (root / "pkg" / "mod.py").read_text()
    assert [r["model"] for r in critic.requests] == ["claude-opus-5-5", "claude-opus-5-5"]
    assert [r["model"] for r in reviser.requests] == ["qwen3"]
    opus = cost_of("claude-opus-5-5", Usage(2000, 150))  # $0.04125, rounded either way by float sums
    assert f"critic claude-opus-5-5 2.0k in / 0.1k out ${opus:.3f}" in output
    assert "reviser ollama:qwen3 0.9k in / 0.1k out $0.0000" in output
