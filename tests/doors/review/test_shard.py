"""Splitting a run's files into shards: deterministic, a partition, balanced, independent of input order."""

from __future__ import annotations

import random

import pytest

from coderefine.doors.review.shard import assign, parse_shard, shard_files
from coderefine.errors import UsageError


def sample(seed: int, count: int) -> list[tuple[str, int]]:
    rng = random.Random(seed)
    return [(f"pkg/m{i:03d}.py", rng.choice([0, 10, 100, rng.randrange(1, 50_000)])) for i in range(count)]


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("n", [1, 2, 3, 4, 7])
def test_every_file_is_in_exactly_one_shard_and_shards_are_balanced(seed: int, n: int) -> None:
    files = sample(seed, random.Random(seed).randrange(0, 60))
    shards = [shard_files(files, k, n) for k in range(1, n + 1)]
    every = [path for shard in shards for path in shard]
    assert sorted(every) == sorted(path for path, _ in files)
    assert len(every) == len(set(every))
    sizes = dict(files)
    totals = [sum(sizes[p] for p in shard) for shard in shards]
    largest = max(sizes.values(), default=0)
    assert max(totals) - min(totals) <= largest  # the bound of longest-processing-time first


@pytest.mark.parametrize("seed", range(10))
def test_the_split_ignores_the_input_order_and_repeats(seed: int) -> None:
    files = sample(seed, 40)
    shuffled = files[:]
    random.Random(seed + 100).shuffle(shuffled)
    assert assign(files, 4) == assign(shuffled, 4) == assign(list(reversed(files)), 4)
    assert [shard_files(files, k, 4) for k in range(1, 5)] == assign(files, 4)


def test_files_of_equal_size_spread_by_count_and_path() -> None:
    files = [(f"f{i}.py", 100) for i in range(8)]
    assert assign(files, 4) == [
        ["f0.py", "f4.py"],
        ["f1.py", "f5.py"],
        ["f2.py", "f6.py"],
        ["f3.py", "f7.py"],
    ]
    empty = [(f"e{i}.py", 0) for i in range(5)]
    assert [len(s) for s in assign(empty, 2)] == [3, 2]  # empty files still spread


def test_one_big_file_gets_a_shard_of_its_own() -> None:
    files = [("big.py", 10_000), *((f"s{i}.py", 10) for i in range(9))]
    assert shard_files(files, 1, 2) == ["big.py"]
    assert len(shard_files(files, 2, 2)) == 9


def test_more_shards_than_files_leaves_some_empty() -> None:
    shards = assign([("a.py", 5), ("b.py", 3)], 4)
    assert shards == [["a.py"], ["b.py"], [], []]


def test_a_path_given_twice_counts_once() -> None:
    assert assign([("a.py", 1), ("a.py", 9), ("b.py", 5)], 2) == [["a.py"], ["b.py"]]


@pytest.mark.parametrize("text", ["1/4", "4/4", " 2 / 3 ", "1/1"])
def test_parse_shard_accepts_k_of_n(text: str) -> None:
    k, n = parse_shard(text)
    assert 1 <= k <= n


@pytest.mark.parametrize("text", ["0/4", "5/4", "1/0", "a/b", "1", "-1/4", "1/4/2", ""])
def test_parse_shard_refuses_anything_else_with_the_form(text: str) -> None:
    with pytest.raises(UsageError, match="--shard 1/"):
        parse_shard(text)


def test_shard_files_refuses_a_k_outside_n() -> None:
    with pytest.raises(ValueError):
        shard_files([("a.py", 1)], 3, 2)
    with pytest.raises(ValueError):
        assign([], 0)
