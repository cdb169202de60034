"""What each choice of when to review costs, replayed on a real repository's merged pull requests.

    python benchmarks/review_triggers.py REPO [--last 200] [--requests 1] [--gap 600]

REPO is a git clone whose first-parent history merges pull requests (GitHub's merge commits). For each
merged pull request, its commits (merge base..second parent) are grouped into pushes: commits whose
committer times lie within --gap seconds of the previous one went up together (a rebase or a series pushed
at once shares its committer time). A review of a push critiques each changed Python file of the pull
request at that head, once (coderefine review: one critic call per file, within the budget), so its critic
calls are the number of those files. Reviser calls (one per issue raised, to try a fix) depend on what the
critic finds and are not counted here: they scale with the same files.

The three choices of `coderefine init --reviews`:
- push: every push is reviewed;
- opened: the first push (the pull request opened) is reviewed, then --requests reviews of the final head;
- request: only --requests reviews of the final head (``/coderefine review``).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PullHistory:
    merge: str
    title: str
    pushes: tuple[int, ...]  # changed Python files of the pull request at the head of each push


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def python_files(repo: Path, target: str, head: str) -> int:
    """The Python files a pull request at ``head`` changes, as GitHub shows it: from the merge base."""
    changed = git(repo, "diff", "--name-only", "--diff-filter=d", f"{target}...{head}", "--", "*.py")
    return len(changed.split())


def pulls(repo: Path, last: int, gap: int) -> list[PullHistory]:
    merges = git(
        repo, "log", "--first-parent", "--merges", f"-{last * 2}", "--format=%H %P%x09%s"
    ).splitlines()
    found: list[PullHistory] = []
    for line in merges:
        shas, _, title = line.partition("\t")
        merge, *parents = shas.split()
        if len(parents) != 2 or title.startswith(("Merge branch", "Merge remote")):
            continue  # a branch merged into another (a release line), not a pull request
        base = git(repo, "merge-base", parents[0], parents[1]).strip()
        commits = git(repo, "log", "--reverse", "--format=%H %ct", f"{base}..{parents[1]}").splitlines()
        if not commits or len(commits) > 100:
            continue
        heads: list[str] = []
        previous = 0
        for entry in commits:
            sha, stamp = entry.split()
            if heads and int(stamp) - previous <= gap:
                heads[-1] = sha  # pushed with the commit before it
            else:
                heads.append(sha)
            previous = int(stamp)
        files = tuple(python_files(repo, parents[0], head) for head in heads)
        if files[-1] == 0:
            continue  # no Python change at the end: nothing for coderefine to review
        found.append(PullHistory(merge, title, files))
        if len(found) == last:
            break
    return found


def calls(pull: PullHistory, mode: str, requests: int) -> tuple[int, int]:
    """(reviews, critic calls) of one pull request under a choice."""
    final = pull.pushes[-1]
    if mode == "push":
        return len(pull.pushes), sum(pull.pushes)
    if mode == "opened":
        return 1 + requests, pull.pushes[0] + requests * final
    return requests, requests * final


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("repo", type=Path)
    parser.add_argument("--last", type=int, default=200, help="merged pull requests, newest first")
    parser.add_argument(
        "--requests", type=int, default=1, help="/coderefine review requests per pull request"
    )
    parser.add_argument("--gap", type=int, default=600, help="seconds between commits of one push")
    args = parser.parse_args(argv)
    history = pulls(args.repo, args.last, args.gap)
    if not history:
        print("no merged pull requests with Python changes in this history", file=sys.stderr)
        return 1
    head = git(args.repo, "log", "-1", "--format=%h %cs").strip()
    pushes = [len(p.pushes) for p in history]
    print(f"{args.repo.name} at {head}: {len(history)} merged pull requests with Python changes")
    print(
        f"pushes per pull request: mean {statistics.mean(pushes):.2f}, median {statistics.median(pushes):g}, "
        f"max {max(pushes)} (commits within {args.gap}s are one push)"
    )
    print(f"requests per pull request: {args.requests}")
    print(
        f"{'choice':<10}{'reviews/PR':>12}{'critic calls/PR':>17}{'median':>8}{'p90':>6}"
        f"{'critic calls':>14}{'vs push':>9}"
    )
    totals = {}
    for mode in ("push", "opened", "request"):
        rows = [calls(p, mode, args.requests) for p in history]
        totals[mode] = sum(c for _, c in rows)
        reviews = statistics.mean(r for r, _ in rows)
        each = sorted(c for _, c in rows)
        per_pull = statistics.mean(each)
        p90 = each[int(0.9 * (len(each) - 1))]
        ratio = totals[mode] / totals["push"]
        print(
            f"{mode:<10}{reviews:>12.2f}{per_pull:>17.2f}{statistics.median(each):>8g}{p90:>6}"
            f"{totals[mode]:>14}{ratio:>9.0%}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
