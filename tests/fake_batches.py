"""Fake batch APIs for httpx2.MockTransport: Anthropic's Message Batches and OpenAI's Batch API (with files).

A batch stays in progress for ``polls`` status requests, then ends. ``answer(custom_id, body)`` gives each
request's outcome: a dict is a successful reply body (a Message, or a chat completion), a string is a
failure kind (Anthropic: "expired", "canceled", or an error type such as "overloaded_error"; OpenAI:
an error code such as "batch_expired", or "status 500"). ``outcomes`` can script the outcome of a
request by its position in the batch instead (first batch only), and ``batch_state`` the final state of a
whole batch ("expired", "canceled", "failed"). Every created batch's requests are kept in ``created``. ``overloaded_polls`` answers that many Anthropic
status requests with 529 first.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from typing import Any

import httpx2

Answer = Callable[[str, dict[str, Any]], dict[str, Any] | str]
TIME = "2026-01-01T00:00:00Z"


class _FakeBatches:
    def __init__(self, answer: Answer, *, polls: int = 2, batch_state: str = "") -> None:
        self.answer = answer
        self.polls = polls
        self.batch_state = batch_state
        self.created: list[list[tuple[str, dict[str, Any]]]] = []
        self.status_calls: dict[str, int] = {}
        self.paths: list[str] = []
        self.overloaded_polls = 0  # status requests answered 529 first (each one counted down)
        self.max_batches: int | None = None  # creating more batches than this is answered 529
        self._lock = threading.Lock()

    def client(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self.handler))

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        with self._lock:
            self.paths.append(f"{request.method} {request.url.path}")
            return self.route(request)

    def route(self, request: httpx2.Request) -> httpx2.Response:
        raise NotImplementedError

    def _ended(self, batch_id: str) -> bool:
        return self.status_calls.get(batch_id, 0) > self.polls

    def _index(self, batch_id: str) -> int:
        return int(batch_id.rsplit("_", 1)[1])


class FakeAnthropicBatches(_FakeBatches):
    def _batch(self, batch_id: str) -> dict[str, Any]:
        items = self.created[self._index(batch_id)]
        ended = self._ended(batch_id)
        counts = {"processing": len(items), "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if ended:
            counts["processing"] = 0
            for cid, body in items:
                outcome = self._outcome(batch_id, cid, body)
                kind = outcome if isinstance(outcome, str) else "succeeded"
                kind = (
                    kind
                    if kind in ("expired", "canceled")
                    else ("succeeded" if kind == "succeeded" else "errored")
                )
                counts[kind] += 1
        return {
            "id": batch_id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": counts,
            "created_at": TIME,
            "expires_at": TIME,
            "ended_at": TIME if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"https://api.anthropic.com/v1/messages/batches/{batch_id}/results"
            if ended
            else None,
        }

    def _outcome(self, batch_id: str, cid: str, body: dict[str, Any]) -> dict[str, Any] | str:
        if self.batch_state and self._index(batch_id) == 0:
            return self.batch_state
        return self.answer(cid, body)

    def route(self, request: httpx2.Request) -> httpx2.Response:
        path = request.url.path
        if request.method == "POST" and path == "/v1/messages/batches":
            if self.max_batches is not None and len(self.created) >= self.max_batches:
                return httpx2.Response(
                    529, json={"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
                )
            sent = json.loads(request.content)["requests"]
            self.created.append([(r["custom_id"], r["params"]) for r in sent])
            batch_id = f"msgbatch_{len(self.created) - 1}"
            return httpx2.Response(200, json=self._batch(batch_id))
        found = re.fullmatch(r"/v1/messages/batches/(msgbatch_\d+)(/results)?", path)
        if found is None or self._index(found[1]) >= len(self.created):
            return httpx2.Response(
                404, json={"type": "error", "error": {"type": "not_found_error", "message": path}}
            )
        batch_id = found[1]
        if found[2] is None and self.overloaded_polls:
            self.overloaded_polls -= 1
            return httpx2.Response(
                529, json={"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
            )
        if found[2] is None:
            self.status_calls[batch_id] = self.status_calls.get(batch_id, 0) + 1
            return httpx2.Response(200, json=self._batch(batch_id))
        lines = []
        for cid, body in reversed(self.created[self._index(batch_id)]):  # any order: matched by custom_id
            outcome = self._outcome(batch_id, cid, body)
            if isinstance(outcome, dict):
                result: dict[str, Any] = {"type": "succeeded", "message": outcome}
            elif outcome in ("expired", "canceled"):
                result = {"type": outcome}
            else:
                error = {"type": outcome, "message": f"{outcome} for the test"}
                result = {"type": "errored", "error": {"type": "error", "error": error}}
            lines.append(json.dumps({"custom_id": cid, "result": result}))
        return httpx2.Response(
            200, content="\n".join(lines).encode(), headers={"content-type": "application/binary"}
        )


class FakeOpenAIBatches(_FakeBatches):
    def __init__(self, answer: Answer, *, polls: int = 2, batch_state: str = "") -> None:
        super().__init__(answer, polls=polls, batch_state=batch_state)
        self.files: dict[str, bytes] = {}
        self.inputs: dict[str, str] = {}  # batch id -> input file id

    def _batch(self, batch_id: str) -> dict[str, Any]:
        items = self.created[self._index(batch_id)]
        ended = self._ended(batch_id)
        state = "in_progress"
        output = error = None
        counts = {"total": len(items), "completed": 0, "failed": 0}
        if ended:
            state = self.batch_state if self.batch_state and self._index(batch_id) == 0 else "completed"
            good, bad = [], []
            for cid, body in items:
                outcome = self.answer(cid, body)
                if state == "expired":
                    outcome = outcome if isinstance(outcome, dict) and cid == items[0][0] else "batch_expired"
                if isinstance(outcome, dict):
                    good.append(
                        {"id": "r", "custom_id": cid, "response": {"status_code": 200, "body": outcome}}
                    )
                elif outcome.startswith("status "):
                    status = int(outcome.split()[1])
                    reply = {"status_code": status, "body": {"error": {"message": f"{status} for the test"}}}
                    good.append({"id": "r", "custom_id": cid, "response": reply, "error": None})
                else:
                    bad.append(
                        {"custom_id": cid, "response": None, "error": {"code": outcome, "message": outcome}}
                    )
            counts["completed"], counts["failed"] = len(good), len(bad)
            if good:
                output = self._file(batch_id + "_out", good)
            if bad:
                error = self._file(batch_id + "_err", bad)
        batch: dict[str, Any] = {
            "id": batch_id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "input_file_id": self.inputs[batch_id],
            "completion_window": "24h",
            "status": state,
            "created_at": 1_700_000_000,
            "request_counts": counts,
            "output_file_id": output if state != "failed" else None,
            "error_file_id": error if state != "failed" else None,
        }
        if state == "failed":
            batch["errors"] = {"object": "list", "data": [{"code": "invalid_request", "message": "bad line"}]}
        return batch

    def _file(self, name: str, lines: list[dict[str, Any]]) -> str:
        self.files[name] = "".join(json.dumps(x) + "\n" for x in lines).encode()
        return name

    def route(self, request: httpx2.Request) -> httpx2.Response:
        path = request.url.path
        if request.method == "POST" and path == "/v1/files":
            content = request.content
            lines = [json.loads(x) for x in re.findall(rb'^\{"custom_id".*$', content, re.M)]
            file_id = f"file_in_{len(self.files)}"
            self.files[file_id] = content
            self._pending = [(x["custom_id"], x["body"]) for x in lines]
            assert all(x["url"] == "/v1/chat/completions" and x["method"] == "POST" for x in lines)
            return httpx2.Response(
                200,
                json={
                    "id": file_id,
                    "object": "file",
                    "bytes": len(content),
                    "created_at": 1_700_000_000,
                    "filename": "coderefine-batch.jsonl",
                    "purpose": "batch",
                    "status": "processed",
                },
            )
        if request.method == "POST" and path == "/v1/batches":
            sent = json.loads(request.content)
            assert sent["endpoint"] == "/v1/chat/completions" and sent["completion_window"] == "24h"
            self.created.append(self._pending)
            batch_id = f"batch_{len(self.created) - 1}"
            self.inputs[batch_id] = sent["input_file_id"]
            return httpx2.Response(200, json=self._batch(batch_id))
        found = re.fullmatch(r"/v1/batches/(batch_\d+)", path)
        if found:
            self.status_calls[found[1]] = self.status_calls.get(found[1], 0) + 1
            return httpx2.Response(200, json=self._batch(found[1]))
        found = re.fullmatch(r"/v1/files/([\w]+)/content", path)
        if found and found[1] in self.files:
            return httpx2.Response(200, content=self.files[found[1]])
        return httpx2.Response(404, json={"error": {"message": path, "type": "not_found"}})
