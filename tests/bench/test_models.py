"""The oracle on a large module shown in part: it points where a critic that knows the bug would."""

from __future__ import annotations

from dataclasses import dataclass

from coderefine.bench.models import OracleModel, _hunks
from coderefine.models.base import Block, Message, ModelRequest

CLEAN = "def helper(x):\n    return x + 1\n"
MUTANT = "def helper(x):\n    return x + 2\n"
MODULE = "import os\n\n\n" + "\n".join(f"A{i} = {i}" for i in range(100)) + "\n\n\n" + CLEAN


@dataclass(frozen=True)
class FakeTask:
    path: str = "pkg/mod.py"
    kind: str = "bug"
    line: int = 1

    def oracle_edits(self) -> list[tuple[str, str]]:
        return [(MUTANT, CLEAN)]

    def clean_module(self) -> str:
        return MODULE

    def start_text(self, clean: str) -> str:
        return clean.replace(CLEAN, MUTANT)


def critic_request(shown: str) -> ModelRequest:
    return ModelRequest("critic", (Block("critic"),), (Message.user(shown),), 1000)


def test_the_critic_points_at_the_mutated_line_of_the_start_text() -> None:
    reply = OracleModel(FakeTask()).complete(critic_request(MODULE.replace(CLEAN, MUTANT)))
    assert reply.tool_input is not None and reply.tool_input["verdict"] == "revise"
    [issue] = reply.tool_input["issues"]
    assert issue["line"] == MODULE.splitlines().index("def helper(x):") + 2  # the return line


def test_a_function_named_only_in_the_outline_is_still_pointed_at() -> None:
    outline = "Outline of the definitions not shown:\n90: class Box\n106:     def helper(x)\n"
    reply = OracleModel(FakeTask()).complete(critic_request("import os\n" + outline))
    assert reply.tool_input is not None and reply.tool_input["verdict"] == "revise"
    assert reply.tool_input["issues"][0]["line"] > 100


def test_a_function_named_only_in_a_folded_outline_is_still_pointed_at() -> None:
    from coderefine.refiner.sections import fence

    for folded in ("chunked:12, helper:106, peekable:140", "90: class Box: grow:95, helper:106"):
        shown = "import os\n" + fence("outline", folded, "path=pkg/mod.py")
        reply = OracleModel(FakeTask()).complete(critic_request(shown))
        assert reply.tool_input is not None and reply.tool_input["verdict"] == "revise", folded
    # A name:number outside an outline (a slice in code) names no definition.
    reply = OracleModel(FakeTask()).complete(critic_request("import os\nrows[helper:10]\n"))
    assert reply.tool_input is not None and reply.tool_input["verdict"] == "pass"


def test_a_correct_function_in_full_passes() -> None:
    reply = OracleModel(FakeTask()).complete(critic_request(MODULE))
    assert reply.tool_input is not None and reply.tool_input["verdict"] == "pass"


def test_a_long_function_is_fixed_by_its_changed_lines_alone() -> None:
    """A reviser shown a window of a long function edits the lines it sees: so does the oracle."""
    body = "".join(f"    step{i} = {i}\n" for i in range(60))
    clean = "def long(x):\n" + body + "    return x + 1\n"
    mutant = clean.replace("return x + 1", "return x + 2")

    @dataclass(frozen=True)
    class LongTask(FakeTask):
        def oracle_edits(self) -> list[tuple[str, str]]:
            return [(mutant, clean)]

        def clean_module(self) -> str:
            return "import os\n\n\n" + clean

        def start_text(self, text: str) -> str:
            return text.replace(clean, mutant)

    window = "".join(mutant.splitlines(keepends=True)[40:])  # the last lines only, as a focused view
    reply = OracleModel(LongTask()).complete(
        ModelRequest("reviser", (Block("reviser"),), (Message.user(window),), 1000)
    )
    assert "<<<<<<< SEARCH\n    step59 = 59\n    return x + 2\n=======\n" in reply.text
    assert "def long" not in reply.text


