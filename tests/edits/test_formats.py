import pytest

from coderefine.edits.blocks import EditError
from coderefine.edits.formats import apply_reply, choose_format, model_size_billions


@pytest.mark.parametrize(
    ("model", "size"),
    [
        ("ollama:qwen2.5-coder:1.5b", 1.5),
        ("llamacpp:gemma-3-270m", 0.27),
        ("vllm:Qwen/Qwen2.5-Coder-0.5B-Instruct", 0.5),
        ("openai:meta-llama-3.1-70b-instruct", 70.0),
        ("claude-sonnet-5-5", None),
        ("openai:gpt-5-mini", None),
        ("ollama:qwen2.5-coder:7b-q4_K_M", 7.0),
    ],
)
def test_the_size_a_model_name_gives(model: str, size: float | None) -> None:
    assert model_size_billions(model) == size


@pytest.mark.parametrize(
    ("setting", "model", "chosen"),
    [
        ("auto", "claude-sonnet-5-5", "search-replace"),
        ("auto", "", "search-replace"),
        ("auto", "ollama:qwen2.5-coder:1.5b", "definition"),
        ("auto", "gguf:qwen2.5-coder-0.5b", "definition"),
        ("auto", "openai:meta-llama-3.1-70b-instruct", "search-replace"),
        ("whole", "claude-sonnet-5-5", "whole"),
        ("search-replace", "llamacpp:gemma-3-270m", "search-replace"),
    ],
)
def test_auto_chooses_by_the_model_and_a_setting_is_kept(setting: str, model: str, chosen: str) -> None:
    assert choose_format(setting, model) == chosen


FILES = {"m.py": "def f():\n    return 1\n\n\ndef g():\n    return 2\n"}


def test_each_format_reads_its_own_answers() -> None:
    sr = "m.py\n```python\n<<<<<<< SEARCH\n    return 1\n=======\n    return 3\n>>>>>>> REPLACE\n```\n"
    assert apply_reply("search-replace", sr, FILES, ["m.py"])["m.py"].startswith("def f():\n    return 3\n")
    definition = "m.py\n```python\ndef f():\n    return 3\n```\n"
    assert apply_reply("definition", definition, FILES, ["m.py"])["m.py"].endswith("def g():\n    return 2\n")
    assert apply_reply("whole", definition, FILES, ["m.py"]) == {"m.py": "def f():\n    return 3\n"}
    assert apply_reply("search-replace", definition, FILES, ["m.py"]) == {}  # no blocks: no change
    with pytest.raises(EditError, match="no code block"):
        apply_reply("definition", "I would return 3.", FILES, ["m.py"])
