"""The edit format of a run: how the author and the reviser write a change, and how their answer is read.

``search-replace`` (SEARCH/REPLACE blocks, ``blocks.py``) is the compact format a strong model follows.
A small model copies SEARCH lines badly and runs on past the change, so ``definition`` asks for complete
functions and classes, put in place by name (``definitions.py``), and ``whole`` for the complete file.
``auto`` (the default setting) chooses by the model that writes the edits: ``definition`` for a local
file (``gguf:``) or a name that gives a size of at most 8B parameters (``qwen2.5-coder:1.5b``,
``gemma-3-270m``), as aider chooses a format per model; ``search-replace`` for every other model.
Whatever the format, the result goes through the same gate.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from coderefine.edits.blocks import apply_edits, parse_edit_blocks

EDIT_FORMATS = ("search-replace", "definition", "whole")
SMALL_MODEL_BILLIONS = 8.0
# A parameter count in a model name: "1.5b", "7B", "270m", "0.5b-instruct", "qwen2.5-coder:1.5b".
_SIZE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)([bm])(?![a-z])", re.I)


def model_size_billions(model: str) -> float | None:
    """The parameter count a model's name gives, in billions, or None when it gives none."""
    name = model.rsplit("/", 1)[-1].lower()
    sizes = [float(number) / (1000.0 if unit.lower() == "m" else 1.0) for number, unit in _SIZE.findall(name)]
    return min(sizes) if sizes else None


def choose_format(setting: str, model: str) -> str:
    """The edit format of a run: the setting itself, or under ``auto`` the one that suits ``model``."""
    if setting != "auto":
        return setting
    if model.startswith("gguf:"):
        return "definition"
    size = model_size_billions(model.partition(":")[2] or model)
    return "definition" if size is not None and size <= SMALL_MODEL_BILLIONS else "search-replace"


def apply_reply(
    edit_format: str,
    reply: str,
    files: Mapping[str, str],
    allowed: Sequence[str],
    default_path: str | None = None,
    *,
    cut_off: bool = False,
) -> dict[str, str]:
    """The texts of the files a reply in ``edit_format`` changes; EditError says what could not be used.
    ``cut_off``: the reply stopped at the output token limit (a SEARCH/REPLACE block cut short has no
    REPLACE marker and is refused already; a code block must have closed its fence)."""
    if edit_format == "search-replace":
        return apply_edits(files, parse_edit_blocks(reply, default_path=default_path), allowed)
    # libcst's import (a tenth of a second) only for the formats that put definitions in place by name.
    from coderefine.edits.code_blocks import parse_code_blocks
    from coderefine.edits.definitions import apply_definitions

    blocks = parse_code_blocks(reply, default_path=default_path, cut_off=cut_off)
    return apply_definitions(files, blocks, allowed, "whole" if edit_format == "whole" else "definition")
