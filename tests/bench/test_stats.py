from coderefine.bench.stats import compare, mcnemar_exact, rate_cell, wilson


def test_wilson_matches_published_values() -> None:
    low, high = wilson(8, 10)
    assert round(low, 3) == 0.490 and round(high, 3) == 0.943
    assert wilson(0, 0) == (0.0, 1.0)
    low, high = wilson(0, 20)
    assert low == 0.0 and 0.16 < high < 0.17
    assert wilson(0, 3)[0] == 0.0 and wilson(7, 7)[1] == 1.0  # exact, not 1e-17 away


def test_mcnemar_exact() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(0, 6) == 2 / 64
    assert mcnemar_exact(3, 3) == 1.0
    assert 0.2 < mcnemar_exact(1, 5) < 0.25


def test_compare_says_no_difference_when_the_test_cannot_tell() -> None:
    fixed = {
        "a": {str(i): i < 12 for i in range(20)},
        "b": {str(i): i < 10 for i in range(20)},
        "c": {str(i): False for i in range(20)},
    }
    pairs = {(c.first, c.second): c for c in compare(fixed)}
    assert pairs["a", "b"].verdict == "no difference shown"
    assert (pairs["a", "b"].only_first, pairs["a", "b"].only_second) == (2, 0)
    assert pairs["a", "c"].verdict.startswith("a better")


def test_rate_cell() -> None:
    assert rate_cell(1, 2) == "1/2 50% [9-91]"
    assert rate_cell(0, 0) == "-"
