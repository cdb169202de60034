"""``coderefine merge``: the JSON reports of a sharded review (``review --shard K/N``) made into one report.

The merged report is an ordinary ``ReviewReport``, so every output of ``review`` (SARIF, annotations and job
summary, GitLab, the pull request review) is written by the same code. Findings are kept once per
fingerprint: a failing test outside the change is reported by every shard. Shards of different commits are
never merged; a missing or repeated shard is refused unless ``allow_partial``, when the merged report says
which shards are missing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, cast

from coderefine.doors.review.findings import Finding, Suggestion, dedupe
from coderefine.doors.review.run import ReviewReport
from coderefine.errors import UsageError
from coderefine.models.base import Usage
from coderefine.refiner.records import ModelCharge
from coderefine.signals.base import SourceStatus

_STATE_RANK = {"ok": 0, "skipped": 1, "timeout": 2, "unavailable": 3}
_FINDING_FIELDS = {f.name for f in fields(Finding)}
_USAGE_FIELDS = {f.name for f in fields(Usage)}


@dataclass(frozen=True)
class Shard:
    name: str  # the file it was read from, for messages
    report: ReviewReport


def load_shard(path: Path) -> Shard:
    """One report written by ``review --format json=FILE``; a usage error naming the file otherwise."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the shard report ({exc.strerror})") from exc
    except ValueError as exc:
        raise UsageError(f"{path}: not JSON ({exc}); name the files of 'review --format json=FILE'") from exc
    try:
        return Shard(str(path), report_from_data(data))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise UsageError(
            f"{path}: not a coderefine review report ({type(exc).__name__}: {exc}); name the files of "
            "'review --format json=FILE' of the same coderefine version"
        ) from exc


def report_from_data(data: Mapping[str, Any]) -> ReviewReport:
    """The inverse of ``report.review.render_json`` (the diff itself is not kept: only its RIGHT side)."""
    if data.get("version") != 1 or "findings" not in data:
        raise ValueError("no review report of version 1")
    shard = data.get("shard")
    return ReviewReport(
        base=str(data["base"]),
        head=str(data["head"]),
        intent=str(data["intent"]),
        intent_source=str(data["intent_source"]),
        findings=tuple(_finding(f) for f in data["findings"]),
        diff="",
        right={
            path: frozenset(n for start, end in ranges for n in range(int(start), int(end) + 1))
            for path, ranges in (data.get("right") or {}).items()
        },
        statuses=tuple(SourceStatus(s["source"], s["state"], s.get("note", "")) for s in data["statuses"]),
        reviewed=tuple(data["reviewed"]),
        not_reviewed=tuple(data["not_reviewed"]),
        model_note=str(data.get("model_note", "")),
        usage={role: _usage(u) for role, u in data.get("usage", {}).items()},
        cost=float(data.get("cost_usd", 0.0)),
        charges=tuple(
            ModelCharge(c["role"], c["model"], _usage(c["usage"]), float(c["cost_usd"]))
            for c in data.get("models", [])
        ),
        files=tuple(data.get("files", ())),
        shard=(int(shard["index"]), int(shard["count"])) if shard else None,
    )


def _usage(data: Mapping[str, Any]) -> Usage:
    return Usage(**{k: int(v) for k, v in data.items() if k in _USAGE_FIELDS})


def _finding(data: Mapping[str, Any]) -> Finding:
    values = {k: v for k, v in data.items() if k in _FINDING_FIELDS}
    suggestion = values.get("suggestion")
    if suggestion is not None:
        values["suggestion"] = Suggestion(
            int(suggestion["start"]),
            int(suggestion["end"]),
            suggestion["text"],
            suggestion.get("exact"),
            bool(suggestion.get("to_newline", True)),
        )
    return Finding(**values)


