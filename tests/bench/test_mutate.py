from collections import Counter

import pytest

from coderefine.bench.mutate import apply, function_text, remove_body, sites

SOURCE = '''import math


def scale(value, factor=1000):
    """Divide by the factor."""
    if value < 0 and factor > 1:
        return -scale(-value, factor)
    result = value / factor
    items = []
    items.append(result)
    for item in items:
        total = math.floor(item)
        break
    return round(value, factor)


def pair(first, second):
    return divmod(first, second)
'''


def test_every_operator_proposes_sites_that_compile() -> None:
    found, functions = sites(SOURCE)
    operators = Counter(s.operator for s in found)
    assert set(operators) == {
        "constant",
        "boundary",
        "and-or",
        "swap-args",
        "variable",
        "drop-call",
        "move-exit",
    }
    for site in found:
        mutated = site.apply(SOURCE)
        compile(mutated, "mutant", "exec")
        assert mutated != SOURCE
        assert site.function in ("scale", "pair")
    assert [f.qualname for f in functions] == ["scale", "pair"]


@pytest.mark.parametrize(
    ("operator", "before", "after"),
    [
        ("constant", "factor=1000", "factor=1024"),
        ("boundary", "value < 0", "value <= 0"),
        ("and-or", "value < 0 and factor", "value < 0 or factor"),
        ("swap-args", "divmod(first, second)", "divmod(second, first)"),
    ],
)
def test_operators_read_as_plausible_code(operator: str, before: str, after: str) -> None:
    assert before in SOURCE
    mutants = [s.apply(SOURCE) for s in sites(SOURCE)[0] if s.operator == operator]
    for mutated in mutants:
        changed = [line for line in mutated.splitlines() if line not in SOURCE.splitlines()]
        assert len(changed) == 1, changed
    assert any(after in mutated for mutated in mutants)


def test_drop_and_move_keep_the_rest_of_the_file() -> None:
    found = sites(SOURCE)[0]
    dropped = next(s for s in found if s.operator == "drop-call").apply(SOURCE)
    assert "items.append(result)" not in dropped
    assert len(dropped.splitlines()) == len(SOURCE.splitlines()) - 1
    moved = next(s for s in found if s.operator == "move-exit").apply(SOURCE)
    lines = moved.splitlines()
    assert lines.index("        break") < lines.index("        total = math.floor(item)")


def test_two_sites_apply_together() -> None:
    found = sites(SOURCE)[0]
    first = next(s for s in found if s.function == "scale" and s.operator == "boundary")
    second = next(s for s in found if s.function == "pair")
    both = apply(SOURCE, [first, second])
    assert both == second.apply(first.apply(SOURCE))


def test_remove_body_keeps_signature_and_docstring() -> None:
    removed = remove_body(SOURCE, "scale")
    info = next(f for f in sites(removed)[1] if f.qualname == "scale")
    text = function_text(removed, info)
    assert text.startswith('def scale(value, factor=1000):\n    """Divide by the factor."""\n')
    assert text.rstrip().endswith("raise NotImplementedError")
    assert "def pair" in removed
    with pytest.raises(ValueError, match="no function"):
        remove_body(SOURCE, "missing")


def test_a_function_no_edit_could_be_found_by_has_no_mutation_site() -> None:
    """Two classes share an ``__init__`` word for word (pyflakes' messages), and a property's getter and
    setter share a name: a task built on either could not say which one it changed."""
    from coderefine.bench.mutate import sites

    init = "    def __init__(self, loc):\n        self.big = loc > 1\n\n\n"
    source = (
        f"class A:\n{init}class B:\n{init}"
        "class C:\n    @property\n    def size(self):\n        return self._size > 1\n\n"
        "    @size.setter\n    def size(self, value):\n        self._big = value > 1\n\n\n"
        "def alone(x):\n    return x > 1\n"
    )
    found, functions = sites(source)
    assert {f.qualname for f in functions} == {"alone"}
    assert found and {s.function for s in found} == {"alone"}
