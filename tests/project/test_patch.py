import pytest

from coderefine.errors import PatchError
from coderefine.project.patch import apply_patch, parse_patch

OLD = "a\nb\nc\nd\n"
NEW = "a\nB\nc\nd\ne\n"
DIFF = """\
diff --git a/m.py b/m.py
--- a/m.py
+++ b/m.py
@@ -1,4 +1,5 @@
 a
-b
+B
 c
 d
+e
"""


def test_parse_and_apply() -> None:
    [patch] = parse_patch(DIFF)
    assert patch.path == "m.py"
    assert apply_patch(patch, OLD) == NEW


def test_reverse_apply() -> None:
    [patch] = parse_patch(DIFF)
    assert apply_patch(patch.reversed(), NEW) == OLD


def test_apply_with_offset() -> None:
    [patch] = parse_patch(DIFF)
    assert apply_patch(patch, "x\ny\n" + OLD) == "x\ny\n" + NEW


def test_crlf_file_keeps_crlf() -> None:
    [patch] = parse_patch(DIFF)
    assert apply_patch(patch, OLD.replace("\n", "\r\n")) == NEW.replace("\n", "\r\n")


def test_new_file() -> None:
    diff = "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+x = 1\n+y = 2\n"
    [patch] = parse_patch(diff)
    assert patch.old_path is None
    assert apply_patch(patch, "") == "x = 1\ny = 2\n"


def test_no_newline_at_end() -> None:
    diff = "--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x = 1\n\\ No newline at end of file\n+x = 2\n\\ No newline at end of file\n"
    [patch] = parse_patch(diff)
    assert apply_patch(patch, "x = 1") == "x = 2"


def test_not_a_diff() -> None:
    with pytest.raises(PatchError, match="unified diff"):
        parse_patch("hello\n")


def test_does_not_apply() -> None:
    [patch] = parse_patch(DIFF)
    with pytest.raises(PatchError, match="does not apply"):
        apply_patch(patch, "completely\ndifferent\n")


def test_truncated_hunk() -> None:
    with pytest.raises(PatchError, match="shorter"):
        parse_patch("--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,3 @@\n a\n")
