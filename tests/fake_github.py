"""A fake GitHub REST API for pull request reviews, as an httpx2.MockTransport handler.

It keeps review comments and issue comments between runs, and checks every request the way GitHub
does for what coderefine relies on: a review comment must sit on a line the diff shows on the RIGHT side
(else 422), a multi-line comment's range must be shown too, and only known endpoints are called.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import httpx2

REPO = "octo/project"
PULL = 7


class FakeGitHub:
    def __init__(self, right: Mapping[str, set[int] | frozenset[int]], refuse_batch: bool = False) -> None:
        self.right = right
        self.refuse_batch = refuse_batch
        self.review_comments: list[dict[str, Any]] = []
        self.issue_comments: list[dict[str, Any]] = []
        self.calls: list[tuple[str, str]] = []
        self._next_id = 100
        # Review threads a person resolved (the id of their first comment -> who), for the GraphQL API.
        self.resolved_threads: dict[int, str] = {}

    def _id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _placeable(self, comment: Mapping[str, Any]) -> bool:
        if comment.get("side") != "RIGHT":
            return False
        shown = self.right.get(comment["path"], set())
        start = comment.get("start_line", comment["line"])
        return all(line in shown for line in range(start, comment["line"] + 1))

    def _add_review_comment(self, comment: Mapping[str, Any]) -> dict[str, Any]:
        stored = {"id": self._id(), **comment}
        self.review_comments.append(stored)
        return stored

    def react(self, comment_id: int, content: str) -> None:
        """A person's reaction (``+1``, ``-1``, ...) on a review comment, counted as GitHub lists it."""
        comment = next(c for c in self.review_comments if c["id"] == comment_id)
        reactions = comment.setdefault("reactions", {"total_count": 0})
        reactions[content] = reactions.get(content, 0) + 1
        reactions["total_count"] += 1

    def resolve_thread(self, comment_id: int, login: str = "maintainer") -> None:
        """A person resolves the thread a review comment starts."""
        self.resolved_threads[comment_id] = login

    def _threads(self, body: Mapping[str, Any]) -> httpx2.Response:
        """The GraphQL reviewThreads query, one thread per top-level review comment, in pages of two."""
        assert "reviewThreads" in body["query"]
        variables = body["variables"]
        assert (variables["owner"] + "/" + variables["name"], variables["number"]) == (REPO, PULL)
        firsts = [c for c in self.review_comments if not c.get("in_reply_to_id")]
        start = int(variables.get("cursor") or 0)
        nodes = [
            {
                "isResolved": c["id"] in self.resolved_threads,
                "resolvedBy": {"login": self.resolved_threads[c["id"]]}
                if c["id"] in self.resolved_threads
                else None,
                "comments": {"nodes": [{"databaseId": c["id"], "body": c["body"]}]},
            }
            for c in firsts[start : start + 2]
        ]
        more = start + 2 < len(firsts)
        page = {"pageInfo": {"hasNextPage": more, "endCursor": str(start + 2)}, "nodes": nodes}
        return httpx2.Response(200, json={"data": {"repository": {"pullRequest": {"reviewThreads": page}}}})

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        path = request.url.path
        method = request.method
        self.calls.append((method, path))
        assert request.headers["authorization"] == "Bearer test-token"
        body = json.loads(request.content) if request.content else {}
        base = f"/repos/{REPO}"
        page = int(request.url.params.get("page", "1"))
        if method == "POST" and path == "/graphql":
            return self._threads(body)
        if method == "GET" and path == f"{base}/pulls/{PULL}/comments":
            return httpx2.Response(200, json=self.review_comments if page == 1 else [])
        if method == "GET" and path == f"{base}/issues/{PULL}/comments":
            return httpx2.Response(200, json=self.issue_comments if page == 1 else [])
        if method == "POST" and path == f"{base}/pulls/{PULL}/reviews":
            assert body["event"] == "COMMENT"
            if self.refuse_batch or not all(self._placeable(c) for c in body["comments"]):
                return httpx2.Response(422, json={"message": "Unprocessable Entity"})
            for comment in body["comments"]:
                self._add_review_comment(comment)
            return httpx2.Response(200, json={"id": self._id()})
        if method == "POST" and path == f"{base}/pulls/{PULL}/comments":
            if not self._placeable(body):
                return httpx2.Response(422, json={"message": "line must be part of the diff"})
            return httpx2.Response(201, json=self._add_review_comment(body))
        match = re.fullmatch(rf"{base}/pulls/comments/(\d+)", path)
        if method == "PATCH" and match:
            comment = next(c for c in self.review_comments if c["id"] == int(match.group(1)))
            comment["body"] = body["body"]
            return httpx2.Response(200, json=comment)
        if method == "POST" and path == f"{base}/issues/{PULL}/comments":
            stored = {"id": self._id(), "body": body["body"]}
            self.issue_comments.append(stored)
            return httpx2.Response(201, json=stored)
        match = re.fullmatch(rf"{base}/issues/comments/(\d+)", path)
        if method == "PATCH" and match:
            comment = next(c for c in self.issue_comments if c["id"] == int(match.group(1)))
            comment["body"] = body["body"]
            return httpx2.Response(200, json=comment)
        raise AssertionError(f"unexpected call {method} {path}")

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self.handler)
