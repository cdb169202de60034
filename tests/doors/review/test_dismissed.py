"""Findings a person dismissed are not raised again on the same code: GitHub (fake API) and the ignore file."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import httpx2
import pytest

from coderefine.cli.main import main
from coderefine.doors.review.dismissed import (
    apply_dismissals,
    hold_back,
    read_ignore_file,
    thread_dismissals,
)
from coderefine.doors.review.github_api import RESOLVED_MARKER, GitHubReviewer, PullRequest
from coderefine.doors.review.render import render_json, render_markdown, render_text
from coderefine.doors.review.run import ReviewReport
from coderefine.project.gitio import GitRepo
from tests.conftest import SMALL_PROJECT, RepoFactory, git, write_files
from tests.doors.review.test_run import FEATURE, review, standard_model
from tests.fake_github import PULL, REPO, FakeGitHub

FP = "0123456789abcdef"


@pytest.fixture
def feature_repo(make_repo: RepoFactory) -> Path:
    root = make_repo(SMALL_PROJECT)
    git(root, "checkout", "-q", "-b", "feature")
    write_files(root, {"pkg/mod.py": FEATURE})
    git(root, "commit", "-qam", "Make add faster")
    return root


def test_the_ignore_file_lists_fingerprints_with_reasons() -> None:
    text = f"# dismissed findings\n{FP}  # the project allows it\n\nnot a fingerprint\nfedcba9876543210\n"
    assert read_ignore_file(text) == {
        FP: "the project allows it",
        "fedcba9876543210": "listed in the ignore file",
    }


def test_a_thread_coderefine_marked_resolved_is_no_dismissal() -> None:
    def thread(body: str) -> dict[str, object]:
        return {"isResolved": True, "resolvedBy": {"login": "ann"}, "comments": {"nodes": [{"body": body}]}}

    ours = f"**warning: x**\n<!-- coderefine:fp={FP} -->"
    assert thread_dismissals([thread(ours)]) == {FP: "its thread resolved by @ann"}
    assert thread_dismissals([thread(ours + "\n" + RESOLVED_MARKER)]) == {}
    assert thread_dismissals([{**thread(ours), "isResolved": False}]) == {}


def reviewer(fake: FakeGitHub, report: ReviewReport) -> GitHubReviewer:
    client = httpx2.Client(
        base_url="https://api.github.test",
        headers={"Authorization": "Bearer test-token"},
        transport=fake.transport(),
    )
    return GitHubReviewer(client, PullRequest(REPO, PULL, report.head))


def test_a_dismissed_finding_is_not_raised_again_on_the_next_push(feature_repo: Path) -> None:
    report = review(feature_repo, standard_model())
    fake = FakeGitHub({path: set(lines) for path, lines in report.right.items()})
    repo = GitRepo.find(feature_repo)
    first, _ = apply_dismissals(report, ".coderefine-ignore", repo, reviewer(fake, report))
    assert first.held_back == ()
    reviewer(fake, first).publish(first)
    inline = [f for f in first.findings if first.inline(f)]
    assert len(inline) >= 2
    by_fp = {c["body"].split("fp=")[1][:16]: c for c in fake.review_comments}
    # A maintainer resolves one thread without changing the code, and gives another a thumbs-down.
    fake.resolve_thread(by_fp[inline[0].fingerprint]["id"], "ann")
    fake.react(by_fp[inline[1].fingerprint]["id"], "-1")
    # The next push changes nothing on those lines: the same findings come back, with the same fingerprints.
    again = review(feature_repo, standard_model())
    assert {f.fingerprint for f in inline} <= {f.fingerprint for f in again.findings}
    held, note = apply_dismissals(again, ".coderefine-ignore", repo, reviewer(fake, again))
    assert note == ""
    assert set(held.held_back) == {inline[0].fingerprint, inline[1].fingerprint}
    assert not {inline[0].fingerprint, inline[1].fingerprint} & {f.fingerprint for f in held.findings}
    posted = len(fake.review_comments)
    result = reviewer(fake, held).publish(held)
    assert result.posted == [] and len(fake.review_comments) == posted
    # Held back is not gone: their comments are not marked resolved.
    assert result.resolved == []
    assert "held back: 2 findings a person dismissed" in fake.issue_comments[0]["body"]
    assert "held back: 2 findings" in render_text(held) and '"held_back": [' in render_json(held)
    assert held.exit_code("info") <= again.exit_code("info")


def test_threads_unreadable_still_count_reactions(feature_repo: Path) -> None:
    report = review(feature_repo, standard_model())
    fake = FakeGitHub({path: set(lines) for path, lines in report.right.items()})
    reviewer(fake, report).publish(report)
    fake.react(fake.review_comments[0]["id"], "-1")
    handler = fake.handler

    def no_graphql(request: httpx2.Request) -> httpx2.Response:
        if request.url.path == "/graphql":
            return httpx2.Response(403, json={"message": "Resource not accessible by integration"})
        return handler(request)

    client = httpx2.Client(
        base_url="https://api.github.test",
        headers={"Authorization": "Bearer test-token"},
        transport=httpx2.MockTransport(no_graphql),
    )
    held, note = apply_dismissals(
        report, "", None, GitHubReviewer(client, PullRequest(REPO, PULL, report.head))
    )
    assert len(held.held_back) == 1 and "resolved threads were not read" in note and "403" in note


def test_the_ignore_file_counts_from_the_base_never_from_the_change(feature_repo: Path) -> None:
    report = review(feature_repo, None)
    target = report.findings[0]
    # The pull request adds its own finding to the ignore file: no effect on its own review.
    write_files(feature_repo, {".coderefine-ignore": f"{target.fingerprint}  # mine\n"})
    git(feature_repo, "add", ".coderefine-ignore")
    git(feature_repo, "commit", "-qm", "silence it")
    repo = GitRepo.find(feature_repo)
    again = review(feature_repo, None)
    held, _ = apply_dismissals(again, ".coderefine-ignore", repo)
    assert held.held_back == ()
    # On the base (a maintainer's commit to main), it is a dismissal.
    git(feature_repo, "rm", "-q", ".coderefine-ignore")
    git(feature_repo, "commit", "-qm", "unsilence")
    git(feature_repo, "checkout", "-q", "main")
    write_files(feature_repo, {".coderefine-ignore": f"{target.fingerprint}  # allowed here\n"})
    git(feature_repo, "add", ".coderefine-ignore")
    git(feature_repo, "commit", "-qm", "dismiss")
    git(feature_repo, "checkout", "-q", "feature")
    git(feature_repo, "merge", "-q", "--no-edit", "main")
    merged = review(feature_repo, None)
    assert repo is not None and repo.blob_at(merged.base, ".coderefine-ignore") is not None, merged.base
    assert target.fingerprint in {f.fingerprint for f in merged.findings}, (target, merged.findings)
    held, _ = apply_dismissals(merged, ".coderefine-ignore", repo)
    assert held.held_back == (target.fingerprint,)
    assert "held back: 1 finding a person dismissed" in render_markdown(held)


def test_hold_back_keeps_earlier_ones() -> None:
    report = ReviewReport("b", "h", "", "", (), "", {}, (), (), held_back=(FP,))
    assert hold_back(report, {"f" * 16: "x"}).held_back == (FP,)
    assert dataclasses.replace(report, held_back=()).held_back == ()


def test_cli_review_holds_back_what_the_base_ignores(
    feature_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(feature_repo)
    out = io.StringIO()
    assert main(["review", "--base", "main", "--no-model", "--format", "json"], out=out) == 1
    fingerprints = [f["fingerprint"] for f in json.loads(out.getvalue())["findings"]]
    git(feature_repo, "checkout", "-q", "main")
    write_files(feature_repo, {".coderefine-ignore": "".join(f"{fp}  # accepted\n" for fp in fingerprints)})
    git(feature_repo, "add", ".coderefine-ignore")
    git(feature_repo, "commit", "-qm", "dismiss")
    git(feature_repo, "checkout", "-q", "feature")
    git(feature_repo, "merge", "-q", "--no-edit", "main")
    out = io.StringIO()
    assert main(["review", "--base", "main", "--no-model"], out=out) == 0
    assert f"held back: {len(fingerprints)} finding" in out.getvalue()
