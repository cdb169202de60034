"""The critic's structured answer: its schema, and a parser that repairs what it safely can.

Models do not always keep to a schema. The parser accepts what is unambiguous (a missing optional field, a
number given as a string, a line past the end of the file, a severity in other case), repairs line numbers
from the quoted evidence, and refuses what it cannot use (not an object, no verdict) with a message the
model can act on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from coderefine.models.base import ToolSpec
from coderefine.refiner.asks import MAX_NAMES

MAX_ISSUES = 20
_SEVERITIES = ("error", "warning", "info")

CRITIQUE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["pass", "revise"]},
        "summary": {"type": "string", "description": "One or two sentences on the change as a whole."},
        "issues": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "severity": {"type": "string", "enum": list(_SEVERITIES)},
                    "path": {"type": "string"},
                    "line": {"type": "integer", "minimum": 1},
                    "end_line": {"type": "integer", "minimum": 1},
                    "evidence": {
                        "type": "string",
                        "description": "The code or signal that shows the problem, quoted exactly.",
                    },
                    "suggestion": {"type": "string"},
                    "rule": {
                        "type": "string",
                        # A citation, never prose: a local server makes the schema its grammar, and a
                        # 270M model wrote 200-character sentences here until the reply hit its limit.
                        "maxLength": 80,
                        "description": "Only for an issue that breaks one of the project's rules listed in "
                        "the request: that rule's FILE:LINE as listed. Otherwise leave this out.",
                    },
                },
                "required": ["title", "severity", "path", "line", "evidence", "suggestion"],
            },
        },
        # Code on request (asks.py), the critic's tool form: bounded, since a local server makes the
        # schema its grammar.
        "show": {
            "type": "array",
            "maxItems": MAX_NAMES,
            "items": {"type": "string", "maxLength": 80},
            "description": "Only when a file is shown in part and you cannot judge the change without a "
            "definition that is not shown: its name (a method as Class.method). You are then shown it and "
            "asked again; leave issues empty. Otherwise leave this out.",
        },
    },
    "required": ["verdict", "summary", "issues"],
}

CRITIQUE_TOOL = ToolSpec(
    name="report_critique",
    description="Report the review of the change: a verdict and the located, specific issues.",
    input_schema=CRITIQUE_SCHEMA,
)

# With ``merge = "one-issue"`` the critic may carry the fix of a lone issue that a signal shows, so the
# round needs no reviser call (docs/protocol.md). Every request of such a run lists this tool instead, so
# the cached prefix stays shared by all of its calls.
EDITS_FIELD: dict[str, Any] = {
    "type": "string",
    "description": (
        "Only when the review has exactly one issue and a listed signal shows it: the edit blocks that "
        "fix it, in the reviser's format (path line, fenced SEARCH/REPLACE). Otherwise leave this out."
    ),
}
MERGED_CRITIQUE_TOOL = ToolSpec(
    name=CRITIQUE_TOOL.name,
    description=CRITIQUE_TOOL.description,
    input_schema={
        **CRITIQUE_SCHEMA,
        "properties": {**CRITIQUE_SCHEMA["properties"], "edits": EDITS_FIELD},
    },
)


class CritiqueError(Exception):
    """The critique cannot be used; the message is written for the model."""


@dataclass(frozen=True)
class Issue:
    title: str
    severity: Literal["error", "warning", "info"]
    path: str
    line: int
    end_line: int
    evidence: str
    suggestion: str
    # Set when the parser moved the critic's lines (to where the evidence is, or into the file): says
    # from where, so whoever reads the issue knows the numbers are not the critic's own.
    relocated: str = ""
    # The project rule the issue applies: FILE:LINE as the critic named it, then (refiner/rules.py) that
    # place and the rule's words; "" for none.
    rule: str = ""

    def as_data(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        for optional in ("relocated", "rule"):
            if not data[optional]:
                del data[optional]
        return data


@dataclass(frozen=True)
class Critique:
    verdict: Literal["pass", "revise"]
    summary: str
    issues: tuple[Issue, ...]
    repairs: tuple[str, ...] = ()  # what the parser had to fix, for the report
    edits: str = ""  # edit blocks the critic attached (merged protocol); never part of ``as_data``
    show: tuple[str, ...] = ()  # definitions the critic asked to see before it judges (asks.py)

    def as_data(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "summary": self.summary,
            "issues": [issue.as_data() for issue in self.issues],
        }


def _as_int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def locate_evidence(text: str, evidence: str, near: int) -> tuple[int, int] | None:
    """The lines of ``text`` that hold ``evidence`` (its first non-empty line), nearest to ``near``."""
    wanted = [line.strip() for line in evidence.strip().splitlines() if line.strip()]
    if not wanted:
        return None
    lines = [line.strip() for line in text.splitlines()]
    starts = [i for i, line in enumerate(lines) if wanted[0] and wanted[0] in line]
    if not starts:
        return None
    start = min(starts, key=lambda i: abs(i + 1 - near))
    return start + 1, min(start + len(wanted), len(lines))


def _json_from_text(text: str) -> object:
    match = re.search(r"\{.*\}", text, re.S)
    if not match:
        raise CritiqueError("no report_critique call and no JSON object in the answer")
    try:
        return json.loads(match.group(0))
    except json.JSONDecodeError as exc:
        raise CritiqueError(f"the critique is not valid JSON ({exc.msg} at {exc.pos})") from exc


def parse_critique(tool_input: Mapping[str, Any] | None, text: str, files: Mapping[str, str]) -> Critique:
    """A usable critique from the tool input (or, failing that, a JSON object in the text)."""
    data: object = tool_input if tool_input is not None else _json_from_text(text)
    if not isinstance(data, Mapping):
        raise CritiqueError("the critique must be a JSON object with verdict, summary and issues")
    repairs: list[str] = []
    verdict = str(data.get("verdict", "")).strip().lower()
    if verdict not in ("pass", "revise"):
        raise CritiqueError(f'\'verdict\' must be "pass" or "revise", not {data.get("verdict")!r}')
    summary = data.get("summary")
    if not isinstance(summary, str):
        repairs.append("summary was missing or not text")
        summary = "" if summary is None else str(summary)
    raw_issues = data.get("issues", [])
    if not isinstance(raw_issues, list):
        raise CritiqueError("'issues' must be a list of issue objects")
    issues: list[Issue] = []
    only_path = next(iter(files)) if len(files) == 1 else None
    for number, raw in enumerate(raw_issues[:MAX_ISSUES], start=1):
        issue = _parse_issue(raw, number, files, only_path, repairs)
        if issue is not None:
            issues.append(issue)
    if len(raw_issues) > MAX_ISSUES:
        repairs.append(f"kept the first {MAX_ISSUES} of {len(raw_issues)} issues")
    if verdict == "revise" and not issues:
        repairs.append("verdict was revise with no usable issue")
    edits = data.get("edits")
    if edits is not None and not isinstance(edits, str):
        repairs.append("edits was not text and was ignored")
    return Critique(
        verdict,  # type: ignore[arg-type]
        summary.strip(),
        tuple(issues),
        tuple(repairs),
        edits if isinstance(edits, str) else "",
        _names(data.get("show")),
    )


def _names(raw: object) -> tuple[str, ...]:
    """The names of ``show`` (a list of them, or one), at most ``MAX_NAMES``."""
    items = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
    names = [item.strip().strip("`") for item in items if isinstance(item, str) and item.strip()]
    return tuple(dict.fromkeys(names))[:MAX_NAMES]


def _parse_issue(
    raw: object, number: int, files: Mapping[str, str], only_path: str | None, repairs: list[str]
) -> Issue | None:
    if not isinstance(raw, Mapping):
        repairs.append(f"issue {number} was not an object and was dropped")
        return None
    path = str(raw.get("path") or only_path or "")
    if path not in files:
        if only_path is None:
            repairs.append(f"issue {number} names an unknown file {path!r} and was dropped")
            return None
        repairs.append(f"issue {number} named {path!r}; took {only_path}")
        path = only_path
    text = files[path]
    last = max(len(text.splitlines()), 1)
    given = _as_int(raw.get("line"))
    line = given or 1
    end_line = _as_int(raw.get("end_line")) or line
    said = (line, max(end_line, line))
    evidence = str(raw.get("evidence") or "")
    found = locate_evidence(text, evidence, line)
    if found is not None and found[0] != line:
        if not line <= found[0] <= end_line:
            repairs.append(f"issue {number}: line {line} moved to {found[0]}, where its evidence is")
        line, end_line = found
    if line > last or line < 1:
        repairs.append(f"issue {number}: line {line} is outside the file; clamped")
        line = min(max(line, 1), last)
    end_line = min(max(end_line, line), last)
    relocated = ""
    if (line, end_line) != said:
        where = _span(*said) if given else "no line"
        why = "where its evidence is" if found is not None and found[0] != said[0] else "inside the file"
        relocated = f"re-anchored: the critic gave {where}; moved to {_span(line, end_line)}, {why}"
    severity = str(raw.get("severity") or "warning").strip().lower()
    if severity not in _SEVERITIES:
        repairs.append(f"issue {number}: severity {severity!r} read as warning")
        severity = "warning"
    title = str(raw.get("title") or "").strip() or str(raw.get("suggestion") or "issue")[:80]
    return Issue(
        title=title,
        severity=severity,  # type: ignore[arg-type]
        path=path,
        line=line,
        end_line=end_line,
        evidence=evidence,
        suggestion=str(raw.get("suggestion") or ""),
        relocated=relocated,
        rule=str(raw.get("rule") or "").strip()[:200],
    )


def _span(first: int, last: int) -> str:
    return f"line {first}" if first == last else f"lines {first}-{last}"


def asked_names(tool_input: Mapping[str, Any] | None, text: str) -> tuple[str, ...]:
    """The definitions a critic's answer asks to see through ``show`` (the tool's input, or the JSON
    object of a text answer); () when it asks nothing or cannot be read."""
    if tool_input is not None:
        return _names(tool_input.get("show"))
    try:
        data = _json_from_text(text)
    except CritiqueError:
        return ()
    return _names(data.get("show")) if isinstance(data, Mapping) else ()
