from coderefine.signals.base import Signal, SignalSet, SourceStatus, compare, touched_lines


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


def test_touched_lines_are_the_inserted_and_replaced_lines_of_the_new_text() -> None:
    from coderefine.signals.base import touched_lines

    before = "a\nb\nc\nd\n"
    assert touched_lines(before, "# new\na\nb\nc\nd\n") == {1}
    assert touched_lines(before, "a\nB\nc\nd\n") == {2}
    assert touched_lines(before, "a\nc\nd\n") == {1, 2}  # b deleted: its neighbours closed up
    assert touched_lines(before, "a\nb\nc\nd\ne\n") == {5}
    assert touched_lines(before, "b\nc\nd\n") == {1}  # the first line deleted
    assert touched_lines(before, before) == frozenset()
    assert touched_lines("", "x\n") == {1}


def test_line_edits_of_one_line_in_a_big_file_and_of_many() -> None:
    from coderefine.signals.base import LineEdit, line_edits

    big = "".join(f"line {n}\n" for n in range(2000))
    assert line_edits(big, big.replace("line 1000\n", "LINE 1000\n")) == (LineEdit(1001, 1001, 1001, 1001),)
    twice = big.replace("line 10\n", "x\n").replace("line 1990\n", "y\n")
    assert [(e.old_first, e.new_first) for e in line_edits(big, twice)] == [(11, 11), (1991, 1991)]


def test_format_signal_matches_by_content_not_line_number() -> None:
    def fmt(line: int) -> Signal:
        return Signal(
            "format", "m.py", line, line + 1, "format", f"ruff format would rewrite lines {line}-{line + 1}",
            "info", anchor="x=1", detail="x = 1",
        )  # fmt: skip

    moved = compare(SignalSet((fmt(3),)), SignalSet((fmt(4),)))
    assert moved.introduced == () and moved.fixed == ()


def test_format_work_off_the_touched_lines_is_existing() -> None:
    from coderefine.signals.base import LineEdit, format_work

    signal = Signal("format", "m.py", 10, 12, "format", "ruff format would rewrite lines 10-12", "info")
    on_line = Signal("format", "m.py", 3, 3, "format", "ruff format would rewrite line 3", "info")
    inserted = (LineEdit(3, 2, 3, 3),)  # line 3 is new
    result = format_work(compare(None, SignalSet((signal, on_line))), {"m.py": inserted})
    assert result.introduced == (on_line,)
    assert result.existing == (signal,)


def test_an_edited_line_that_was_badly_formatted_before_is_old_debt() -> None:
    from coderefine.signals.base import LineEdit, format_work

    old = Signal("format", "m.py", 5, 5, "format", "ruff format would rewrite line 5", "info", detail="x + 1")
    new = Signal("format", "m.py", 5, 5, "format", "ruff format would rewrite line 5", "info", detail="x + 2")
    compared = compare(SignalSet((old,)), SignalSet((new,)))
    assert compared.introduced == (new,) and compared.fixed == (old,)
    result = format_work(compared, {"m.py": (LineEdit(5, 5, 5, 5),)})
    assert result.introduced == () and result.fixed == () and result.existing == (new,)


def test_touched_lines_are_numbered_as_python_numbers_them() -> None:
    # A form feed (a page break) is no line break for Python: the edit on its line 7 is line 7.
    before = "import os\n\x0c\n" + "".join(f"x{n} = {n}\n" for n in range(8))
    after = before.replace("x4 = 4", "x4 = 40")
    assert touched_lines(before, after) == {7}
