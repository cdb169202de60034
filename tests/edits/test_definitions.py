import pytest

from coderefine.edits.blocks import EditError
from coderefine.edits.code_blocks import CodeBlock, parse_code_blocks
from coderefine.edits.definitions import apply_definitions, place

MODULE = '''"""Shapes."""

import math

SCALE = 2


def area(r):
    return math.pi * r * r


class Square:
    side = 1

    def __init__(self, side):
        self.side = side

    def area(self):
        return self.side + self.side

    def perimeter(self):
        return 4 * self.side


def untouched():
    return "same"
'''


def block(code: str, path: str = "shapes.py") -> CodeBlock:
    return CodeBlock(path, code, 1)


def test_a_function_replaces_the_top_level_definition_of_its_name() -> None:
    new = place(MODULE, block("def area(r):\n    return math.pi * r**2\n"))
    assert "return math.pi * r**2" in new
    assert new.replace("return math.pi * r**2", "return math.pi * r * r") == MODULE


def test_a_method_written_alone_replaces_the_method_of_the_one_class_that_has_it() -> None:
    new = place(MODULE, block("def perimeter(self):\n    return 4 * self.side + 0\n"))
    assert "        return 4 * self.side + 0\n" in new
    assert new.count("def perimeter") == 1


def test_a_name_that_is_top_level_wins_over_a_method_of_the_same_name() -> None:
    new = place(MODULE, block("def area(r):\n    return 0\n"))
    assert "    def area(self):\n        return self.side + self.side" in new


def test_a_partial_class_replaces_the_methods_it_has_and_keeps_the_others() -> None:
    code = "class Square:\n    def area(self):\n        return self.side * self.side\n"
    new = place(MODULE, block(code))
    assert "        return self.side * self.side\n" in new
    assert "def __init__(self, side)" in new and "def perimeter(self)" in new and "    side = 1\n" in new


def test_a_class_with_every_method_and_field_replaces_the_whole_class() -> None:
    code = (
        "class Square:\n    side = 2\n\n    def __init__(self, side):\n        self.side = side\n\n"
        "    def area(self):\n        return self.side**2\n\n"
        "    def perimeter(self):\n        return 4 * self.side\n"
    )
    new = place(MODULE, block(code))
    assert "side = 2" in new and "side = 1" not in new and "return self.side**2" in new


def test_a_class_that_leaves_out_a_field_is_partial_and_keeps_it() -> None:
    # Every method but not the field: a model that was shown the methods rewrote them, it did not mean to
    # delete the field (a fields-only dataclass given one new method lost all its fields).
    code = (
        "class Square:\n    def __init__(self, side):\n        self.side = side\n\n"
        "    def area(self):\n        return self.side**2\n\n"
        "    def perimeter(self):\n        return 4 * self.side\n"
    )
    new = place(MODULE, block(code))
    assert "    side = 1\n" in new and "return self.side**2" in new
    fields = "from dataclasses import dataclass\n\n\n@dataclass\nclass Config:\n    host: str = 'x'\n    port: int = 80\n"
    new = place(fields, block("class Config:\n    def url(self):\n        return self.host\n"))
    assert (
        "@dataclass\nclass Config:\n    host: str = 'x'\n    port: int = 80\n" in new
        and "def url(self)" in new
    )


def test_a_partial_class_keeps_its_bases_and_decorators_unless_it_writes_its_own() -> None:
    text = (
        "import abc\nfrom dataclasses import dataclass\n\n\n@dataclass(frozen=True)\n"
        "class Box(Base, metaclass=abc.ABCMeta):\n    w: int = 1\n\n"
        "    def area(self):\n        return self.w + self.w\n\n    def other(self):\n        return 1\n"
    )
    new = place(text, block("class Box:\n    def area(self):\n        return self.w * self.w\n"))
    assert "@dataclass(frozen=True)\nclass Box(Base, metaclass=abc.ABCMeta):\n" in new
    assert "return self.w * self.w" in new and "def other(self)" in new
    new = place(text, block("class Box(Other):\n    def area(self):\n        return 0\n"))
    assert "@dataclass(frozen=True)\nclass Box(Other):\n" in new