def test_a_missing_line_is_quoted_by_a_line_beside_its_gap() -> None:
    from coderefine.bench.models import _first_difference

    right = "def f(rows):\n    for row in rows:\n        out.append(row)\n        result.append(out)\n\n    return result\n"
    wrong = right.replace("        result.append(out)\n", "")
    assert _first_difference(wrong, right) == "out.append(row)"  # the line at the gap is blank
    moved = right.replace(
        "        result.append(out)\n\n    return result\n", "\n    return result\n    x = 1\n"
    )
    assert _first_difference(moved, right) in {"out.append(row)", "return result"}


def test_release_pieces_stay_unique_as_they_are_applied_in_turn() -> None:
    """The first piece's new text repeats the second piece's old text: the second piece takes more
    context, so that every SEARCH matches once in the file as it is when that block is applied."""
    wrong = "x\np\ny\nm\nx\nq\ny\n"
    right = "x\nq\ny\nm\nx\nr\ny\n"
    start = "head\n" + wrong + "tail\n"
    text = start
    pieces = _hunks(wrong, right, start)
    assert len(pieces) == 2
    for search, replace in pieces:
        assert text.count(search) == 1, (search, text)
        text = text.replace(search, replace)
    assert text == "head\n" + right + "tail\n"


def test_the_oracle_reviser_of_a_release_task_writes_blocks_that_apply_in_turn() -> None:
    """The reviser's blocks are the release pieces themselves, not pieces split again against the
    starting text (where a later one would match twice once the earlier ones are in)."""
    from coderefine.edits.blocks import apply_edits, parse_edit_blocks

    wrong = "x\np\ny\nm\nx\nq\ny\n"
    right = "x\nq\ny\nm\nx\nr\ny\n"
    start = "head\n" + wrong + "tail\n"

    @dataclass(frozen=True)
    class Release:
        path: str = "pkg/mod.py"
        kind: str = "release"

        def oracle_edits(self) -> list[tuple[str, str]]:
            return [(wrong, right)]

        def clean_module(self) -> str:
            return start.replace(wrong, right)

        def start_text(self, clean: str) -> str:
            return clean.replace(right, wrong)

    reply = OracleModel(Release()).complete(
        ModelRequest("reviser", (Block("reviser"),), (Message.user(start),), 1000)
    )
    files = apply_edits({"pkg/mod.py": start}, parse_edit_blocks(reply.text), ["pkg/mod.py"])
    assert files["pkg/mod.py"] == "head\n" + right + "tail\n"


def test_pieces_count_overlapping_matches_as_an_edit_block_does() -> None:
    """``b\\nb\\n`` matches twice in ``b\\nb\\nb\\n``: a piece with it is widened until it matches once."""
    wrong = "b\nb\nc\nc\nc\nb\n"
    right = "b\nB\nc\nc\nc\nb\n"
    start = "c\nb\nb\nb\nc\nc\nc\nb\na\na\n".replace("b\nb\nc\nc\nc\nb\n", wrong, 1)
    text = start
    for search, replace in _hunks(wrong, right, start):
        lines, needle = text.splitlines(), search.splitlines()
        hits = [i for i in range(len(lines) - len(needle) + 1) if lines[i : i + len(needle)] == needle]
        assert len(hits) == 1, (search, text)
        text = text.replace(search, replace, 1)
    assert text == start.replace(wrong, right, 1)


def test_a_function_whose_text_is_twice_in_the_file_is_fixed_where_the_task_is() -> None:
    """yamale 6.0.0: a dropped call in one class's __init__ left it the same as another's."""
    same = "    def __init__(self):\n        pass\n"
    clean = "class A:\n" + same + "\n\nclass B:\n    def __init__(self):\n        setup()\n        pass\n"

    @dataclass(frozen=True)
    class Twice(FakeTask):
        line: int = 7

        def oracle_edits(self) -> list[tuple[str, str]]:
            return [(same, "    def __init__(self):\n        setup()\n        pass\n")]

        def clean_module(self) -> str:
            return clean

        def start_text(self, text: str) -> str:
            return text.replace("        setup()\n", "")

    start = Twice().start_text(clean)
    reply = OracleModel(Twice()).complete(
        ModelRequest("reviser", (Block("reviser"),), (Message.user(start),), 1000)
    )
    assert "<<<<<<< SEARCH\nclass B:\n    def __init__(self):\n        pass\n=======\n" in reply.text
    critique = OracleModel(Twice()).complete(critic_request(start)).tool_input
    assert critique is not None and critique["issues"][0]["line"] >= 6
