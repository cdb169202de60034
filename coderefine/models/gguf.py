"""The metadata at the head of a GGUF file (llama.cpp's model format), read without loading the model.

A GGUF file starts with the magic ``GGUF``, a version, the tensor and key counts, then the keys: each a
string, a type and a value. The keys that say what the file is (``general.name``, ``general.architecture``)
come first in every file we pin, so reading stops as soon as the wanted keys are found; the tokenizer's
arrays of 150,000 strings after them are skipped, not decoded.
"""

from __future__ import annotations

import struct
from collections.abc import Collection
from pathlib import Path
from typing import BinaryIO

from coderefine.errors import ConfigError

MAGIC = b"GGUF"
# Value types of GGUF version 2 and 3: the size of each fixed-width type, in bytes.
_FIXED = {
    0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"
}  # fmt: skip
_STRING, _ARRAY = 8, 9
Value = str | int | float | bool | None  # an array is not decoded: None


class GGUFError(ConfigError):
    """Not a GGUF file, or one cut short."""


def _read(stream: BinaryIO, size: int, path: Path) -> bytes:
    data = stream.read(size)
    if len(data) != size:
        raise GGUFError(f"{path}: the GGUF header ends early; the file is cut short (download it again)")
    return data


def _unpack(stream: BinaryIO, fmt: str, path: Path) -> int | float | bool:
    value: int | float | bool = struct.unpack(fmt, _read(stream, struct.calcsize(fmt), path))[0]
    return value


def _string(stream: BinaryIO, path: Path) -> str:
    length = int(_unpack(stream, "<Q", path))
    return _read(stream, length, path).decode("utf-8", errors="replace")


def _value(stream: BinaryIO, kind: int, path: Path) -> Value:
    if kind in _FIXED:
        return _unpack(stream, _FIXED[kind], path)
    if kind == _STRING:
        return _string(stream, path)
    if kind == _ARRAY:
        item = int(_unpack(stream, "<I", path))
        count = int(_unpack(stream, "<Q", path))
        if item in _FIXED:
            stream.seek(struct.calcsize(_FIXED[item]) * count, 1)
        else:
            for _ in range(count):
                _value(stream, item, path)
        return None
    raise GGUFError(f"{path}: unknown GGUF value type {kind}; not a GGUF file llama.cpp can read")


def read_metadata(path: Path, wanted: Collection[str] = ()) -> dict[str, Value]:
    """The scalar keys of ``path``'s header (arrays map to None); with ``wanted``, reading stops once all
    of them are found."""
    with path.open("rb") as stream:
        if stream.read(4) != MAGIC:
            raise GGUFError(f"{path}: not a GGUF file (it does not start with 'GGUF')")
        version = int(_unpack(stream, "<I", path))
        if version < 2:
            raise GGUFError(f"{path}: GGUF version {version} is too old for llama.cpp's server")
        _unpack(stream, "<Q", path)  # tensors
        keys = int(_unpack(stream, "<Q", path))
        found: dict[str, Value] = {}
        for _ in range(keys):
            key = _string(stream, path)
            found[key] = _value(stream, int(_unpack(stream, "<I", path)), path)
            if wanted and all(w in found for w in wanted):
                break
        return found
