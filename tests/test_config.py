from pathlib import Path

import pytest

from coderefine.config import DEFAULT_RUFF_SELECT, Settings, load_settings
from coderefine.errors import ConfigError


def write_pyproject(root: Path, body: str) -> None:
    (root / "pyproject.toml").write_text(body, encoding="utf-8")


def test_defaults_without_pyproject(tmp_path: Path) -> None:
    settings = load_settings(tmp_path, {})
    assert settings == Settings()
    assert settings.ruff_select == DEFAULT_RUFF_SELECT
    assert settings.rounds == 3


def test_precedence_flags_over_environment_over_pyproject(tmp_path: Path) -> None:
    write_pyproject(tmp_path, "[tool.coderefine]\nrounds = 2\ntest-timeout = 5\nmodel = 'from-file'\n")
    env = {"CODEREFINE_ROUNDS": "4", "CODEREFINE_MODEL": "from-env"}
    settings = load_settings(tmp_path, env, {"rounds": 5})
    assert settings.rounds == 5
    assert settings.model == "from-env"
    assert settings.test_timeout == 5.0
    assert settings.sources == {
        "rounds": "command line",
        "model": "environment",
        "test_timeout": "pyproject.toml",
    }


def test_unknown_pyproject_key_names_it_and_suggests(tmp_path: Path) -> None:
    write_pyproject(tmp_path, "[tool.coderefine]\nround = 2\n")
    with pytest.raises(ConfigError, match=r"unknown setting 'round'.*Did you mean 'rounds'"):
        load_settings(tmp_path, {})


def test_snake_case_in_toml_is_refused(tmp_path: Path) -> None:
    write_pyproject(tmp_path, "[tool.coderefine]\ntest_timeout = 2\n")
    with pytest.raises(ConfigError, match="test_timeout"):
        load_settings(tmp_path, {})


def test_unknown_environment_variable_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="CODEREFINE_ROUNDZ"):
        load_settings(tmp_path, {"CODEREFINE_ROUNDZ": "2"})


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("rounds = 'three'", "whole number"),
        ("rounds = 0", "at least 1"),
        ("tests = 'maybe'", "true or false"),
        ("fail-on = 'sometimes'", "one of"),
        ("ruff-select = 3", "list of strings"),
    ],
)
def test_bad_values_are_explained(tmp_path: Path, body: str, message: str) -> None:
    write_pyproject(tmp_path, f"[tool.coderefine]\n{body}\n")
    with pytest.raises(ConfigError, match=message):
        load_settings(tmp_path, {})


def test_environment_values_are_parsed(tmp_path: Path) -> None:
    settings = load_settings(
        tmp_path,
        {
            "CODEREFINE_TESTS": "false",
            "CODEREFINE_RUFF_SELECT": "E,F, B",
            "CODEREFINE_MAX_COST": "0.5",
        },
    )
    assert settings.tests is False
    assert settings.ruff_select == ("E", "F", "B")
    assert settings.max_cost == 0.5


def test_invalid_toml_is_a_config_error(tmp_path: Path) -> None:
    write_pyproject(tmp_path, "[tool.coderefine\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(tmp_path, {})


def test_settings_are_frozen() -> None:
    settings = Settings()
    with pytest.raises(AttributeError):
        settings.rounds = 9  # type: ignore[misc]


def test_models_per_role_providers_and_prices_from_the_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.coderefine]\n"
        'model = "ollama:qwen3"\n'
        'critic-model = "claude-opus-5-5"\n'
        "[tool.coderefine.providers.ollama]\n"
        'base-url = "http://gpu:11434/v1"\n'
        "timeout = 600\n"
        "[tool.coderefine.prices]\n"
        '"openai-compatible:*" = { input = 0.5, output = 1.5 }\n'
    )
    settings = load_settings(
        tmp_path, {"CODEREFINE_REVISER_MODEL": "vllm:coder"}, {"author_model": "openai:gpt-5"}
    )
    assert (settings.model, settings.critic_model, settings.reviser_model, settings.author_model) == (
        "ollama:qwen3",
        "claude-opus-5-5",
        "vllm:coder",
        "openai:gpt-5",
    )
    assert settings.providers == {"ollama": {"base-url": "http://gpu:11434/v1", "timeout": 600}}
    assert settings.prices == {"openai-compatible:*": {"input": 0.5, "output": 1.5}}
    from_env = load_settings(tmp_path, {"CODEREFINE_PRICES": '{"x:*": {"input": 1, "output": 2}}'})
    assert from_env.prices == {"x:*": {"input": 1, "output": 2}}


def test_providers_must_be_tables(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.coderefine]\nproviders = "ollama"\n')
    with pytest.raises(ConfigError, match="must be a table of tables"):
        load_settings(tmp_path, {})


def test_merge_is_a_choice_from_pyproject_or_the_environment(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.coderefine]\nmerge = "one-issue"\n')
    assert load_settings(tmp_path, {}).merge == "one-issue"
    assert load_settings(tmp_path, {"CODEREFINE_MERGE": "never"}).merge == "never"
    (tmp_path / "pyproject.toml").write_text('[tool.coderefine]\nmerge = "always"\n')
    with pytest.raises(ConfigError, match="one-issue"):
        load_settings(tmp_path, {})


def test_rules_as_text_list_or_tables(tmp_path: Path) -> None:
    from coderefine.config import RuleEntry

    write_pyproject(
        tmp_path,
        '[tool.coderefine]\nrules-files = ["AGENTS.md", "CLAUDE.md"]\n'
        '[[tool.coderefine.rules]]\npaths = ["src/**"]\ntext = "No print."\nseverity = "error"\n'
        '[[tool.coderefine.rules]]\ntext = "Keep signatures."\n',
    )
    settings = load_settings(tmp_path, {})
    assert settings.rules_files == ("AGENTS.md", "CLAUDE.md")
    assert settings.rules == (RuleEntry("No print.", ("src/**",), "error"), RuleEntry("Keep signatures."))
    assert load_settings(tmp_path, {"CODEREFINE_RULES": "Be nice."}).rules == (RuleEntry("Be nice."),)
    write_pyproject(
        tmp_path, '[tool.coderefine]\n[[tool.coderefine.rules]]\ntext = "x"\nseverity = "fatal"\n'
    )
    with pytest.raises(ConfigError, match="severity 'fatal'"):
        load_settings(tmp_path, {})
