"""The release: `python -m build` makes an sdist and, from it, a wheel whose metadata passes `twine check`;
the wheel, installed into a fresh virtual environment that cannot see the source tree, runs `--version`,
`check` on a small project, `init --dry-run`, and `mcp` with its four tools.

Slow (a build and an install, with dependencies from PyPI through pip's cache): CI runs it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import anyio
import pytest

from coderefine.version import __version__
from tests.conftest import SMALL_PROJECT, RepoFactory, write_files

ROOT = Path(__file__).resolve().parents[1]


def run(
    *command: str | Path, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False
    )


@pytest.mark.slow
def test_the_wheel_installs_and_runs_in_a_fresh_venv(make_repo: RepoFactory, tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    built = run(sys.executable, "-m", "build", "--outdir", dist, ROOT, cwd=tmp_path)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    wheels = sorted(dist.glob(f"coderefine-{__version__}-py3-none-any.whl"))
    sdists = sorted(dist.glob(f"coderefine-{__version__}.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1
    checked = run(sys.executable, "-m", "twine", "check", "--strict", *wheels, *sdists, cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    home = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(home)
    installed = run(
        home / "bin" / "python", "-m", "pip", "install", "--quiet", f"{wheels[0]}[mcp]", cwd=tmp_path
    )
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]

    # Nothing of the source tree or of this interpreter's environment: its own PATH, no PYTHONPATH.
    env = {
        "PATH": f"{home / 'bin'}:/usr/bin:/bin",
        "HOME": os.environ["HOME"],
        **{k: v for k, v in os.environ.items() if k.startswith("GIT_")},
    }
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    coderefine = home / "bin" / "coderefine"
    version = run(coderefine, "--version", cwd=elsewhere, env=env)
    assert version.stdout == f"coderefine {__version__}\n"
    where = run(
        home / "bin" / "python", "-c", "import coderefine; print(coderefine.__file__)", cwd=elsewhere, env=env
    )
    assert Path(where.stdout.strip()).is_relative_to(home), where.stdout
    assert not Path(where.stdout.strip()).is_relative_to(ROOT)

    project = make_repo(SMALL_PROJECT)
    write_files(
        project,
        {
            "pkg/mod.py": "import os\n\n\ndef add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
        },
    )
    checked_project = run(coderefine, "check", "pkg/mod.py", cwd=project, env=env)
    assert checked_project.returncode == 1, checked_project.stdout + checked_project.stderr
    assert "F401" in checked_project.stdout and "test_add" in checked_project.stdout
    assert "pytest: 2 tests ran, 1 failed" in checked_project.stdout

    init = run(coderefine, "init", "--dry-run", cwd=project, env=env)
    assert init.returncode == 0 and f"coderefine/coderefine@v{__version__}" in init.stdout, init.stderr

    from mcp import Client, StdioServerParameters

    async def tools() -> list[str]:
        params = StdioServerParameters(
            command=str(coderefine), args=["mcp", "--root", str(project)], env=env, cwd=str(elsewhere)
        )
        async with Client(params, read_timeout_seconds=120) as client:  # type: ignore[arg-type]
            return [tool.name for tool in (await client.list_tools()).tools]

    assert anyio.run(tools) == ["check", "critique", "refine", "undo"]
