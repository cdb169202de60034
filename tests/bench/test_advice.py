"""What make-suite says when a library gives no suite: the failing tests' first lines and the option that
would help; a pair without a code change names the next one that has one."""

from __future__ import annotations

from pathlib import Path

from coderefine.bench import library
from coderefine.bench.advice import (
    absent_path,
    has_tests,
    left_out_summary,
    missing_plugins,
    next_changed,
    no_source_change,
    not_green,
    plugins_left_out,
)
from coderefine.bench.declared import Declared
from coderefine.bench.library import SuiteRun


def test_a_suite_that_is_not_green_names_what_failed_and_the_option_that_fixes_it() -> None:
    speedups = library.TestOutcome(
        "tests/test_speedups.py", "error", "ModuleNotFoundError: No module named 'lib._speedups'"
    )
    yaml = library.TestOutcome("tests/test_config.py", "error", "ModuleNotFoundError: No module named 'yaml'")
    run = SuiteRun((), False, "2 errors", (speedups, yaml))
    message = not_green("lib==1.0", [run, run])
    assert message.startswith("lib==1.0: its test suite does not run green on the clean code: ")
    assert "tests/test_speedups.py: ModuleNotFoundError: No module named 'lib._speedups'" in message
    # The distribution to install, not the import name.
    assert "try adding PyYAML to --requires" in message
    assert "PyYAML: the distribution of the module yaml" in message
    # A compiled extension of the library itself cannot be required: its test file is left out.
    assert "--deselect tests/test_speedups.py" in message and "--deselect tests/test_config.py" not in message


def test_a_missing_module_the_library_declares_is_named_as_it_declares_it() -> None:
    needs = Declared(extras={"pyyaml": ("PyYAML", "yaml")})
    yaml = library.TestOutcome("tests/test_config.py", "error", "ModuleNotFoundError: No module named 'yaml'")
    message = not_green("lib==1.0", [SuiteRun((), False, "1 error", (yaml,))], needs)
    assert "try adding PyYAML to --requires" in message and "PyYAML: its 'yaml' extra declares it" in message


def test_a_module_from_an_optional_extra_names_the_whole_extra() -> None:
    # pyparsing 3.1.0: its diagram tests import railroad, then jinja2; both are in its diagrams extra.
    needs = Declared(
        extras={
            "railroad-diagrams": ("railroad-diagrams", "diagrams"),
            "jinja2": ("jinja2", "diagrams"),
            "pytest": ("pytest", "test"),
        }
    )
    railroad = library.TestOutcome(
        "tests/test_diagram.py", "error", "ModuleNotFoundError: No module named 'railroad'"
    )
    message = not_green("lib==1.0", [SuiteRun((), False, "1 error", (railroad,))], needs)
    assert "try adding railroad-diagrams,jinja2 to --requires" in message
    assert needs.extra_members("pytest") == ("pytest",) and Declared().extra_members("jinja2") == ()


def test_a_run_without_any_test_says_where_the_tests_may_be(tmp_path: Path) -> None:
    message = not_green("lib==1.0", [SuiteRun((), False, "no tests ran in 0.01s")])
    assert "pytest ran no test (no tests ran in 0.01s)" in message and "--from PATH" in message
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "core.py").write_text("x = 1\n")
    assert not has_tests(tmp_path)
    (tmp_path / "lib" / "test_core.py").write_text("def test_x():\n    pass\n")
    assert has_tests(tmp_path)


def test_a_pair_without_a_code_change_names_the_next_pair_that_has_one(tmp_path: Path) -> None:
    def tree(name: str, text: str) -> Path:
        (tmp_path / name / "lib").mkdir(parents=True)
        (tmp_path / name / "lib" / "core.py").write_text(text)
        return tmp_path / name

    new = tree("1.1", "x = 1\n")
    later = {"1.2": tree("1.2", "x = 1\n"), "1.3": tree("1.3", "x = 2\n")}
    fetched: list[str] = []

    def fetch(version: str) -> Path | None:
        fetched.append(version)
        return later.get(version)

    assert next_changed(["lib/core.py"], new, ["1.2", "1.3", "1.4"], fetch) == "1.3"
    assert fetched == ["1.2", "1.3"]  # no download past the first that changes the code
    assert next_changed(["lib/core.py"], new, ["1.4"], fetch) is None
    message = no_source_change("lib==1.0 -> 1.1", "lib", "1.1", ("1.1", "1.3"))
    assert "only docs, tests or packaging changed" in message
    assert message.endswith("try lib==1.1 --upgrade-to 1.3 instead, the next pair that changes the code")
    assert no_source_change("x", "lib", "1.1", None).endswith("choose another pair of versions")


def test_a_suite_stopped_at_its_time_limit_is_told_to_take_more_time_not_to_fix_its_requires() -> None:
    passed = library.TestOutcome("tests/test_a.py::test_a", "passed", "")
    stopped = SuiteRun((passed,), False, "'venv/bin/python -m pytest' ran longer than 120s and was stopped")
    message = not_green("click==8.5.0 -> 8.5.1", [stopped])
    assert "ran past its time limit ('venv/bin/python -m pytest' ran longer than 120s" in message
    assert "1 tests had run" in message and "CODEREFINE_BENCH_TIMEOUT_SCALE=3" in message
    assert "--requires" not in message


