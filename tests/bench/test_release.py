"""Release tasks: the changes between two releases that the new release's tests notice. The changelog and
PyPI parts are unit-tested; the build and the self-checks run on two local releases of a small project,
with the real pytest (no network)."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import pytest

from coderefine.bench import pypi
from coderefine.bench.build import Source, make_suite
from coderefine.bench.harness import run_bench
from coderefine.bench.models import DoNothingModel, OracleModel
from coderefine.bench.pypi import pairs_after, released, releases
from coderefine.bench.release import ReleaseBuild
from coderefine.bench.release_intent import cut, relative
from coderefine.bench.strategies import strategies
from coderefine.bench.suite import load_suite
from coderefine.bench.summary import summary
from coderefine.config import Settings
from coderefine.errors import UsageError
from coderefine.project.runner import SubprocessRunner
from tests.bench.test_command import run

ENV = {"PATH": os.environ["PATH"]}


def test_intent_text_is_cut_at_a_word_and_paths_are_relative(tmp_path: Path) -> None:
    text = "word " * 200
    short = cut(text, 50)
    assert len(short) <= 50 and short.endswith("word...") and "wor..." not in short
    tree = tmp_path / "source"
    message = f"AssertionError at {tree}/src/pkg/mod.py:3 and /usr/lib/python3/x/y.py: 1 != 2"
    assert relative(message, tree) == "AssertionError at src/pkg/mod.py:3 and y.py: 1 != 2"


def _index(versions: dict[str, list[tuple[str, str]]]) -> object:
    return {
        "releases": {
            v: [{"packagetype": kind, "upload_time_iso_8601": when} for kind, when in files]
            for v, files in versions.items()
        }
    }


def test_pairs_after_a_date_come_from_the_upload_times_of_source_distributions() -> None:
    data = _index(
        {
            "1.0": [("sdist", "2025-01-02T10:00:00.000000Z")],
            "1.1": [("bdist_wheel", "2025-06-01T10:00:00Z"), ("sdist", "2025-06-02T10:00:00Z")],
            "1.2rc1": [("sdist", "2025-08-01T10:00:00Z")],  # a pre-release: left out
            "1.2": [("sdist", "2025-09-01T10:00:00Z")],
            "1.3": [("bdist_wheel", "2025-10-01T10:00:00Z")],  # no source distribution
        }
    )
    urls: list[str] = []

    def fetch(url: str) -> object:
        urls.append(url)
        return data

    assert [r.version for r in releases("lib", fetch)] == ["1.0", "1.1", "1.2"]
    assert urls == ["https://pypi.org/pypi/lib/json"]
    assert pairs_after("lib", date(2025, 6, 1), fetch) == [("1.0", "1.1"), ("1.1", "1.2")]
    assert pairs_after("lib", date(2025, 6, 2), fetch) == [("1.1", "1.2")]
    assert released("lib", "1.1", fetch).date() == date(2025, 6, 2)
    with pytest.raises(UsageError, match="no source distribution of this version"):
        released("lib", "1.3", fetch)
    with pytest.raises(UsageError, match="not the JSON API"):
        releases("lib", lambda url: {"releases": [1]})


CORE_OLD = """def ordinal(number):
    return {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")


def clamp(value, low, high):
    return max(low, min(value, high))
"""

CORE_NEW = """def ordinal(number):
    if 10 <= number % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")


def clamp(value, low, high):
    return max(low, min(value, high))
"""

WORDS_OLD = """from textkit.core import ordinal


def place(number):
    return f"{number}{ordinal(number)}"


def title(text):
    return text.title()
"""

WORDS_NEW = """from textkit.core import ordinal


def place(number):
    return f"{number}{ordinal(number)} place"


def title(text):
    return text.title()
"""

UNITS_OLD = """def scale(size):
    for unit in ("B", "kB", "MB"):
        if size < 1000:
            return f"{size} {unit}"
        size //= 1000
    return f"{size} GB"
"""

UNITS_NEW = """def scale(size):
    if size < 0:
        raise ValueError("a size is never negative")
    for unit in ("B", "kB", "MB"):
        if size < 1000:
            return f"{size} {unit}"
        size //= 1000
    return f"{size} GB"
"""

TESTS = """import pytest

from textkit.core import clamp, ordinal
from textkit.units import scale
from textkit.words import place, title


def test_ordinal():
    assert [ordinal(n) for n in (1, 2, 3, 4)] == ["st", "nd", "rd", "th"]


def test_ordinal_teens():
    assert [ordinal(n) for n in (11, 12, 13, 111)] == ["th", "th", "th", "th"]


def test_place():
    assert place(2) == "2nd place"


def test_place_teens():
    assert place(12) == "12th place"


def test_clamp():
    assert clamp(5, 0, 3) == 3


def test_title():
    assert title("a b") == "A B"


def test_scale():
    assert scale(1500) == "1 kB"


def test_negative_sizes_are_refused():
    with pytest.raises(ValueError, match="never negative"):
        scale(-1)


@pytest.mark.parametrize("size", [-5, -1000])
def test_every_negative_size_is_refused(size):
    with pytest.raises(ValueError):
        scale(size)
"""

CHANGES = """# Changes

## 1.1

- `ordinal` and `place` say "th" for the teens, and `place` names the place.
- `scale` refuses negative sizes.

## 1.0

- First release.
"""


HEADER = '''"""Part of textkit, a small library of text helpers written for the tests of the benchmark's
release tasks; long enough to count as one of the library's own modules."""

'''


def make_release(root: Path, new: bool) -> Path:
    package = root / "textkit"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "core.py").write_text(HEADER + (CORE_NEW if new else CORE_OLD))
    (package / "words.py").write_text(HEADER + (WORDS_NEW if new else WORDS_OLD))
    (package / "units.py").write_text(HEADER + (UNITS_NEW if new else UNITS_OLD))
    (root / "tests").mkdir()
    # The old release's tests do not matter: the new release's are the specification.
    (root / "tests" / "test_textkit.py").write_text(TESTS if new else "def test_nothing():\n    pass\n")
    (root / "pyproject.toml").write_text('[project]\nname = "textkit"\nversion = "1"\n')
    if new:
        (root / "CHANGES.md").write_text(CHANGES)
    return root


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("release")
    old, new = make_release(root / "old" / "textkit", False), make_release(root / "new" / "textkit", True)
    source = Source(path=new, old_path=old, upgrade_to="1.1")
    make_suite(source, root / "suite", SubprocessRunner(), ENV, tasks=10, seed=2)
    return root / "suite"


@pytest.mark.slow
def test_one_task_per_coherent_change_with_its_changelog_items(suite: Path) -> None:
    library, tasks = load_suite(suite)
    assert library["upgrade_to"] == "1.1" and library["changed_files"] == 3
    assert library["fail_to_pass"] == 6 and library["pass_to_pass"] == 4
    assert {t.kind for t in tasks} == {"release"}
    by_shape = {t.shape: t for t in tasks}
    assert set(by_shape) == {"one-file", "multi-file"}, [t.task_id for t in tasks]
    # test_place_teens reaches core.py and words.py: one change of two files.
    multi = by_shape["multi-file"]
    assert set(multi.files) == {"textkit/core.py", "textkit/words.py"} and multi.path == multi.files[0]
    assert multi.intent.startswith("Make this change to textkit/")
    assert '"th" for the teens' in multi.intent and "negative" not in multi.intent
    single = by_shape["one-file"]
    assert single.path == "textkit/units.py" and single.files == ()
    assert single.intent.endswith("from the project's changelog: `scale` refuses negative sizes.")
    for task in tasks:
        assert task.visible and not set(task.visible) & set(task.hidden)
        assert task.strength == "changelog" and task.task_id.startswith("textkit-1.1/release-")


@pytest.mark.slow
def test_a_release_task_starts_from_the_old_files_and_keeps_only_its_visible_tests(
    suite: Path, tmp_path: Path
) -> None:
    _, tasks = load_suite(suite)
    multi = next(t for t in tasks if t.shape == "multi-file")
    folder = multi.materialise(tmp_path / "task")
    assert (folder / "textkit/core.py").read_text() == HEADER + CORE_OLD
    assert (folder / "textkit/words.py").read_text() == HEADER + WORDS_OLD
    assert (folder / "textkit/units.py").read_text() == HEADER + UNITS_NEW  # another change
    tests = (folder / "tests" / "test_textkit.py").read_text()
    shown = {n.split("::")[-1] for n in multi.visible}
    for name in ("test_ordinal", "test_clamp", "test_title", "test_scale"):  # pass-to-pass: hidden
        assert f"def {name}(" not in tests
    assert all(f"def {name}(" in tests for name in shown)
    runner = SubprocessRunner()
    starts = multi.start_texts()
    assert not multi.passes(starts, tmp_path, runner, ENV)
    fixed = {"textkit/core.py": HEADER + CORE_NEW, "textkit/words.py": HEADER + WORDS_NEW}
    assert multi.passes(fixed, tmp_path, runner, ENV)


@pytest.mark.slow
def test_release_self_checks(suite: Path) -> None:
    _, tasks = load_suite(suite)
    args = (Settings(), SubprocessRunner(), ENV)
    chosen = strategies("coderefine")
    fixed = run_bench(tasks, chosen, lambda t, s: OracleModel(t), *args, cache_dir=None, jobs=2)
    assert summary(fixed)["coderefine"]["fix_rate"] == 1.0, [r for r in fixed if not r.fixed]
    assert sorted(r.files for r in fixed) == [1, 2]
    assert all(r.changed and not r.passed_before for r in fixed)
    nothing = DoNothingModel()
    none = run_bench(tasks, strategies("one-shot"), lambda t, s: nothing, *args, cache_dir=None, jobs=2)
    assert summary(none)["one-shot"]["fixed"] == 0 and not any(r.changed for r in none)


def test_a_release_suite_needs_two_releases(tmp_path: Path) -> None:
    new = make_release(tmp_path / "new", True)
    with pytest.raises(UsageError, match="--upgrade-to needs NAME==VERSION"):
        make_suite(Source(path=new, upgrade_to="2"), tmp_path / "suite", SubprocessRunner(), ENV)
    assert not (tmp_path / "suite").exists()


def test_released_after_refuses_an_older_pair_and_names_the_dates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    index = _index({"1.0": [("sdist", "2025-01-02T10:00:00Z")], "1.1": [("sdist", "2025-06-02T10:00:00Z")]})
    monkeypatch.setattr(pypi, "fetch_json", lambda url: index)
    out = str(tmp_path / "s")
    argv = [
        "bench",
        "make-suite",
        "lib==1.0",
        "--upgrade-to",
        "1.1",
        "--released-after",
        "2025-07-01",
        "-o",
        out,
    ]
    assert run(argv)[0] == 2
    assert "lib==1.1 was released on 2025-06-02, not after 2025-07-01" in capsys.readouterr().err
    assert run(["bench", "make-suite", "lib", "--released-after", "2025-07-01", "-o", out])[0] == 2
    assert "no release after 2025-07-01" in capsys.readouterr().err
    assert run(["bench", "make-suite", "lib", "--released-after", "July", "-o", out])[0] == 2
    assert "give a date as YYYY-MM-DD" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


SPLIT_OLD = """def shout(text):
    return text.upper()


def whisper(text):
    return text.lower()


def count(text):
    return len(text)
"""

SPLIT_NEW = """def _clean(text):
    return " ".join(text.split())


def shout(text):
    return _clean(text).upper() + "!"


def whisper(text):
    return text.lower() + "..."


def count(text):
    return len(text)
"""

SPLIT_TESTS = """from voices.core import count, shout, whisper


def test_shout():
    assert shout("a  b") == "A B!"


def test_whisper():
    assert whisper("AB") == "ab..."


def test_count():
    assert count("ab") == 2
"""


@pytest.mark.slow
def test_a_change_too_large_for_one_task_is_split_by_function(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from coderefine.bench import release

    for version, text, tests in (
        ("old", SPLIT_OLD, "def test_nothing():\n    pass\n"),
        ("new", SPLIT_NEW, SPLIT_TESTS),
    ):
        root = tmp_path / version / "voices"
        (root / "voices").mkdir(parents=True)
        (root / "voices" / "__init__.py").write_text("")
        (root / "voices" / "core.py").write_text(HEADER + text)
        (root / "tests").mkdir()
        (root / "tests" / "test_voices.py").write_text(tests)
        (root / "pyproject.toml").write_text('[project]\nname = "voices"\nversion = "1"\n')
    # The file's change (10 lines) is over the limit; each function's (5 and 2 lines) within it.
    monkeypatch.setattr(release, "MAX_LINES", 6)
    source = Source(path=tmp_path / "new" / "voices", old_path=tmp_path / "old" / "voices", upgrade_to="2")
    make_suite(source, tmp_path / "suite", SubprocessRunner(), ENV, tasks=10, seed=1)
    _, tasks = load_suite(tmp_path / "suite")
    by_function = {t.function: t for t in tasks}
    # shout goes with its new helper _clean; whisper is a task of its own.
    assert set(by_function) == {"_clean,shout", "whisper"}, [t.function for t in tasks]
    shout = by_function["_clean,shout"].start_texts()["voices/core.py"]
    assert "_clean" not in shout and 'return text.lower() + "..."' in shout
    whisper = by_function["whisper"]
    assert whisper.start_texts()["voices/core.py"] == HEADER + SPLIT_NEW.replace(' + "..."', "")
    assert [n.split("::")[-1] for n in whisper.visible] == ["test_whisper"]
    assert whisper.strength == "tests" and "voices/core.py (`whisper`)" in whisper.intent
    runner = SubprocessRunner()
    for task in tasks:
        assert not task.passes(task.start_texts(), tmp_path, runner, ENV)
        assert task.passes({task.path: HEADER + SPLIT_NEW}, tmp_path, runner, ENV)


def test_a_release_without_tasks_says_why_without_contradicting_itself() -> None:
    untested = ReleaseBuild([], 0, 40, 2)
    assert "no fail-to-pass test" in untested.reason()
    large = ReleaseBuild([], 96, 40, 2, ("lib/core.py (`render`): 296 lines, 96 fail-to-pass tests",), 1)
    reason = large.reason()
    assert reason.startswith("96 fail-to-pass tests, but no task: too large to be a task even split")
    assert "`render`): 296 lines, 96 fail-to-pass tests" in reason and "1 change put back alone" in reason


def test_an_interrupted_sweep_still_writes_the_table_of_the_pairs_it_tried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from coderefine.bench import build

    uploads = {
        v: [("sdist", f"2025-0{i + 1}-02T10:00:00Z")] for i, v in enumerate(["1.0", "1.1", "1.2", "1.3"])
    }
    monkeypatch.setattr(pypi, "fetch_json", lambda url: _index(uploads))

    def fake_make_suite(source: Source, folder: Path, *args: object, **kwargs: object) -> list[object]:
        if source.upgrade_to == "1.2":
            raise KeyboardInterrupt
        raise UsageError(
            f"{source.requirement} -> {source.upgrade_to}: only docs, tests or packaging changed"
        )

    monkeypatch.setattr(build, "make_suite", fake_make_suite)
    out = tmp_path / "sweep"
    assert run(["bench", "make-suite", "lib", "--released-after", "2025-01-01", "-o", str(out)])[0] == 130
    text = (out / "pairs.md").read_text()
    assert "| lib 1.0 -> 1.1 | 0 | only docs, tests or packaging changed |" in text
    assert "| lib 1.1 -> 1.2 | 0 | interrupted |" in text
    assert "| lib 1.2 -> 1.3 | 0 | not tried: interrupted |" in text
    assert "interrupted" in capsys.readouterr().err


def test_a_backport_pairs_with_the_release_before_it_in_version_order_not_in_upload_order() -> None:
    data = _index(
        {
            "2.3.1": [("sdist", "2025-01-02T10:00:00Z")],
            "2.4.0": [("sdist", "2025-07-01T10:00:00Z")],
            "2.3.5": [("sdist", "2025-07-01T12:00:00Z")],  # a backport after 2.4.0: not 2.5.0's base
            "2.5.0": [("sdist", "2025-07-02T10:00:00Z")],
            "2.3.2": [("sdist", "2025-08-02T10:00:00Z")],  # a backport, uploaded after 2.5.0
            "2.5.1": [("sdist", "2025-09-02T10:00:00Z")],
            "2.6": [("sdist", "2025-10-02T10:00:00Z")],
            "2.6.0.post1": [("sdist", "2025-10-03T10:00:00Z")],
        }
    )
    assert pairs_after("lib", date(2025, 6, 1), lambda url: data) == [
        ("2.3.1", "2.4.0"),
        ("2.3.1", "2.3.5"),
        ("2.4.0", "2.5.0"),
        ("2.3.1", "2.3.2"),
        ("2.5.0", "2.5.1"),
        ("2.5.1", "2.6"),
        ("2.6", "2.6.0.post1"),
    ]
