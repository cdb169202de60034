"""``make-suite --disguise``: private names and locals renamed, definitions reordered, tests still green."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

from coderefine.bench.disguise import disguise_tree, rename_private, reorder
from tests.bench.test_build import make_project

HELPERS = '''

_LIMIT = 3


def _spaces(text):
    return " ".join(text.split())


def squeeze(text):
    """``text`` with single spaces, at most ``_LIMIT`` words."""
    return " ".join(_spaces(text).split()[:_LIMIT])
'''

TESTS = """
from textkit.core import squeeze


def test_squeeze():
    assert squeeze("a  b   c d") == "a b c"
"""


def test_a_disguised_project_keeps_its_api_and_its_tests_green(tmp_path: Path) -> None:
    project = make_project(tmp_path / "textkit")
    core = project / "textkit" / "core.py"
    core.write_text(core.read_text() + HELPERS)
    (project / "tests" / "test_squeeze.py").write_text(TESTS)
    before = core.read_text()
    done = disguise_tree(project, ["textkit/core.py"], seed=1)
    after = core.read_text()
    # _spaces is renamed; _LIMIT is named in a docstring (it may be reached by name), so it is kept.
    assert done.renamed == 1 and "def _spaces(" not in after and "_LIMIT = 3" in after
    assert done.locals_renamed >= 1 and done.moved >= 1
    for public in ("def clamp(value, low, high):", "def ordinal(number):", "def squeeze(text):"):
        assert public in after
    assert sorted(before.splitlines()) != sorted(after.splitlines())
    green = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project, capture_output=True
    )
    assert green.returncode == 0, green.stdout.decode()[-2000:]
    again = make_project(tmp_path / "again")
    (again / "textkit" / "core.py").write_text(before)
    disguise_tree(again, ["textkit/core.py"], seed=1)
    assert (again / "textkit" / "core.py").read_text() == after  # the same seed, the same disguise


def test_a_private_name_used_elsewhere_or_by_name_is_kept() -> None:
    text = "def _a():\n    return 1\n\n\ndef _b():\n    return getattr(m, '_b')\n\n\nx = _a() + _b()\n"
    changed, count = rename_private(text, "from m import _a\n", random.Random(0))
    assert count == 0 and changed == text  # _a is imported by another file; _b is reached by name


def test_definitions_evaluated_at_definition_time_keep_their_order() -> None:
    text = "def f():\n    return 1\n\n\ndef g(x=f):\n    return x()\n"
    for seed in range(5):
        assert reorder(text, random.Random(seed)) == (text, 0)
