import threading
from pathlib import Path

from coderefine.project.cache import ReviewCache, cache_key, content_hash


def test_key_is_stable_and_sensitive() -> None:
    base = {"path": "m.py", "after": content_hash("x = 1\n"), "model": "m"}
    assert cache_key(base) == cache_key(dict(reversed(list(base.items()))))
    assert cache_key(base) != cache_key({**base, "model": "other"})
    assert cache_key(base) != cache_key({**base, "after": content_hash("x = 2\n")})


def test_put_get_clear(tmp_path: Path) -> None:
    cache = ReviewCache(tmp_path / "cache", 10)
    assert cache.get("k") is None
    cache.put("k", {"status": "clean"})
    assert cache.get("k") == {"status": "clean"}
    assert len(cache) == 1
    assert cache.clear() == 1
    assert cache.get("k") is None


def test_damaged_entries_are_misses(tmp_path: Path) -> None:
    cache = ReviewCache(tmp_path, 10)
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "list.json").write_text("[1, 2]")
    assert cache.get("bad") is None and cache.get("list") is None


def test_bounded_least_recently_used_go_first(tmp_path: Path) -> None:
    import os

    cache = ReviewCache(tmp_path, 3)
    for n in range(3):
        cache.put(f"k{n}", {"n": n})
        os.utime(tmp_path / f"k{n}.json", (n, n))
    cache.get("k0")  # used now: k1 is the oldest
    cache.put("k3", {"n": 3})
    assert len(cache) == 3
    assert cache.get("k1") is None and cache.get("k0") is not None


def test_concurrent_writers_never_leave_a_broken_entry(tmp_path: Path) -> None:
    cache = ReviewCache(tmp_path, 1000)

    def write(n: int) -> None:
        for i in range(50):
            cache.put("shared", {"writer": n, "i": i, "pad": "x" * 1000})

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    entry = cache.get("shared")
    assert entry is not None and entry["i"] == 49
    assert [p.name for p in tmp_path.iterdir()] == ["shared.json"]
