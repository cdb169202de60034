from coderefine.edits.symbols import changed_symbols, enclosing_symbol, symbols

CODE = """\
import x


@decorator
def top():
    def inner():
        return 1
    return inner


class Box:
    size = 1

    def grow(self):
        return self.size + 1

    async def shrink(self):
        return 0
"""


def test_qualified_names_and_ranges() -> None:
    found = {s.name: (s.kind, s.line, s.end_line) for s in symbols(CODE)}
    assert found["top"] == ("function", 4, 8)
    assert found["top.inner"] == ("function", 6, 7)
    assert found["Box"][0] == "class"
    assert "Box.grow" in found and "Box.shrink" in found


def test_changed_method_names_the_method_only() -> None:
    after = CODE.replace("self.size + 1", "self.size + 2")
    assert changed_symbols(CODE, after) == ["Box.grow"]


def test_changed_class_attribute_names_the_class() -> None:
    assert changed_symbols(CODE, CODE.replace("size = 1", "size = 2")) == ["Box"]


def test_added_and_removed() -> None:
    after = CODE + "\n\ndef extra():\n    pass\n"
    assert changed_symbols(CODE, after) == ["extra"]
    assert changed_symbols(after, CODE) == ["extra"]


def test_enclosing_symbol() -> None:
    symbol = enclosing_symbol(CODE, 15)
    assert symbol is not None and symbol.name == "Box.grow"
    assert enclosing_symbol(CODE, 1) is None


def test_unparsable_code_has_no_symbols() -> None:
    assert symbols("def (:\n") == []