SCRIPT = (
    "import sys\n\nLIMIT = 3\n\n\ndef main(argv):\n    return len(argv) > LIMIT\n\n\n"
    'if __name__ == "__main__":\n    sys.exit(main(sys.argv))\n'
)


def test_the_one_function_of_a_script_written_alone_keeps_the_rest_of_the_script() -> None:
    # It names every definition of the file, but not its import, constant or __main__ block.
    new = place(SCRIPT, block("def main(argv):\n    return len(argv) >= LIMIT\n"))
    assert new == SCRIPT.replace("> LIMIT", ">= LIMIT")
    one_class = '"""Shapes."""\n\nimport math\n\n\nclass Circle:\n    def area(self):\n        return 1\n\n    def perimeter(self):\n        return 2\n'
    new = place(one_class, block("class Circle:\n    def area(self):\n        return math.pi\n"))
    assert new == one_class.replace("return 1", "return math.pi")


def test_a_block_with_all_of_the_file_is_the_whole_file_even_without_definitions() -> None:
    whole = SCRIPT.replace("LIMIT = 3\n\n\n", "LIMIT = 3\n\n\ndef helper():\n    return 1\n\n\n").replace(
        "> LIMIT", "> LIMIT + helper()"
    )
    assert place(SCRIPT, block(whole)) == whole
    # Reordered imports and a removed function: the whole file, as written.
    script = "import os\nimport sys\n\nprint(os.sep, sys.argv)\n"
    rewritten = "import sys\nimport os\n\nprint(sys.argv, os.sep)\n"
    assert place(script, block(rewritten)) == rewritten


def test_a_new_function_is_added_at_the_end_after_two_blank_lines() -> None:
    new = place(MODULE, block("def volume(r):\n    return r**3\n"))
    assert new.endswith('    return "same"\n\n\ndef volume(r):\n    return r**3\n')


def test_a_new_method_in_a_partial_class_is_added_to_that_class() -> None:
    new = place(MODULE, block("class Square:\n    def diagonal(self):\n        return self.side * 2**0.5\n"))
    assert "        return 4 * self.side\n\n    def diagonal(self):\n" in new


def test_an_import_is_added_once_after_the_imports() -> None:
    new = place(
        MODULE, block("import functools\nimport math\n\n\ndef area(r):\n    return math.tau * r * r / 2\n")
    )
    assert new.count("import math") == 1
    assert "import math\nimport functools\n" in new


def test_an_assignment_replaces_the_one_of_its_name() -> None:
    new = place(MODULE, block("SCALE = 3\n"))
    assert "SCALE = 3\n" in new and "SCALE = 2" not in new


def test_a_block_with_every_definition_but_not_all_of_the_file_is_placed_by_name() -> None:
    code = "import math\n\n\ndef area(r):\n    return 1\n\n\nclass Square:\n    pass\n\n\ndef untouched():\n    return 2\n"
    new = place(MODULE, block(code))
    # The docstring, SCALE and Square's methods stay; the two functions are replaced.
    assert new.startswith('"""Shapes."""') and "SCALE = 2" in new and "def perimeter(self)" in new
    assert "def area(r):\n    return 1\n" in new and "def untouched():\n    return 2\n" in new


def test_whole_mode_and_an_empty_file_take_the_block_as_the_file() -> None:
    assert place(MODULE, block("x = 1\n"), "whole") == "x = 1\n"
    assert place("", block("def f():\n    return 1\n")) == "def f():\n    return 1\n"


def test_line_endings_and_tabs_of_the_file_are_kept() -> None:
    text = "def f():\r\n\treturn 1\r\n\r\n\r\ndef g():\r\n\treturn 2\r\n"
    new = place(text, block("def f():\n    return 3\n"))
    assert new == "def f():\r\n\treturn 3\r\n\r\n\r\ndef g():\r\n\treturn 2\r\n"


