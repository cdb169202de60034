"""What a tool call returns: concise text for the agent, and the report's JSON as structured content.

An agent's context is small and precious, so both are bounded. A report whose JSON is over the limit is
written whole to a file under the project's coderefine folder; the result then carries a shortened copy
(long lists cut to their first items, long strings to their start), marked ``truncated``, with the path
of the full report.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_STRUCTURED_CHARS = 60_000
MAX_TEXT_CHARS = 12_000
_KEEP_ITEMS = 10
_KEEP_CHARS = 2_000


@dataclass(frozen=True)
class ToolOutput:
    text: str
    data: dict[str, Any]
    is_error: bool = False


def _shorten(value: Any) -> Any:
    if isinstance(value, str) and len(value) > _KEEP_CHARS:
        return value[:_KEEP_CHARS] + f"\n[... {len(value) - _KEEP_CHARS} more characters in the full report]"
    if isinstance(value, list):
        kept = [_shorten(v) for v in value[:_KEEP_ITEMS]]
        if len(value) > _KEEP_ITEMS:
            kept.append(f"[... {len(value) - _KEEP_ITEMS} more in the full report]")
        return kept
    if isinstance(value, Mapping):
        return {k: _shorten(v) for k, v in value.items()}
    return value


def bounded(
    tool: str,
    text: str,
    data: dict[str, Any],
    reports: Callable[[], Path],
    *,
    limit: int = MAX_STRUCTURED_CHARS,
    clock: Any = time.time,
) -> ToolOutput:
    """``text`` and ``data`` within the limits; what does not fit goes to a report file in the folder
    ``reports()`` names (asked only then, since naming it may create it)."""
    encoded = json.dumps(data, ensure_ascii=False)
    if len(encoded) <= limit and len(text) <= MAX_TEXT_CHARS:
        return ToolOutput(text, data)
    folder = reports()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{tool}-{int(clock() * 1000)}.json"
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    short = _shorten(data)
    if len(json.dumps(short, ensure_ascii=False)) > limit:
        short = {k: v for k, v in short.items() if not isinstance(v, list | dict | str) or k == "model"}
    short["truncated"] = True
    short["full_report"] = str(path)
    if len(text) > MAX_TEXT_CHARS:
        text = text[:MAX_TEXT_CHARS] + "\n[... cut]"
    return ToolOutput(text + f"\nThe output was long; the full report is in {path}\n", short)
