"""Billed input tokens per fixed task, per call policy, with scripted models: on HumanEvalFix and on a
shipped real-library suite.

No model API is reachable here, so the model is the benchmark's oracle (its reviser answers with the
canonical body) with its critic's issue anchored on the buggy line, as a real critic's would be; token
counts are ``len(text) / 4`` estimates. Billing follows Anthropic's prompt caching: a prefix (the tool,
the system prompt and the code) of at least 1,024 tokens is written once at 1.25x and read back at 0.1x;
a shorter prefix is not cached at all, and one-shot's single call gains nothing from caching.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace

from coderefine.bench.harness import run_bench
from coderefine.bench.models import OracleModel
from coderefine.bench.result import TaskResult
from coderefine.bench.strategies import STRATEGIES
from coderefine.bench.suite import LibraryTask
from coderefine.bench.tasks import Task, load_tasks, select_tasks
from coderefine.config import Settings
from coderefine.models.base import ModelReply, ModelRequest, Usage
from coderefine.project.runner import SubprocessRunner

MIN_CACHED = 1024  # Anthropic's smallest cacheable prefix for Sonnet-class models
SEED = 4711


def tokens(text: str) -> int:
    return len(text) // 4


class BilledOracle:
    """The oracle, with usage counted as a caching provider would bill it."""

    def __init__(self, task: Task | LibraryTask, strategy: object = None) -> None:
        self._inner = OracleModel(task)
        self._task = task
        self._cached: set[str] = set()
        # A HumanEvalFix task's file is not known to the oracle, whose issues then say line 1: they are
        # moved to the bug's line. A library task's issues already point where each change is (several,
        # for a release or a multi-bug task): None, they are kept.
        self._line: int | None = None
        if not isinstance(task, LibraryTask):
            prompt_lines = task.prompt.count("\n")
            offset = next(i for i, line in enumerate(task.buggy_solution.splitlines()) if line.strip())
            self._line = prompt_lines + offset + 1

    @property
    def name(self) -> str:
        return "oracle"

    def complete(self, request: ModelRequest) -> ModelReply:
        reply = self._inner.complete(request)
        if reply.tool_input is not None and self._line is not None:
            issues = [{**i, "line": self._line} for i in reply.tool_input.get("issues", [])]
            reply = replace(reply, tool_input={**reply.tool_input, "issues": issues})
        tool = json.dumps(request.tool.input_schema) + request.tool.description if request.tool else ""
        prefix = tool + "".join(b.text for b in request.system)
        rest = "".join(m.text for m in request.messages)
        size = tokens(prefix)
        if size < MIN_CACHED:
            usage = Usage(size + tokens(rest), reply.usage.output_tokens)
        elif prefix in self._cached:
            usage = Usage(tokens(rest), reply.usage.output_tokens, cache_read_tokens=size)
        else:
            self._cached.add(prefix)
            usage = Usage(tokens(rest), reply.usage.output_tokens, cache_write_tokens=size)
        return replace(reply, usage=usage)


@dataclass(frozen=True)
class PolicyFigures:
    strategy: str
    tasks: int
    fixed: int
    sent_per_task: float
    billed_per_fixed: float


def billed(result: TaskResult, one_call: bool) -> float:
    if one_call:  # a single call: nothing to read back, so no cache is written either
        return result.input_tokens + result.cache_write_tokens + result.cache_read_tokens
    return result.input_tokens + 1.25 * result.cache_write_tokens + 0.1 * result.cache_read_tokens


def measure(limit: int, names: Sequence[str], jobs: int = 2) -> list[PolicyFigures]:
    return measure_tasks(select_tasks(load_tasks(), limit=limit, seed=SEED), names, jobs)


def measure_tasks(
    tasks: Sequence[Task | LibraryTask], names: Sequence[str], jobs: int = 2
) -> list[PolicyFigures]:
    strategies = [STRATEGIES[n] for n in names]
    results = run_bench(
        list(tasks),
        strategies,
        BilledOracle,
        Settings(),
        SubprocessRunner(),
        dict(os.environ),
        cache_dir=None,
        jobs=jobs,
    )
    figures = []
    for strategy in strategies:
        rows = [r for r in results if r.strategy == strategy.name]
        fixed = sum(r.fixed for r in rows)
        one_call = strategy.rounds == 0
        sent = sum(r.input_tokens + r.cache_write_tokens + r.cache_read_tokens for r in rows)
        figures.append(
            PolicyFigures(
                strategy.name,
                len(rows),
                fixed,
                sent / max(len(rows), 1),
                sum(billed(r, one_call) for r in rows) / max(fixed, 1),
            )
        )
    return figures
