"""The outline of what a view leaves out, in four forms from the fullest to the shortest."""

from __future__ import annotations

import ast

from coderefine.refiner.context import OUTLINE_SHARE, FileView, fit_views, folded, view_of
from coderefine.refiner.outline import definitions_of, outline_of

MODULE = """\
from typing import overload


@overload
def item(value: int) -> int: ...
@overload
def item(value: str) -> str: ...
def item(value):
    return value


class Box:
    def __init__(self, size):
        self.size = size

    def grow(self, by):
        return Box(self.size + by)

    def shrink(self, by):
        return Box(self.size - by)


def helper(a, *rest, key=None, **options):
    def inner():
        return a
    return inner
"""


def test_the_three_forms_keep_every_name_and_line_and_get_shorter() -> None:
    hidden = definitions_of(ast.parse(MODULE))
    full = outline_of(hidden)
    methods = outline_of(hidden, "methods")
    classes = outline_of(hidden, "classes")
    assert "16:     def grow(self, by)" in full and "23: def helper(a, *rest, key, **options)" in full
    assert "12: class Box: __init__:13, grow:16, shrink:19" in methods.splitlines()
    # Overloads share one line; a function nested in a function is left to its owner.
    assert "4, 6, 8: def item(value)" in methods.splitlines() and "inner" not in methods
    assert "12: class Box [3 methods]" in classes.splitlines()
    names = outline_of(hidden, "names")
    assert names == "item:4, Box:12[3 methods], helper:23"
    assert len(full) > len(methods) > len(classes) > len(names)


def test_the_names_form_packs_a_long_modules_functions_and_counts_a_shown_classs_hidden_methods() -> None:
    functions = "".join(f"def function_{n}(a, b):\n    return a\n\n\n" for n in range(60))
    body = "".join(f"        step_{n} = {n}\n" for n in range(12))
    box = "class Box:\n" + "".join(f"    def m{n}(self):\n{body}        return {n}\n\n" for n in range(4))
    text = functions + box
    start = text.splitlines().index("    def m2(self):") + 1
    view = view_of("m.py", text, [start], 1)
    names = folded(view, "names").outline.splitlines()
    assert all(len(line) <= 100 for line in names) and len(names) < 25
    assert names[0].startswith("function_0:1, function_1:5, ")
    assert names[-1].endswith(f"Box:{text.splitlines().index('class Box:') + 1}[3 methods]")


def test_a_method_of_a_class_shown_in_part_is_named_under_its_class() -> None:
    body = "".join(f"        step_{n} = {n}\n" for n in range(12))
    text = "class Box:\n" + "\n".join(f"    def m{n}(self):\n{body}        return 1\n" for n in range(6))
    start = text.splitlines().index("    def m3(self):") + 1
    view = view_of("m.py", text, [start + 2], 1)
    assert view.shows(start, start + 13) and not view.shows(2, 16)
    short = folded(view, "methods").outline.splitlines()
    assert short == ["1: class Box: m0:2, m1:17, m2:32, m4:62, m5:77"]


def test_a_long_modules_map_is_folded_before_the_code_the_evidence_points_at_is_dropped() -> None:
    classes = "\n\n".join(
        f"class C{n}:\n"
        + "".join(f"    def method_{m}(self, a, b, c):\n        return a\n\n" for m in range(12))
        for n in range(60)
    )
    text = classes + "\n\ndef target(x):\n    return x + 1\n"
    line = text.splitlines().index("def target(x):") + 1
    view = view_of("m.py", text, [line], 40)
    assert view.shows(line, line + 1) and len(view.outline) > 20_000
    budget = len(folded(view, "methods").outline) + 2_000
    fitted = fit_views({"m.py": view}, {"m.py": text}, {}, (), {"m.py": [line]}, {}, budget)["m.py"]
    assert fitted.shows(line, line + 1)  # the code stays; the map is shorter
    assert sum(len(fitted.excerpt_text(s)) for s in fitted.excerpts) + len(fitted.outline) <= budget
    # The map keeps to its share of the budget, in the fullest form that does.
    assert len(fitted.outline) <= budget // OUTLINE_SHARE < len(folded(view, "methods").outline)
    assert "1: class C0 [12 methods]" in fitted.outline
    assert FileView("m.py", text).whole
