"""Progress of a run: one line rewritten in place on a terminal, plain lines otherwise."""

from __future__ import annotations

from typing import TextIO

_LABELS = {
    "signals": "collecting signals",
    "author": "author drafting",
    "critic": "critic reviewing",
    "reviser": "reviser revising",
}


class StreamProgress:
    def __init__(self, stream: TextIO, is_tty: bool) -> None:
        self._stream = stream
        self._tty = is_tty
        self._last = ""

    def phase(self, name: str, round_number: int, tokens: int) -> None:
        where = f"round {round_number}" if round_number else "start"
        line = f"coderefine: {where}: {_LABELS.get(name, name)} ({tokens / 1000:.1f}k tokens so far)"
        if line == self._last:
            return
        self._last = line
        if self._tty:
            self._stream.write("\r\x1b[2K" + line)
        else:
            self._stream.write(line + "\n")
        self._stream.flush()

    def done(self) -> None:
        if self._tty and self._last:
            self._stream.write("\r\x1b[2K")
            self._stream.flush()
