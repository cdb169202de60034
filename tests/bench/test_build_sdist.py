"""make-suite on a library's source distribution, offline (a local index: tests/bench/wheelhouse.py): the
library's own declared dependency is installed with no --requires, nothing its tests start outlives the
build, and their temporary files stay in its folder."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from coderefine.bench.build import Source, make_suite
from coderefine.bench.harness import run_bench
from coderefine.bench.models import DoNothingModel
from coderefine.bench.strategies import strategies
from coderefine.bench.suite import SUITE_FILE, load_suite
from coderefine.config import Settings
from coderefine.errors import UsageError
from coderefine.project.runner import SubprocessRunner
from tests.bench.wheelhouse import repack, write_sdist, write_wheel

MODULE = '''"""Greetings, in the house style."""

import yamlish


def greet(name, punctuation="!"):
    """Say hello to ``name``."""
    if not name:
        return "Hello" + punctuation
    return yamlish.STYLE.format(name) + punctuation


def shout(text, times=1):
    """``text`` in capitals, ``times`` times, separated by spaces."""
    parts = []
    for _ in range(times):
        parts.append(text.upper())
    return " ".join(parts)


def initials(name):
    """The initials of ``name``, with dots: "Ada Lovelace" -> "A.L."."""
    return "".join(part[0].upper() + "." for part in name.split() if part)
'''

TESTS = """import tempfile

from greetkit.core import greet, initials, shout


def test_greet():
    assert greet("Ada") == "Hello, Ada!"
    assert greet("Ada", "?") == "Hello, Ada?"


def test_greet_nobody():
    assert greet("") == "Hello!"


def test_shout():
    assert shout("hi") == "HI"
    assert shout("hi", 3) == "HI HI HI"
    assert shout("hi", 0) == ""


def test_initials(tmp_path):
    (tmp_path / "names.txt").write_text("Ada Lovelace")
    assert initials((tmp_path / "names.txt").read_text()) == "A.L."
    assert initials("grace  brewster hopper") == "G.B.H."


def test_a_scratch_file():
    with tempfile.NamedTemporaryFile("w", suffix=".greetkit", delete=False) as handle:
        handle.write("left behind")
"""

# A test that starts two long-lived children and leaves them: one in its process group, one in a
# session of its own (out of that group). Their pids go to a folder the test of the build reads.
CHILDREN = """import os
import subprocess
import sys
import uuid

SLEEP = [sys.executable, "-c", "import time; time.sleep(600)"]


def test_starts_children():
    for own_session in (False, True):
        child = subprocess.Popen(
            SLEEP, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=own_session
        )
        folder = os.environ["GREETKIT_PIDS"]
        with open(os.path.join(folder, uuid.uuid4().hex), "w") as handle:
            handle.write(str(child.pid))
"""


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("index")
    repack("pytest", folder)
    write_wheel(folder, "tiny-yamlish", "1.0", {"yamlish/__init__.py": 'STYLE = "Hello, {}"\n'})
    files = {
        "greetkit/__init__.py": "",
        "greetkit/core.py": MODULE,
        "tests/test_core.py": TESTS,
        "tests/test_children.py": CHILDREN,
    }
    write_sdist(folder, "greetkit", "1.0", ["tiny-yamlish>=1.0"], files)
    write_sdist(folder, "needsyaml", "1.0", ["yaml"], files)
    with pytest.MonkeyPatch.context() as patch:
        # make-suite's pip runs (the download, the venv's install) read the local index only.
        patch.setenv("PIP_NO_INDEX", "1")
        patch.setenv("PIP_FIND_LINKS", str(folder))
        patch.delenv("PIP_INDEX_URL", raising=False)
        yield folder


@pytest.fixture(scope="module")
def built(index: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path, list[str]]:
    root = tmp_path_factory.mktemp("greetkit")
    pids, system_temp = root / "pids", root / "system-temp"
    pids.mkdir()
    system_temp.mkdir()
    env = {"PATH": os.environ["PATH"], "GREETKIT_PIDS": str(pids), "TMPDIR": str(system_temp)}
    messages: list[str] = []
    make_suite(
        Source(requirement="greetkit==1.0"),
        root / "suite",
        SubprocessRunner(),
        env,
        tasks=4,
        seed=1,
        progress=messages.append,
    )
    return root / "suite", pids, system_temp, messages


@pytest.mark.slow
def test_its_declared_dependency_is_installed_without_requires(
    built: tuple[Path, Path, Path, list[str]],
) -> None:
    suite, _, _, messages = built
    library = json.loads((suite / SUITE_FILE).read_text())["library"]
    assert library["declared"] == ["tiny-yamlish>=1.0"]
    assert library["requires"] == ["pytest"]
    assert library["tests"] == 6
    assert "greetkit==1.0: 6 tests green, 0 left out" in messages
    assert any(m.startswith("greetkit==1.0: ") and " tasks: " in m and " bug" in m for m in messages)
    assert any(
        "installing 1 declared dependency (tiny-yamlish>=1.0), then --requires (pytest)" in m
        for m in messages
    )


@pytest.mark.slow
def test_nothing_its_tests_started_is_left_running(built: tuple[Path, Path, Path, list[str]]) -> None:
    _, pids, _, _ = built
    started = [int(p.read_text()) for p in pids.iterdir()]
    assert len(started) >= 4  # two children a run, in the baseline's two runs at least
    deadline = time.monotonic() + 5
    while (alive := [pid for pid in started if _running(pid)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert alive == []


@pytest.mark.slow
def test_temporary_files_stay_in_the_build(built: tuple[Path, Path, Path, list[str]]) -> None:
    suite, _, system_temp, _ = built
    assert list(system_temp.iterdir()) == []
    assert not (suite / "tmp").exists()
    assert not list(suite.rglob("*.greetkit"))


@pytest.mark.slow
def test_a_bench_run_leaves_nothing_running_either(
    built: tuple[Path, Path, Path, list[str]], tmp_path: Path
) -> None:
    suite, _, _, _ = built
    pids, system_temp = tmp_path / "pids", tmp_path / "system-temp"
    pids.mkdir()
    system_temp.mkdir()
    env = {"PATH": os.environ["PATH"], "GREETKIT_PIDS": str(pids), "TMPDIR": str(system_temp)}
    _, tasks = load_suite(suite)
    chosen = [t for t in tasks if t.kind == "bug"][:1]
    # The scoring runs the whole suite, whose children-starting test is among those that must pass.
    run_bench(
        chosen,
        strategies("coderefine"),
        lambda t, s: DoNothingModel(),
        Settings(),
        SubprocessRunner(),
        env,
        cache_dir=None,
        jobs=1,
    )
    assert list(system_temp.iterdir()) == []  # the tests' temporary files went to the pair's folder
    started = [int(p.read_text()) for p in pids.iterdir()]
    assert started
    deadline = time.monotonic() + 5
    while (alive := [pid for pid in started if _running(pid)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert alive == []


@pytest.mark.slow
def test_a_missing_distribution_is_named_with_the_reason(index: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError) as error:
        make_suite(
            Source(requirement="needsyaml==1.0"),
            tmp_path / "suite",
            SubprocessRunner(),
            {"PATH": os.environ["PATH"]},
        )
    message = str(error.value)
    assert "yaml: the package index has no distribution of that name" in message
    assert "the module yaml is installed by the distribution PyYAML" in message
    assert "one of the dependencies the library declares" in message
    assert "can be reached" not in message
    assert not (tmp_path / "suite").exists()


def _running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its parent to reap it has ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return state not in ("Z", "X")