def test_decorators_and_async_definitions_are_replaced_whole() -> None:
    text = "import functools\n\n\n@functools.cache\nasync def fetch(x):\n    return x\n"
    new = place(text, block("@functools.lru_cache\nasync def fetch(x):\n    return x + 1\n"))
    assert (
        "@functools.lru_cache\nasync def fetch(x):\n    return x + 1\n" in new
        and "@functools.cache" not in new
    )


@pytest.mark.parametrize(
    "code",
    [
        "def area(r):\n    # ... rest unchanged\n    return 0\n",
        "class Square:\n    # existing code\n    def area(self):\n        return 0\n",
    ],
)
def test_placeholders_are_refused(code: str) -> None:
    with pytest.raises(EditError, match="placeholder"):
        place(MODULE, block(code))


@pytest.mark.parametrize(
    "comment",
    [
        "# ...",
        "# rest of the function",
        "# other methods unchanged",
        "# (unchanged)",
        "# everything else as before",
    ],
)
def test_a_comment_standing_for_left_out_code_is_a_placeholder(comment: str) -> None:
    with pytest.raises(EditError, match="placeholder"):
        place(MODULE, block(f"def area(r):\n    {comment}\n    return 0\n"))


def test_a_comment_that_says_unchanged_about_a_value_is_no_placeholder() -> None:
    # The 1.5B's comment on a python-slugify task was refused as a placeholder.
    comment = "# Return the input list unchanged when an error occurs."
    new = place(MODULE, block(f"def area(r):\n    {comment}\n    return 0\n"))
    assert comment in new


def test_code_that_does_not_parse_is_refused_with_the_line() -> None:
    with pytest.raises(EditError, match=r"is not valid Python \(line 2, 'return 1': parser error"):
        place(MODULE, block("def area(r)\n    return 1\n"))


def test_a_statement_that_has_no_name_is_refused() -> None:
    with pytest.raises(EditError, match="cannot be placed by name"):
        place(MODULE, block("print('hello')\n"))


def test_a_method_of_several_classes_must_be_written_inside_its_class() -> None:
    text = (
        "class A:\n    def run(self):\n        return 1\n\n\nclass B:\n    def run(self):\n        return 2\n"
    )
    with pytest.raises(EditError, match=r"several classes \(A, B\)"):
        place(text, block("def run(self):\n    return 3\n"))


def test_blocks_are_read_with_their_paths_and_a_default() -> None:
    reply = (
        "Here is the fix.\n\npkg/a.py\n```python\ndef f():\n    return 1\n```\n\n"
        "```python pkg/b.py\ndef g():\n    return 2\n```\n```\nnot python\n```\n"
        "```text\nignored\n```\n"
    )
    blocks = parse_code_blocks(reply)
    assert [(b.path, b.code) for b in blocks[:2]] == [
        ("pkg/a.py", "def f():\n    return 1\n"),
        ("pkg/b.py", "def g():\n    return 2\n"),
    ]
    assert parse_code_blocks("```python\nx = 1\n```\n", default_path="only.py")[0].path == "only.py"


def test_a_reply_without_code_or_without_a_path_is_refused() -> None:
    with pytest.raises(EditError, match="no code block"):
        parse_code_blocks("I would change the function.")
    with pytest.raises(EditError, match="names no file"):
        parse_code_blocks("```python\nx = 1\n```\n")


def test_only_files_under_review_change_and_every_failure_is_reported() -> None:
    blocks = [CodeBlock("other.py", "x = 1\n", 1), CodeBlock("shapes.py", "def (\n", 2)]
    with pytest.raises(EditError) as caught:
        apply_definitions({"shapes.py": MODULE}, blocks, ["shapes.py"])
    assert [f.index for f in caught.value.failures] == [1, 2]
    changed = apply_definitions({"shapes.py": MODULE}, [block("SCALE = 5\n")], ["shapes.py"])
    assert list(changed) == ["shapes.py"] and "SCALE = 5" in changed["shapes.py"]


