"""Sharded reviews (``review --shard K/N``) on a real repository, and ``coderefine merge`` of their reports."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import httpx2
import jsonschema
import pytest

from coderefine.cli.main import main
from coderefine.config import Settings
from coderefine.doors.review.findings import Finding, Suggestion
from coderefine.doors.review.github_api import GitHubReviewer, PullRequest
from coderefine.doors.review.gitlab import render_gitlab
from coderefine.doors.review.merge import Shard, load_shard, merge_shards, report_from_data
from coderefine.doors.review.render import render_json, render_markdown
from coderefine.doors.review.run import ReviewReport, run_review
from coderefine.doors.review.sarif import sarif_data
from coderefine.doors.review.shard import shard_files
from coderefine.errors import UsageError
from coderefine.models.base import ModelRequest, Usage
from coderefine.models.scripted import ScriptedModel
from coderefine.project.change import from_branch
from coderefine.project.gitio import GitRepo
from coderefine.project.runner import SubprocessRunner
from coderefine.signals.base import SourceStatus
from tests.conftest import SMALL_PROJECT, RepoFactory, git, write_files
from tests.fake_github import PULL, REPO, FakeGitHub
from tests.paths import DATA, REPO_ROOT

SCHEMA = json.loads((DATA / "sarif-schema-2.1.0.json").read_text())

CHANGED = {
    # add subtracts: tests/test_mod.py (unchanged, so outside every shard) fails; `import os` is F401
    "pkg/mod.py": "import os\n\n\ndef add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n",
    "pkg/alpha.py": "import sys\n\n\ndef alpha():\n    return 1\n",
    "pkg/beta.py": "import json\n\n\ndef beta():\n    '''The second letter, spelled out at length.'''\n"
    "    return 'beta'\n",
}
BROKEN_ADD = "def add(a, b):\n    return a - b"


@pytest.fixture(autouse=True)
def _outside_any_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """merge reads [tool.coderefine] of the folder it runs in; these tests run where there is none."""
    monkeypatch.chdir(tmp_path)


def respond(request: ModelRequest) -> str | dict[str, object]:
    """The critic raises the subtraction in pkg/mod.py and passes everything else; the reviser fixes it."""
    text = request.prompt_text()
    if request.role == "critic":
        if BROKEN_ADD not in text:
            return {"verdict": "pass", "summary": "fine", "issues": []}
        issue = {
            "title": "add subtracts",
            "severity": "error",
            "path": "pkg/mod.py",
            "line": 5,
            "evidence": "return a - b",
            "suggestion": "use +",
        }
        return {"verdict": "revise", "summary": "add is wrong", "issues": [issue]}
    return "pkg/mod.py\n```python\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n```\n"


@pytest.fixture
def sharded_repo(make_repo: RepoFactory) -> Path:
    root = make_repo(SMALL_PROJECT)
    git(root, "checkout", "-q", "-b", "feature")
    write_files(root, CHANGED)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Three files")
    return root


def review(root: Path, model: ScriptedModel | None, shard: tuple[int, int] | None) -> ReviewReport:
    repo = GitRepo.find(root)
    assert repo is not None
    change = from_branch(repo, "main", max_bytes=1 << 20)
    head = repo.rev_parse("HEAD")
    return run_review(
        change,
        Settings(),
        model,
        SubprocessRunner(),
        {"PATH": "/usr/bin:/bin"},
        repo.project_files(),
        intent="three files",
        intent_source="commit messages",
        head=head,
        populate_tree=lambda dest: repo.export_commit(head, dest),
        shard=shard,
    )


def roundtrip(report: ReviewReport, name: str) -> Shard:
    return Shard(name, report_from_data(json.loads(render_json(report))))


def test_shards_partition_the_files_and_merge_into_the_unsharded_review(sharded_repo: Path) -> None:
    models = [ScriptedModel([respond] * 10) for _ in range(3)]
    shards = [review(sharded_repo, models[k - 1], (k, 3)) for k in (1, 2, 3)]
    sizes = [(path, len(text.encode())) for path, text in CHANGED.items()]  # UTF-8, no BOM
    for k, report in enumerate(shards, start=1):
        assert report.files == tuple(shard_files(sizes, k, 3))
        assert report.reviewed == report.files  # the critic saw this shard's files, and only those
        assert report.shard == (k, 3)
        own = {f.path for f in report.findings if f.source != "pytest"}
        assert own <= set(report.files)
        # the failing test in unchanged tests/test_mod.py is found by every shard: they share the signals
        assert any(f.rule_id == "pytest/failing-test" for f in report.findings)
    assert sorted(p for r in shards for p in r.files) == sorted(CHANGED)
    # a critic call per file of the shard, and a reviser call for the one issue
    assert [len(m.history) for m in models] == [len(r.files) + ("pkg/mod.py" in r.files) for r in shards]

    whole = review(sharded_repo, ScriptedModel([respond] * 10), None)
    merged = merge_shards([roundtrip(r, f"shard-{k}.json") for k, r in enumerate(shards, start=1)])
    assert sorted(f.fingerprint for f in merged.findings) == sorted(f.fingerprint for f in whole.findings)
    assert [f.rule_id for f in merged.findings].count("pytest/failing-test") == 1
    fixed = next(f for f in merged.findings if f.title == "add subtracts")
    # the exact replacement survives the round trip through JSON
    assert fixed.suggestion == Suggestion(5, 5, "    return a + b", "    return a + b\n")
    assert merged.files == tuple(sorted(CHANGED)) and merged.reviewed == merged.files
    assert merged.right == whole.right
    assert merged.usage["critic"].input_tokens == sum(r.usage["critic"].input_tokens for r in shards)
    assert merged.cost == pytest.approx(sum(r.cost for r in shards))
    assert {s.source for s in merged.statuses} == {s.source for s in whole.statuses}
    assert all(merged.inline(f) == whole.inline(f) for f in whole.findings)
    assert merged.exit_code("error") == 1 and merged.exit_code("never") == 0

    sarif = sarif_data(merged)
    jsonschema.validate(sarif, SCHEMA)
    runs: list[dict[str, Any]] = sarif["runs"]  # type: ignore[assignment]
    assert len(runs) == 1
    prints = [r["partialFingerprints"]["coderefineFindingHash/v1"] for r in runs[0]["results"]]
    assert len(prints) == len(set(prints)) == len(merged.findings)
    assert len(json.loads(render_gitlab(merged))) == len(merged.findings)

    fake = FakeGitHub({path: set(lines) for path, lines in merged.right.items()})
    client = httpx2.Client(
        base_url="https://api.github.test",
        headers={"Authorization": "Bearer test-token"},
        transport=fake.transport(),
    )
    published = GitHubReviewer(client, PullRequest(REPO, PULL, merged.head)).publish(merged)
    inline = [f for f in merged.findings if merged.inline(f)]
    assert len(published.posted) == len(inline) == len(fake.review_comments)
    assert len(fake.issue_comments) == 1  # one summary comment for the whole review
    summary = fake.issue_comments[0]["body"]
    assert summary.count("Test fails") == 2  # once in the table, once in full: no place in the diff
    reviews = [call for call in fake.calls if call[0] == "POST" and call[1].endswith("/reviews")]
    assert len(reviews) == 1


def test_cli_review_shards_and_merge(
    sharded_repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(sharded_repo)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    for k in (1, 2):
        log = io.StringIO()
        code = main(
            [
                "review",
                "--base",
                "main",
                "--no-model",
                "--shard",
                f"{k}/2",
                "--fail-on",
                "never",
                "--format",
                f"json={out_dir / f'shard-{k}.json'}",
                "--format",
                f"sarif={out_dir / f'shard-{k}.sarif'}",
                "--format",
                "text",
            ],
            out=log,
        )
        assert code == 0
        assert f"shard {k}/2: pkg/" in log.getvalue()
        data = json.loads((out_dir / f"shard-{k}.json").read_text())
        assert data["shard"] == {"index": k, "count": 2} and data["head"] and data["base"]
        assert all(f["fingerprint"] for f in data["findings"])
        jsonschema.validate(json.loads((out_dir / f"shard-{k}.sarif").read_text()), SCHEMA)
    first, second = (json.loads((out_dir / f"shard-{k}.json").read_text()) for k in (1, 2))
    assert sorted(first["files"] + second["files"]) == sorted(CHANGED)

    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    out = io.StringIO()
    reports = [str(out_dir / "shard-2.json"), str(out_dir / "shard-1.json")]
    merged_sarif = tmp_path / "merged.sarif"
    code = main(
        ["merge", *reports, "--format", "github", "--format", f"sarif={merged_sarif}", "--format", "gitlab"],
        out=out,
    )
    assert code == 1  # F401 and the failing test are over the default fail-on (warning)
    sarif = json.loads(merged_sarif.read_text())
    jsonschema.validate(sarif, SCHEMA)
    assert len(sarif["runs"]) == 1
    results = sarif["runs"][0]["results"]
    assert sum(r["ruleId"] == "pytest/failing-test" for r in results) == 1
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results} >= set(CHANGED)
    assert summary.read_text().count("<!-- coderefine:summary -->") == 1
    annotations = [line for line in out.getvalue().splitlines() if line.startswith("::")]
    assert sum("pytest/failing-test" in line for line in annotations) == 1
    assert main(["merge", *reports, "--fail-on", "never"], out=io.StringIO()) == 0


def synthetic(k: int, n: int, *, head: str = "h" * 40, findings: tuple[Finding, ...] = ()) -> ReviewReport:
    return ReviewReport(
        base="b" * 40,
        head=head,
        intent="i",
        intent_source="default",
        findings=findings,
        diff="",
        right={f"f{k}.py": frozenset({1, 2})},
        statuses=(SourceStatus("ruff", "ok"), SourceStatus("pytest", "ok" if k > 1 else "timeout", f"n{k}")),
        reviewed=(f"f{k}.py",),
        usage={"critic": Usage(10, 5)},
        cost=0.5,
        files=(f"f{k}.py",),
        shard=(k, n),
    )


def write(tmp_path: Path, name: str, report: ReviewReport) -> str:
    path = tmp_path / name
    path.write_text(render_json(report))
    return str(path)


def test_merge_refuses_shards_of_different_commits_naming_the_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = write(tmp_path, "a.json", synthetic(1, 2))
    b = write(tmp_path, "b.json", synthetic(2, 2, head="c" * 40))
    for extra in ([], ["--allow-partial"]):
        assert main(["merge", a, b, *extra], out=io.StringIO()) == 2
        err = capsys.readouterr().err
        assert "different commits" in err and "a.json" in err and "b.json" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("shards", "message"),
    [
        ([(1, 3), (3, 3)], "shard 2/3 missing"),
        ([(1, 2), (1, 2), (2, 2)], "more than once"),
        ([(1, 2), (2, 3)], "split the change differently"),
    ],
)
def test_merge_refuses_missing_repeated_or_mixed_shards(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], shards: list[tuple[int, int]], message: str
) -> None:
    names = [write(tmp_path, f"s{i}.json", synthetic(k, n)) for i, (k, n) in enumerate(shards)]
    assert main(["merge", *names], out=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert message in err and all(Path(name).name in err for name in names[:1])


def test_allow_partial_merges_what_is_there_and_says_what_is_missing(tmp_path: Path) -> None:
    names = [write(tmp_path, f"s{k}.json", synthetic(k, 3)) for k in (1, 3)]
    out = io.StringIO()
    assert main(["merge", *names, "--allow-partial", "--format", "json", "--fail-on", "never"], out=out) == 0
    data = json.loads(out.getvalue())
    assert "shard 2/3 missing" in data["model_note"]
    assert data["files"] == ["f1.py", "f3.py"] and data["shard"] is None
    assert data["usage"]["critic"]["input_tokens"] == 20 and data["cost_usd"] == 1.0
    pytest_status = next(s for s in data["statuses"] if s["source"] == "pytest")
    assert pytest_status == {"source": "pytest", "state": "timeout", "note": "n1; n3"}  # the worst state


def test_a_finding_repeated_across_shards_is_kept_once_with_its_fix(tmp_path: Path) -> None:
    plain = Finding("coderefine/critic-error", "error", "f1.py", 1, 1, "t", "m", "critic", fingerprint="aa")
    fixed = Finding(**{**plain.__dict__, "suggestion": Suggestion(1, 1, "x")})
    other = Finding("ruff/F401", "warning", "f2.py", 2, 2, "u", "m", "ruff", fingerprint="bb")
    merged = merge_shards(
        [
            roundtrip(synthetic(1, 2, findings=(plain,)), "one"),
            roundtrip(synthetic(2, 2, findings=(other, fixed)), "two"),
        ]
    )
    assert [f.fingerprint for f in merged.findings] == ["aa", "bb"]
    assert merged.findings[0].suggestion == Suggestion(1, 1, "x")
    assert "coderefine review" in render_markdown(merged)


def test_merge_refuses_unreadable_or_foreign_json(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(UsageError, match=r"bad\.json: not JSON"):
        load_shard(bad)
    foreign = tmp_path / "check.json"
    foreign.write_text(json.dumps({"version": 1, "introduced": []}))
    with pytest.raises(UsageError, match=r"check\.json: not a coderefine review report"):
        load_shard(foreign)
    with pytest.raises(UsageError, match="cannot read"):
        load_shard(tmp_path / "missing.json")
    whole = write(tmp_path, "whole.json", ReviewReport(**{**synthetic(1, 1).__dict__, "shard": None}))
    with pytest.raises(UsageError, match="not made with 'review --shard K/N'"):
        merge_shards([load_shard(Path(whole))])


@pytest.mark.parametrize("spec", ["0/4", "5/4", "x"])
def test_review_refuses_a_bad_shard_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], spec: str
) -> None:
    monkeypatch.chdir(tmp_path)  # not even a repository: the flag is checked first
    assert main(["review", "--base", "main", "--shard", spec], out=io.StringIO()) == 2
    assert "--shard 1/" in capsys.readouterr().err


def test_a_shard_does_not_publish_a_review_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["review", "--base", "main", "--shard", "1/2", "--github-review"], out=io.StringIO()) == 2
    assert "coderefine merge" in capsys.readouterr().err


MATRIX_WORKFLOW = REPO_ROOT / "hooks" / "github" / "coderefine-review-matrix.yml"


def test_the_matrix_workflow_reviews_in_shards_and_merges_safely_for_forks() -> None:
    """Each shard and the merge are one step of the action (its fork rules are tested in
    tests/test_action.py); the workflow gives the shards no way to publish and merges what they wrote."""
    import yaml

    text = MATRIX_WORKFLOW.read_text(encoding="utf-8")
    workflow = yaml.safe_load(text)
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert set(triggers) == {"pull_request"}
    assert "pull_request_target" not in text.replace("never `pull_request_target`", "")
    assert workflow["permissions"] == {"contents": "read"}
    review_job, merge_job = workflow["jobs"]["review"], workflow["jobs"]["merge"]

    shards = review_job["strategy"]["matrix"]["shard"]
    assert shards == [1, 2, 3, 4]
    assert review_job["permissions"] == {"contents": "read"}  # shards run project code: read only
    review_step = next(
        s for s in review_job["steps"] if s.get("uses", "").startswith("coderefine/coderefine@")
    )
    inputs = review_step["with"]
    assert f"--shard ${{{{ matrix.shard }}}}/{len(shards)}" in inputs["args"]
    assert "json=coderefine-shard-${{ matrix.shard }}.json" in inputs["args"]
    assert (
        inputs["github-review"] is False and inputs["job-summary"] is False and inputs["fail-on"] == "never"
    )
    assert "GITHUB_TOKEN" not in review_step.get("env", {}) and "github-token" not in inputs
    upload = next(s for s in review_job["steps"] if "upload-artifact" in s.get("uses", ""))
    assert upload["with"]["name"] == "coderefine-shard-${{ matrix.shard }}"

    assert merge_job["needs"] == "review"
    assert merge_job["permissions"] == {
        "contents": "read",
        "pull-requests": "write",
        "security-events": "write",
    }
    download = next(s for s in merge_job["steps"] if "download-artifact" in s.get("uses", ""))
    assert download["with"]["pattern"] == "coderefine-shard-*" and download["with"]["merge-multiple"] is True
    merge_step = next(s for s in merge_job["steps"] if s.get("uses", "").startswith("coderefine/coderefine@"))
    assert merge_step["with"]["command"] == "merge"
    assert "ANTHROPIC_API_KEY" not in merge_step.get("env", {})  # merging calls no model
    assert merge_step["with"]["args"].split()[0] == download["with"]["path"] + "/coderefine-shard-*.json"
    assert merge_step["with"]["sarif"] == "coderefine.sarif" and merge_step["with"]["upload-sarif"] is True

    for job in (review_job, merge_job):
        checkout = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@"))
        assert checkout["with"]["persist-credentials"] is False
        assert checkout["with"]["ref"] == "${{ github.event.pull_request.head.sha }}"
    assert review_job["steps"][0]["with"]["fetch-depth"] == 0  # the merge base must be there
    uses = [line.split("uses:")[1].strip() for line in text.splitlines() if "uses:" in line]
    others = [u for u in uses if not u.startswith("coderefine/coderefine@")]
    assert len(uses) == 8 and all(len(u.split("@")[1].split()[0]) == 40 for u in others)
