"""The first run, the one people judge: `fix` and `review --base main` on the `mean()` scenario, cold and
warm, each beside its rival in the same run (alternating, median of N).

    python benchmarks/first_run.py            # 5 rounds
    python benchmarks/first_run.py --runs 3

Every tool talks to the same zero-latency OpenAI-compatible server (`fake_openai_server.py`) through its own
SDK: coderefine with `--model openai-compatible:fake-model` (the openai SDK, imported and set up as in a
user's run), aider 0.86.2 and PR-Agent 0.49.0 through litellm. So the walls measure the tools, not a model.

- **cold**: a fresh copy of the project and an empty cache folder (`XDG_CACHE_HOME` a new folder): a user's
  first `fix` in a project, and every CI job.
- **warm**: the same project and cache folder again, after the cold run (the bug put back, or the branch
  reviewed again): persistent test trees, the import index and the warm runner's files are there.
- **aider**: `--auto-test` fix of the same bug (the canned edit, then "the tests pass"), in its own venv.
- **PR-Agent**: `pr-agent --pr_url=main review` with the local git provider (review.md written), in its
  own Python 3.12 venv.
- **new project** (issue #32, `new_project.py`): the first `fix` in a project new to coderefine, as a user
  tries it: two files at the top, no venv, a fresh copy and cache folder, the default model (Claude)
  against a scripted Anthropic server answering in 10 ms, three calls; its phases (`--timings`) are
  reported, and aider 0.86.2 makes the same repair against the same kind of server.

The rivals are installed by hand into their own virtual environments under the benchmark cache, never into
the project (absent ones are left out of the table, which then says so):

    python3.11 -m venv ~/.cache/coderefine/bench/aider-venv
    ~/.cache/coderefine/bench/aider-venv/bin/pip install aider-chat==0.86.2
    python3.12 -m venv ~/.cache/coderefine/bench/pr-agent-venv
    ~/.cache/coderefine/bench/pr-agent-venv/bin/pip install pr-agent==0.49.0

Peak memory is the largest resident set of the `fix` process and the processes it waited for. The figures
are printed, never asserted: these machines are noisy; the load average is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks.fake_openai_server import MODEL, FakeServer  # noqa: E402
from benchmarks.new_project import aider_run, coderefine_run  # noqa: E402
from benchmarks.rivals import CACHE, aider_available, aider_wall  # noqa: E402
from benchmarks.walls import FIX, PASS, REVISE, _git, _project  # noqa: E402

PR_AGENT = CACHE / "pr-agent-venv" / "bin" / "pr-agent"
# What PR-Agent's reviewer asks for (a YAML block); the model's whole answer.
PR_AGENT_REVIEW = """```yaml
review:
  estimated_effort_to_review_[1-5]: 1
  relevant_tests: |
    yes
  key_issues_to_review:
    - relevant_file: |
        pkg/stats.py
      issue_header: |
        Possible Bug
      issue_content: |
        mean divides by one too many
      start_line: 8
      end_line: 8
  security_concerns: |
    No
```"""
CRITIC_REVISE = json.dumps(REVISE)
CRITIC_PASS = json.dumps(PASS)


def _environ(cache_home: Path, url: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("CODEREFINE_", "XDG_", "OPENAI_"))}
    return keep | {"XDG_CACHE_HOME": str(cache_home), "OPENAI_BASE_URL": url, "OPENAI_API_KEY": "unused"}


def _timed(argv: list[str], cwd: Path, env: dict[str, str], expect: str) -> tuple[float, float]:
    """The wall of one run and its peak memory in MiB (the largest of it and what it waited for)."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    if expect not in text:
        raise RuntimeError(f"{' '.join(argv)}: expected {expect!r} in its output:\n{text[-3000:]}")
    return seconds, usage.ru_maxrss / 1024


class Scenario:
    """One project and one cache folder: the first run in it is cold, every later one warm."""

    def __init__(self, parent: Path, branch_bug: bool) -> None:
        self.root = _project(parent, branch_bug=branch_bug)
        self.cache_home = parent / "cache"
        self.cache_home.mkdir()

    def fix(self) -> tuple[float, float]:
        _git(self.root, "checkout", "-q", "--", ".")  # the bug back, as committed
        with FakeServer([CRITIC_REVISE, FIX, CRITIC_PASS]) as server:
            argv = [sys.executable, "-m", "coderefine", "fix", "pkg/stats.py"]
            argv += ["--model", f"openai-compatible:{MODEL}", "-m", "mean() is wrong: fix it"]
            wall = _timed(argv, self.root, _environ(self.cache_home, server.url), "stopped")
        if "len(values)\n" not in (self.root / "pkg/stats.py").read_text():
            raise RuntimeError("coderefine fix did not write the fix")
        return wall

    def review(self) -> float:
        with FakeServer([CRITIC_REVISE, FIX]) as server:
            argv = [sys.executable, "-m", "coderefine", "review", "--base", "main"]
            argv += ["--model", f"openai-compatible:{MODEL}"]
            return _timed(argv, self.root, _environ(self.cache_home, server.url), "[verified fix]")[0]


def pr_agent_available() -> bool:
    return PR_AGENT.exists()


