"""Tokens and cost per role and model, as text and as data (shared by the refine and review reports)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from coderefine.models.base import Usage
from coderefine.refiner.records import ModelCharge


def tokens_text(usage: Usage) -> str:
    cached = usage.cache_read_tokens
    return (
        f"{usage.total_input / 1000:.1f}k in"
        + (f" ({cached / 1000:.1f}k cached)" if cached else "")
        + f" / {usage.output_tokens / 1000:.1f}k out"
    )


def charges_text(charges: Sequence[ModelCharge]) -> str:
    """``critic claude-opus-4-5 1.2k in / 0.3k out $0.0123 · reviser ollama:qwen3 ... $0.0000``."""
    return " · ".join(f"{c.role} {c.model} {tokens_text(c.usage)} ${c.cost:.4f}" for c in charges)


def charges_data(charges: Sequence[ModelCharge]) -> list[dict[str, object]]:
    return [
        {"role": c.role, "model": c.model, "usage": dataclasses.asdict(c.usage), "cost_usd": round(c.cost, 6)}
        for c in charges
    ]
