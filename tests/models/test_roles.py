"""A model per role, through the real loop: each role's requests reach its own model, and tokens and cost
are counted per role and model."""

from __future__ import annotations

from coderefine.config import Settings
from coderefine.models.roles import RoleModels, models_key, role_specs
from coderefine.models.scripted import ScriptedModel
from tests.conftest import RepoFactory
from tests.test_loop import FIX, PASS, buggy_change, revise, run


def test_role_specs_default_to_the_model() -> None:
    settings = Settings(model="openai:gpt-5", critic_model="claude-opus-4-5")
    assert role_specs(settings) == {
        "author": "openai:gpt-5",
        "critic": "claude-opus-4-5",
        "reviser": "openai:gpt-5",
    }
    assert models_key(Settings(model="m")) == "m"
    assert models_key(settings) == {
        "author": "openai:gpt-5",
        "critic": "claude-opus-4-5",
        "reviser": "openai:gpt-5",
    }


def test_a_strong_critic_and_a_cheap_reviser_through_the_loop(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    critic = ScriptedModel([revise(), PASS], name="claude-opus-4-5")
    reviser = ScriptedModel([FIX], name="ollama:qwen3-coder")
    model = RoleModels({"author": reviser, "critic": critic, "reviser": reviser})
    result = run(change, files, model)
    assert result.stop == "passed" and "return a + b" in result.final["pkg/mod.py"]
    assert [r.role for r in critic.history] == ["critic", "critic"]
    assert [r.role for r in reviser.history] == ["reviser"]
    charges = {(c.role, c.model): c for c in result.charges}
    assert set(charges) == {("critic", "claude-opus-4-5"), ("reviser", "ollama:qwen3-coder")}
    assert charges[("reviser", "ollama:qwen3-coder")].cost == 0.0
    assert charges[("critic", "claude-opus-4-5")].cost > 0
    assert result.cost == charges[("critic", "claude-opus-4-5")].cost
    assert model.name == "author=ollama:qwen3-coder critic=claude-opus-4-5 reviser=ollama:qwen3-coder"
