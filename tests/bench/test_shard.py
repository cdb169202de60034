"""`bench --shard K/N` and `bench merge`: every pair in exactly one shard, and one run's results again."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from coderefine.bench.merge import load_results, merge
from coderefine.bench.report import write_reports
from coderefine.bench.result import TaskResult
from coderefine.bench.shard import pairs_of, run_id, share
from coderefine.bench.strategies import strategies
from coderefine.bench.summary import summary
from coderefine.cli.main import main
from coderefine.errors import UsageError


@dataclass(frozen=True)
class FakeTask:
    task_id: str
    kind: str = "bug"


TASKS = [FakeTask(f"Python/{n}") for n in range(7)] + [FakeTask("lib/review-0", "review")]
CHOSEN = strategies("one-shot,coderefine,review")
META = {
    "suite": "s",
    "model": "m",
    "tasks": len(TASKS),
    "seed": None,
    "strategies": ["one-shot", "coderefine"],
}


def test_every_pair_is_in_exactly_one_shard() -> None:
    pairs = pairs_of(TASKS, CHOSEN)  # type: ignore[arg-type]
    assert len(pairs) == 7 * 2 + 1  # the review task goes only with the review strategy
    shards = [share(f"{k}/3", TASKS, CHOSEN, META) for k in (1, 2, 3)]  # type: ignore[arg-type]
    assert sorted(p for s in shards for p in s.pairs) == pairs
    assert sorted(len(s.pairs) for s in shards) == [5, 5, 5]
    assert len({s.run for s in shards}) == 1 and shards[0].total == 15
    # The same share whatever order the tasks and strategies come in.
    again = share("2/3", TASKS[::-1], CHOSEN[::-1], META)  # type: ignore[arg-type]
    assert again.pairs == shards[1].pairs
    keeps = [(s, t) for s in CHOSEN for t in TASKS if shards[1].keeps(t, s)]  # type: ignore[arg-type]
    assert {(s.name, t.task_id) for s, t in keeps} == shards[1].pairs
    assert run_id({**META, "model": "other"}, pairs) != shards[0].run


def test_a_bad_shard_is_a_usage_error() -> None:
    for text in ("0/2", "3/2", "two"):
        with pytest.raises(UsageError, match="--shard"):
            share(text, TASKS, CHOSEN, META)  # type: ignore[arg-type]


def row(task: str, strategy: str, fixed: bool) -> TaskResult:
    return TaskResult(task, "bug", strategy, "m", False, fixed, 1, 100, 10, 0, 0, 0.0, 2.0, 0, "passed")


def write_shards(tmp_path: Path, n: int, *, run: str = "r1") -> list[Path]:
    folders = []
    rows = [row(f"Python/{i}", s, i % 2 == 0) for s in ("one-shot", "coderefine") for i in range(5)]
    for k in range(1, n + 1):
        mine = rows[k - 1 :: n]
        meta = {**META, "shard": {"index": k, "count": n, "run": run, "pairs": len(rows)}}
        folder = tmp_path / f"shard-{k}"
        write_reports(mine, meta, folder)
        folders.append(folder)
    return folders


def test_merge_recomputes_the_statistics(tmp_path: Path) -> None:
    folders = write_shards(tmp_path, 3)
    results, meta = merge([load_results(f) for f in folders[::-1]])
    assert len(results) == 10 and [r.strategy for r in results[:5]] == ["one-shot"] * 5
    assert [r.task_id for r in results[:5]] == [f"Python/{i}" for i in range(5)]
    assert meta["merged"] == {"shards": 3, "run": "r1"} and "shard" not in meta
    assert summary(results)["coderefine"]["fixed"] == 3


def test_merge_refuses_what_is_not_one_run(tmp_path: Path) -> None:
    folders = write_shards(tmp_path / "a", 3)
    with pytest.raises(UsageError, match=r"shard 3/3 missing"):
        merge([load_results(f) for f in folders[:2]])
    with pytest.raises(UsageError, match=r"shard 1/3 is given twice"):
        merge([load_results(f) for f in (folders[0], folders[0], folders[1])])
    other = write_shards(tmp_path / "b", 3, run="r2")
    with pytest.raises(UsageError, match="different runs"):
        merge([load_results(folders[0]), load_results(folders[1]), load_results(other[2])])
    plain = tmp_path / "plain"
    write_reports([row("Python/0", "one-shot", True)], META, plain)
    with pytest.raises(UsageError, match="not made with 'bench --shard K/N'"):
        merge([load_results(plain)])
    with pytest.raises(UsageError, match=r"not the results\.json"):
        (tmp_path / "bad.json").write_text("{}")
        load_results(tmp_path / "bad.json")
    # A shard cut short (a pair lost) is refused too.
    data = json.loads((folders[2] / "results.json").read_text())
    data["tasks"] = data["tasks"][:-1]
    (folders[2] / "results.json").write_text(json.dumps(data))
    with pytest.raises(UsageError, match="hold 9 of the run's 10"):
        merge([load_results(f) for f in folders])


def run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    return main(argv, out=out), out.getvalue()


def test_shards_on_the_command_line_merge_into_the_whole_run(tmp_path: Path) -> None:
    argv = ["bench", "--suite", "humanevalfix", "--model", "do-nothing", "--strategies", "one-shot"]
    argv += ["--limit", "3", "--no-cache"]
    for k in (1, 2):
        code, text = run([*argv, "--shard", f"{k}/2", "--out", str(tmp_path / f"s{k}")])
        assert code == 0, text
    sizes = [len(json.loads((tmp_path / f"s{k}" / "results.json").read_text())["tasks"]) for k in (1, 2)]
    assert sorted(sizes) == [1, 2]
    code, text = run(
        ["bench", "merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "--out", str(tmp_path / "m")]
    )
    assert code == 0, text
    assert "| one-shot | 0/3 0%" in text
    data = json.loads((tmp_path / "m" / "results.json").read_text())
    assert len(data["tasks"]) == 3 and data["meta"]["merged"]["shards"] == 2
    code, _ = run(["bench", "merge", str(tmp_path / "s1"), "--out", str(tmp_path / "m2")])
    assert code == 2


def test_the_bench_workflow_runs_a_matrix_of_shards_and_merges_them() -> None:
    import yaml

    from coderefine.version import __version__
    from tests.paths import REPO_ROOT

    text = (REPO_ROOT / "hooks" / "github" / "coderefine-bench-matrix.yml").read_text(encoding="utf-8")
    workflow = yaml.safe_load(text)
    assert workflow["permissions"] == {"contents": "read"}
    bench, merged = workflow["jobs"]["bench"], workflow["jobs"]["merge"]
    shards = bench["strategy"]["matrix"]["shard"]
    step = next(s for s in bench["steps"] if "coderefine bench" in s.get("run", ""))
    assert f'--shard "$SHARD/{len(shards)}"' in step["run"] and "gguf:qwen2.5-coder-0.5b" in step["run"]
    assert step["env"]["SHARD"] == "${{ matrix.shard }}"
    upload = next(s for s in bench["steps"] if "upload-artifact" in s.get("uses", ""))
    assert upload["with"]["name"] == "bench-shard-${{ matrix.shard }}"
    assert merged["needs"] == "bench"
    download = next(s for s in merged["steps"] if "download-artifact" in s.get("uses", ""))
    merge_step = next(s for s in merged["steps"] if "coderefine bench merge" in s.get("run", ""))
    assert f"{download['with']['path']}/bench-shard-*" in merge_step["run"]
    uses = [line.split("uses:")[1].strip() for line in text.splitlines() if "uses:" in line]
    assert all("@" in u and len(u.split("@")[1].split()[0]) == 40 for u in uses)
    assert text.count(f"=={__version__}") == 2
