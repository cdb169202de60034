"""What a statement of a libcst module is, for placing definitions by name."""

from __future__ import annotations

import libcst as cst

from coderefine.edits.cst_nodes import (
    assigned_name,
    class_members,
    decorator_texts,
    definition_name,
    is_docstring,
    is_import,
    member_index,
)

MODULE = cst.parse_module(
    '"""Doc."""\nimport os\nLIMIT: int = 3\n\n\n@cache\n@other(1)\nclass Box:\n    size = 1\n\n    def grow(self):\n        pass\n'
)


def test_each_kind_of_statement_is_told_apart() -> None:
    doc, imports, limit, box = MODULE.body
    assert is_docstring(doc) and not is_docstring(imports)
    assert is_import(imports) and not is_import(limit)
    assert assigned_name(limit) == "LIMIT" and assigned_name(imports) is None
    assert definition_name(box) == "Box" and definition_name(limit) is None
    assert decorator_texts(box) == ("cache", "other(1)")
    assert isinstance(box, cst.ClassDef)
    assert [definition_name(m) or assigned_name(m) for m in class_members(box)] == ["size", "grow"]
    assert member_index(box, "grow") == 1 and member_index(box, "shrink") is None
