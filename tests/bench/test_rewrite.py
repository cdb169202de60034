"""The behaviour-preserving rewrites of review tasks: each keeps what the function returns."""

from __future__ import annotations

from typing import Any

import pytest

from coderefine.bench.rewrite import EXTRACT, INVERT, RENAME, intent_for, rewrite_function

SOURCE = '''
def words(text, limit=3):
    """The first words."""
    parts = text.split()
    if len(parts) > limit and limit >= 0:
        parts = parts[:limit]
    else:
        extra = 1
    return " ".join(parts)


class Box:
    def chunks(self, items, size):
        found = []
        for start in range(0, len(items), size):
            found.append(items[start : start + size])
        if found == []:
            return None
        else:
            return found.count(dict(found=1))


def parts(value):
    return value
'''


def run(text: str, name: str, *args: Any) -> Any:
    scope: dict[str, Any] = {}
    exec(compile(text, "<test>", "exec"), scope)
    target = scope[name] if "." not in name else getattr(scope[name.split(".")[0]](), name.split(".")[1])
    return target(*args)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_rewrite_keeps_behaviour_and_changes_lines(seed: int) -> None:
    done = rewrite_function(SOURCE, "words", seed)
    assert done.kinds == (RENAME, EXTRACT, INVERT)
    assert done.text != SOURCE
    for text in ("a b c d", "a", ""):
        for limit in (-1, 0, 2, 5):
            assert run(done.text, "words", text, limit) == run(SOURCE, "words", text, limit)
    # Only the function was touched: the module-level `parts` function and the class are as they were.
    assert done.text.split("class Box")[1] == SOURCE.split("class Box")[1]


def test_a_method_keeps_attributes_keywords_and_parameters() -> None:
    done = rewrite_function(SOURCE, "Box.chunks", 0)
    assert RENAME in done.kinds and INVERT in done.kinds
    assert "def chunks(self, items, size):" in done.text
    assert "dict(found=1)" in done.text  # a keyword is not a local
    assert "!= []" in done.text  # `==` inverts to `!=`, not to `not (... == ...)`
    for items, size in (([1, 2, 3], 2), ([], 3)):
        assert run(done.text, "Box.chunks", items, size) == run(SOURCE, "Box.chunks", items, size)


def test_new_names_shadow_nothing_in_the_module() -> None:
    done = rewrite_function("value = 1\n\ndef f(a):\n    b = a + value\n    return b\n", "f", 0)
    assert "value = 1\n" in done.text
    assert run(done.text, "f", 2) == 3
    taken = "index = 0\n\ndef f(a):\n    idx = a + index\n    return idx\n"
    done = rewrite_function(taken, "f", 0, only=frozenset((RENAME,)))
    assert "f_idx = a + index" in done.text and run(done.text, "f", 2) == 2


def test_a_parameter_assigned_again_keeps_its_name() -> None:
    text = "def ordinal(number):\n    number = abs(number)\n    suffix = 'th' if number > 3 else 'st'\n    return suffix\n"
    done = rewrite_function(text, "ordinal", 0, only=frozenset((RENAME,)))
    assert "def ordinal(number):" in done.text and "number = abs(number)" in done.text
    assert "ordinal_suffix = " in done.text
    assert run(done.text, "ordinal", -5) == run(text, "ordinal", -5)


def test_renamed_locals_say_no_less_than_before() -> None:
    """A rename never swaps a name for a vaguer word (``value``, ``current``, ``entry``): it spells out
    an abbreviation or qualifies the name by the function's, and the intent claims only that."""
    text = "def total_of(items):\n    acc = 0\n    for idx in range(len(items)):\n        acc += items[idx]\n    return acc\n"
    done = rewrite_function(text, "total_of", 0, only=frozenset((RENAME,)))
    assert "for index in range(len(items)):" in done.text and "total_acc = 0" in done.text
    assert not done.spelled_out
    assert run(done.text, "total_of", [1, 2]) == 3
    spelled = rewrite_function("def f(a):\n    idx = a\n    return idx\n", "f", 0, only=frozenset((RENAME,)))
    assert "index = a" in spelled.text and spelled.spelled_out
    for seed in range(5):
        renamed = rewrite_function(SOURCE, "words", seed).text
        assert all(f" {vague} = " not in renamed for vague in ("value", "current", "entry", "item", "tmp"))
    assert "spell out abbreviated local names" in intent_for("f", (RENAME,), 1, spelled_out=True)


def test_a_function_that_reads_its_locals_by_name_is_left_alone() -> None:
    text = "def f(a):\n    b = a\n    return '%(b)s' % locals()\n"
    assert rewrite_function(text, "f", 0).kinds == ()
    assert rewrite_function(text, "missing", 0).text == text


def test_the_same_seed_makes_the_same_choices() -> None:
    assert rewrite_function(SOURCE, "words", 7) == rewrite_function(SOURCE, "words", 7)
    assert intent_for("words", (RENAME,), 1).endswith(
        "`words()`: more specific local names; no behaviour change."
    )
