import pytest

from coderefine.refiner.critique import CritiqueError, locate_evidence, parse_critique

FILES = {"m.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"}


def issue(**fields: object) -> dict[str, object]:
    base: dict[str, object] = {
        "title": "wrong operator",
        "severity": "error",
        "path": "m.py",
        "line": 2,
        "end_line": 2,
        "evidence": "return a - b",
        "suggestion": "use +",
    }
    base.update(fields)
    return base


def test_a_valid_critique() -> None:
    critique = parse_critique({"verdict": "revise", "summary": "s", "issues": [issue()]}, "", FILES)
    assert critique.verdict == "revise"
    assert critique.issues[0].line == 2
    assert critique.repairs == ()


def test_lines_are_taken_from_the_evidence() -> None:
    critique = parse_critique(
        {"verdict": "revise", "summary": "", "issues": [issue(line=40, end_line=41)]}, "", FILES
    )
    assert (critique.issues[0].line, critique.issues[0].end_line) == (2, 2)
    assert "moved to 2" in critique.repairs[0]


def test_lines_beyond_the_file_are_clamped() -> None:
    critique = parse_critique(
        {"verdict": "revise", "summary": "", "issues": [issue(line=99, evidence="nowhere")]}, "", FILES
    )
    assert critique.issues[0].line == 6
    assert "outside the file" in critique.repairs[0]


def test_wrong_types_are_repaired_or_dropped() -> None:
    data = {
        "verdict": "REVISE",
        "summary": None,
        "issues": [issue(line="2", severity="High"), "not an object", issue(path="other.py")],
    }
    critique = parse_critique(data, "", {**FILES, "n.py": ""})
    assert len(critique.issues) == 1
    assert critique.issues[0].severity == "warning"
    assert any("dropped" in r for r in critique.repairs)


def test_missing_path_with_one_file_is_that_file() -> None:
    critique = parse_critique({"verdict": "revise", "summary": "", "issues": [issue(path=None)]}, "", FILES)
    assert critique.issues[0].path == "m.py"


def test_json_in_text_is_accepted() -> None:
    text = 'Here you go: {"verdict": "pass", "summary": "fine", "issues": []}'
    assert parse_critique(None, text, FILES).verdict == "pass"


@pytest.mark.parametrize(
    ("tool_input", "text", "message"),
    [
        (None, "I think it is fine.", "no report_critique call"),
        (None, '{"verdict": "pass", ', "no report_critique call|not valid JSON"),
        ({"summary": "no verdict"}, "", "'verdict' must be"),
        ({"verdict": "maybe"}, "", "'verdict' must be"),
        ({"verdict": "revise", "summary": "", "issues": "many"}, "", "'issues' must be a list"),
    ],
)
def test_unusable_critiques(tool_input: dict[str, object] | None, text: str, message: str) -> None:
    with pytest.raises(CritiqueError, match=message):
        parse_critique(tool_input, text, FILES)


def test_too_many_issues_are_capped() -> None:
    critique = parse_critique({"verdict": "revise", "summary": "", "issues": [issue()] * 50}, "", FILES)
    assert len(critique.issues) == 20


def test_locate_evidence_nearest() -> None:
    text = "x = 1\ny = 2\nx = 1\n"
    assert locate_evidence(text, "x = 1", 3) == (3, 3)
    assert locate_evidence(text, "", 1) is None


def test_edits_the_critic_attached_are_kept_apart_from_the_critique() -> None:
    blocks = (
        "m.py\n```python\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n```\n"
    )
    data = {"verdict": "revise", "summary": "s", "issues": [issue()], "edits": blocks}
    critique = parse_critique(data, "", FILES)
    assert critique.edits == blocks
    assert "edits" not in critique.as_data()  # the reviser and reports never see them as critique
    assert parse_critique({**data, "edits": 3}, "", FILES).edits == ""
    assert "edits was not text" in parse_critique({**data, "edits": 3}, "", FILES).repairs[-1]
    assert parse_critique({**data, "edits": None}, "", FILES).repairs == ()


def test_only_the_merged_tool_offers_edits() -> None:
    from coderefine.refiner.critique import CRITIQUE_TOOL, MERGED_CRITIQUE_TOOL

    assert "edits" not in CRITIQUE_TOOL.input_schema["properties"]
    assert "edits" in MERGED_CRITIQUE_TOOL.input_schema["properties"]
    assert "edits" not in MERGED_CRITIQUE_TOOL.input_schema["required"]
    assert MERGED_CRITIQUE_TOOL.name == CRITIQUE_TOOL.name


def test_lines_the_parser_moved_say_they_were_re_anchored() -> None:
    text = "".join(f"x{n} = {n}\n" for n in range(1, 301))
    text = text.replace("x244 = 244\nx245 = 245\n", "if total > limit:\n    total = limit\n")
    raw = {
        "verdict": "revise",
        "summary": "s",
        "issues": [
            {
                "title": "clamps wrongly",
                "severity": "error",
                "path": "m.py",
                "line": 236,
                "end_line": 257,
                "evidence": "if total > limit:\n    total = limit",
                "suggestion": "s",
            },
            {
                "title": "ok",
                "severity": "info",
                "path": "m.py",
                "line": 3,
                "evidence": "x3 = 3",
                "suggestion": "s",
            },
        ],
    }
    moved, kept = parse_critique(raw, "", {"m.py": text}).issues
    assert (moved.line, moved.end_line) == (244, 245)
    assert (
        moved.relocated
        == "re-anchored: the critic gave lines 236-257; moved to lines 244-245, where its evidence is"
    )
    assert moved.as_data()["relocated"] == moved.relocated
    assert kept.relocated == "" and "relocated" not in kept.as_data()


def test_the_definitions_a_critic_asks_to_see_are_read_from_the_tool_or_its_json() -> None:
    from coderefine.refiner.asks import MAX_NAMES
    from coderefine.refiner.critique import asked_names

    files = {"m.py": "def f():\n    return 1\n"}
    asked = {"verdict": "revise", "summary": "s", "issues": [], "show": ["`Box.shut`", "f", "f", "g", "h"]}
    critique = parse_critique(asked, "", files)
    assert critique.show == ("Box.shut", "f", "g")[:MAX_NAMES]
    assert asked_names(asked, "") == critique.show
    assert asked_names(None, 'Here: {"verdict": "pass", "summary": "", "issues": [], "show": "f"}') == ("f",)
    assert asked_names(None, "no json here") == () and asked_names({"verdict": "pass"}, "") == ()
    assert "show" not in critique.as_data()
