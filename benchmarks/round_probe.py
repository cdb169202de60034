"""Run in a fresh process: one refine run through the real anthropic SDK over a zero-latency mock
transport, on a small module with its tests. Prints JSON: the wall time of one full round (critic,
reviser, gate, signals), the initial signals, and the process's peak memory."""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(root: Path) -> None:
    from coderefine.config import Settings
    from coderefine.doors.fix import run_refine
    from coderefine.models.anthropic import AnthropicModel
    from coderefine.project.change import from_worktree
    from coderefine.project.gitio import GitRepo
    from coderefine.project.runner import SubprocessRunner
    from coderefine.project.workspace import project_files
    from tests.fake_api import FakeAnthropic, text_message, tool_message
    from tests.refiner.test_loop import FIX, PASS, revise

    repo = GitRepo.find(root)
    change = from_worktree([Path("pkg/mod.py")], cwd=root, repo=repo, max_bytes=1 << 20)
    fake = FakeAnthropic([tool_message(revise()), text_message(FIX), tool_message(PASS)])
    stamps: list[tuple[str, int, float]] = []

    class Stamp:
        def phase(self, name: str, round_number: int, tokens: int) -> None:
            stamps.append((name, round_number, time.perf_counter()))

    start = time.perf_counter()
    model = AnthropicModel("claude-sonnet-5-5", environ={"ANTHROPIC_API_KEY": "k"}, http_client=None)
    # The SDK builds its own client lazily; swap in the mock transport before the first call.
    import httpx2

    model._http_client = httpx2.Client(transport=httpx2.MockTransport(fake.handler))
    model.warm_up()
    result = run_refine(
        change,
        Settings(),
        model,
        SubprocessRunner(),
        dict(os.environ),
        project_files(root, repo),
        progress=Stamp(),
    )
    end = time.perf_counter()
    first_critic = next(t for n, r, t in stamps if n == "critic" and r == 1)
    # With confirm = "signals" (the default) a fix whose signals are resolved ends the run: no second
    # critique marks the end of the round.
    second_critic = next((t for n, r, t in stamps if n == "critic" and r == 2), end)
    print(
        json.dumps(
            {
                "stop": result.stop,
                "initial_signals": first_critic - start,
                "round": second_critic - first_critic,
                "total": end - start,
                "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        )
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
