"""The schema a local server turns into a grammar, bounded so that every answer it allows is short.

llama.cpp compiles ``{"type": "json_object", "schema": ...}`` into a grammar: the reply can only be JSON of
that schema. The grammar keeps the syntax, not the length: a small model that repeats an issue, or a
sentence inside a string, goes on until the token limit cuts the JSON in half. Bounds on arrays and strings
(``maxItems``, ``maxLength``) are part of the grammar, so the reply must close in time. Only what the
schema leaves open is bounded; anything it already bounds keeps its own limit, and a field that carries
edit blocks (``edits``, the merged critique's) is left long.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MAX_ITEMS = 8
MAX_STRING = 600
UNBOUNDED = frozenset({"edits"})


def bounded(schema: Mapping[str, Any], *, items: int = MAX_ITEMS, string: int = MAX_STRING) -> dict[str, Any]:
    """``schema`` with every unbounded array and free string bounded (enums and constants are left)."""
    out: dict[str, Any] = dict(schema)
    kind = out.get("type")
    if kind == "array":
        out.setdefault("maxItems", items)
        if isinstance(out.get("items"), Mapping):
            out["items"] = bounded(out["items"], items=items, string=string)
    elif kind == "string" and "enum" not in out and "const" not in out and "pattern" not in out:
        out.setdefault("maxLength", string)
    if isinstance(out.get("properties"), Mapping):
        out["properties"] = {
            key: bounded(value, items=items, string=string)
            if isinstance(value, Mapping) and key not in UNBOUNDED
            else value
            for key, value in out["properties"].items()
        }
    return out
