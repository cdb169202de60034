from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from coderefine.config import Settings
from coderefine.errors import ConfigError, MissingKeyError
from coderefine.models.anthropic import AnthropicModel
from coderefine.models.factory import make_model, make_role_model, provider_timeout
from coderefine.models.heartbeat import Heartbeat
from coderefine.models.openai_chat import OpenAIChatModel
from coderefine.models.providers import LOCAL_TIMEOUT, parse_spec
from coderefine.models.replay import ReplayModel
from coderefine.models.roles import RoleModels

ENV = {"ANTHROPIC_API_KEY": "sk-ant-test", "OPENAI_API_KEY": "sk-test"}


def test_one_model_when_every_role_uses_it() -> None:
    assert isinstance(make_role_model(Settings(model="openai:gpt-5"), ENV), OpenAIChatModel)
    assert isinstance(make_role_model(Settings(), ENV), AnthropicModel)


def test_a_model_per_role_shares_equal_models() -> None:
    model = make_role_model(Settings(model="claude-sonnet-5-5", reviser_model="ollama:qwen3"), ENV)
    assert isinstance(model, RoleModels)
    assert model.model_for("author") is model.model_for("critic")
    assert isinstance(model.model_for("reviser"), OpenAIChatModel)


def test_a_missing_key_of_any_role_is_reported_before_the_run() -> None:
    with pytest.raises(MissingKeyError, match="openai:gpt-5"):
        make_role_model(Settings(critic_model="openai:gpt-5"), {"ANTHROPIC_API_KEY": "k"})


def test_a_bad_price_entry_is_reported_before_the_run() -> None:
    with pytest.raises(ConfigError, match="input and output"):
        make_model("ollama:m", Settings(prices={"ollama:*": {"input": 1}}), {})


def test_replay_and_progress(tmp_path: Path) -> None:
    replay = tmp_path / "r.jsonl"
    replay.write_text("")
    assert isinstance(make_model(f"replay:{replay}", Settings(), {}, progress=io.StringIO()), ReplayModel)
    assert isinstance(make_model("ollama:m", Settings(), {}, progress=sys.stderr), Heartbeat)


def test_timeouts_suit_the_provider() -> None:
    local, cloud = parse_spec("llamacpp:m"), parse_spec("openai:gpt-5")
    assert provider_timeout(local, Settings()) == LOCAL_TIMEOUT
    assert provider_timeout(cloud, Settings()) == 120.0
    chosen = Settings(model_timeout=30.0, sources={"model_timeout": "pyproject.toml"})
    assert provider_timeout(local, chosen) == 30.0
    configured = parse_spec("llamacpp:m", {"llamacpp": {"timeout": 45}})
    settings = Settings(
        providers={"llamacpp": {"timeout": 45}}, model_timeout=30.0, sources={"model_timeout": "x"}
    )
    assert provider_timeout(configured, settings) == 45.0
