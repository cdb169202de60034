"""How ``--batch`` gathers the calls of concurrent workers, and what it costs in wall time beyond the wait.

    python benchmarks/batch.py

W workers each make R calls in a row (a loop's rounds) through one ``BatchRun``, over an in-memory batch API
that ends a batch after two polls with a zero-second sleep, so the figures are coderefine's own overhead:
batches sent, requests per batch, and milliseconds per call. A real batch adds minutes per round.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from coderefine.models.base import Message, ModelReply, ModelRequest, Usage
from coderefine.models.batch import BatchRun
from coderefine.models.batch_api import BatchStatus, Outcome
from coderefine.models.batch_state import BatchStore
from coderefine.models.scripted import ScriptedModel


class MemoryBatches:
    name = "claude-sonnet-5-5"

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.polls: dict[str, int] = {}
        self.lock = threading.Lock()

    def params(self, request: ModelRequest) -> dict[str, Any]:
        return {"model": self.name, "text": request.prompt_text()}

    def create(self, items: Sequence[tuple[str, dict[str, Any]]]) -> str:
        with self.lock:
            self.batches.append([cid for cid, _ in items])
            return f"b{len(self.batches) - 1}"

    def status(self, batch_id: str) -> BatchStatus:
        with self.lock:
            self.polls[batch_id] = self.polls.get(batch_id, 0) + 1
            n = len(self.batches[int(batch_id[1:])])
            ended = self.polls[batch_id] > 2
        return BatchStatus(ended=ended, done=n if ended else 0, total=n)

    def results(self, batch_id: str, requests: Mapping[str, ModelRequest]) -> dict[str, Outcome]:
        return {cid: ModelReply("ok", Usage(1000, 100), self.name) for cid in requests}


def trial(workers: int, rounds: int) -> tuple[int, float, float]:
    backend = MemoryBatches()
    with tempfile.TemporaryDirectory() as folder:
        run = BatchRun(BatchStore(Path(folder) / "b.json"), workers=workers, gather=0.5, sleep=lambda s: None)
        model = run.wrap(ScriptedModel(name=backend.name), backend)

        def worker(w: int) -> None:
            for r in range(rounds):
                request = ModelRequest("critic", (), (Message.user(f"worker {w} round {r}"),), 100)
                model.complete(request)

        threads = [threading.Thread(target=worker, args=(w,)) for w in range(workers)]
        start = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - start
    sizes = [len(b) for b in backend.batches]
    return len(sizes), statistics.mean(sizes), wall * 1000 / (workers * rounds)


def main() -> None:
    import os
    import platform

    print(f"# --batch gathering ({platform.python_version()}, {os.cpu_count()} cores)")
    print("| workers | rounds | batches | requests per batch | ms per call (no wait) |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for workers, rounds in ((1, 3), (4, 3), (16, 3), (64, 3)):
        batches, per_batch, ms = trial(workers, rounds)
        print(f"| {workers} | {rounds} | {batches} | {per_batch:.1f} | {ms:.1f} |")


if __name__ == "__main__":
    main()
