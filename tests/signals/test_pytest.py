import subprocess
import sys
from pathlib import Path

import pytest

from coderefine.project.runner import SubprocessRunner
from coderefine.signals.pytest import (
    PytestConfig,
    PytestSignals,
    find_interpreter,
    imported_modules,
    module_name,
    related_tests,
)
from tests.conftest import write_files


def run(
    tree: Path,
    tests: list[str],
    *,
    python: str = sys.executable,
    test_timeout: float = 10,
    run_timeout: float = 60,
):
    config = PytestConfig(python, ("{python}", "-m", "pytest"), test_timeout, run_timeout)
    return PytestSignals(SubprocessRunner(), config, {"PATH": "/usr/bin:/bin"}).collect(tree, tests)


def test_module_names() -> None:
    assert module_name("pkg/mod.py") == "pkg.mod"
    assert module_name("src/pkg/mod.py") == "pkg.mod"
    assert module_name("pkg/__init__.py") == "pkg"


def test_imported_modules() -> None:
    source = "import a.b, c as d\nfrom pkg import (mod, other)\nfrom x.y import *\n"
    assert {"a.b", "c", "pkg", "pkg.mod", "pkg.other", "x.y"} <= imported_modules(source)


def test_related_tests_by_name_by_import_and_conftest() -> None:
    files = [
        "pkg/mod.py",
        "tests/test_mod.py",
        "tests/test_uses.py",
        "tests/test_unrelated.py",
        "tests/sub/test_deep.py",
    ]
    texts = {
        "tests/test_mod.py": "",
        "tests/test_uses.py": "from pkg.mod import add\n",
        "tests/test_unrelated.py": "import json\n",
        "tests/sub/test_deep.py": "",
    }
    assert related_tests(["pkg/mod.py"], files, texts) == [
        "tests/test_mod.py",
        "tests/test_uses.py",
    ]
    assert related_tests(["tests/sub/conftest.py"], files, texts) == ["tests/sub/test_deep.py"]
    assert related_tests(["tests/test_unrelated.py"], files, texts) == ["tests/test_unrelated.py"]


def test_failures_become_signals_with_node_ids(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "m.py": "def add(a, b):\n    return a - b\n",
            "test_m.py": "from m import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\ndef test_ok():\n    assert True\n",
        },
    )
    result = run(tmp_path, ["test_m.py"])
    [signal] = result.signals
    assert signal.code == "test_m.py::test_add"
    assert signal.line == 5  # the failing assert, not the def
    assert "assert -1 == 3" in signal.message
    assert "test_add" in signal.detail
    assert result.statuses[0].state == "ok"
    assert not (tmp_path / ".pytest_cache").exists()


def test_per_test_timeout_fails_only_the_slow_test(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "test_slow.py": "import time\n\n\ndef test_slow():\n    time.sleep(30)\n\n\ndef test_fast():\n    assert True\n",
        },
    )
    result = run(tmp_path, ["test_slow.py"], test_timeout=0.5)
    [signal] = result.signals
    assert signal.code == "test_slow.py::test_slow"
    assert "longer than 0.5s" in signal.message
    assert result.statuses[0].state == "ok"


def test_code_that_swallows_exceptions_still_stops_at_the_per_test_timeout(tmp_path: Path) -> None:
    loop = (
        "import time\n\n\ndef test_spin():\n    while True:\n        try:\n            time.sleep(0.01)\n"
        "        except Exception:\n            pass\n"
    )
    write_files(tmp_path, {"test_spin.py": loop})
    result = run(tmp_path, ["test_spin.py"], test_timeout=0.5, run_timeout=20)
    [signal] = result.signals
    assert signal.code == "test_spin.py::test_spin" and "longer than 0.5s" in signal.message
    assert result.statuses[0].state == "ok"  # the test was stopped, not the whole run


def test_a_run_that_hangs_is_stopped_and_reported(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "test_hang.py": (
                "import signal, time\n\n\ndef test_done():\n    assert True\n\n\n"
                "def test_hang():\n    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\n    time.sleep(60)\n"
            ),
        },
    )
    result = run(tmp_path, ["test_hang.py"], test_timeout=0.5, run_timeout=4)
    assert result.statuses[0].state == "timeout"
    assert [s.code for s in result.signals] == ["test_hang.py::test_hang"]
    assert "did not finish" in result.signals[0].message


def test_a_test_that_kills_its_process(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "test_kill.py": "import os, signal\n\n\ndef test_kill():\n    os.kill(os.getpid(), signal.SIGKILL)\n"
        },
    )
    result = run(tmp_path, ["test_kill.py"])
    assert result.statuses[0].state == "unavailable"
    assert "code -9" in result.statuses[0].note
    assert [s.code for s in result.signals] == ["test_kill.py::test_kill"]


