"""The strategies compared by the benchmark, on the same tasks and model."""

from __future__ import annotations

from dataclasses import dataclass

from coderefine.errors import UsageError


@dataclass(frozen=True)
class Strategy:
    name: str
    description: str
    rounds: int  # critique/revise rounds; 0: the author's one attempt only
    signals: bool  # ruff and the example tests inform the prompts and acceptance
    critic: bool  # a critic call per round (else the critique is made of the signals)
    draft: bool  # the author repairs first
    mixed: bool = False  # the critic and reviser use critic-model and reviser-model


STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in (
        Strategy("one-shot", "the author alone: one repair attempt", 0, False, False, True),
        Strategy(
            "self-refine", "critic and reviser, no ruff/pytest signals (Madaan et al.)", 3, False, True, False
        ),
        Strategy(
            "coderefine",
            "the full loop: signals, critic, reviser, gate, accept if no worse",
            3,
            True,
            True,
            False,
        ),
        Strategy("coderefine-r1", "the full loop, one round", 1, True, True, False),
        Strategy("coderefine-r2", "the full loop, two rounds", 2, True, True, False),
        Strategy(
            "signals-only",
            "signals but no critic: the reviser is told only the signals",
            3,
            True,
            False,
            False,
        ),
        Strategy(
            "coderefine-mixed",
            "the full loop with a model per role: critic-model critiques, reviser-model revises",
            3,
            True,
            True,
            False,
            mixed=True,
        ),
    )
}
DEFAULT = ("one-shot", "self-refine", "coderefine")


def strategies(names: str) -> list[Strategy]:
    chosen = []
    for name in (n.strip() for n in names.split(",") if n.strip()):
        if name not in STRATEGIES:
            raise UsageError(f"unknown strategy '{name}'; choose from {', '.join(STRATEGIES)}")
        chosen.append(STRATEGIES[name])
    return chosen
