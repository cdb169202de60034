"""The strategies compared by the benchmark, on the same tasks and model."""

from __future__ import annotations

from dataclasses import dataclass, replace

from coderefine.errors import UsageError


@dataclass(frozen=True)
class Strategy:
    name: str
    description: str
    rounds: int  # critique/revise rounds; 0: the author's one attempt only
    signals: bool  # ruff and the example tests inform the prompts and acceptance
    critic: bool  # a critic call per round (else the critique is made of the signals)
    draft: bool  # the author repairs first
    retry_worse: bool = False  # a candidate that made a signal worse is retried, not the end
    model: str = ""  # a model of its own (``coderefine@MODEL``); else the run's model
    confirm: str = "always"  # the loop's ``confirm`` setting: "signals" may skip the confirming critique
    first: str = "critic"  # the loop's ``first-critique`` setting: "signals" skips the first critic call
    mixed: bool = False  # the critic and reviser use critic-model and reviser-model
    merge: str = "never"  # the loop's ``merge`` setting: "one-issue" lets the critic carry a lone fix
    review: bool = False  # `coderefine review` of a pull request: runs the review tasks, and only those


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
        Strategy(
            "coderefine-retry",
            "the full loop; a candidate that makes a signal worse is retried with what got worse",
            3,
            True,
            True,
            False,
            retry_worse=True,
        ),
        Strategy(
            "coderefine-lean",
            "the full loop, no confirming critique when the signals behind every issue are resolved",
            3,
            True,
            True,
            False,
            confirm="signals",
        ),
        Strategy(
            "coderefine-frugal",
            "coderefine-lean whose first critique, when signals fail, is made of the signals alone",
            3,
            True,
            True,
            False,
            confirm="signals",
            first="signals",
        ),
        Strategy(
            "coderefine-merged",
            "coderefine-lean whose critic attaches the fix of a lone signal-backed issue (no reviser call)",
            3,
            True,
            True,
            False,
            confirm="signals",
            merge="one-issue",
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
        Strategy(
            "review",
            "coderefine review of a pull request: critic per file, fixes offered only when verified",
            1,
            True,
            True,
            False,
            review=True,
        ),
    )
}
DEFAULT = ("one-shot", "self-refine", "coderefine", "review")


def strategies(names: str) -> list[Strategy]:
    """The strategies of a comma-separated list; ``NAME@MODEL`` runs NAME with a model of its own."""
    chosen = []
    for name in (n.strip() for n in names.split(",") if n.strip()):
        base, _, model = name.partition("@")
        if base not in STRATEGIES:
            raise UsageError(f"unknown strategy '{base}'; choose from {', '.join(STRATEGIES)}")
        if "@" in name and not model:
            raise UsageError(f"'{name}': name a model after the @, e.g. {base}@claude-haiku-4-5")
        chosen.append(replace(STRATEGIES[base], name=name, model=model) if model else STRATEGIES[base])
    if len({s.name for s in chosen}) != len(chosen):
        raise UsageError(f"a strategy is named twice in '{names}'")
    return chosen