def test_collection_error_is_a_signal(tmp_path: Path) -> None:
    write_files(tmp_path, {"test_broken.py": "import no_such_module_here\n\n\ndef test_x():\n    pass\n"})
    result = run(tmp_path, ["test_broken.py"])
    [signal] = result.signals
    assert signal.code == "collect:test_broken.py"
    assert "no_such_module_here" in signal.message


def test_missing_interpreter_is_unavailable(tmp_path: Path) -> None:
    write_files(tmp_path, {"test_a.py": "def test_a():\n    pass\n"})
    result = run(tmp_path, ["test_a.py"], python=str(tmp_path / "no" / "python"))
    assert result.statuses[0].state == "unavailable"
    assert "test-command" in result.statuses[0].note


def test_interpreter_without_pytest_is_unavailable(tmp_path: Path) -> None:
    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    write_files(tmp_path, {"test_a.py": "def test_a():\n    pass\n"})
    result = run(tmp_path, ["test_a.py"], python=str(venv / "bin" / "python"))
    assert result.statuses[0].state == "unavailable"
    assert "pytest is not installed" in result.statuses[0].note


def test_no_related_tests_is_skipped_not_clean(tmp_path: Path) -> None:
    result = run(tmp_path, [])
    assert result.statuses[0].state == "skipped"


def test_find_interpreter_order(tmp_path: Path) -> None:
    assert find_interpreter(tmp_path, "", {}) == sys.executable
    venv_python = tmp_path / "venv-env" / "bin" / "python"
    venv_python.parent.mkdir(parents=True)
    venv_python.write_text("")
    assert find_interpreter(tmp_path, "", {"VIRTUAL_ENV": str(tmp_path / "venv-env")}) == str(venv_python)
    local = tmp_path / ".venv" / "bin" / "python"
    local.parent.mkdir(parents=True)
    local.write_text("")
    assert find_interpreter(tmp_path, "", {"VIRTUAL_ENV": str(tmp_path / "venv-env")}) == str(local)
    assert find_interpreter(tmp_path, "/opt/py/bin/python", {}) == "/opt/py/bin/python"


@pytest.mark.parametrize("code", [0, 1])
def test_plain_exit_codes_are_ok(tmp_path: Path, code: int) -> None:
    body = "def test_a():\n    assert True\n" if code == 0 else "def test_a():\n    assert False\n"
    write_files(tmp_path, {"test_a.py": body})
    result = run(tmp_path, ["test_a.py"])
    assert result.statuses[0].state == "ok"
    assert len(result.signals) == code


def test_a_rewrite_of_the_same_size_in_the_same_second_is_seen(tmp_path: Path) -> None:
    # The candidate tree is reused between evaluations: stale bytecode must never run.
    write_files(
        tmp_path,
        {
            "m.py": "def add(a, b):\n    return a - b\n",
            "test_m.py": "from m import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        },
    )
    assert len(run(tmp_path, ["test_m.py"]).signals) == 1
    write_files(tmp_path, {"m.py": "def add(a, b):\n    return a + b\n"})
    assert run(tmp_path, ["test_m.py"]).signals == ()


def test_a_conftest_that_breaks_pytest_is_unavailable_not_ok(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            # A hook signature pytest rejects at start-up (as pytest 9 rejects boltons' old ``path``
            # argument): exit code 1 and no test run.
            "conftest.py": "def pytest_ignore_collect(no_such_argument, config):\n    return False\n",
            "test_m.py": "def test_ok():\n    assert True\n",
        },
    )
    result = run(tmp_path, ["test_m.py"])
    [status] = result.statuses
    assert status.state == "unavailable", status
    assert "pytest exited with code" in status.note


def test_an_assert_pytest_did_not_rewrite_shows_its_local_values_bounded_and_redacted(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            # Not a test module: pytest leaves its asserts alone, so its failure says only AssertionError.
            "tests/helpers.py": (
                "def same(expected, result, api_token='hunter2'):\n"
                "    key = 'sk-ant-' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3'\n"
                "    assert expected == result\n"
            ),
            "tests/test_x.py": (
                "from helpers import same\n\n\n"
                "def test_values():\n    same('x' * 1000, 'y')\n\n\n"
                "def test_rewritten():\n    a = 1\n    assert a == 2\n"
            ),
        },
    )
    signals = {s.code.split("::")[-1]: s for s in run(tmp_path, ["tests/test_x.py"]).signals}
    detail = signals["test_values"].detail
    assert "Local values where the assert failed (tests/helpers.py:3):" in detail
    values = detail.split("Local values where the assert failed")[1]
    assert "result = 'y'" in values
    assert max(len(row) for row in values.splitlines()) < 320  # a repr is cut at a few hundred characters
    assert "hunter2" not in values and "api_token = «redacted»" in values
    assert "a1B2c3D4e5F6g7H8i9J0k1L2m3" not in values and "«secret:anthropic-key:" in values
    # pytest shows a rewritten assert's values itself: nothing is added.
    assert "Local values" not in signals["test_rewritten"].detail


