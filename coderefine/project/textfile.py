"""Decode Python source bytes to text and back, byte for byte.

coderefine works on ``str`` with the file's own line endings kept inside it (no newline translation),
and remembers the encoding (PEP 263 declaration, default UTF-8) and whether a UTF-8 BOM was there,
so that ``encode(decode(data)) == data`` for every file it accepts.
"""

from __future__ import annotations

import codecs
import io
import tokenize
from dataclasses import dataclass
from pathlib import Path

from coderefine.errors import InputError


@dataclass(frozen=True)
class SourceText:
    """A decoded source file and what is needed to write it back unchanged."""

    text: str
    encoding: str = "utf-8"
    bom: bool = False

    def encode(self, text: str | None = None) -> bytes:
        """``text`` (default: this file's text) as bytes in this file's encoding, BOM included."""
        body = (self.text if text is None else text).encode(self.encoding)
        return codecs.BOM_UTF8 + body if self.bom else body

    def with_text(self, text: str) -> SourceText:
        return SourceText(text=text, encoding=self.encoding, bom=self.bom)


def decode_source(data: bytes, name: str) -> SourceText:
    """Decode ``data`` as Python source; refuse binary and undecodable input with a clear message."""
    if b"\x00" in data[:8192]:
        raise InputError(f"{name}: looks like a binary file (NUL bytes); coderefine reviews Python source")
    bom = data.startswith(codecs.BOM_UTF8)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        if "unknown encoding" in str(exc.msg):
            raise InputError(f"{name}: {exc.msg}; fix the coding declaration") from exc
        raise InputError(
            f"{name}: not valid utf-8; save it as UTF-8 "
            "or declare its encoding with a '# -*- coding: ... -*-' line"
        ) from exc
    encoding = codecs.lookup(encoding).name
    if encoding == "utf-8-sig":
        encoding = "utf-8"
    body = data[len(codecs.BOM_UTF8) :] if bom else data
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{name}: not valid {encoding} (byte {exc.start}); save it as UTF-8 "
            "or declare its encoding with a '# -*- coding: ... -*-' line"
        ) from exc
    return SourceText(text=text, encoding=encoding, bom=bom)


def read_source(path: Path, name: str, max_bytes: int) -> SourceText:
    """Read and decode one file under review, with a message that says what to do when it cannot."""
    if not path.exists():
        raise InputError(f"{name}: no such file; check the path")
    if path.is_dir():
        raise InputError(f"{name}: is a directory; pass the Python files inside it")
    size = path.stat().st_size
    if size > max_bytes:
        raise InputError(
            f"{name}: {size // 1024} KiB is over the limit of {max_bytes // 1024} KiB; "
            "raise max-file-kib in [tool.coderefine] to review it"
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{name}: cannot read ({exc.strerror})") from exc
    return decode_source(data, name)


def newline_of(text: str) -> str:
    """The line ending the text uses most, for lines that coderefine adds."""
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    cr = text.count("\r") - crlf
    if crlf > lf and crlf >= cr:
        return "\r\n"
    if cr > lf:
        return "\r"
    return "\n"


def source_lines(text: str) -> list[str]:
    """``text``'s lines as Python numbers them, each with its ending: broken at ``\\n`` only, where
    ``str.splitlines`` also breaks at a form feed (a page break in older modules) or ``\\u2028``, and the
    excerpt of a line would be another line."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    return [*lines, parts[-1]] if parts[-1] else lines
