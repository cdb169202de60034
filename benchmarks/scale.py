"""How coderefine's cost grows with the repository and with the change: printed with the machine.

    python -m benchmarks.scale                          # 1k, 5k, 20k files x 1, 30, 300 changed files
    python -m benchmarks.scale --sizes 1000 --changes 1,30
    python -m benchmarks.scale --write-docs             # also the "At scale" section and docs/scale.png
    python -m benchmarks.scale --sweeps --sizes 1000,20000 --changes 300   # only the sweeps, cold and warm

Rows:
- preparing a candidate's tree: today's temporary copy against the persistent copy (``basetree.py``),
  in the generated repositories and in a real project from PyPI (Django's sdist, cached);
- choosing related tests: reading every test file against the cached import index;
- ``coderefine check`` and ``coderefine review --base main`` as separate processes, with a zero-latency
  replayed critic that passes every file: wall time, the peak memory of the largest process (coderefine
  or any process it ran: ruff, pytest), model calls and tokens;
- a multi-file sweep, when this coderefine has one (``sweep_command``).

Each generated repository is built once and cached (``benchmarks/scale_repo.py``); each command runs
once untimed first, so the table shows the steady state and the first run's cost is reported apart.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from benchmarks.large import cache_dir
from benchmarks.scale_repo import _git, cached_repo, modules, reset
from benchmarks.scale_report import Row, TreeRow, markdown, plot, write_docs
from benchmarks.scale_trees import django_root, selection_row, tree_rows

# How to read the section; the before/after figures of the selection were measured once, against the
# selection code as it was before the import index (it scanned every test for every changed file).
INTRO = """\
`python -m benchmarks.scale --write-docs` (about 14 minutes on 2 quiet cores; `pip install -e '.[bench]'`
for the curve). Repositories are generated (`benchmarks/scale_repo.py`: packages of modules with one test
file each, cached); Django 5.1.4's sdist is the real project. The model is a replayed critic that passes
every file (zero latency), so the walls are coderefine's own: git, ruff, pytest, the trees.

- **Preparing a candidate's tree** costs a stat of every file plus the changed files: 144 ms at 20,000
  files with one changed file, 149 ms with 30 (target < 200 ms), where a temporary copy costs a copy of
  the project per tree (4.4 s at 20,000 files on a quiet machine, 12 s under load, and as long again to
  delete). Disk per candidate is the written column; the persistent copy is made once per slot (first
  fill).
- **Related-test selection** at 20,000 files: the import index answers in 278 ms warm against 695 ms for
  reading every test file (and 123 s -> 1.5 s for 300 changed modules against the code before the index,
  measured once), with the same selection.
- **check and review** grow with the changed files, not the repository: at 1k, 5k and 20k files, one
  changed file costs 0.9 to 1.1 s (`check`) and 1.0 to 1.5 s (`review`); 300 changed files 8.7 to 10.3 s
  and 10.2 to 12.3 s. Model calls are one critic call per changed file, about 940 input tokens each. A
  300-file review with `--jobs 4` takes 2.6 times the time of a 75-file one (target: under 4 times).
- **A fix sweep** is one refine per file (a baseline and a candidate, each with its tests), so it grows with
  the changed files first: 1, 30 and 300 files cost 1 to 2 s, 12 to 27 s and 101 to 253 s in the table
  below (measured before the sweep shared its trees). It grew with the repository, 2.5 times from 1k to
  20k files at 300 files: every file's run brought its two trees up to date (a stat of the project each),
  loaded the import index and indexed the tests again. A sweep's files now share one snapshot of the
  project and hold their trees between files ("A sweep in a big repository" above has the figures after).
