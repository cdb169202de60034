"""Generated repositories of a given number of files, for the scale benchmarks: deterministic, cached.

A repository of ``files`` files is packages of modules with one test file per module
(``pkgNNNN/mNNNN_NN.py`` and ``tests/pkgNNNN/test_mNNNN_NN.py``: every base name unique, so pytest
needs no ``__init__.py`` in the tests and a test named after its module names one module), each
package with an ``__init__.py`` that re-exports its first module, committed on ``main``. The same
size always gives the same bytes, so a repository is built once and kept under the bench cache
(``~/.cache/coderefine/bench/scale`` or ``$CODEREFINE_BENCH_CACHE/scale``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from benchmarks.fixtures import GIT_ENV
from benchmarks.large import cache_dir

MODULES_PER_PACKAGE = 24
# Bump when the generated content changes, so cached repositories are rebuilt.
VERSION = 2


def _stem(package: int, module: int) -> str:
    return f"m{package:04d}_{module:02d}"


def module_text(package: int, module: int) -> str:
    return (
        f'"""Module {module} of package {package}: generated for benchmarks."""\n\n'
        "from __future__ import annotations\n\n\n"
        f"def step(value: int) -> int:\n"
        f'    """Scale the value by {module % 7 + 1} and add {package % 5}."""\n'
        f"    return value * {module % 7 + 1} + {package % 5}\n\n\n"
        f"def clamp(value: int, low: int = 0, high: int = {100 + module}) -> int:\n"
        "    return max(low, min(high, value))\n"
    )


def test_text(package: int, module: int) -> str:
    name = f"pkg{package:04d}"
    return (
        f"from {name}.{_stem(package, module)} import clamp, step\n\n\n"
        "def test_step() -> None:\n"
        f"    assert step(1) == {module % 7 + 1 + package % 5}\n\n\n"
        "def test_clamp() -> None:\n"
        f"    assert clamp(-5) == 0\n"
    )


def layout(files: int) -> dict[str, str]:
    """Path -> text of a repository with exactly ``files`` files (at least 4)."""
    if files < 4:
        raise ValueError("a scale repository needs at least 4 files")
    out: dict[str, str] = {
        "pyproject.toml": '[project]\nname = "scale"\nversion = "0"\n\n[tool.pytest.ini_options]\n'
        'pythonpath = ["."]\n',
        ".gitignore": "__pycache__/\n",
    }
    package = 0
    while len(out) < files:
        name = f"pkg{package:04d}"
        out[f"{name}/__init__.py"] = f"from {name}.{_stem(package, 0)} import step\n\n__all__ = ['step']\n"
        for module in range(MODULES_PER_PACKAGE):
            if len(out) + 2 > files:
                break
            out[f"{name}/{_stem(package, module)}.py"] = module_text(package, module)
            out[f"tests/{name}/test_{_stem(package, module)}.py"] = test_text(package, module)
        package += 1
    while len(out) < files:  # an odd count: pad with a data file
        out[f"data/extra{len(out)}.txt"] = "padding\n"
    return out


def modules(files: int) -> list[str]:
    """The non-test modules of the repository, in a fixed order spread over its packages."""
    paths = [p for p in layout(files) if p.startswith("pkg") and not p.endswith("__init__.py")]
    # Interleave packages (module 1 of every package, then module 2...), so a change of N files touches
    # many packages as a real sweep would; module 0 (re-exported by its package) comes last.
    return sorted(paths, key=lambda p: (p[-5:-3] == "00", p[-5:-3], p))


def _git(root: Path, *args: str) -> None:
    env = {**GIT_ENV, "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root)}
    # No automatic gc: one started in the background by a big commit would race a cleanup of the folder.
    subprocess.run(
        ["git", "-c", "gc.auto=0", "-c", "maintenance.auto=false", *args],
        cwd=root,
        check=True,
        env=env,
        capture_output=True,
    )


def write_repo(root: Path, files: int) -> Path:
    """Write and commit the repository of ``files`` files at ``root`` (created)."""
    for rel, text in layout(files).items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", f"scale repository of {files} files")
    return root


def cached_repo(files: int, cache: Path | None = None) -> Path:
    """The cached repository of ``files`` files, built on first use; its working tree reset to ``main``."""
    folder = (cache or cache_dir() / "scale") / f"repo-{files}-v{VERSION}"
    root = folder / "repo"
    if not (folder / "done").exists():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        write_repo(root, files)
        (folder / "done").write_text("ok\n")
    reset(root)
    return root


def reset(root: Path) -> None:
    """Undo a benchmark's changes: back to ``main``, no stray files."""
    _git(root, "checkout", "-q", "-f", "main")
    _git(root, "reset", "-q", "--hard", "main")
    _git(root, "clean", "-q", "-fdx")