STABLE_TESTS = """import time


class Thing:
    pass


def test_address():
    thing = Thing()
    assert thing is None, f"{thing!r} is not None"


def test_paths(tmp_path):
    import os
    here = os.path.join(os.getcwd(), "data", "file.txt")
    assert False, f"{here} and {tmp_path / 'out.txt'}"


def test_timing():
    raise AssertionError("the call took 12.34ms, too long")
"""


def test_failure_text_is_the_same_in_any_folder_and_run(tmp_path: Path) -> None:
    """What a model is shown of a failure carries no run's accidents: the folder the tests ran in, a
    tmp_path, an object's address, a measured time."""
    seen = []
    for name in ("first", "second-folder"):
        tree = tmp_path / name
        write_files(tree, {"test_stable.py": STABLE_TESTS})
        result = run(tree, ["test_stable.py"])
        signals = sorted(result.signals, key=lambda s: s.code)
        assert len(signals) == 3, result
        seen.append([(s.message, s.detail) for s in signals])
    assert seen[0] == seen[1]
    text = "\n".join(m + d for m, d in seen[0])
    assert str(tmp_path) not in text and "0x..." in text and "took <time>" in text
    assert "data/file.txt and <tmp>/test_paths0/out.txt" in text


def test_folders_beside_the_asked_for_tests_are_not_walked(tmp_path: Path) -> None:
    """pytest matches every sibling folder of the way to an asked-for test against its ignore patterns
    (0.1 s a run beside 800 packages); the plugin answers first for them, and the tests collected are
    the same: the asked-for ones, node ids included, and conftests on the way still load."""
    seen = tmp_path / "seen.txt"
    hook = (
        "def pytest_ignore_collect(collection_path, config):\n"
        f"    open({str(seen)!r}, 'a').write(str(collection_path) + '\\n')\n"
    )
    failing = "def test_one():\n    assert False\n\n\ndef test_two():\n    assert False\n"
    write_files(
        tmp_path / "tree",
        {
            "conftest.py": hook,
            "tests/a/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef value():\n    return 1\n",
            "tests/a/test_x.py": "def test_x(value):\n    assert value == 2\n",
            **{f"tests/b{n}/test_y.py": failing for n in range(5)},
        },
    )
    tree = tmp_path / "tree"
    result = run(tree, ["tests/a/test_x.py"])
    assert [s.code for s in result.signals] == ["tests/a/test_x.py::test_x"]
    assert not seen.exists() or "/tests/b" not in seen.read_text()
    # Without the plugin, pytest's hooks look at every sibling folder.
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/a/test_x.py"], cwd=tree
    )
    assert "/tests/b" in seen.read_text()
    seen.unlink()
    both = run(tree, ["tests/a/test_x.py", "tests/b3/test_y.py::test_two"])
    assert sorted(s.code for s in both.signals) == [
        "tests/a/test_x.py::test_x",
        "tests/b3/test_y.py::test_two",
    ]


def test_a_subproject_with_its_own_pytest_config_is_named_from_the_project_root(tmp_path: Path) -> None:
    # pytest takes sub/pytest.ini as its rootdir and names the test from there; the loop reads the test's
    # source and passes its id back to pytest from the project's root, so the id is rebased onto it.
    write_files(
        tmp_path,
        {
            "sub/pytest.ini": "[pytest]\n",
            "sub/pkg/m.py": "def add(a, b):\n    return a - b\n",
            "sub/pkg/__init__.py": "",
            "sub/tests/test_m.py": "from pkg.m import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
            "sub/tests/conftest.py": "import sys, pathlib\nsys.path.insert(0, str(pathlib.Path(__file__).parents[1]))\n",
        },
    )
    result = run(tmp_path, ["sub/tests/test_m.py"])
    [signal] = result.signals
    assert signal.code == "sub/tests/test_m.py::test_add"
    assert signal.path == "sub/tests/test_m.py"
    assert signal.line == 5
    again = run(tmp_path, [signal.code])  # the rebased id is one pytest takes from the project's root
    assert [s.code for s in again.signals] == [signal.code]