def test_a_fence_opened_twice_is_read_as_one_block() -> None:
    reply = "shapes.py\n```python\n```python\ndef area(r):\n    return r * r\n```\n```\n"
    [found] = parse_code_blocks(reply)
    assert found.code == "def area(r):\n    return r * r\n"
    # Its second closing line opens nothing: the prose and the next block after it are read as such.
    reply += "This multiplies the radius by itself.\n\nshapes.py\n```python\ndef perimeter(r):\n    return 2 * r\n```\n"
    first, second = parse_code_blocks(reply)
    assert first.code == found.code and (second.path, second.code) == (
        "shapes.py",
        "def perimeter(r):\n    return 2 * r\n",
    )


def test_a_fence_after_a_path_line_inside_a_block_is_no_code() -> None:
    # The 1.5B wrote a fence, the path, then the fence it meant (self-refine on a python-slugify task).
    for reply in (
        "```\nshapes.py\n```python\ndef area(r):\n    return r * r\n```\n",
        "```python\n`shapes.py`\n```python\ndef area(r):\n    return r * r\n```\n```\nThe radius squared.\n",
    ):
        [found] = parse_code_blocks(reply, default_path="other.py")
        assert (found.path, found.code) == ("shapes.py", "def area(r):\n    return r * r\n"), reply


def test_a_docstring_naming_the_file_is_code_not_a_path_line() -> None:
    reply = 'main.py\n```python\n"""main.py"""\n\nimport sys\n\n\ndef main():\n    return 2\n```\n'
    [found] = parse_code_blocks(reply)
    assert found.path == "main.py" and found.code.startswith('"""main.py"""\n')


def test_a_reply_cut_off_at_the_token_limit_is_refused_when_its_last_block_is_unfinished() -> None:
    function = (
        "def price(items, tax):\n    total = sum(items)\n    if total < 0:\n        raise ValueError(total)\n"
    )
    cut = f"shop.py\n```python\n{function}"
    with pytest.raises(EditError, match="cut off at the output token limit"):
        parse_code_blocks(cut, cut_off=True)
    with pytest.raises(EditError, match="cut off at the output token limit"):
        parse_code_blocks(function, default_path="shop.py", cut_off=True)
    # Not cut off, an unclosed fence ends with the reply; cut off after the fence closed, it is whole.
    assert parse_code_blocks(cut)[0].code == function
    assert parse_code_blocks(cut + "```\nThis checks the total and", cut_off=True)[0].code == function


def test_a_reply_of_bare_code_is_the_one_file_under_reviews_block() -> None:
    reply = (
        "The bug is the plus sign. Here is the corrected function:\n\n"
        "def area(self):\n    return self.side * self.side\n\n"
        "This multiplies the side by itself."
    )
    [found] = parse_code_blocks(reply, default_path="shapes.py")
    assert (found.path, found.code) == ("shapes.py", "def area(self):\n    return self.side * self.side\n\n")
    assert "return self.side * self.side" in place(MODULE, found, "definition")
    # With several files under review there is no telling which one it is for; prose is no code.
    with pytest.raises(EditError, match="no code block"):
        parse_code_blocks(reply)
    with pytest.raises(EditError, match="no code block"):
        parse_code_blocks("I would import math and change the function.", default_path="shapes.py")
    with pytest.raises(EditError, match="no code block"):
        parse_code_blocks("import math\nx = 1\n", default_path="shapes.py")  # defines nothing


def test_a_bare_reply_of_the_whole_file_keeps_what_stood_above_its_first_definition() -> None:
    reply = "Here is the corrected code:\n\n" + MODULE.split('"""Shapes."""\n\n', 1)[1].replace(
        "self.side + self.side", "self.side * self.side"
    )
    [found] = parse_code_blocks(reply, default_path="shapes.py")
    placed = place(MODULE, found, "definition")
    assert placed.startswith('"""Shapes."""\n') and "SCALE = 2" in placed
    assert "return self.side * self.side" in placed
    with pytest.raises(EditError, match="has no fence"):
        place(MODULE, found, "whole")


