"""A small local library whose tests use hypothesis: one test with a deadline that a busy machine
passes, property tests whose examples are drawn at random, an object without a repr and ``tmp_path`` in
failure messages. ``make_project`` writes it; the bench's determinism tests build suites from it."""

from __future__ import annotations

from pathlib import Path

MODULE = '''"""Small vector helpers."""

from pathlib import Path


class Vector:
    """A fixed-length vector of numbers."""

    def __init__(self, values):
        self.values = list(values)


def dot(first, second):
    """The dot product of two vectors of the same length; a ValueError for different lengths."""
    if len(first.values) != len(second.values):
        raise ValueError(f"Dimension mismatch: expected {len(first.values)}, got {len(second.values)}.")
    total = 0
    for left, right in zip(first.values, second.values):
        total += left * right
    return total


def scale(vector, factor):
    """A new vector: every value of ``vector`` times ``factor``."""
    return Vector([value * factor for value in vector.values])


def clamp(value, low, high):
    """Return ``value`` limited to the range from ``low`` to ``high``."""
    if value < low:
        return low
    if value > high:
        return high
    return value


def mean(values):
    """The arithmetic mean of ``values``; 0.0 for none."""
    if not values:
        return 0.0
    return sum(values) / len(values)


def save(vector, folder):
    """Write ``vector`` to ``folder/vector.txt``, one value a line; returns the file's path."""
    path = Path(folder) / "vector.txt"
    path.write_text("".join(f"{value}\\n" for value in vector.values))
    return path
'''

TESTS = """import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hypokit.core import Vector, clamp, dot, mean, save, scale

numbers = st.lists(st.integers(-1000, 1000), max_size=20)


def busy(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


# Deadline-sensitive: 10 ms of CPU per example passes a 25 ms deadline alone, not beside a CPU hog.
@settings(deadline=25, max_examples=30)
@given(numbers)
def test_dot_with_itself_is_not_negative(values):
    busy(0.01)
    vector = Vector(values)
    assert dot(vector, vector) >= 0, f"{vector!r} has a negative square"


# Example-sensitive: a wrong bound is found by some draws of a wide range and missed by others.
@given(st.integers(-10**6, 10**6), st.integers(-10**6, 10**6))
def test_clamp_stays_in_range(value, bound):
    low, high = bound, bound + 1000
    assert low <= clamp(value, low, high) <= high


@pytest.mark.parametrize(("value", "expected"), [(-5, 0), (0, 0), (5, 5), (10, 10), (11, 10)])
def test_clamp(value, expected):
    assert clamp(value, 0, 10) == expected


def test_dimension_mismatch():
    with pytest.raises(ValueError, match="expected 2, got 3"):
        dot(Vector([1, 2]), Vector([1, 2, 3]))


def test_dot():
    assert dot(Vector([1, 2, 3]), Vector([4, 5, 6])) == 32


@given(numbers, st.integers(-5, 5))
def test_scale(values, factor):
    vector = Vector(values)
    assert scale(vector, factor).values == [value * factor for value in values], f"{vector!r}"


def test_save(tmp_path):
    path = save(Vector([1, 2]), tmp_path)
    assert path.read_text() == "1\\n2\\n", f"{path} holds the wrong text"


@given(st.lists(st.integers(-1000, 1000), min_size=1))
def test_mean_between_min_and_max(values):
    assert min(values) <= mean(values) <= max(values)


def test_mean_of_nothing():
    assert mean([]) == 0.0
"""


def make_project(root: Path) -> Path:
    (root / "hypokit").mkdir(parents=True)
    (root / "hypokit" / "__init__.py").write_text("")
    (root / "hypokit" / "core.py").write_text(MODULE)
    (root / "tests").mkdir()
    (root / "tests" / "test_core.py").write_text(TESTS)
    (root / "pyproject.toml").write_text('[project]\nname = "hypokit"\nversion = "0"\n')
    return root
