"""FakeGitHub with the routes the comment commands use: the pull request, reactions, thread replies and a
review comment read back. Every route of FakeGitHub stays as it is (reviews, comments, the summary)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import httpx2

from tests.fake_github import PULL, REPO, FakeGitHub


class FakeGitHubCommands(FakeGitHub):
    def __init__(
        self, pull: Mapping[str, Any], right: Mapping[str, set[int] | frozenset[int]] | None = None
    ) -> None:
        super().__init__(right or {})
        self.pull = dict(pull)
        self.reactions: list[tuple[str, int, str]] = []  # (issues|pulls, comment id, content)
        self.replies: list[dict[str, Any]] = []  # thread replies: {"in_reply_to": id, "body": ...}
        self.reviews: list[dict[str, Any]] = []  # the bodies of posted reviews
        self.read_only = False  # the token of a fork's pull_request_review_comment run: every write is 403

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        path, method = request.url.path, request.method
        base = f"/repos/{REPO}"
        body = json.loads(request.content) if request.content else {}
        if self.read_only and method != "GET":
            self.calls.append((method, path))
            return httpx2.Response(403, json={"message": "Resource not accessible by integration"})
        if method == "GET" and path == f"{base}/pulls/{PULL}":
            self.calls.append((method, path))
            assert request.headers["authorization"] == "Bearer test-token"
            return httpx2.Response(200, json=self.pull)
        match = re.fullmatch(rf"{base}/(issues|pulls)/comments/(\d+)/reactions", path)
        if method == "POST" and match:
            self.calls.append((method, path))
            assert body["content"] in {"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}
            self.reactions.append((match.group(1), int(match.group(2)), body["content"]))
            return httpx2.Response(201, json={"id": self._id(), "content": body["content"]})
        match = re.fullmatch(rf"{base}/pulls/{PULL}/comments/(\d+)/replies", path)
        if method == "POST" and match:
            self.calls.append((method, path))
            stored = {"id": self._id(), "in_reply_to": int(match.group(1)), "body": body["body"]}
            self.replies.append(stored)
            return httpx2.Response(201, json=stored)
        match = re.fullmatch(rf"{base}/pulls/comments/(\d+)", path)
        if method == "GET" and match:
            self.calls.append((method, path))
            found = [c for c in self.review_comments if c["id"] == int(match.group(1))]
            return httpx2.Response(200, json=found[0]) if found else httpx2.Response(404, json={})
        if method == "POST" and path == f"{base}/pulls/{PULL}/reviews":
            self.reviews.append(body)
        return super().handler(request)
