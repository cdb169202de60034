"""The bench's `localized` column: did the first request show every line the bugs touch?"""

from __future__ import annotations

from coderefine.bench.localized import bug_lines, localized

START = "def a():\n    return 1\n\n\ndef b():\n    x = 1\n    return x - 1\n"


def test_the_lines_an_edit_changes_are_found_in_the_starting_file() -> None:
    changes = [("m.py", "    x = 1\n    return x - 1\n", "    x = 1\n    return x + 1\n")]
    assert bug_lines(changes, {"m.py": START}) == {"m.py": {7}}
    # An edit whose wrong text is not in the file says nothing.
    assert bug_lines([("m.py", "nowhere\n", "x\n")], {"m.py": START}) == {}


def test_localized_when_every_line_is_shown_whole_or_in_an_excerpt() -> None:
    lines = {"m.py": {7}, "n.py": {2}}
    assert localized(lines, {"m.py": (), "n.py": ((1, 3),)}) is True
    assert localized(lines, {"m.py": ((1, 5),), "n.py": ()}) is False
    assert localized(lines, {"m.py": ()}) is False  # a file the request never showed
    assert localized({}, {"m.py": ()}) is None and localized(lines, {}) is None
