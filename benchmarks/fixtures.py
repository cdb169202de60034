"""Generated projects for the benchmarks: a git repository with a large module and its tests."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


def big_module(functions: int) -> str:
    """About ten lines per function, typed and documented like real code."""
    parts = ['"""A generated module for benchmarks."""\n\nfrom __future__ import annotations\n']
    for n in range(functions):
        parts.append(
            f"\n\ndef step_{n}(value: int, scale: int = {n % 7 + 1}) -> int:\n"
            f'    """Step {n}: scale the value and add one."""\n'
            f"    if value < 0:\n"
            f'        raise ValueError("negative value in step {n}")\n'
            f"    for _ in range(scale):\n"
            f"        value = value * 1\n"
            f"    return value + 1\n"
        )
    return "".join(parts)


def big_tests(tests: int) -> str:
    lines = ["from pkg.big import " + ", ".join(f"step_{n}" for n in range(tests)) + "\n"]
    for n in range(tests):
        lines.append(f"\n\ndef test_step_{n}() -> None:\n    assert step_{n}({n}) == {n + 1}\n")
    return "".join(lines)


def make_project(
    parent: Path, functions: int = 200, tests: int = 50, files: Mapping[str, str | bytes] | None = None
) -> Path:
    """A committed git project: pkg/big.py (about 10 * functions lines) and tests/test_big.py, or
    ``files`` committed as they are, with the working tree then holding the same files."""
    root = parent / "project"
    if files is None:
        files = {
            "pkg/__init__.py": "",
            "pkg/big.py": big_module(functions),
            "tests/test_big.py": big_tests(tests),
        }
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    env = {**GIT_ENV, "PATH": "/usr/bin:/bin:/usr/local/bin"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "initial"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=env, capture_output=True)
    return root
