"""``bench --shard K/N``: a deterministic share of a run's (task, strategy) pairs, one per CI job.

Every job of a matrix computes the same list of pairs from the same arguments (suite, --tasks, --limit,
--seed, --strategies), so each can take its own share without talking to the others: the pairs sorted by
(strategy, task id) are dealt round-robin, pair i to shard i mod N + 1. The shares differ by at most one
pair, and every strategy is spread over all shards. Each shard's results name the run they belong to (a
hash of the version, the model, the strategies and every pair) so that ``bench merge`` refuses to mix runs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from coderefine.bench.strategies import Strategy
from coderefine.bench.suite import REVIEW_KINDS
from coderefine.bench.task import Task
from coderefine.doors.review.shard import parse_shard
from coderefine.version import __version__

Pair = tuple[str, str]  # (strategy name, task id)


def pairs_of(tasks: Sequence[Task], strategies: Sequence[Strategy]) -> list[Pair]:
    """The pairs a run measures, in the shard order: review tasks go only with the review strategy."""
    found = {(s.name, t.task_id) for s in strategies for t in tasks if s.review == (t.kind in REVIEW_KINDS)}
    return sorted(found)


def run_id(meta: Mapping[str, Any], pairs: Sequence[Pair]) -> str:
    """What makes two shards parts of one run: the same version, model, strategies, and pairs."""
    keys = ("suite", "model", "critic_model", "reviser_model", "strategies", "seed")
    identity = [__version__, {k: meta.get(k) for k in keys}, list(pairs)]
    return hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class BenchShard:
    index: int  # K, from 1
    count: int  # N
    run: str
    pairs: frozenset[Pair]  # this shard's share
    total: int  # the pairs of the whole run

    def keeps(self, task: Task, strategy: Strategy) -> bool:
        return (strategy.name, task.task_id) in self.pairs

    def meta(self) -> dict[str, Any]:
        return {"index": self.index, "count": self.count, "run": self.run, "pairs": self.total}


def share(
    text: str, tasks: Sequence[Task], strategies: Sequence[Strategy], meta: Mapping[str, Any]
) -> BenchShard:
    """Shard ``text`` (``K/N``) of the run of ``tasks`` and ``strategies`` described by ``meta``."""
    k, n = parse_shard(text)
    pairs = pairs_of(tasks, strategies)
    mine = frozenset(pair for i, pair in enumerate(pairs) if i % n == k - 1)
    return BenchShard(k, n, run_id(meta, pairs), mine, len(pairs))
