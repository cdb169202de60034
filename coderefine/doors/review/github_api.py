"""Publish a review on a GitHub pull request through the REST API.

- Inline comments only for findings whose lines the diff shows on the RIGHT side; a verified fix comes as a
  ```suggestion block. Each comment carries a hidden fingerprint, so a re-run on a new push posts only new
  findings and marks the ones that are gone as resolved (their comment is edited; nothing is lost).
- One summary comment, found again by its hidden marker and updated in place.
- A 422 for the batched review falls back to one comment at a time; a comment GitHub still refuses is
  moved to the summary.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

from coderefine.doors.review.findings import Finding
from coderefine.doors.review.render import SUMMARY_MARKER, message_markdown, render_markdown, suggestion_block
from coderefine.doors.review.run import ReviewReport
from coderefine.errors import UsageError
from coderefine.version import __version__

FINGERPRINT = re.compile(r"<!-- coderefine:fp=([0-9a-f]+) -->")
RESOLVED_MARKER = "<!-- coderefine:resolved -->"
PER_PAGE = 100
# Review threads (resolved or not, and by whom) exist only in the GraphQL API.
THREADS_QUERY = """
query($owner: String!, $name: String!, $number: Int!, $cursor: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $cursor) {
        pageInfo { hasNextPage endCursor }
        nodes {
          isResolved
          resolvedBy { login }
          comments(first: 1) { nodes { databaseId body } }
        }
      }
    }
  }
}
"""


@dataclass(frozen=True)
class PullRequest:
    repository: str  # owner/name
    number: int
    head_sha: str


@dataclass
class PublishResult:
    posted: list[str] = field(default_factory=list)  # fingerprints
    kept: list[str] = field(default_factory=list)  # already there from an earlier run
    resolved: list[str] = field(default_factory=list)
    moved_to_summary: list[str] = field(default_factory=list)
    summary_comment: int = 0


def pull_request_from_environment(environ: Mapping[str, str]) -> PullRequest:
    """The pull request of this GitHub Actions run, from GITHUB_EVENT_PATH and GITHUB_REPOSITORY."""
    repository = environ.get("GITHUB_REPOSITORY", "")
    event_path = environ.get("GITHUB_EVENT_PATH", "")
    try:
        event = json.loads(Path(event_path).read_text(encoding="utf-8")) if event_path else {}
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read GITHUB_EVENT_PATH ({exc})") from exc
    pull = event.get("pull_request") or {}
    if not repository or not pull.get("number"):
        raise UsageError(
            "--github-review needs a pull_request event (GITHUB_EVENT_PATH) and GITHUB_REPOSITORY; "
            "run it in a workflow triggered by pull_request"
        )
    return PullRequest(repository, int(pull["number"]), str((pull.get("head") or {}).get("sha") or ""))


def comment_body(finding: Finding) -> str:
    parts = [f"**{finding.severity}: {finding.title}** (`{finding.rule_id}`)", "", *message_markdown(finding)]
    if finding.suggestion is not None:
        parts += ["", "Verified by coderefine (gated, shown better):", suggestion_block(finding)]
    elif finding.note:
        parts += ["", f"_{finding.note}_"]
    parts += ["", f"<!-- coderefine:fp={finding.fingerprint} -->"]
    return "\n".join(parts)


def _comment_payload(finding: Finding, commit: str) -> dict[str, Any]:
    start, end = finding.line, finding.end_line
    if finding.suggestion is not None:
        start, end = finding.suggestion.start, finding.suggestion.end
    payload: dict[str, Any] = {
        "path": finding.path,
        "line": end,
        "side": "RIGHT",
        "body": comment_body(finding),
    }
    if start < end:
        payload["start_line"] = start
        payload["start_side"] = "RIGHT"
    if commit:
        payload["commit_id"] = commit
    return payload


class GitHubReviewer:
    def __init__(self, client: httpx2.Client, pull: PullRequest, graphql_url: str = "") -> None:
        self._client = client
        self._pull = pull
        self._base = f"/repos/{pull.repository}"
        # Review threads (resolved or not) exist only in the GraphQL API.
        self._graphql_url = graphql_url or str(client.base_url).rstrip("/") + "/graphql"

    @classmethod
    def from_environment(
        cls, environ: Mapping[str, str], transport: httpx2.BaseTransport | None = None
    ) -> GitHubReviewer:
        token = environ.get("GITHUB_TOKEN", "")
        if not token:
            raise UsageError(
                "--github-review needs GITHUB_TOKEN (env: GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }})"
            )
        client = httpx2.Client(
            base_url=environ.get("GITHUB_API_URL", "https://api.github.com"),
            headers={
                "Authorization": f"Bearer {token}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": f"coderefine/{__version__}",
            },
            timeout=30.0,
            transport=transport,
        )
        return cls(client, pull_request_from_environment(environ), environ.get("GITHUB_GRAPHQL_URL", ""))

    def review_comments(self) -> list[dict[str, Any]]:
        """Every review comment of the pull request, with its reactions' counts."""
        return self._get_all(f"{self._base}/pulls/{self._pull.number}/comments")

    def review_threads(self) -> list[dict[str, Any]]:
        """The pull request's review threads: resolved or not, by whom, and their first comment."""
        owner, _, name = self._pull.repository.partition("/")
        threads: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            variables = {"owner": owner, "name": name, "number": self._pull.number, "cursor": cursor}
            response = self._client.post(
                self._graphql_url, json={"query": THREADS_QUERY, "variables": variables}
            )
            self._check(response, "the review threads (GraphQL)")
            data = response.json()
            if data.get("errors"):
                raise UsageError(f"GitHub refused the review threads (GraphQL): {str(data['errors'])[:200]}")
            page = data["data"]["repository"]["pullRequest"]["reviewThreads"]
            threads.extend(page.get("nodes") or [])
            if not page["pageInfo"]["hasNextPage"]:
                return threads
            cursor = page["pageInfo"]["endCursor"]

    def _get_all(self, path: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        page = 1
        while True:
            response = self._client.get(path, params={"per_page": PER_PAGE, "page": page})
            self._check(response, f"GET {path}")
            batch = response.json()
            items.extend(batch)
            if len(batch) < PER_PAGE:
                return items
            page += 1

    @staticmethod
    def _check(response: httpx2.Response, what: str) -> None:
        if response.status_code >= 400:
            hint = " (the token needs pull-requests: write)" if response.status_code in (401, 403) else ""
            raise UsageError(f"GitHub refused {what}: {response.status_code} {response.text[:200]}{hint}")

    def publish(self, report: ReviewReport) -> PublishResult:
        result = PublishResult()
        number = self._pull.number
        existing = self._get_all(f"{self._base}/pulls/{number}/comments")
        ours: dict[str, dict[str, Any]] = {}
        for comment in existing:
            match = FINGERPRINT.search(comment.get("body") or "")
            if match:
                ours[match.group(1)] = comment
        current = {f.fingerprint for f in report.findings}
        inline = [f for f in report.findings if report.inline(f)]
        new = [f for f in inline if f.fingerprint not in ours]
        result.kept = [f.fingerprint for f in inline if f.fingerprint in ours]
        self._post(new, result)
        for fingerprint, comment in ours.items():
            body = comment.get("body") or ""
            # A finding a person dismissed is still there, only held back: its comment stays as it is.
            if fingerprint in current or fingerprint in report.held_back or RESOLVED_MARKER in body:
                continue
            first = body.splitlines()[0] if body else ""
            note = f"**Resolved**: no longer found at {report.head[:10]}."
            resolved = f"~~{first}~~\n\n{note}\n\n{body}\n{RESOLVED_MARKER}"
            response = self._client.patch(
                f"{self._base}/pulls/comments/{comment['id']}", json={"body": resolved}
            )
            self._check(response, "the update of a resolved comment")
            result.resolved.append(fingerprint)
        placed = set(result.posted) | set(result.kept)
        self._summary(render_markdown(report, placed=placed), result)
        return result

    def _post(self, findings: list[Finding], result: PublishResult) -> None:
        if not findings:
            return
        commit = self._pull.head_sha
        payload: dict[str, Any] = {
            "event": "COMMENT",
            "body": "",
            "comments": [_comment_payload(f, "") for f in findings],
        }
        if commit:
            payload["commit_id"] = commit
        response = self._client.post(f"{self._base}/pulls/{self._pull.number}/reviews", json=payload)
        if response.status_code < 400:
            result.posted.extend(f.fingerprint for f in findings)
            return
        if response.status_code != 422:
            self._check(response, "the review")
        for finding in findings:  # one at a time: find the comment GitHub refuses, keep the rest
            single = self._client.post(
                f"{self._base}/pulls/{self._pull.number}/comments", json=_comment_payload(finding, commit)
            )
            if single.status_code == 422:
                result.moved_to_summary.append(finding.fingerprint)
            else:
                self._check(single, "a review comment")
                result.posted.append(finding.fingerprint)

    def _summary(self, body: str, result: PublishResult) -> None:
        comments = self._get_all(f"{self._base}/issues/{self._pull.number}/comments")
        mine = next((c for c in comments if SUMMARY_MARKER in (c.get("body") or "")), None)
        if mine is not None:
            response = self._client.patch(f"{self._base}/issues/comments/{mine['id']}", json={"body": body})
            self._check(response, "the summary update")
            result.summary_comment = int(mine["id"])
            return
        response = self._client.post(f"{self._base}/issues/{self._pull.number}/comments", json={"body": body})
        self._check(response, "the summary comment")
        result.summary_comment = int(response.json().get("id", 0))
