import pytest
from hypothesis import given
from hypothesis import strategies as st

from coderefine.edits.blocks import (
    EXAMPLE_PATH,
    EditBlock,
    EditError,
    apply_block,
    apply_edits,
    parse_edit_blocks,
    resolve_path,
)

SOURCE = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
FIX = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"


def reply(body: str) -> str:
    return "Here is the fix.\n\n" + body + "\nThat fixes the sign.\n"


CANONICAL = """pkg/mod.py
```python
<<<<<<< SEARCH
    return a - b
=======
    return a + b
>>>>>>> REPLACE
```
"""


@pytest.mark.parametrize(
    "body",
    [
        CANONICAL,
        # the name inside the fence
        "```python\npkg/mod.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n```\n",
        # the name on the fence line
        "```python pkg/mod.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n```\n",
        # decorated names
        "**pkg/mod.py**\n```python\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n```\n",
        "`pkg/mod.py`:\n```\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n```\n",
        "# pkg/mod.py\n```python\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n```\n",
        # no fence at all, longer markers, old labels
        "pkg/mod.py\n<<<<<<<< SEARCH\n    return a - b\n========\n    return a + b\n>>>>>>>> REPLACE\n",
        "pkg/mod.py\n```python\n<<<<<<< ORIGINAL\n    return a - b\n=======\n    return a + b\n>>>>>>> UPDATED\n```\n",
        "pkg/mod.py\n```python\n<<<<<<< HEAD\n    return a - b\n=======\n    return a + b\n>>>>>>> updated\n```\n",
    ],
)
def test_accepted_variations(body: str) -> None:
    [block] = parse_edit_blocks(reply(body))
    assert block.path == "pkg/mod.py"
    assert apply_edits({"pkg/mod.py": SOURCE}, [block], ["pkg/mod.py"]) == {"pkg/mod.py": FIX}


def test_missing_name_uses_previous_or_default() -> None:
    body = (
        CANONICAL
        + "\n```python\n<<<<<<< SEARCH\n    return a * b\n=======\n    return b * a\n>>>>>>> REPLACE\n```\n"
    )
    blocks = parse_edit_blocks(body)
    assert [b.path for b in blocks] == ["pkg/mod.py", "pkg/mod.py"]
    nameless = (
        "```python\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n```\n"
    )
    assert parse_edit_blocks(nameless, default_path="only.py")[0].path == "only.py"
    with pytest.raises(EditError, match="names no file"):
        parse_edit_blocks(nameless)


def test_no_blocks_is_an_empty_list() -> None:
    assert parse_edit_blocks("The code is fine as it is.") == []


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("m.py\n<<<<<<< SEARCH\nx = 1\n>>>>>>> REPLACE\n", "no '======='"),
        ("m.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n", "no '>>>>>>> REPLACE'"),
        (
            "m.py\n<<<<<<< SEARCH\nx = 1\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n",
            "no '======='",
        ),
    ],
)
def test_malformed_blocks_are_refused(body: str, message: str) -> None:
    with pytest.raises(EditError, match=message):
        parse_edit_blocks(body)


def test_search_that_misses_quotes_the_closest_lines() -> None:
    block = EditBlock("m.py", "    return a - c\n", "    return a + c\n", 1)
    with pytest.raises(EditError) as info:
        apply_block(SOURCE, block)
    feedback = info.value.feedback()
    assert "does not match" in feedback
    assert "    2 |     return a - b" in feedback


def test_search_that_matches_twice_is_refused() -> None:
    text = "x = 1\ny = 2\nx = 1\n"
    with pytest.raises(EditError, match="matches 2 places"):
        apply_block(text, EditBlock("m.py", "x = 1\n", "x = 3\n", 1))


def test_whitespace_tolerant_retry_reindents() -> None:
    text = "class A:\n    def f(self):\n        return 1\n"
    block = EditBlock("m.py", "def f(self):\n    return 1\n", "def f(self):\n    return 2\n", 1)
    assert apply_block(text, block) == "class A:\n    def f(self):\n        return 2\n"