def test_the_time_limits_scale_from_the_environment() -> None:
    assert library.timeout_scale({}) == 1.0 and library.timeout_scale({library.TIMEOUT_SCALE: "3"}) == 3.0
    assert library.timeout_scale({library.TIMEOUT_SCALE: "soon"}) == 1.0
    assert library.timeout_scale({library.TIMEOUT_SCALE: "-2"}) == 1.0


def test_a_missing_pytest_plugin_is_named_by_the_fixture_or_async_test_that_needs_it() -> None:
    mocker = library.TestOutcome("tests/test_io.py::test_read", "failed", "fixture 'mocker' not found")
    own = library.TestOutcome("tests/test_io.py::test_own", "failed", "fixture 'project_dir' not found")
    sync = library.TestOutcome(
        "tests/test_aio.py::test_fetch", "failed", "Failed: async def functions are not natively supported."
    )
    run = SuiteRun((mocker, own, sync), True)
    message = not_green("lib==1.0", [run, run])
    assert "try adding pytest-asyncio,pytest-mock to --requires" in message
    # The test with a fixture of its own that is missing is a test to leave out, not a package to add.
    assert "--deselect tests/test_io.py::test_own" in message
    assert "--deselect tests/test_io.py::test_read" not in message
    assert missing_plugins(["fixture 'benchmark' not found", "fixture 'tmp_path' not found"]) == [
        "pytest-benchmark"
    ]
    # A suite that builds without them says which tests it lost and how to keep them.
    left = ("tests/test_io.py::test_read", "tests/test_io.py::test_own")
    warning = plugins_left_out("lib==1.0", run, left)
    assert warning == (
        "lib==1.0: 1 of the tests left out need pytest-mock (a pytest plugin); add pytest-mock to "
        "--requires to keep them"
    )
    assert plugins_left_out("lib==1.0", run, ("tests/test_io.py::test_own",)) == ""


def test_tests_left_out_are_grouped_by_why() -> None:
    def run(*outcomes: tuple[str, str, str]) -> SuiteRun:
        return SuiteRun(tuple(library.TestOutcome(*o) for o in outcomes), True)

    green = ("t.py::ok", "passed", "")
    first = run(
        green,
        ("t.py::mock", "failed", "fixture 'mocker' not found"),
        ("t.py::data1", "failed", "FileNotFoundError: [Errno 2] No such file or directory: 'data/x.json'"),
        ("t.py::data2", "failed", "FileNotFoundError: [Errno 2] No such file or directory: 'data/y.json'"),
        ("t.py::yaml", "failed", "ModuleNotFoundError: No module named 'yaml'"),
        ("t.py::flaky", "passed", ""),
        ("t.py::red", "failed", "assert 1 == 2"),
    )
    kept = [(o.nodeid, o.outcome, o.message) for o in first.outcomes if o.nodeid != "t.py::flaky"]
    second = run(*kept, ("t.py::flaky", "failed", "x"))
    left = ["t.py::mock", "t.py::data1", "t.py::data2", "t.py::yaml", "t.py::flaky", "t.py::red"]
    text = left_out_summary("lib", [first, second], left, ["tests/slow"])
    assert text == (
        "lib: 1 test green, 6 left out: 2 missing a file the source distribution does not ship (build from "
        "a checkout with --from to keep them); "
        "1 failing; 1 flaky (passed in one run, failed in the other); "
        "1 missing PyYAML (not installed: add it to --requires); "
        "1 missing pytest-mock (a pytest plugin: add it to --requires) "
        "(and what --deselect's 1 pattern left out from the start)"
    )
    assert left_out_summary("lib", [run(green)], [], []) == "lib: 1 test green, 0 left out"


def test_a_path_a_failure_names_that_the_sdist_lacks(tmp_path: Path) -> None:
    (tmp_path / "lib" / "tests").mkdir(parents=True)
    (tmp_path / "lib" / "tests" / "here.yaml").write_text("")
    absent = "ValueError: Path does not exist: lib/tests/fixtures/good.yaml"
    assert absent_path(absent, tmp_path) == "lib/tests/fixtures/good.yaml"
    assert absent_path(f"cannot open '{tmp_path}/lib/data/x.json'", tmp_path) == "lib/data/x.json"
    assert absent_path("lib/tests/here.yaml is wrong; see /etc/nothing/here", tmp_path) == ""
    failing = SuiteRun((library.TestOutcome("t.py::a", "failed", absent),), True)
    text = left_out_summary("lib", [failing, failing], ["t.py::a"], [], tree=tmp_path)
    assert text.endswith(
        "1 missing a file the source distribution does not ship (build from a checkout "
        "with --from to keep them), e.g. lib/tests/fixtures/good.yaml"
    )


def test_a_missing_module_declared_nowhere_may_be_a_folder_the_sdist_left_out() -> None:
    """pycodestyle 2.11.0's tests import its repository's `testing/` folder, which its source
    distribution does not hold: no --requires can bring it, a checkout can."""
    missing = library.TestOutcome(
        "tests/test_api.py", "error", "ModuleNotFoundError: No module named 'testing'"
    )
    message = not_green("pycodestyle==2.11.0", [SuiteRun((), False, "1 error", (missing,))])
    assert "try adding testing to --requires" in message
    assert "if testing is a folder of the project's repository" in message and "--from PATH" in message
    # A module the library declares is a package: no such aside.
    yaml = library.TestOutcome("tests/test_config.py", "error", "ModuleNotFoundError: No module named 'yaml'")
    needs = Declared(extras={"pyyaml": ("PyYAML", "yaml")})
    assert "--from" not in not_green("lib==1.0", [SuiteRun((), False, "1 error", (yaml,))], needs)
