"""Split the files of a run into N shards, one per CI job: deterministic and balanced by size.

Every job of a matrix computes its own shard from the same list of files, so the split must not depend on
the order the files come in or on anything but the paths and their sizes. Greedy longest-processing-time:
files sorted by size (largest first, then path) go one by one into the lightest shard so far (fewest bytes,
then fewest files, then the lowest number). No shard ends up more than one file's size above the lightest.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Sequence

from coderefine.errors import UsageError

_SPEC = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/4"`` → ``(2, 4)``; a usage error that shows the form for anything else."""
    match = _SPEC.fullmatch(text)
    if match is None:
        raise UsageError(f"--shard '{text}': expected K/N, such as --shard 1/4 (shard K of N, from 1)")
    k, n = int(match.group(1)), int(match.group(2))
    if n < 1 or not 1 <= k <= n:
        raise UsageError(
            f"--shard '{text}': K must be between 1 and N, and N at least 1, such as --shard 1/{max(n, 1)}"
        )
    return k, n


def assign(files: Sequence[tuple[str, int]], n: int) -> list[list[str]]:
    """All N shards, each a sorted list of paths; a path given twice counts once, at its larger size."""
    if n < 1:
        raise ValueError(f"the number of shards must be at least 1, not {n}")
    sizes: dict[str, int] = {}
    for path, size in files:
        sizes[path] = max(size, sizes.get(path, 0), 0)
    bins: list[list[str]] = [[] for _ in range(n)]
    lightest = [(0, 0, index) for index in range(n)]  # (bytes, files, shard index)
    for path, size in sorted(sizes.items(), key=lambda item: (-item[1], item[0])):
        total, count, index = heapq.heappop(lightest)
        bins[index].append(path)
        heapq.heappush(lightest, (total + size, count + 1, index))
    return [sorted(paths) for paths in bins]


def shard_files(files: Sequence[tuple[str, int]], k: int, n: int) -> list[str]:
    """The paths of shard ``k`` of ``n`` (1-based) among ``files`` (path, size in bytes), sorted."""
    if not 1 <= k <= n:
        raise ValueError(f"shard {k}/{n}: K must be between 1 and N")
    return assign(files, n)[k - 1]
