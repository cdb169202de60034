"""Safety figures: hostile model output, planted secrets and API faults, run through the real loop.

    python benchmarks/safety.py

Prints, per category, how many hostile cases were tried and how many changed a file they should not
have (must be 0); how many planted secrets reached a request to the model provider (must be 0); and how
many API fault cases the run survived. The same cases are asserted by tests/test_hostile.py.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.hostile import (
    FAULT_ENV,
    FAULTS,
    HOSTILE_CRITIQUES,
    HOSTILE_EDITS,
    INJECTIONS,
    SECRETS,
    block,
    critique_replies,
    fault_replies,
    hostile_edit_replies,
    make_project,
    run_fix,
    secret_module,
)
from tests.refiner.test_loop import FIX, PASS, revise

DRIVERS = ("replay", "sdk")


def main() -> int:
    os.environ.setdefault("GIT_CONFIG_NOSYSTEM", "1")
    tried: dict[str, int] = defaultdict(int)
    wrong: dict[str, int] = defaultdict(int)

    def case(category: str, replies: list[tuple[str, object]], driver: str, may_change: bool = False) -> None:
        with tempfile.TemporaryDirectory() as scratch:
            outcome = run_fix(make_project(Path(scratch)), replies, driver=driver)
        tried[category] += 1
        if outcome.changed and not may_change:
            wrong[category] += 1

    for driver in DRIVERS:
        for category, reply in HOSTILE_EDITS.values():
            case(f"edit blocks: {category}", hostile_edit_replies(reply), driver)
        for category, answers, _ in HOSTILE_CRITIQUES.values():
            case(category, critique_replies(answers), driver)

    injected_wrong = 0
    for code in INJECTIONS.values():
        with tempfile.TemporaryDirectory() as scratch:
            root = make_project(Path(scratch), module=code + "def add(a, b):\n    return a - b\n")
            outcome = run_fix(root, [("critic", revise()), ("reviser", FIX), ("critic", PASS)], driver="sdk")
            text = (root / "pkg" / "mod.py").read_text()
            injected_wrong += int(code not in text or "return a + b" not in text or len(outcome.changed) != 1)

    with tempfile.TemporaryDirectory() as scratch:
        root = make_project(Path(scratch), module=secret_module())
        fix = block("pkg/mod.py", "def add(a, b):\n    return a - b\n", "def add(a, b):\n    return a + b\n")
        outcome = run_fix(
            root,
            [("critic", revise()), ("reviser", fix), ("critic", PASS)],
            driver="sdk",
            args=("-m", f"the key {SECRETS['github-token']}"),
        )
        sent = json.dumps(outcome.requests, ensure_ascii=False)
        reached = sum(1 for value in SECRETS.values() if value in sent or value.replace("\n", "\\n") in sent)
        kept = all(value in (root / "pkg" / "mod.py").read_text() for value in SECRETS.values())

    survived = 0
    for make in FAULTS.values():
        with tempfile.TemporaryDirectory() as scratch:
            root = make_project(Path(scratch))
            outcome = run_fix(root, fault_replies(make()), driver="sdk", environ=FAULT_ENV)
            survived += int(
                outcome.exit_code == 0 and "return a + b" in (root / "pkg" / "mod.py").read_text()
            )

    width = max(len(c) for c in tried) + 2
    print(f"{'hostile model output (replay + SDK)':<{width}} {'cases':>6} {'changed a file':>15}")
    for category in sorted(tried):
        print(f"{category:<{width}} {tried[category]:>6} {wrong[category]:>15}")
    print(f"{'total':<{width}} {sum(tried.values()):>6} {sum(wrong.values()):>15}   (must be 0)")
    print()
    print(
        f"prompt injections in the code: {len(INJECTIONS)} tried, {injected_wrong} changed more than the fix"
    )
    print(
        f"planted secrets: {len(SECRETS)}, reached a request: {reached} (must be 0); "
        f"all kept in the written file: {kept}"
    )
    print(f"API fault cases survived: {survived} of {len(FAULTS)} ({', '.join(FAULTS)})")
    failed = sum(wrong.values()) or reached or injected_wrong or survived != len(FAULTS) or not kept
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