def test_trailing_whitespace_is_tolerated() -> None:
    text = "x = 1   \ny = 2\n"
    assert apply_block(text, EditBlock("m.py", "x = 1\n", "x = 3\n", 1)) == "x = 3\ny = 2\n"


def test_crlf_and_missing_final_newline_are_kept() -> None:
    text = "a = 1\r\nb = 2"
    assert apply_block(text, EditBlock("m.py", "b = 2\n", "b = 3\n", 1)) == "a = 1\r\nb = 3"
    assert apply_block(text, EditBlock("m.py", "a = 1\n", "a = 0\nz = 9\n", 1)) == "a = 0\r\nz = 9\r\nb = 2"


def test_empty_search_creates_a_file_but_never_overwrites_one() -> None:
    assert apply_block("", EditBlock("new.py", "", "x = 1\n", 1)) == "x = 1\n"
    with pytest.raises(EditError, match="SEARCH is empty"):
        apply_block("x = 1\n", EditBlock("m.py", "", "y = 1\n", 1))


def test_paths_not_under_review_are_refused_all_at_once() -> None:
    blocks = [EditBlock("other.py", "a\n", "b\n", 1), EditBlock("m.py", "nope\n", "b\n", 2)]
    with pytest.raises(EditError) as info:
        apply_edits({"m.py": "x = 1\n"}, blocks, ["m.py"])
    assert [f.index for f in info.value.failures] == [1, 2]
    assert "not under review" in str(info.value)


def test_fake_markers_inside_code_do_not_confuse_search() -> None:
    # A line in the file that looks like a marker is matched as text within SEARCH.
    text = 'doc = """\n>>>>>>> REPLACE? no\n"""\nx = 1\n'
    assert apply_block(text, EditBlock("m.py", "x = 1\n", "x = 2\n", 1)).endswith("x = 2\n")


lines = st.lists(st.text(alphabet="abc =()", min_size=0, max_size=8), min_size=1, max_size=12)


@given(lines, st.data())
def test_apply_then_inverse_round_trips(file_lines: list[str], data: st.DataObject) -> None:
    text = "".join(f"{i}:{line}\n" for i, line in enumerate(file_lines))  # unique lines
    numbered = text.splitlines(keepends=True)
    start = data.draw(st.integers(0, len(numbered) - 1))
    end = data.draw(st.integers(start + 1, len(numbered)))
    search = "".join(numbered[start:end])
    replace = "".join(f"new{i}:{line}\n" for i, line in enumerate(data.draw(lines)))
    changed = apply_block(text, EditBlock("m.py", search, replace, 1))
    assert apply_block(changed, EditBlock("m.py", replace, search, 1)) == text


def test_a_path_off_by_its_folders_or_the_examples_own_means_the_file_under_review() -> None:
    allowed = ["slugify/special.py", "slugify/slugify.py"]
    assert resolve_path("slugify/special.py", allowed) == "slugify/special.py"
    assert resolve_path("special.py", allowed) == "slugify/special.py"
    assert resolve_path("path/special.py", allowed) == "slugify/special.py"
    # The example path of the rules means the one file under review, and only when there is one.
    assert resolve_path(EXAMPLE_PATH, ["slugify/special.py"]) == "slugify/special.py"
    assert resolve_path(EXAMPLE_PATH, allowed) == EXAMPLE_PATH
    # Two files of that name, or none: the path stays, and is refused as not under review.
    assert resolve_path("util.py", ["a/util.py", "b/util.py"]) == "util.py"
    assert resolve_path("tests/test_special.py", allowed) == "tests/test_special.py"
    # A folder that contradicts the one under review names another file: never written into this one.
    assert resolve_path("pkg/sub/__init__.py", ["pkg/__init__.py"]) == "pkg/sub/__init__.py"
    assert resolve_path("cart/views.py", ["shop/views.py"]) == "cart/views.py"
    assert resolve_path("path/relative/to/special.py", allowed) == "slugify/special.py"
    block = EditBlock("special.py", "x = 1\n", "x = 2\n", 1)
    assert apply_edits({"slugify/special.py": "x = 1\n"}, [block], ["slugify/special.py"]) == {
        "slugify/special.py": "x = 2\n"
    }