"""
SIZES = (1_000, 5_000, 20_000)
CHANGES = (1, 30, 300)
PASS = {"verdict": "pass", "summary": "fine", "issues": []}
# Measures one command in a fresh process, so RUSAGE_CHILDREN covers that command and its children only.
_MEASURE = (
    "import json, resource, subprocess, sys, time\n"
    "start = time.perf_counter()\n"
    "with open(sys.argv[2], 'wb') as out:\n"
    "    rc = subprocess.run(sys.argv[3:], stdout=out, stderr=subprocess.STDOUT).returncode\n"
    "wall = time.perf_counter() - start\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "open(sys.argv[1], 'w').write(json.dumps({'rc': rc, 'wall': wall, 'peak_kib': peak}))\n"
)

# A sweep's command line: (repository, files to sweep) -> argv, or None when coderefine has no sweep.
SweepCommand = Callable[[Path, Sequence[str]], "list[str] | None"]


def machine() -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()} "
        f"{platform.release()}, load average {load}"
    )


def coderefine_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "coderefine", *args]


def _env(tree_cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEREFINE_")}
    # The budget must not cut a 300-file review short: this measures the work, not the limits.
    env.update(
        CODEREFINE_MAX_TOKENS="1000000000",
        CODEREFINE_MAX_COST="1000000",
        XDG_CACHE_HOME=str(tree_cache),
    )
    return env


def measure(argv: Sequence[str], cwd: Path, env: dict[str, str]) -> tuple[int, float, float, str]:
    """(exit code, wall seconds, peak MiB of the largest process, output) of one command."""
    with tempfile.TemporaryDirectory() as scratch:
        result, output = Path(scratch) / "r.json", Path(scratch) / "out.txt"
        subprocess.run([sys.executable, "-c", _MEASURE, str(result), str(output), *argv], cwd=cwd, env=env)
        data = json.loads(result.read_text())
        return data["rc"], data["wall"], data["peak_kib"] / 1024, output.read_text("utf-8", "replace")


def edit(root: Path, paths: Sequence[str]) -> None:
    """A small, clean change to each file: one more function."""
    for rel in paths:
        with open(root / rel, "a", encoding="utf-8") as handle:
            handle.write("\n\ndef extra(value: int) -> int:\n    return value + 1\n")


def _replay(path: Path, calls: int) -> str:
    path.write_text(
        "".join(json.dumps({"role": "critic", "reply": {"tool_input": PASS}}) + "\n" for _ in range(calls))
    )
    return f"replay:{path}"


def check_row(files: int, changed: int, tree_cache: Path) -> tuple[Row, float]:
    """`coderefine check` of a working-tree change; also the first (untimed-in-the-table) run's wall."""
    root = cached_repo(files)
    paths = modules(files)[:changed]
    edit(root, paths)
    env = _env(tree_cache)
    try:
        argv = coderefine_argv("check", "--format", "json", "--fail-on", "never", *paths)
        first = measure(argv, root, env)[1]
        rc, wall, peak, out = measure(argv, root, env)
        if rc != 0:
            raise RuntimeError(f"check failed ({rc}):\n{out[-2000:]}")
    finally:
        reset(root)
    return Row("check", files, changed, wall, peak), first


def review_row(files: int, changed: int, tree_cache: Path, jobs: int | None = None) -> tuple[Row, float]:
    """`coderefine review --base main` of a branch that changed ``changed`` modules."""
    root = cached_repo(files)
    paths = modules(files)[:changed]
    _git(root, "checkout", "-q", "-b", "feature")
    edit(root, paths)
    _git(root, "commit", "-q", "-am", "extra functions")
    env = _env(tree_cache)
    try:
        walls: list[tuple[int, float, float, str]] = []
        with tempfile.TemporaryDirectory() as scratch:
            for n in range(2):
                model = _replay(Path(scratch) / f"m{n}.jsonl", changed + 5)
                argv = coderefine_argv("review", "--base", "main", "--model", model, "--format", "json")
                if jobs is not None:
                    argv += ["--jobs", str(jobs)]
                walls.append(measure(argv, root, env))
        rc, wall, peak, out = walls[1]
        data = json.loads(out[out.index("{") :]) if "{" in out else {}
        if rc not in (0, 1) or not data:
            raise RuntimeError(f"review failed ({rc}):\n{out[-2000:]}")
        calls, tokens_in, tokens_out = review_tokens(root)
    finally:
        _git(root, "checkout", "-q", "-f", "main")
        _git(root, "branch", "-q", "-D", "feature")
        reset(root)
    reviewed = len(data.get("reviewed", []))
    name = "review" if jobs is None else f"review --jobs {jobs}"
    note = "" if reviewed == changed else f"{reviewed} of {changed} files reviewed"
    return Row(name, files, changed, wall, peak, calls, tokens_in, tokens_out, note), walls[0][1]


