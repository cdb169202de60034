"""The rows of a timeline: a partition of the wall time, whatever the nesting of its spans."""

from __future__ import annotations

from coderefine.timings import Row, Span, Timeline, numbered, process_age, render, rows_data


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_rows_add_up_to_the_wall_time_with_nested_spans_and_gaps() -> None:
    clock = Clock()
    timeline = Timeline(clock, origin=0.0)
    clock.now = 1.0
    timeline.since_start("start-up")
    clock.now = 1.5  # a gap: "other"
    with timeline.phase("loop"):
        clock.now = 4.0
    # The loop's own spans, measured on the same clock, nest inside it.
    timeline.add([Span("signals", 1.75, 2.0), Span("critic", 2.0, 3.0), Span("signals", 3.0, 3.5)])
    clock.now = 4.25
    rows = timeline.rows()
    assert sum(r.seconds for r in rows) == 4.25
    assert [r.name for r in rows] == ["start-up", "other", "loop", "signals", "critic", "signals", "other"]
    assert dict(zip([r.name for r in rows][2:5], [r.seconds for r in rows][2:5], strict=True)) == {
        "loop": 0.75,
        "signals": 0.25,
        "critic": 1.0,
    }


def test_numbered_gathers_other_merges_neighbours_and_numbers_repeats() -> None:
    rows = [
        Row("a", 1.0),
        Row("other", 0.25),
        Row("a", 1.0),
        Row("b", 2.0),
        Row("a", 0.5),
        Row("other", 0.25),
    ]
    assert numbered(rows) == (Row("a 1", 2.0), Row("b", 2.0), Row("a 2", 0.5), Row("other", 0.5))


def test_spans_that_overlap_a_sibling_are_clipped_not_counted_twice() -> None:
    clock = Clock()
    timeline = Timeline(clock, origin=0.0)
    timeline.add([Span("a", 0.0, 2.0), Span("b", 2.0, 3.0), Span("c", 2.5, 3.5)])
    rows = timeline.rows(end=4.0)
    assert sum(r.seconds for r in rows) == 4.0


def test_render_and_data() -> None:
    rows = (Row("start-up", 0.2), Row("signals", 0.6), Row("other", 0.2))
    text = render(rows)
    assert text.startswith("timings: 1.00s wall")
    assert "signals" in text and "60.0%" in text
    assert rows_data(rows)[1] == {"phase": "signals", "seconds": 0.6}


def test_the_process_age_is_read_from_the_kernel() -> None:
    # This test's process started before this line ran: its age is positive and finite.
    assert 0.0 < process_age() < 24 * 3600
