"""``bench merge DIR...``: the results of ``bench --shard K/N`` jobs made into the results of one run.

Only the per-task rows are taken from the shards; the summary, the intervals and the pairwise tests are
computed again over all of them (a Wilson interval of a union is not a sum of intervals). Shards of
different runs, a shard given twice, a missing shard, or a pair measured by two shards are refused: a table
made of them would not be the run it claims to be.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from coderefine.bench.result import TaskResult
from coderefine.errors import UsageError

_FIELDS = {f.name for f in fields(TaskResult)}


@dataclass(frozen=True)
class ShardResults:
    source: str  # the folder or file it was read from, for messages
    meta: dict[str, Any]
    results: tuple[TaskResult, ...]

    @property
    def shard(self) -> dict[str, Any]:
        found = self.meta.get("shard")
        return found if isinstance(found, dict) else {}


def result_of(row: dict[str, Any]) -> TaskResult:
    """A task's row of results.json back as a ``TaskResult`` (the derived fixed/regression are dropped)."""
    values = {k: v for k, v in row.items() if k in _FIELDS}
    values["models"] = tuple(values.get("models", ()))
    values["round_notes"] = tuple(values.get("round_notes", ()))
    return TaskResult(**values)


def load_results(path: Path) -> ShardResults:
    """The results of ``path``: a folder written by ``bench --out``, or its results.json."""
    file = path / "results.json" if path.is_dir() else path
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        return ShardResults(str(path), dict(data["meta"]), tuple(result_of(r) for r in data["tasks"]))
    except OSError as exc:
        raise UsageError(f"{file}: cannot read the shard's results ({exc.strerror})") from exc
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(
            f"{file}: not the results.json of 'coderefine bench' ({type(exc).__name__}: {exc})"
        ) from exc


def check(shards: Sequence[ShardResults]) -> None:
    """Refuse what cannot be one run's results, with what to do instead."""
    if not shards:
        raise UsageError("bench merge needs the result folders of the shards: coderefine bench merge DIR...")
    unsharded = [s.source for s in shards if not s.shard]
    if unsharded:
        raise UsageError(
            f"{', '.join(unsharded)}: not made with 'bench --shard K/N'; merge only the shards of one run"
        )
    runs: dict[tuple[str, int], list[str]] = {}
    for s in shards:
        runs.setdefault((str(s.shard.get("run")), int(s.shard["count"])), []).append(s.source)
    if len(runs) > 1:
        groups = "; ".join(f"{', '.join(names)}: run {run}, {n} shards" for (run, n), names in runs.items())
        raise UsageError(
            f"the shards belong to different runs ({groups}); merge the shards of one run (the same "
            "suite, model, strategies, --tasks/--limit/--seed and coderefine version)"
        )
    count = int(shards[0].shard["count"])
    seen: dict[int, str] = {}
    for s in shards:
        index = int(s.shard["index"])
        if index in seen:
            raise UsageError(f"shard {index}/{count} is given twice ({seen[index]} and {s.source})")
        seen[index] = s.source
    missing = [k for k in range(1, count + 1) if k not in seen]
    if missing:
        raise UsageError(
            f"shard {', '.join(f'{k}/{count}' for k in missing)} missing; give the results of all "
            f"{count} shards (a failed job must run again: its cache resumes it)"
        )
    owner: dict[tuple[str, str], str] = {}
    for s in shards:
        for r in s.results:
            key = (r.strategy, r.task_id)
            if key in owner:
                raise UsageError(f"{r.strategy} {r.task_id} is in {owner[key]} and in {s.source}")
            owner[key] = s.source
    total = int(shards[0].shard.get("pairs", len(owner)))
    if len(owner) != total:
        raise UsageError(
            f"the shards hold {len(owner)} of the run's {total} (task, strategy) pairs; a shard's "
            "results.json is incomplete (run that job again)"
        )


def merge(shards: Sequence[ShardResults]) -> tuple[list[TaskResult], dict[str, Any]]:
    """All shards' results, in the order of one run, and the meta of that run."""
    check(shards)
    first = shards[0]
    order = {name: i for i, name in enumerate(first.meta.get("strategies", ()))}
    results = [r for s in shards for r in s.results]
    results.sort(key=lambda r: (order.get(r.strategy, len(order)), _number(r.task_id), r.task_id))
    meta = {k: v for k, v in first.meta.items() if k not in ("shard", "machine")}
    meta["merged"] = {"shards": len(shards), "run": first.shard.get("run")}
    meta["machines"] = sorted({str(s.meta.get("machine", "")) for s in shards} - {""})
    return results, meta


def _number(task_id: str) -> int:
    tail = task_id.rsplit("/", 1)[-1]
    return int(tail) if tail.isdigit() else 0