def review_tokens(root: Path, base: str = "main") -> tuple[int, int, int]:
    """(model calls, input tokens, output tokens) of a review of ``root``'s branch since ``base``, in this
    process with the scripted model (tokens estimated as it estimates them: a quarter of the characters
    sent), tests off: a replayed model reports no usage, and the critic's requests do not depend on them
    when every test passes."""
    import dataclasses

    from coderefine.api import load_settings
    from coderefine.doors.review.run import run_review
    from coderefine.models.scripted import ScriptedModel
    from coderefine.project.change import from_branch
    from coderefine.project.gitio import GitRepo
    from coderefine.project.runner import SubprocessRunner

    repo = GitRepo.find(root)
    assert repo is not None
    settings = dataclasses.replace(load_settings(root, environ={}), tests=False, max_tokens=0, max_cost=0)
    change = from_branch(repo, base, head="HEAD", max_bytes=settings.max_file_kib * 1024)
    model = ScriptedModel([lambda request: PASS for _ in range(len(change.files) * 4 + 8)])
    run_review(
        change,
        settings,
        model,
        SubprocessRunner(),
        {"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        repo.project_files(),
        intent="extra functions",
        intent_source="flag",
        head=repo.rev_parse("HEAD"),
    )
    sent = sum(max(len(r.prompt_text()) // 4, 1) for r in model.history)
    return len(model.history), sent, 50 * len(model.history)


def has_option(command: str, option: str) -> bool:
    done = subprocess.run(coderefine_argv(command, "--help"), capture_output=True, text=True)
    return option in done.stdout


def default_sweep_command(root: Path, paths: Sequence[str]) -> list[str] | None:
    """The sweep's command line, when ``coderefine fix`` takes many files with ``--jobs``; else None.

    The integrator of the multi-file sweep adjusts this one function if the sweep's flags differ."""
    if not has_option("fix", "--sweep"):
        return None
    return coderefine_argv("fix", "--sweep", *paths, "-m", "add a docstring to extra()", "--jobs", "4")


def sweep_row(
    files: int, changed: int, tree_cache: Path, command: SweepCommand = default_sweep_command
) -> Row | None:
    """A fix sweep over ``changed`` modules, where the critic passes every file (no revision)."""
    root = cached_repo(files)
    paths = modules(files)[:changed]
    argv = command(root, paths)
    if argv is None:
        return None
    env = _env(tree_cache)
    edit(root, paths)
    # The sweep's own results (its resume cache) would make a second benchmark run free.
    shutil.rmtree(root / ".git" / "coderefine" / "sweep", ignore_errors=True)
    try:
        with tempfile.TemporaryDirectory() as scratch:
            record = Path(scratch) / "record.jsonl"
            model = _replay(Path(scratch) / "m.jsonl", 2 * changed + 5)
            argv = [*argv, "--model", model, "--record", str(record)]
            rc, wall, peak, out = measure(argv, root, env)
            calls, tokens_in = recorded_calls(record)
        if rc not in (0, 1):
            raise RuntimeError(f"sweep failed ({rc}):\n{out[-2000:]}")
    finally:
        reset(root)
    return Row("fix sweep", files, changed, wall, peak, calls, tokens_in, 50 * calls)


def recorded_calls(record: Path) -> tuple[int, int]:
    """(model calls, input tokens) from a ``--record`` file, tokens estimated as the scripted model does:
    a quarter of the characters sent."""
    calls = tokens = 0
    if record.exists():
        for line in record.read_text("utf-8").splitlines():
            request = json.loads(line).get("request") or {}
            texts = [b["text"] for b in request.get("system", [])]
            texts += [b["text"] for m in request.get("messages", []) for b in m.get("blocks", [])]
            calls += 1
            tokens += max(sum(len(t) for t in texts) // 4, 1)
    return calls, tokens


def sweeps(sizes: Sequence[int], changes: Sequence[int]) -> int:
    """Cold and warm sweeps per size and change count, and each size's walls against the smallest's."""
    print(f"Machine: {machine()}.", flush=True)
    walls: dict[tuple[int, int, str], float] = {}
    for changed in changes:
        for size in sizes:
            with tempfile.TemporaryDirectory() as cache:
                for kind in ("cold", "warm"):
                    row = sweep_row(size, changed, Path(cache))
                    if row is None:
                        print("fix sweep: not in this coderefine")
                        return 1
                    walls[(size, changed, kind)] = row.wall_s
                    print(f"{kind}: {row}", flush=True)
        small = min(sizes)
        for size in sizes:
            for kind in ("cold", "warm"):
                wall = walls[(size, changed, kind)]
                ratio = wall / walls[(small, changed, kind)]
                print(f"{changed} files, {kind}: {size} files {wall:.1f} s, {ratio:.2f}x of {small}")
    return 0


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=_ints, default=list(SIZES), help="repository sizes (files)")
    parser.add_argument("--changes", type=_ints, default=list(CHANGES), help="changed files per run")
    parser.add_argument("--skip-commands", action="store_true", help="only the tree and selection rows")
    parser.add_argument(
        "--write-docs", action="store_true", help="write docs/benchmarks.md and docs/scale.png"
    )
    parser.add_argument(
        "--sweeps",
        action="store_true",
        help="only the fix sweeps: each size from an empty cache (cold), then again (warm), and the ratios",
    )
    args = parser.parse_args(argv)
    if args.sweeps:
        return sweeps(args.sizes, args.changes)
    started = time.perf_counter()
    header = f"Machine: {machine()}."
    print(header, flush=True)
    trees: list[TreeRow] = []
    for size in args.sizes:
        root = cached_repo(size)
        made = tree_rows("generated", root, args.changes, modules(size))
        trees += made
        print(*made, sep="\n", flush=True)
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as scratch:
        django = django_root(Path(scratch))
        if django is None:
            print(
                f"Django skipped: fetch it with 'pip download --no-binary :all: --no-deps django==5.1.4 -d "
                f"{cache_dir()}'",
                flush=True,
            )
        else:
            from coderefine.project.gitio import GitRepo

            candidates = [p for p in GitRepo.find(django).project_files() if p.endswith(".py")]  # type: ignore[union-attr]
            made = tree_rows("Django 5.1.4", django, args.changes, candidates)
            trees += made
            print(*made, sep="\n", flush=True)
    selection = []
    for size in args.sizes:
        count, read_s, cold_s, warm_s = selection_row(cached_repo(size))
        line = (
            f"Related tests of one changed module, {size} files ({count} Python files): reading "
            f"every file {read_s * 1000:.0f} ms; import index cold {cold_s * 1000:.0f} ms, warm "
            f"{warm_s * 1000:.0f} ms (same selection)."
        )
        selection.append(line)
        print(line, flush=True)
    rows: list[Row] = []
    firsts: list[str] = []
    comparisons: list[str] = []
    if not args.skip_commands:
        with tempfile.TemporaryDirectory() as trees_cache:
            cache = Path(trees_cache)
            jobs = has_option("review", "--jobs")
            for size in args.sizes:
                for changed in args.changes:
                    for make in (check_row, review_row):
                        row, first = make(size, changed, cache)
                        rows.append(row)
                        firsts.append(f"{row.command}, {size} files, {changed} changed: {first:.2f} s")
                        print(row, flush=True)
                    sweep = sweep_row(size, changed, cache)
                    if sweep is not None:
                        rows.append(sweep)
                        print(sweep, flush=True)
            if not has_option("fix", "--sweep"):
                print("fix sweep: not in this coderefine yet (benchmarks.scale.sweep_row measures it)")
            big = max(args.sizes)
            if 300 in args.changes and big in args.sizes:
                small, _ = review_row(big, 75, cache)
                if jobs:
                    large, _ = review_row(big, 300, cache, 4)
                else:
                    large = next(r for r in rows if (r.command, r.files, r.changed) == ("review", big, 300))
                rows.append(small)
                if jobs:
                    rows.append(large)
                comparisons.append(
                    f"{large.command} of 300 files against review of 75, {big} files: {large.wall_s:.2f} s "
                    f"against {small.wall_s:.2f} s ({large.wall_s / small.wall_s:.1f}x)"
                    + ("" if jobs else "; review has no --jobs yet, so both ran one file at a time")
                    + "."
                )
                print(comparisons[-1], flush=True)
    section = (
        "## At scale\n\n" + INTRO + "\n" + markdown(header, trees, [*selection, *comparisons], rows, firsts)
    )
    print(section)
    if args.write_docs:
        docs = Path(__file__).resolve().parents[1] / "docs"
        write_docs(section + "\n![time against repository size](scale.png)\n", docs)
        plot([r for r in rows if r.command in ("check", "review")], docs / "scale.png")
    print(f"benchmark wall: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
