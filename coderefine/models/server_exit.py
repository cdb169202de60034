"""What a managed local server that died tells: how it ended, the last lines of its log, and for a CPU fault
the command that rebuilds llama-cpp-python for a portable instruction set.

A llama.cpp built for the machine's own CPU (``-DGGML_NATIVE=ON``, llama-cpp-python's default) uses every
instruction the CPU advertises. A CPU that advertises AMX tiles the kernel does not enable for the process
loads the model, then dies with SIGILL on the first request (the weights are repacked for AMX), and a
mismatch of the same kind can show as SIGSEGV or a "general protection" fault. Before this, every later
request of the run met a closed port and said "cannot reach gguf; is the server running?", which named
neither the crash nor the cure.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass
from pathlib import Path

# The local-model extra's pin (pyproject.toml); the rebuild installs that same version.
LLAMA_CPP_PYTHON = "0.3.36"
# The instruction set CI builds for (.ci/run): AVX2 and FMA, which every x86_64 CPU of the last decade has.
PORTABLE_CMAKE_ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
LOG_LINES = 20

_FAULTS = (signal.SIGILL, signal.SIGSEGV, signal.SIGBUS)
# How a fault reads when a shell or the kernel put it into the log rather than into the exit status.
_FAULT_WORDS = ("illegal instruction", "general protection", "segmentation fault")


def rebuild_command(python: str) -> str:
    return (
        f'CMAKE_ARGS="{PORTABLE_CMAKE_ARGS}" {python} -m pip install --force-reinstall --no-cache-dir '
        f"llama-cpp-python=={LLAMA_CPP_PYTHON}"
    )


def last_lines(text: str, count: int = LOG_LINES, width: int = 400) -> str:
    """The last ``count`` non-empty lines, each cut to ``width``: a log of progress bars has long ones."""
    lines = [line[:width] for line in text.replace("\r", "\n").splitlines() if line.strip()]
    return "\n".join(lines[-count:])


@dataclass(frozen=True)
class ServerExit:
    """How a server process ended by itself, and the tail of its log at that moment."""

    returncode: int
    log_tail: str

    @property
    def signal(self) -> signal.Signals | None:
        """The signal that ended it: a negative status from Popen, or 128 + N from a shell in between."""
        code = self.returncode
        number = -code if code < 0 else code - 128 if 128 < code < 128 + 65 else 0
        try:
            return signal.Signals(number) if number else None
        except ValueError:
            return None

    @property
    def fault(self) -> bool:
        """A CPU fault: what a build for another instruction set does."""
        tail = self.log_tail.lower()
        return self.signal in _FAULTS or any(word in tail for word in _FAULT_WORDS)

    def how(self) -> str:
        found = self.signal
        if found is None:
            return f"exited ({self.returncode})"
        what = signal.strsignal(found) or found.name
        return f"was killed by {found.name} ({what.lower()})"


def died_message(model: Path, python: str, ended: ServerExit, *, answered: bool) -> str:
    """What the user reads: the server, how it ended, its log's tail, and the cure when there is one."""
    when = "while this run used it; no request is sent to it again" if answered else "before it answered"
    text = f"llama.cpp's server for {model} {ended.how()} {when}."
    tail = last_lines(ended.log_tail)
    indented = "".join(f"\n  {line}" for line in tail.splitlines())
    text += f" The last lines of its log:{indented}" if tail else " Its log is empty."
    if ended.fault:
        text += (
            "\nThis is how a llama.cpp built for another CPU dies (a native build on a CPU that advertises "
            "instructions the kernel does not enable, such as AMX tiles). Rebuild llama-cpp-python for a "
            f"portable instruction set:\n  {rebuild_command(python)}"
        )
    elif ended.signal is signal.SIGKILL:
        text += "\nSIGKILL is what the kernel's out-of-memory killer sends: a smaller model may fit."
    return text