def test_a_bare_reply_with_prose_before_or_between_its_code() -> None:
    before = "class Square has a bug in area.\n\ndef area(r):\n    return r * r\n"
    assert parse_code_blocks(before, default_path="shapes.py")[0].code == "def area(r):\n    return r * r\n"
    between = "def area(r):\n    return r * r\n\nAnd also:\n\ndef untouched():\n    return 1\n"
    with pytest.raises(EditError, match="no code block"):
        parse_code_blocks(between, default_path="shapes.py")  # half of it would be applied unsaid


@pytest.mark.parametrize("first", ["`shapes.py`", "**shapes.py**", "shapes.py", "# shapes.py"])
def test_a_path_written_as_the_blocks_first_line_names_the_file(first: str) -> None:
    reply = f"```python\n{first}\ndef area(r):\n    return r * r\n```\n"
    [found] = parse_code_blocks(reply)
    assert found.path == "shapes.py"
    expected = "def area(r):\n    return r * r\n"
    assert found.code == (expected if not first.startswith("#") else f"{first}\n{expected}")


TEMPERATURE = (
    "class Temp:\n    def __init__(self):\n        self._c = 0\n\n    @property\n    def celsius(self):\n"
    "        return self._c\n\n    @celsius.setter\n    def celsius(self, value):\n        self._c = value\n"
)


def test_a_setter_replaces_the_setter_not_the_property_of_its_name() -> None:
    setter = "    @celsius.setter\n    def celsius(self, value):\n        self._c = max(value, -273)\n"
    new = place(TEMPERATURE, block("class Temp:\n" + setter))
    assert new == TEMPERATURE.replace("        self._c = value\n", "        self._c = max(value, -273)\n")
    # Written with its getter, both go in their places, in order.
    getter = "    @property\n    def celsius(self):\n        return round(self._c)\n\n"
    new = place(TEMPERATURE, block("class Temp:\n" + getter + setter))
    assert "return round(self._c)" in new and "max(value, -273)" in new and new.count("def celsius") == 2


def test_one_of_several_handlers_of_one_name_is_refused_unless_all_are_written() -> None:
    handlers = (
        "from functools import singledispatch\n\n\n@singledispatch\ndef show(x):\n    return 'obj'\n\n\n"
        "@show.register\ndef _(x: int):\n    return 'int'\n\n\n@show.register\ndef _(x: str):\n    return 'str'\n"
    )
    with pytest.raises(EditError, match=r"defines _, which is defined 2 times there.*write all 2 of them"):
        place(handlers, block("@show.register\ndef _(x: str):\n    return 'STR'\n"))
    both = "@show.register\ndef _(x: int):\n    return 'int'\n\n\n@show.register\ndef _(x: str):\n    return 'STR'\n"
    assert place(handlers, block(both)) == handlers.replace("return 'str'", "return 'STR'")


def test_a_complete_class_keeps_its_bases_decorators_and_docstring_where_it_writes_none() -> None:
    text = (
        "from dataclasses import dataclass\n\n\n@dataclass\nclass Point(Base):\n"
        '    """A point."""\n\n    x: int = 0\n\n    def norm(self):\n        return abs(self.x)\n'
    )
    new = place(text, block("class Point:\n    x: int = 0\n\n    def norm(self):\n        return self.x\n"))
    assert new.startswith("from dataclasses import dataclass\n\n\n@dataclass\nclass Point(Base):\n")
    assert '"""A point."""' in new and "        return self.x\n" in new


def test_a_file_of_comments_only_keeps_them_when_a_block_is_placed() -> None:
    header = "# Copyright the authors.\n# Licensed under the MIT licence.\n"
    new = place(header, block("from pkg.core import run\n"))
    assert new.startswith(header) and "from pkg.core import run\n" in new


def test_a_fence_opened_twice_and_closed_once_leaves_the_next_block_alone() -> None:
    reply = (
        "shapes.py\n```python\n```python\ndef area(r):\n    return r * r\n```\n"
        "```\ndef perimeter(r):\n    return 2 * r\n```\n"
    )
    first, second = parse_code_blocks(reply)
    assert "def area" in first.code and second.code == "def perimeter(r):\n    return 2 * r\n"
