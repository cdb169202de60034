"""`mcp`: serve the tools to coding agents over the Model Context Protocol (stdio)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TextIO

from coderefine.errors import EXIT_CLEAN


def command_mcp(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    from coderefine.errors import UsageError
    from coderefine.project.change import project_root
    from coderefine.project.gitio import GitRepo

    try:
        from coderefine.doors.mcp.server import serve
    except ImportError as exc:
        raise UsageError(
            f"coderefine mcp needs the MCP SDK ({exc.name} is missing): pip install 'coderefine[mcp]'"
        ) from exc
    if args.root is not None:
        root = Path(os.path.abspath(args.root))
        if not root.is_dir():
            raise UsageError(f"--root {args.root}: not a folder; name the project folder")
    else:
        cwd = Path.cwd()
        root = project_root(cwd, GitRepo.find(cwd))
    serve(root, os.environ, args.model)
    return EXIT_CLEAN
