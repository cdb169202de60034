"""``coderefine review`` on a real repository with a base and a feature branch, with scripted models."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

import jsonschema
import pytest

from coderefine.cli.main import main
from coderefine.config import Settings
from coderefine.doors.review.findings import right_side_lines, suggestion_for
from coderefine.doors.review.github import render_annotations
from coderefine.doors.review.github_api import GitHubReviewer, PullRequest
from coderefine.doors.review.run import ReviewReport, choose_intent, run_review
from coderefine.doors.review.sarif import sarif_data
from coderefine.errors import GitError
from coderefine.models.scripted import ScriptedModel
from coderefine.project.change import from_branch
from coderefine.project.gitio import GitRepo
from coderefine.project.runner import SubprocessRunner
from tests.conftest import SMALL_PROJECT, RepoFactory, git, write_files
from tests.fake_github import PULL, REPO, FakeGitHub
from tests.paths import DATA, REPO_ROOT

SCHEMA = json.loads((DATA / "sarif-schema-2.1.0.json").read_text())

FEATURE = "import os\n\n\ndef add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"


def issue(title: str, line: int, evidence: str, severity: str = "error") -> dict[str, object]:
    return {
        "title": title,
        "severity": severity,
        "path": "pkg/mod.py",
        "line": line,
        "evidence": evidence,
        "suggestion": "fix it",
    }


def block(search: str, replace: str) -> str:
    return f"pkg/mod.py\n```python\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n```\n"


@pytest.fixture
def feature_repo(make_repo: RepoFactory) -> Path:
    root = make_repo(SMALL_PROJECT)
    git(root, "checkout", "-q", "-b", "feature")
    write_files(root, {"pkg/mod.py": FEATURE})
    git(root, "commit", "-qam", "Make add faster")
    return root


def review(root: Path, model: ScriptedModel | None, settings: Settings | None = None) -> ReviewReport:
    repo = GitRepo.find(root)
    assert repo is not None
    change = from_branch(repo, "main", max_bytes=1 << 20)
    head = repo.rev_parse("HEAD")
    return run_review(
        change,
        settings or Settings(),
        model,
        SubprocessRunner(),
        {"PATH": "/usr/bin:/bin"},
        repo.project_files(),
        intent="make add faster",
        intent_source="commit messages",
        head=head,
        populate_tree=lambda dest: repo.export_commit(head, dest),
    )


def standard_model() -> ScriptedModel:
    critique = {
        "verdict": "revise",
        "summary": "add is wrong",
        "issues": [
            issue("add subtracts", 5, "return a - b"),
            issue("mul could overflow", 9, "return a * b", "warning"),
            issue("docs are missing", 1, "from pkg.mod import add, mul", "info"),  # evidence not in this file
        ],
    }
    return ScriptedModel(
        [
            critique,
            block("    return a - b\n", "    return a + b\n"),  # verified: fixes test_add
            block("    return a * b\n", "    return a ** b\n"),  # breaks test_mul: refused
            "No change needed.",  # no fix for the third
        ]
    )


def test_findings_signals_and_verified_suggestions(feature_repo: Path) -> None:
    report = review(feature_repo, standard_model())
    by_title = {f.title: f for f in report.findings}
    fixed = by_title["add subtracts"]
    assert fixed.suggestion is not None and fixed.suggestion.text == "    return a + b"
    assert (fixed.suggestion.start, fixed.suggestion.end) == (5, 5)
    worse = by_title["mul could overflow"]
    assert worse.suggestion is None and "made a signal worse" in worse.note
    assert "docs are missing" not in by_title  # on line 1, where ruff's F401 already stands: no repeat
    rules = {f.rule_id for f in report.findings}
    assert {"ruff/F401", "pytest/failing-test", "coderefine/critic-error"} <= rules
    assert report.findings[0].severity == "error"
    assert report.exit_code("error") == 1 and report.exit_code("never") == 0
    assert report.reviewed == ("pkg/mod.py",)


def sent_critique(request: object) -> dict[str, object]:
    """The critique a reviser request carries, read back from its fence."""
    text = request.messages[0].text  # type: ignore[attr-defined]
    body = text.split("<<<DATA kind=critique", 1)[1].split(">>>\n", 1)[1].split("\n<<<END DATA", 1)[0]
    data: dict[str, object] = json.loads(body)
    return data


def test_each_fix_is_asked_with_the_whole_critique_and_its_issue_marked(feature_repo: Path) -> None:
    model = standard_model()
    review(feature_repo, model)
    revisers = [r for r in model.history if r.role == "reviser"]
    assert len(revisers) == 3
    for number, request in enumerate(revisers):
        critique = sent_critique(request)
        issues = critique["issues"]
        assert isinstance(issues, list) and len(issues) == 3  # every issue, as the summary describes
        assert [i["fix_in_this_call"] for i in issues] == [i == number for i in range(3)]
        assert critique["summary"] == "add is wrong"
        assert 'marked "fix_in_this_call": true, and only those' in request.messages[0].text


def test_inline_only_inside_the_right_side_of_the_diff(feature_repo: Path) -> None:
    report = review(feature_repo, standard_model())
    for finding in report.findings:
        if report.inline(finding):
            assert finding.line in report.right[finding.path]
    test_finding = next(f for f in report.findings if f.rule_id == "pytest/failing-test")
    assert not report.inline(test_finding)  # tests/test_mod.py is not in the diff


def test_fingerprints_are_stable_across_runs(feature_repo: Path) -> None:
    first = review(feature_repo, standard_model())
    second = review(feature_repo, standard_model())
    assert [f.fingerprint for f in first.findings] == [f.fingerprint for f in second.findings]
    assert len({f.fingerprint for f in first.findings}) == len(first.findings)


def test_sarif_is_valid_against_the_schema(feature_repo: Path) -> None:
    report = review(feature_repo, standard_model())
    data = sarif_data(report)
    jsonschema.validate(data, SCHEMA)
    run = data["runs"][0]  # type: ignore[index]
    results = run["results"]
    assert all(r["partialFingerprints"]["coderefineFindingHash/v1"] for r in results)
    assert any("fixes" in r for r in results)
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == sorted(
        {r["ruleId"] for r in results}, key=[r["ruleId"] for r in results].index
    )


def test_without_a_model_the_signals_are_still_reported(feature_repo: Path) -> None:
    report = review(feature_repo, None)
    assert {f.source for f in report.findings} == {"ruff", "pytest"}
    assert report.reviewed == ()


def test_budget_leaves_files_unreviewed_and_says_so(feature_repo: Path) -> None:
    report = review(feature_repo, ScriptedModel([]), Settings(max_tokens=10))
    assert report.not_reviewed == ("pkg/mod.py",)


def test_github_publishing_places_dedupes_updates_and_resolves(feature_repo: Path) -> None:
    report = review(feature_repo, standard_model())
    fake = FakeGitHub({path: set(lines) for path, lines in report.right.items()})
    import httpx2

    def reviewer() -> GitHubReviewer:
        client = httpx2.Client(
            base_url="https://api.github.test",
            headers={"Authorization": "Bearer test-token"},
            transport=fake.transport(),
        )
        return GitHubReviewer(client, PullRequest(REPO, PULL, report.head))

    first = reviewer().publish(report)
    inline = [f for f in report.findings if report.inline(f)]
    assert len(first.posted) == len(inline) == len(fake.review_comments)
    with_suggestion = [c for c in fake.review_comments if "```suggestion" in c["body"]]
    assert len(with_suggestion) == sum(1 for f in inline if f.suggestion)
    assert all(c["side"] == "RIGHT" for c in fake.review_comments)
    assert len(fake.issue_comments) == 1
    assert "test_add" in fake.issue_comments[0]["body"]  # the finding with no place in the diff

    second = reviewer().publish(report)
    assert second.posted == [] and len(second.kept) == len(inline)
    assert len(fake.review_comments) == len(inline)
    assert len(fake.issue_comments) == 1  # updated in place

    fixed = ReviewReport(**{**report.__dict__, "findings": report.findings[1:]})
    third = reviewer().publish(fixed)
    gone = report.findings[0]
    if report.inline(gone):
        assert third.resolved == [gone.fingerprint]
        resolved = next(c for c in fake.review_comments if gone.fingerprint in c["body"])
        assert "**Resolved**" in resolved["body"]


def test_a_422_for_the_batch_falls_back_comment_by_comment(feature_repo: Path) -> None:
    report = review(feature_repo, standard_model())
    right = {path: set(lines) for path, lines in report.right.items()}
    inline = [f for f in report.findings if report.inline(f)]
    right["pkg/mod.py"].discard(inline[0].line)  # GitHub disagrees about one line
    fake = FakeGitHub(right)
    import httpx2

    client = httpx2.Client(
        base_url="https://api.github.test",
        headers={"Authorization": "Bearer test-token"},
        transport=fake.transport(),
    )
    result = GitHubReviewer(client, PullRequest(REPO, PULL, report.head)).publish(report)
    assert result.moved_to_summary == [inline[0].fingerprint]
    assert len(result.posted) == len(inline) - 1
    assert inline[0].title in fake.issue_comments[0]["body"]


def test_annotations_are_escaped_and_capped() -> None:
    from coderefine.doors.review.findings import Finding

    findings = tuple(
        Finding(
            "ruff/F401",
            "warning",
            "a,b:c.py",
            n,
            n,
            f"t{n}",
            "line one\nline two 100%",
            "ruff",
            fingerprint=str(n),
        )
        for n in range(1, 14)
    )
    report = ReviewReport("b", "h", "i", "default", findings, "", {}, (), ())
    lines = render_annotations(report).splitlines()
    assert len(lines) == 10
    assert lines[0] == "::warning file=a%2Cb%3Ac.py,line=1,title=t1 (ruff/F401)::line one%0Aline two 100%25"
    assert "4 more warning findings" in lines[-1]


def test_suggestion_for_insertions_and_replacements() -> None:
    assert suggestion_for("a\nb\nc\n", "a\nB\nc\n") == suggestion_for("a\nb\nc\n", "a\nB\nc\n")
    replaced = suggestion_for("a\nb\nc\n", "a\nB\nc\n")
    assert replaced is not None and (replaced.start, replaced.end, replaced.text) == (2, 2, "B")
    inserted = suggestion_for("a\nc\n", "a\nb\nc\n")
    assert inserted is not None and (inserted.start, inserted.end, inserted.text) == (1, 1, "a\nb")
    assert suggestion_for("a\n", "a\n") is None


def test_right_side_lines() -> None:
    diff = "--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n+C\n c\n"
    assert right_side_lines(diff) == {"m.py": {1, 2, 3, 4}}


def test_intent_sources(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"title": "Fix add", "body": "It subtracted."}}))
    assert choose_intent(str(event), ["c"], "flag", "d") == ("Fix add\n\nIt subtracted.", "pull request")
    assert choose_intent(None, ["second", "first"], "flag", "d") == ("first\n\nsecond", "commit messages")
    assert choose_intent(None, [], "flag", "d") == ("flag", "--intent")
    assert choose_intent(str(tmp_path / "missing.json"), [], None, "d") == ("d", "default")


def test_shallow_clone_says_to_fetch_the_history(feature_repo: Path, tmp_path: Path) -> None:
    clone = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", "--no-single-branch", f"file://{feature_repo}", str(clone)],
        check=True,
    )
    git(clone, "checkout", "-q", "feature")
    repo = GitRepo.find(clone)
    assert repo is not None
    with pytest.raises(GitError, match="fetch-depth: 0"):
        from_branch(repo, "origin/main", max_bytes=1 << 20)


def test_cli_review_outputs_and_exit_code(
    feature_repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(feature_repo)
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    sarif = tmp_path / "out.sarif"
    out = io.StringIO()
    code = main(
        ["review", "--base", "main", "--no-model", "--format", "github", "--format", f"sarif={sarif}"],
        out=out,
    )
    assert code == 1
    assert out.getvalue().startswith("::error ")
    jsonschema.validate(json.loads(sarif.read_text()), SCHEMA)
    text = summary.read_text()
    assert "<!-- coderefine:summary -->" in text and "model step was skipped" in text
    assert main(["review", "--base", "main", "--no-model", "--fail-on", "never"], out=io.StringIO()) == 0


def test_cli_review_without_a_key_skips_the_model(
    feature_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(feature_repo)
    out = io.StringIO()
    main(["review", "--base", "main", "--no-tests"], out=out)
    assert "no ANTHROPIC_API_KEY" in out.getvalue()
    assert main(["review", "--base", "main", "--require-model"], out=io.StringIO()) == 2


def test_the_workflow_is_safe_for_forks() -> None:
    workflow = (REPO_ROOT / "hooks" / "github" / "coderefine-review.yml").read_text()
    assert "pull_request_target" not in workflow.replace("never `pull_request_target`", "")
    assert "persist-credentials: false" in workflow
    uses = [line.split("uses:")[1].strip() for line in workflow.splitlines() if "uses:" in line]
    # Third-party actions are pinned to a commit; coderefine's own action to its release (or a commit).
    third_party = [u for u in uses if not u.startswith("coderefine/coderefine@")]
    assert third_party and all("@" in u and len(u.split("@")[1].split()[0]) == 40 for u in third_party)
    assert "permissions:\n  contents: read" in workflow


@pytest.mark.parametrize("critic_passes", [True, False])
def test_a_fix_no_signal_shows_better_is_offered_only_if_the_critic_passes_it(
    feature_repo: Path, critic_passes: bool
) -> None:
    clearer = {
        "verdict": "revise",
        "summary": "mul reads oddly",
        "issues": [issue("mul reads oddly", 9, "return a * b", "warning")],
    }
    recheck = (
        {"verdict": "pass", "summary": "fine", "issues": []}
        if critic_passes
        else {
            "verdict": "revise",
            "summary": "still odd",
            "issues": [issue("mul still reads oddly", 9, "return b * a", "warning")],
        }
    )
    model = ScriptedModel([clearer, block("    return a * b\n", "    return b * a\n"), recheck])
    report = review(feature_repo, model)
    finding = next(f for f in report.findings if f.title == "mul reads oddly")
    if critic_passes:
        assert finding.suggestion is not None and finding.suggestion.text == "    return b * a"
    else:
        assert finding.suggestion is None
        assert "the critic still raises the issue" in finding.note
    assert len(model.history) == 3


@pytest.mark.parametrize("target", ["missing/dir/x.sarif", "."])
def test_an_output_path_that_cannot_be_written_is_refused_before_any_work(
    feature_repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    from tests.fake_api import FakeAnthropic, loopback_server

    monkeypatch.chdir(feature_repo)
    fake = FakeAnthropic([])
    with loopback_server(fake) as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        code = main(["review", "--base", "main", "--format", f"sarif={target}"], out=io.StringIO())
    assert code == 2
    assert fake.requests == []
    err = capsys.readouterr().err
    assert "Traceback" not in err and ("does not exist" in err or "is a directory" in err)


def test_an_unknown_head_is_a_clear_usage_error(
    feature_repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(feature_repo)
    assert main(["review", "--base", "main", "--head", "nosuchref", "--no-model"], out=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert "Cmd(" not in err and "exit code(" not in err
    assert "nosuchref" in err


def test_files_are_critiqued_concurrently_with_jobs(make_repo: RepoFactory) -> None:
    """Three files, each with a bug the critic names and the reviser fixes: with jobs=3 the three first
    critiques meet at a barrier (they could not, one at a time), and the findings equal a jobs=1 run's."""
    import threading

    from coderefine.models.base import ModelRequest

    names = ["pkg/a.py", "pkg/b.py", "pkg/c.py"]
    root = make_repo({"pkg/__init__.py": "", **dict.fromkeys(names, "def f(x):\n    return x + 1\n")})
    git(root, "checkout", "-q", "-b", "feature")
    write_files(root, dict.fromkeys(names, "def f(x):\n    return x - 1\n"))
    git(root, "commit", "-qam", "f adds one")

    def model(barrier: threading.Barrier | None) -> ScriptedModel:
        first: set[str] = set()
        lock = threading.Lock()

        def answer(request: ModelRequest) -> object:
            text = request.prompt_text()
            path = next(n for n in names if n in text)
            if request.role == "reviser":
                return block("    return x - 1\n", "    return x + 1\n").replace("pkg/mod.py", path)
            if "return x - 1" not in text:
                return {"verdict": "pass", "summary": "fine", "issues": []}
            with lock:
                new = path not in first
                first.add(path)
            if new and barrier is not None:
                barrier.wait(timeout=60)
            found = {**issue("f subtracts", 2, "return x - 1"), "path": path}
            return {"verdict": "revise", "summary": "f subtracts", "issues": [found]}

        return ScriptedModel([answer] * 30)

    def run(jobs: int, scripted: ScriptedModel) -> ReviewReport:
        repo = GitRepo.find(root)
        assert repo is not None
        return run_review(
            from_branch(repo, "main", max_bytes=1 << 20),
            Settings(tests=False),
            scripted,
            SubprocessRunner(),
            {"PATH": "/usr/bin:/bin"},
            repo.project_files(),
            intent="f adds one",
            intent_source="flag",
            head=repo.rev_parse("HEAD"),
            jobs=jobs,
        )

    together = run(3, model(threading.Barrier(3)))
    alone = run(1, model(None))
    assert sorted(together.reviewed) == names and together.not_reviewed == ()
    assert [(f.path, f.title, f.suggestion) for f in together.findings] == [
        (f.path, f.title, f.suggestion) for f in alone.findings
    ]
    assert sum(f.suggestion is not None for f in together.findings) == 3
    assert together.usage["critic"] == alone.usage["critic"]


