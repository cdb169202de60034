"""The tools the MCP server offers: names, input schemas and descriptions written for an agent.

Plain data, no SDK import: the server turns these into ``mcp`` types, and tests read them directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

INSTRUCTIONS = """\
coderefine checks and improves Python changes with facts: ruff, ruff format, a syntax gate and the tests
related to the changed files, compared with the code before the change, so it reports what the change
introduced, not old debt.
- After editing Python files, call `check` with the files (or staged / base). It needs no model and says
  which lint errors, formatting problems, syntax errors and failing tests your change introduced.
- Call `critique` for a reviewer's verdict on whether the change does what its intent says (it uses a
  model; it writes nothing).
- Call `refine` to have coderefine fix the issues itself: it returns a patch (dry_run, the default) or,
  with dry_run false, writes the files atomically; `undo` restores them.
Paths are relative to the project root the server was started in.
"""

_FILES: dict[str, Any] = {
    "type": "array",
    "items": {"type": "string", "minLength": 1},
    "maxItems": 200,
    "description": "Python files, relative to the project root. Their uncommitted change against HEAD is "
    "reviewed; a file with no change (or a new file) is reviewed whole.",
}
_STAGED: dict[str, Any] = {
    "type": "boolean",
    "default": False,
    "description": "Review what is staged in the git index (with files: only those) instead of the "
    "working tree.",
}
_BASE: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    "description": "Review the branch since its merge base with this git ref (e.g. 'main'); with files: "
    "only those.",
}
_INTENT: dict[str, Any] = {
    "type": "string",
    "maxLength": 20_000,
    "description": "What the change is meant to do, in a sentence or two (e.g. 'handle an empty list'). "
    "Default: fix defects without changing intended behaviour.",
}


def _schema(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "additionalProperties": False}


@dataclass(frozen=True)
class ToolDef:
    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool


TOOLS: tuple[ToolDef, ...] = (
    ToolDef(
        "check",
        "Check a Python change",
        "Run ruff, ruff format, a syntax check and the related pytest tests on a Python change and report "
        "only what the change introduced compared with the code before it: new lint errors, formatting, "
        "syntax errors and newly failing tests (with their output). No model is involved; it takes seconds "
        "to a minute. Call it after you edit Python files and before you say the work is done. Give `files`, "
        "or `staged: true`, or `base`. `failed: true` in the result means something at or above the "
        "project's fail-on severity was introduced; `introduced` lists it.",
        _schema({"files": _FILES, "staged": _STAGED, "base": _BASE}),
        True,
    ),
    ToolDef(
        "critique",
        "Critique a Python change",
        "Ask coderefine's critic (a language model) to review a Python change against its intent, with the "
        "signals of `check` as facts. Returns a verdict (pass or revise), a summary and located issues, each "
        "with evidence and a suggestion. Writes nothing. Use it for a second opinion on whether a change "
        "does what it should and what it may have broken; use `refine` to have the issues fixed.",
        _schema({"files": _FILES, "staged": _STAGED, "base": _BASE, "intent": _INTENT}),
        True,
    ),
    ToolDef(
        "refine",
        "Refine a Python change",
        "Run coderefine's self-refine loop on a Python change: critic, then reviser, then a syntax/libcst "
        "gate, then the signals again; a revision is kept only when it passed the gate and made no signal "
        "worse. Returns the patch and the per-round report. With `dry_run` true (the default) no file is "
        "touched: apply the patch yourself or call again with `dry_run: false`, which writes the files "
        "atomically with an undo journal (`undo` restores them). Slow (several model calls and test runs); "
        "progress is reported.",
        _schema(
            {
                "files": _FILES,
                "staged": _STAGED,
                "base": _BASE,
                "intent": _INTENT,
                "dry_run": {
                    "type": "boolean",
                    "default": True,
                    "description": "true: return the patch, write nothing. false: write the result.",
                },
                "rounds": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 10,
                    "description": "Most critique/revise rounds (default: the project's setting, 3).",
                },
            }
        ),
        False,
    ),
    ToolDef(
        "undo",
        "Undo coderefine's last write",
        "Restore the files of coderefine's last write in this project (a `refine` with `dry_run: false`) "
        "exactly as they were. Refuses when a file changed since, unless `force` is true.",
        _schema(
            {
                "force": {
                    "type": "boolean",
                    "default": False,
                    "description": "Restore even files that changed since the write.",
                }
            }
        ),
        False,
    ),
)
