"""The GGUF header reader: the keys that name a model, arrays skipped, and clear errors for other files."""

from __future__ import annotations

from pathlib import Path

import pytest

from coderefine.models.gguf import GGUFError, read_metadata
from tests.models.gguf_files import gguf_bytes


def test_reads_names_and_skips_arrays(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    path.write_bytes(gguf_bytes({"general.architecture": "qwen2", "general.name": "Tiny", "n": 7}))
    found = read_metadata(path)
    assert found["general.architecture"] == "qwen2" and found["general.name"] == "Tiny" and found["n"] == 7
    assert found["tokenizer.ggml.tokens"] is None and found["tokenizer.ggml.scores"] is None
    assert found["after"] == "arrays"  # the arrays were skipped by their exact length


def test_stops_once_the_wanted_keys_are_found(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    # A header cut after its first key: reading past it would fail.
    path.write_bytes(gguf_bytes({"general.architecture": "qwen2"})[:69])
    assert read_metadata(path, ("general.architecture",)) == {"general.architecture": "qwen2"}
    with pytest.raises(GGUFError, match="cut short"):
        read_metadata(path)


def test_other_files_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    path.write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(GGUFError, match="not a GGUF file"):
        read_metadata(path)
