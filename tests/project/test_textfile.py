import codecs
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coderefine.errors import InputError
from coderefine.project.textfile import decode_source, newline_of, read_source, source_lines


@pytest.mark.parametrize(
    "data",
    [
        b"x = 1\n",
        b"x = 1\r\ny = 2\r\n",
        b"x = 1\ny = 2\r\nz = 3",
        codecs.BOM_UTF8 + b"x = '\xc3\xa9'\n",
        b"# -*- coding: latin-1 -*-\nx = '\xe9'\n",
        b"",
        b"\tif x:\n\t\tpass\n",
    ],
)
def test_round_trip_is_byte_exact(data: bytes) -> None:
    source = decode_source(data, "f.py")
    assert source.encode() == data


def test_latin1_declared_encoding_is_kept() -> None:
    source = decode_source(b"# -*- coding: latin-1 -*-\nx = '\xe9'\n", "f.py")
    assert source.encoding == "iso8859-1"
    assert "é" in source.text


def test_binary_is_refused() -> None:
    with pytest.raises(InputError, match="binary"):
        decode_source(b"\x00\x01\x02", "blob.py")


def test_undecodable_says_what_to_do() -> None:
    with pytest.raises(InputError, match=r"not valid utf-8.*coding"):
        decode_source(b"x = '\xff\xfe'\n", "bad.py")


def test_read_source_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_source(tmp_path / "missing.py", "missing.py", 1024)
    with pytest.raises(InputError, match="is a directory"):
        read_source(tmp_path, "dir", 1024)
    big = tmp_path / "big.py"
    big.write_bytes(b"x = 1\n" * 1000)
    with pytest.raises(InputError, match="max-file-kib"):
        read_source(big, "big.py", 1024)


def test_newline_of() -> None:
    assert newline_of("a\r\nb\r\n") == "\r\n"
    assert newline_of("a\nb\n") == "\n"
    assert newline_of("a\rb\r") == "\r"
    assert newline_of("") == "\n"


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")))
def test_any_utf8_text_round_trips(text: str) -> None:
    data = text.encode("utf-8")
    try:
        source = decode_source(data, "f.py")
    except InputError:
        return  # a stray coding declaration may name an unknown codec; that is refused, not mangled
    assert source.encode() == data


@given(st.text(alphabet="ab\n\r\x0c\u2028 "))
def test_source_lines_join_back_and_break_only_at_newlines(text: str) -> None:
    lines = source_lines(text)
    assert "".join(lines) == text
    assert len(lines) == text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    assert all(line.count("\n") == (1 if line.endswith("\n") else 0) for line in lines)