def check_shards(shards: Sequence[Shard], *, allow_partial: bool) -> list[int]:
    """Refuse shards that cannot be merged; return the missing shard numbers (only with ``allow_partial``)."""
    if not shards:
        raise UsageError("merge needs the JSON reports of the shards: coderefine merge shard-1.json ...")
    commits: dict[tuple[str, str], list[str]] = {}
    for shard in shards:
        commits.setdefault((shard.report.head, shard.report.base), []).append(shard.name)
    if len(commits) > 1:
        groups = "; ".join(
            f"{', '.join(names)}: head {head[:12]}, base {base[:12]}"
            for (head, base), names in commits.items()
        )
        raise UsageError(
            f"the shards review different commits ({groups}); merge the shards of one run (one push)"
        )
    unsharded = [s.name for s in shards if s.report.shard is None]
    if unsharded:
        raise UsageError(
            f"{', '.join(unsharded)}: not made with 'review --shard K/N'; merge only the shards of one review"
        )
    counts: dict[int, list[str]] = {}
    for shard in shards:
        counts.setdefault(cast(tuple[int, int], shard.report.shard)[1], []).append(shard.name)
    if len(counts) > 1:
        groups = "; ".join(f"{', '.join(names)}: of {n}" for n, names in sorted(counts.items()))
        raise UsageError(f"the shards split the change differently ({groups}); use the same N in every job")
    total = next(iter(counts))
    by_index: dict[int, list[str]] = {}
    for shard in shards:
        by_index.setdefault(cast(tuple[int, int], shard.report.shard)[0], []).append(shard.name)
    repeated = {k: names for k, names in by_index.items() if len(names) > 1}
    if repeated:
        groups = "; ".join(
            f"shard {k}/{total} in {', '.join(names)}" for k, names in sorted(repeated.items())
        )
        raise UsageError(f"a shard comes more than once ({groups}); name each shard's report once")
    missing = [k for k in range(1, total + 1) if k not in by_index]
    if missing and not allow_partial:
        have = ", ".join(f"{k}/{total} ({by_index[k][0]})" for k in sorted(by_index))
        raise UsageError(
            f"shard {', '.join(f'{k}/{total}' for k in missing)} missing (have {have}); their files would "
            "go unreviewed: add their reports, or pass --allow-partial to merge what is there"
        )
    return missing


def merge_shards(shards: Sequence[Shard], *, allow_partial: bool = False) -> ReviewReport:
    """One report from the shards of one review; see ``check_shards`` for what is refused."""
    missing = check_shards(shards, allow_partial=allow_partial)
    ordered = sorted(shards, key=lambda s: cast(tuple[int, int], s.report.shard)[0])
    reports = [s.report for s in ordered]
    first = reports[0]
    total = cast(tuple[int, int], first.shard)[1]
    notes = _distinct(r.model_note for r in reports)
    if missing:
        notes.append(
            f"Partial review: shard {', '.join(f'{k}/{total}' for k in missing)} missing, so its files "
            "were not reviewed."
        )
    right: dict[str, set[int]] = {}
    for report in reports:
        for path, lines in report.right.items():
            right.setdefault(path, set()).update(lines)
    return ReviewReport(
        base=first.base,
        head=first.head,
        intent=first.intent,
        intent_source=first.intent_source,
        findings=tuple(_merge_findings(f for r in reports for f in r.findings)),
        diff="",
        right={path: frozenset(lines) for path, lines in right.items()},
        statuses=_merge_statuses(s for r in reports for s in r.statuses),
        reviewed=tuple(sorted({p for r in reports for p in r.reviewed})),
        not_reviewed=tuple(sorted({p for r in reports for p in r.not_reviewed})),
        model_note=" ".join(notes),
        usage=_merge_usage(r.usage for r in reports),
        cost=sum(r.cost for r in reports),
        charges=_merge_charges(c for r in reports for c in r.charges),
        files=tuple(sorted({p for r in reports for p in r.files})),
    )


def _distinct(texts: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(t for t in texts if t))


def _merge_findings(findings: Iterable[Finding]) -> list[Finding]:
    """One finding per fingerprint (the one with a verified fix, if any), ranked as a review ranks them."""
    kept: dict[str, Finding] = {}
    for finding in findings:
        known = kept.get(finding.fingerprint)
        if known is None or (known.suggestion is None and finding.suggestion is not None):
            kept[finding.fingerprint] = finding
    return sorted(dedupe(list(kept.values())), key=lambda f: (f.rank, f.rule_id, f.fingerprint))


def _merge_statuses(statuses: Iterable[SourceStatus]) -> tuple[SourceStatus, ...]:
    """One status per source: the worst state any shard saw, with every distinct note."""
    grouped: dict[str, list[SourceStatus]] = {}
    for status in statuses:
        grouped.setdefault(status.source, []).append(status)
    merged = []
    for source, group in grouped.items():
        worst = max(group, key=lambda s: _STATE_RANK.get(s.state, len(_STATE_RANK)))
        merged.append(SourceStatus(source, worst.state, "; ".join(_distinct(s.note for s in group))))
    return tuple(merged)


def _merge_usage(usages: Iterable[Mapping[str, Usage]]) -> dict[str, Usage]:
    total: dict[str, Usage] = {}
    for usage in usages:
        for role, used in usage.items():
            total[role] = total.get(role, Usage()) + used
    return total


def _merge_charges(charges: Iterable[ModelCharge]) -> tuple[ModelCharge, ...]:
    total: dict[tuple[str, str], ModelCharge] = {}
    for charge in charges:
        key = (charge.role, charge.model)
        known = total.get(key)
        total[key] = (
            charge
            if known is None
            else ModelCharge(charge.role, charge.model, known.usage + charge.usage, known.cost + charge.cost)
        )
    return tuple(total.values())
