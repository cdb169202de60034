"""`init`: show the files a project needs to start with coderefine, and write them when asked."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any, TextIO

from coderefine.errors import EXIT_CLEAN

_NEXT = """\
next:
  pre-commit install                      the hook runs on every commit (pip install pre-commit first)
  export ANTHROPIC_API_KEY=...            or --model ollama:MODEL for a local model (docs/models.md)
  coderefine check --staged               the signals of what is staged; no model
  coderefine fix FILE -m "what to change" refine a change and write it ('coderefine undo' restores)
  the workflow reviews pull requests once ANTHROPIC_API_KEY is a repository secret (forks get the signals)
  comment /coderefine review on a pull request to review it now; /coderefine help lists the commands
"""


def render_plan(root: Path, layout: Any, plan: Any, reviews: str = "push") -> str:
    from coderefine.doors.comment_workflow import REVIEWS

    lines = [f"coderefine init: {root}"]
    lines.append(f"found: {layout.describe()}")
    lines.append(f"CI installs the project with: {layout.install}")
    lines.append(f"pull requests: {REVIEWS[reviews]} (--reviews push|opened|request)")
    for planned in plan.files:
        verb = "create" if planned.action == "create" else "append to"
        lines += ["", f"{verb} {planned.path}:"]
        lines += [f"  | {line}".rstrip() for line in planned.added.splitlines()]
    for path, why in plan.skipped:
        first, *rest = why.splitlines()
        lines += ["", f"skipped {path}: {first}"]
        lines += [f"  | {line}".rstrip() for line in rest]
    lines += [f"\nnote: {note}" for note in plan.notes]
    return "\n".join(lines) + "\n"


def command_init(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    from coderefine.doors.init import apply_plan, installed_pin, plan_init
    from coderefine.errors import UsageError
    from coderefine.project.change import project_root
    from coderefine.project.gitio import GitRepo
    from coderefine.project.layout import detect_layout
    from coderefine.version import __version__

    if args.root is not None:
        root = Path(os.path.abspath(args.root))
        if not root.is_dir():
            raise UsageError(f"--root {args.root}: not a folder; name the project folder")
    else:
        cwd = Path.cwd()
        root = project_root(cwd, GitRepo.find(cwd))
    layout = detect_layout(root)
    plan = plan_init(root, layout, __version__, installed_pin(__version__), reviews=args.reviews)
    out.write(render_plan(root, layout, plan, args.reviews))
    if not plan.files:
        out.write("\nnothing to write: the project has everything coderefine init makes\n")
        return EXIT_CLEAN
    if args.dry_run:
        out.write("\n(dry run: nothing written; --yes writes these files)\n")
        return EXIT_CLEAN
    if not args.yes:
        if not stdin.isatty():
            raise UsageError(
                "coderefine init asks before it writes, and there is no terminal to ask on: pass --yes to "
                "write the files shown, or --dry-run to only show them"
            )
        out.write("\nwrite these files? [y/N] ")
        out.flush()
        if stdin.readline().strip().lower() not in ("y", "yes"):
            out.write("nothing written\n")
            return EXIT_CLEAN
    written = apply_plan(root, plan)
    out.write(f"\nwrote {', '.join(written)}\n{_NEXT}")
    return EXIT_CLEAN
