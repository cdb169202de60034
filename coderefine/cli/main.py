"""The command line: parse arguments, call the library, map errors to exit codes. Nothing else.

The commands live in coderefine.cli.commands and import the library inside their functions, so that
``--version`` and ``--help`` import nothing heavy (libcst, gitpython, the model SDK).
"""

from __future__ import annotations

import importlib
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TextIO

from coderefine.errors import EXIT_CLEAN, EXIT_INTERNAL, EXIT_INTERRUPTED, CoderefineError
from coderefine.version import __version__

# command -> (module under coderefine.cli.commands, function): a command imports only its own module.
_COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("local", "command_check"),
    "fix": ("local", "command_fix"),
    "draft": ("local", "command_fix"),
    "undo": ("local", "command_undo"),
    "hook": ("hooks", "command_hook"),
    "install-hook": ("hooks", "command_install_hook"),
    "cache": ("hooks", "command_cache"),
    "review": ("ci", "command_review"),
    "merge": ("ci", "command_merge"),
    "bench": ("bench", "command_bench"),
    "mcp": ("mcp", "command_mcp"),
    "init": ("init", "command_init"),
}


def command_function(name: str) -> Callable[..., int]:
    module, function = _COMMANDS[name]
    found: Callable[..., int] = getattr(
        importlib.import_module(f"coderefine.cli.commands.{module}"), function
    )
    return found


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, stdin: TextIO | None = None) -> int:
    """Run coderefine with ``argv`` and return the exit code (never raises, but for SystemExit of --help)."""
    out = out or sys.stdout
    if list(sys.argv[1:] if argv is None else argv) == ["--version"]:
        # Scripts and the pre-commit framework ask this often; it needs no parser.
        out.write(f"coderefine {__version__}\n")
        return EXIT_CLEAN
    from coderefine.cli.parser import build_parser

    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(out)
        return EXIT_CLEAN
    previous = _handle_sigterm()
    try:
        return command_function(args.command)(args, out, stdin or sys.stdin)
    except CoderefineError as exc:
        print(f"coderefine: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("coderefine: interrupted; no file was left half-written", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception:  # the last line of defence: a bug, reported with what is needed to fix it
        print(
            f"coderefine: internal error (coderefine {__version__}, Python {sys.version.split()[0]}); "
            "please report it with this traceback:",
            file=sys.stderr,
        )
        traceback.print_exc()
        return EXIT_INTERNAL
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def entry() -> NoReturn:
    """The ``coderefine`` program (and ``python -m coderefine``): ``main``, then a quick exit.

    The SDKs leave tens of thousands of objects (pydantic models of every API type); the interpreter's
    last garbage collections walked them all after the output was written: 0.5 s of wall after a run
    with the openai SDK, 1 s with anthropic's, that no phase of ``--timings`` could see. Frozen, they are
    left out of those collections; everything else of the exit (atexit, finalizers, flushing) still runs.
    ``main`` alone, as tests call it in-process, freezes nothing."""
    import gc

    code = main()
    gc.freeze()
    sys.exit(code)


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _handle_sigterm() -> Any:
    """Treat SIGTERM like Ctrl-C, so that the same clean-up runs (temporary trees, half-done writes)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _raise_interrupt)
