"""A request's total: the sections that can be cut give way together, down to a floor each."""

from __future__ import annotations

from coderefine.refiner.allot import Flexible, allot, fit_sections
from coderefine.refiner.context import view_of
from coderefine.refiner.critique import CRITIQUE_TOOL, Critique, Issue
from coderefine.refiner.prompting import FACTS_FLOOR, PromptBuilder
from coderefine.refiner.spec import SpecSource
from coderefine.signals.base import Comparison, Signal, SourceStatus
from coderefine.signals.test_source import TestSources


def test_everything_fits_and_each_keeps_what_it_wants() -> None:
    assert allot(100, {"a": 30, "b": 50}, {"a": 10, "b": 10}) == {"a": 30, "b": 50}


def test_over_the_total_a_small_section_is_not_cut_and_the_large_ones_share_the_rest() -> None:
    shares = allot(100, {"small": 20, "large": 200, "larger": 400}, {})
    assert shares == {"small": 20, "large": 40, "larger": 40}


def test_a_floor_is_kept_even_past_the_total() -> None:
    shares = allot(50, {"a": 200, "b": 200, "c": 10}, {"a": 40, "b": 40, "c": 40})
    assert shares == {"a": 40, "b": 40, "c": 10}


def test_floors_first_then_an_even_split_of_what_is_left() -> None:
    shares = allot(300, {"a": 1_000, "b": 1_000}, {"a": 200, "b": 0})
    assert shares == {"a": 250, "b": 50}
    assert sum(shares.values()) == 300


def test_sections_are_rendered_again_only_when_cut() -> None:
    rendered: list[tuple[str, int | None]] = []

    def section(name: str, length: int) -> Flexible:
        def render(chars: int | None) -> str:
            rendered.append((name, chars))
            return "x" * (length if chars is None else min(length, chars))

        return Flexible(render, 10)

    flexible = {"short": section("short", 20), "long": section("long", 500)}
    whole = fit_sections(None, 0, {"fixed": "f" * 100}, flexible)
    assert len(whole["long"]) == 500 and len(whole["short"]) == 20
    rendered.clear()
    cut = fit_sections(220, 50, {"fixed": "f" * 100}, flexible)
    assert len(cut["short"]) == 20 and len(cut["long"]) == 50  # 220 - 50 - 100 - 20
    assert rendered == [("short", None), ("long", None), ("long", 50)]


FAILING = tuple(
    Signal(
        "pytest",
        "tests/test_m.py",
        10 + n,
        10 + n,
        f"tests/test_m.py::test_case{n}",
        f"AssertionError: case {n}",
        "error",
        detail=f"tests/test_m.py:{10 + n}: in test_case{n}\n    check({n})\nm.py:{n * 25 + 3}: in f{n}\n"
        + "".join(f"E   line {i} of a long explanation of what went wrong in case {n}\n" for i in range(30)),
    )
    for n in range(12)
)
TESTS = "import m\n\n\n" + "".join(
    f"def test_case{n}():\n" + "".join(f"    assert m.f{n}({i}) == {i} + {n}\n" for i in range(40)) + "\n\n"
    for n in range(12)
)
BODY = "".join(f"    step{i} = x * {i}\n" for i in range(20))
CODE = "".join(f"def f{n}(x):\n{BODY}    return x + {n}\n\n\n" for n in range(60))


def reviser_request(total: int | None) -> str:
    spec = SpecSource(TestSources({"tests/test_m.py": TESTS}.get), 1_200 * 4)
    prompts = PromptBuilder(1_000, spec=spec, request_chars=total)
    view = view_of("m.py", CODE, [1], 40)
    starts = [CODE.splitlines().index(f"def f{n}(x):") + 1 for n in (10, 20, 30, 40)]
    issues = tuple(Issue("bug", "error", "m.py", s + 3, s + 12, "step", "fix it") for s in starts)
    request = prompts.reviser(
        {"m.py": CODE},
        intent="fix the cases",
        critique=Critique("revise", "wrong", issues),
        comparison=Comparison(FAILING, (), (), (SourceStatus("pytest", "ok"),)),
        views={"m.py": view},
        room=6_000,
    )
    return "".join(b.text for b in request.system) + request.messages[0].text


# The tool every request lists counts in its total: it is input too.
TOOL = CRITIQUE_TOOL.chars()


def test_a_reviser_request_over_its_total_cuts_its_facts_and_keeps_every_section() -> None:
    uncut = reviser_request(None)
    total = len(uncut) + TOOL - 5_000
    cut = reviser_request(total)
    # Cut to about their share: the signals keep at least one failure whole.
    assert len(cut) + TOOL <= total + len(FAILING[0].detail)
    for part in ("kind=signals", "kind=test", "def f20(x):", "test_m.py::test_case0"):
        assert part in uncut and part in cut
    # Each kept its floor: the signals are cut at whole tests, counted, never left empty.
    assert cut.count("E   line") < uncut.count("E   line")
    assert "test_m.py::test_case11" in cut or "more signals not shown" in cut
    assert len(cut) > FACTS_FLOOR * 2


def test_a_request_within_its_total_is_the_request_without_one() -> None:
    uncut = reviser_request(None)
    assert reviser_request(len(uncut) + TOOL + 10) == uncut
    assert reviser_request(len(uncut) + 10) != uncut  # without room for the tool: cut


def test_a_section_its_renderer_makes_longer_than_its_share_is_made_again_within_it() -> None:
    """A renderer's budget bounds its own lines, and its note about the cut comes on top: tabulate's
    signals, cut 95 characters short of their want, came out 240 longer than uncut."""
    asked: list[int | None] = []

    def render(chars: int | None) -> str:
        asked.append(chars)
        lines = 70 if chars is None else min(70, chars // 10)
        note = "" if chars is None else "; 12 more lines cut to keep this request short, not shown: a b c"
        return "x" * 10 * lines + note

    cut = fit_sections(600, 0, {}, {"facts": Flexible(render, 100)})
    assert len(cut["facts"]) <= 600 and asked[:2] == [None, 600] and len(asked) == 3
