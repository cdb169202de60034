from coderefine.signals.base import Signal, SignalSet, SourceStatus, compare


def ruff(line: int, code: str = "F401", anchor: str = "import os") -> Signal:
    return Signal("ruff", "m.py", line, line, code, "unused", anchor=anchor)


def test_moved_diagnostic_is_not_new() -> None:
    before = SignalSet((ruff(1),), (SourceStatus("ruff", "ok"),))
    after = SignalSet((ruff(7),), (SourceStatus("ruff", "ok"),))
    result = compare(before, after)
    assert result.introduced == ()
    assert len(result.existing) == 1
    assert result.clean


def test_second_copy_of_old_diagnostic_is_new() -> None:
    before = SignalSet((ruff(1),))
    after = SignalSet((ruff(1), ruff(5)))
    result = compare(before, after)
    assert len(result.introduced) == 1


def test_fixed_signals_are_reported() -> None:
    result = compare(SignalSet((ruff(1), ruff(2, "E702", "x;y"))), SignalSet((ruff(1),)))
    assert [s.code for s in result.fixed] == ["E702"]


def test_failing_test_matched_by_node_id_not_message() -> None:
    old = Signal("pytest", "t.py", 3, 3, "t.py::test_a", "assert 1 == 2", "error")
    new = Signal("pytest", "t.py", 3, 3, "t.py::test_a", "assert 5 == 2", "error")
    assert compare(SignalSet((old,)), SignalSet((new,))).introduced == ()


def test_no_baseline_means_everything_is_introduced() -> None:
    result = compare(None, SignalSet((ruff(1),)))
    assert len(result.introduced) == 1


def test_missing_source_is_never_clean() -> None:
    result = compare(SignalSet(), SignalSet((), (SourceStatus("pytest", "timeout", "hung"),)))
    assert not result.clean
    assert result.missing()[0].source == "pytest"


def test_weight_orders_by_severity() -> None:
    error = Signal("pytest", "t.py", 1, 1, "t::x", "failed", "error")
    light = compare(None, SignalSet((ruff(1), ruff(2))))
    heavy = compare(None, SignalSet((error,)))
    assert heavy.weight() > light.weight()