def test_cli_review_jobs_must_be_positive(feature_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(feature_repo)
    assert main(["review", "--base", "main", "--no-model", "--jobs", "0"], out=io.StringIO()) == 2


def test_each_reviewed_file_is_reported_as_it_ends(feature_repo: Path) -> None:
    repo = GitRepo.find(feature_repo)
    assert repo is not None
    calls: list[tuple[int, int, float]] = []
    run_review(
        from_branch(repo, "main", max_bytes=1 << 20),
        Settings(),
        standard_model(),
        SubprocessRunner(),
        {"PATH": "/usr/bin:/bin"},
        repo.project_files(),
        intent="make add faster",
        intent_source="flag",
        head=repo.rev_parse("HEAD"),
        on_file=lambda done, total, cost, running: calls.append((done, total, running)),
    )
    assert calls == [(0, 1, ("pkg/mod.py",)), (1, 1, ())]  # the file named while it is waited on


def test_cli_review_budget(
    feature_repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(feature_repo)
    assert main(["review", "--base", "main", "--no-model", "--budget", "0"], out=io.StringIO()) == 2
    assert "--budget must be a positive number" in capsys.readouterr().err
    assert main(["review", "--base", "main", "--no-model", "--budget", "0.5"], out=io.StringIO()) in (0, 1)


def test_the_review_progress_line() -> None:
    from coderefine.cli.commands.ci import _ReviewProgress

    ticks = iter([100.0, 130.0, 131.0])
    stream = io.StringIO()
    progress = _ReviewProgress(stream, clock=lambda: next(ticks))
    progress(3, 12, 0.0421, ("pkg/big.py",))
    progress(3, 12, 0.0421)
    assert stream.getvalue().splitlines() == [
        "coderefine review: 3/12 files critiqued, $0.04 so far, 30s elapsed, ~90s left; critiquing pkg/big.py",
        "coderefine review: 3/12 files critiqued, $0.04 so far, 31s elapsed, ~93s left",
    ]


def test_a_critic_issue_whose_fix_resolves_the_lint_on_its_line_is_one_finding(feature_repo: Path) -> None:
    critique = {"verdict": "revise", "summary": "a slip", "issues": [issue("os is unused", 1, "import os")]}
    model = ScriptedModel([critique, block("import os\n\n\ndef add(a, b):\n", "def add(a, b):\n")])
    report = review(feature_repo, model)
    on_line_one = [f for f in report.findings if f.path == "pkg/mod.py" and f.line == 1]
    assert [f.rule_id for f in on_line_one] == ["ruff/F401"], on_line_one  # not also the critic's
    assert on_line_one[0].suggestion is not None and on_line_one[0].suggestion.text == ""