def test_a_run_of_a_subprojects_tests_beside_the_projects_own_names_each_from_the_root(
    tmp_path: Path,
) -> None:
    # pytest takes sub/ as the rootdir of the whole run and names tests/test_top.py "sub::test_top".
    write_files(
        tmp_path,
        {
            "sub/pytest.ini": "[pytest]\n",
            "sub/tests/test_m.py": "def test_add():\n    assert 1 + 1 == 3\n",
            "tests/test_top.py": "def test_top():\n    assert 2 * 2 == 5\n",
        },
    )
    result = run(tmp_path, ["tests/test_top.py", "sub/tests/test_m.py"])
    assert sorted((s.code, s.path) for s in result.signals) == [
        ("sub/tests/test_m.py::test_add", "sub/tests/test_m.py"),
        ("tests/test_top.py::test_top", "tests/test_top.py"),
    ]


def test_a_missing_fixture_is_the_message_however_many_fixtures_pytest_lists(tmp_path: Path) -> None:
    fixtures = "".join(f"@pytest.fixture\ndef fixture_number_{n}():\n    return {n}\n\n\n" for n in range(90))
    write_files(
        tmp_path,
        {"conftest.py": "import pytest\n\n\n" + fixtures, "test_m.py": "def test_x(mocker):\n    pass\n"},
    )
    [signal] = run(tmp_path, ["test_m.py"]).signals
    assert signal.message.endswith("fixture 'mocker' not found")


def calls_recorder() -> PytestSignals:
    config = PytestConfig(sys.executable, ("{python}", "-m", "pytest"), 10, 60)
    return PytestSignals(SubprocessRunner(), config, {"PATH": "/usr/bin:/bin"})


def test_a_run_asked_for_calls_records_the_functions_each_test_calls(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/mod.py": (
                "def helper(x):\n    return x\n\n\n"
                "def good(x):\n    return helper(x)\n\n\n"
                "def bad(x):\n    return [helper(v) for v in x][0] + 1\n"
            ),
            "tests/test_mod.py": (
                "from pkg.mod import bad, good\n\n\n"
                "def test_good():\n    assert good(1) == 1\n\n\n"
                "def test_bad():\n    assert bad([1]) == 1\n"
            ),
        },
    )
    signals = calls_recorder()
    result = signals.collect(tmp_path, ["tests/test_mod.py"], calls=True)
    runs = {r.nodeid: r for r in result.calls}
    assert runs["tests/test_mod.py::test_bad"].failed and not runs["tests/test_mod.py::test_good"].failed
    assert {("pkg/mod.py", 1), ("pkg/mod.py", 9)} <= runs["tests/test_mod.py::test_bad"].called
    assert ("pkg/mod.py", 9) not in runs["tests/test_mod.py::test_good"].called
    # An ordinary run pays nothing for it and records nothing.
    assert signals.collect(tmp_path, ["tests/test_mod.py"]).calls == ()


def test_a_run_asked_for_calls_records_the_lines_run_of_the_files_it_names(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/mod.py": "def pick(x):\n    if x:\n        return 'yes'\n    return 'no'\n",
            "pkg/other.py": "def same(x):\n    return x\n",
            "tests/test_mod.py": (
                "from pkg.mod import pick\nfrom pkg.other import same\n\n\n"
                "def test_yes():\n    assert same(pick(1)) == 'no'\n\n\n"
                "def test_no():\n    assert same(pick(0)) == 'no'\n"
            ),
        },
    )
    signals = calls_recorder()
    result = signals.collect(tmp_path, ["tests/test_mod.py"], calls=True, lines=["pkg/mod.py"])
    runs = {r.nodeid.rsplit("::", 1)[-1]: r for r in result.calls}
    assert runs["test_yes"].failed and not runs["test_no"].failed
    assert {("pkg/mod.py", 2), ("pkg/mod.py", 3)} <= runs["test_yes"].lines
    assert ("pkg/mod.py", 3) not in runs["test_no"].lines and ("pkg/mod.py", 4) in runs["test_no"].lines
    # Only the files named: the other module's calls are recorded, its lines are not.
    assert ("pkg/other.py", 1) in runs["test_yes"].called
    assert not any(path == "pkg/other.py" for path, _ in runs["test_yes"].lines)
    # Without files named, no line is recorded.
    assert all(not r.lines for r in signals.collect(tmp_path, ["tests/test_mod.py"], calls=True).calls)