def pr_agent_wall() -> float:
    """One wall of PR-Agent's local review of the branch against main, its model the fake server."""
    with tempfile.TemporaryDirectory() as scratch, FakeServer([PR_AGENT_REVIEW]) as server:
        root = _project(Path(scratch), branch_bug=True)
        # litellm bundles tiktoken's encodings; without pointing at them tiktoken downloads one.
        encodings = next(
            PR_AGENT.parent.parent.glob("lib/python3*/site-packages/litellm/litellm_core_utils/tokenizers")
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "CONFIG__"))} | {
            "CONFIG__GIT_PROVIDER": "local",
            "CONFIG__MODEL": f"openai/{MODEL}",
            "CONFIG__FALLBACK_MODELS": "[]",
            "CONFIG__CUSTOM_MODEL_MAX_TOKENS": "128000",
            "CONFIG__PUBLISH_OUTPUT_PROGRESS": "false",
            "OPENAI__KEY": "unused",
            "OPENAI__API_BASE": server.url,
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "TIKTOKEN_CACHE_DIR": str(encodings),
        }
        start = time.perf_counter()
        done = subprocess.run(
            [str(PR_AGENT), "--pr_url=main", "review"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        seconds = time.perf_counter() - start
        review = root / "review.md"
        if not review.exists() or "mean divides by one too many" not in review.read_text():
            raise RuntimeError("PR-Agent wrote no review:\n" + done.stdout[-2000:] + done.stderr[-2000:])
    return seconds


def _load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def measure(runs: int, progress: Callable[[str], None] = print) -> dict[str, list[float]]:
    """``runs`` rounds, each: coderefine cold then warm, the rival, for fix and for review."""
    samples: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        samples.setdefault(name, []).append(value)

    for number in range(1, runs + 1):
        progress(f"round {number}/{runs} ({_load()})")
        with tempfile.TemporaryDirectory(prefix="coderefine-first-run-") as scratch:
            fix = Scenario(Path(scratch) / "fix", branch_bug=False)
            cold, peak = fix.fix()
            add("fix cold", cold)
            add("fix peak MiB", peak)
            warm, peak = fix.fix()
            add("fix warm", warm)
            add("fix peak MiB", peak)
        if aider_available():
            add("aider", aider_wall())
        with tempfile.TemporaryDirectory(prefix="coderefine-first-run-") as scratch:
            review = Scenario(Path(scratch) / "review", branch_bug=True)
            add("review cold", review.review())
            add("review warm", review.review())
        if pr_agent_available():
            add("PR-Agent", pr_agent_wall())
        wall, phases = coderefine_run([sys.executable, "-m", "coderefine"])
        add("fix new project", wall)
        for phase in phases:
            add(f"phase {phase['phase']}", float(str(phase["seconds"])))
        if aider_available():
            add("aider new project", aider_run())
    return samples


def report(samples: dict[str, list[float]]) -> str:
    med = {name: statistics.median(values) for name, values in samples.items()}
    rows = ["| run | median | runs | target |", "| --- | --- | --- | --- |"]

    def row(name: str, target: str = "") -> None:
        if name in med:
            rows.append(f"| {name} | {med[name]:.2f} s | {len(samples[name])} | {target} |")

    for door, rival, target in (("fix", "aider", "<= 0.25x"), ("review", "PR-Agent", "<= 0.30x")):
        row(f"{door} cold")
        row(f"{door} warm")
        row(rival)
        if rival in med:
            for kind in ("cold", "warm"):
                ratio = med[f"{door} {kind}"] / med[rival]
                rows.append(
                    f"| {door} {kind} / {rival} | {ratio:.2f}x | | {target if kind == 'cold' else ''} |"
                )
    row("fix new project")
    row("aider new project")
    ratios = []
    for door, rival in (("fix cold", "aider"), ("fix new project", "aider new project")):
        if door in med and rival in med:
            ratios.append(med[door] / med[rival])
            rows.append(f"| {door} / {rival} | {ratios[-1]:.2f}x | | <= 0.25x |")
    if ratios:
        rows.append(f"| **fix / aider, the slower case** | **{max(ratios):.2f}x** | | <= 0.25x |")
    rows.append(f"| fix peak memory | {max(samples['fix peak MiB']):.0f} MiB | | <= 120 MiB |")
    phases = [name for name in samples if name.startswith("phase ")]
    if phases:
        rows += ["", "| new project, `fix --timings` phase | median | runs |", "| --- | --- | --- |"]
        rows += [f"| {name[6:]} | {med[name]:.3f} s | {len(samples[name])} |" for name in phases]
        rows.append(f"| (sum of the medians) | {sum(med[n] for n in phases):.3f} s | |")
        if "aider new project" in med:
            rows.append(f"| aider, the whole run | {med['aider new project']:.3f} s | |")
    missing = [n for n, ok in (("aider", aider_available()), ("PR-Agent", pr_agent_available())) if not ok]
    if missing:
        rows.append(f"\n{' and '.join(missing)} not installed: see this script's docstring.")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    if shutil.which("git") is None:
        raise SystemExit("git is needed")
    samples = measure(args.runs)
    print(f"\n{sys.platform}, {os.cpu_count()} cores, Python {sys.version.split()[0]}, {_load()} at the end")
    print(report(samples))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
