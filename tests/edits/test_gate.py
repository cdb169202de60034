import os
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coderefine.edits.gate import path_problem, run_gate


def test_a_good_candidate_passes_and_names_changed_symbols(tmp_path: Path) -> None:
    before = {"m.py": "def f():\n    return 1\n\n\nclass A:\n    def g(self):\n        return 2\n"}
    after = {"m.py": "def f():\n    return 1\n\n\nclass A:\n    def g(self):\n        return 3\n"}
    result = run_gate(after, before, root=tmp_path, allowed=["m.py"])
    assert result.ok
    assert result.changed == ("m.py::A.g",)


def test_syntax_error_fails_with_location(tmp_path: Path) -> None:
    result = run_gate({"m.py": "def f(:\n    pass\n"}, {}, root=tmp_path, allowed=["m.py"])
    assert not result.ok
    assert result.syntax[0].line == 1
    assert "m.py:1" in result.feedback()


@pytest.mark.parametrize(
    "code",
    [
        "return 1\n",  # libcst accepts it at module level; CPython does not
        "def f(a, a):\n    pass\n",
        "x = 1\nnonlocal x\n",
    ],
)
def test_compile_catches_what_libcst_accepts(tmp_path: Path, code: str) -> None:
    result = run_gate({"m.py": code}, {}, root=tmp_path, allowed=["m.py"])
    assert not result.ok
    assert "compile() rejects" in result.feedback()


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/etc/passwd", "absolute"),
        ("../outside.py", "outside"),
        (".git/hooks/pre-commit", ".git"),
        ("other.py", "not under review"),
    ],
)
def test_paths_that_are_refused(tmp_path: Path, path: str, message: str) -> None:
    problem = path_problem(path, tmp_path, ["m.py", path if message != "not under review" else "m.py"])
    assert problem is not None
    assert message in problem


def test_symlink_escape_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "root"
    root.mkdir()
    os.symlink(outside, root / "link")
    problem = path_problem("link/m.py", root, ["link/m.py"])
    assert problem is not None and "symlink" in problem


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="def():\n pas=1ret", max_size=40))
def test_gate_never_accepts_what_compile_rejects(code: str) -> None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a SyntaxWarning ('1()') is not a rejection
            compile(code, "m.py", "exec", dont_inherit=True)
        compiles = True
    except (SyntaxError, ValueError):
        compiles = False
    result = run_gate({"m.py": code}, {}, root=Path("project"), allowed=["m.py"])
    if not compiles:
        assert not result.ok


def test_tests_may_start_once_the_candidate_can_run(tmp_path: Path) -> None:
    calls: list[str] = []
    good = run_gate(
        {"m.py": "def f():\n    return 2\n"},
        {"m.py": "def f():\n    return 1\n"},
        root=tmp_path,
        allowed=["m.py"],
        on_runnable=lambda: calls.append("start"),
    )
    assert good.ok and good.changed == ("m.py::f",) and calls == ["start"]
    for candidate, allowed in (({"m.py": "def f(:\n"}, ["m.py"]), ({"other.py": "x = 1\n"}, ["m.py"])):
        refused = run_gate(
            candidate, {}, root=tmp_path, allowed=allowed, on_runnable=lambda: calls.append("again")
        )
        assert not refused.ok
    assert calls == ["start"]  # nothing that cannot run, or may not be written, starts its tests


def test_libcst_is_imported_off_the_main_thread_and_the_loop_does_not_import_it() -> None:
    """The loop's import leaves libcst out (a tenth of a second before the first signals);
    ``prepare_gate`` imports it in a background thread, which the loop starts before its first signals."""
    import subprocess
    import sys

    program = (
        "import sys, threading\n"
        "import coderefine.refiner.loop\n"
        "print('libcst' in sys.modules)\n"
        "from coderefine.edits.gate import prepare_gate\n"
        "prepare_gate()\n"
        "[t.join() for t in threading.enumerate() if t.name == 'coderefine-gate']\n"
        "print('libcst' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]
