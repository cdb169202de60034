"""What a library declares it needs, read from each place a source distribution may hold it."""

from __future__ import annotations

from pathlib import Path

from coderefine.bench.declared import Declared, declared, distribution_for


def test_pkg_info_gives_runtime_needs_and_the_test_extra(tmp_path: Path) -> None:
    (tmp_path / "PKG-INFO").write_text(
        "Metadata-Version: 2.1\nName: lib\nVersion: 1.0\n"
        "Requires-Dist: PyYAML>=6\n"
        'Requires-Dist: colorama; sys_platform == "win32" and sys_platform == "nt"\n'
        'Requires-Dist: hypothesis; extra == "test"\n'
        'Requires-Dist: lib[fast]; extra == "test"\n'
        'Requires-Dist: ujson; extra == "fast"\n'
        'Requires-Dist: sphinx; extra == "docs"\n'
    )
    found = declared(tmp_path)
    assert found.runtime == ("PyYAML>=6",)
    assert found.test == ("hypothesis", "ujson")  # the library's own extra, by what it declares
    assert found.extra == "test"
    assert found.requirements() == ("PyYAML>=6", "hypothesis", "ujson")
    assert found.source == "PKG-INFO"
    assert found.describe() == "1 declared dependency (PyYAML>=6) and its 'test' extra (hypothesis, ujson)"


def test_pyproject_with_a_dependency_group(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "lib"\ndependencies = ["attrs", "tomli; python_version < \'3.0\'"]\n'
        '[project.optional-dependencies]\nyaml = ["PyYAML"]\n'
        '[dependency-groups]\ntests = ["pytest-mock", {include-group = "other"}]\n'
    )
    found = declared(tmp_path)
    assert found.runtime == ("attrs",)
    assert found.test == ("pytest-mock",)
    assert found.extra == "tests"


def test_setup_cfg_and_egg_info(tmp_path: Path) -> None:
    (tmp_path / "setup.cfg").write_text(
        "[options]\ninstall_requires =\n    six\n    requests>=2\n"
        "[options.extras_require]\ntesting =\n    mock\n"
    )
    found = declared(tmp_path)
    assert (found.runtime, found.test, found.extra) == (("six", "requests>=2"), ("mock",), "testing")
    info = tmp_path / "lib.egg-info"
    info.mkdir()
    (info / "requires.txt").write_text("six\n\n[test]\npytest-cov\n\n[:python_version < '3.0']\nfuture\n")
    found = declared(tmp_path)
    assert (found.runtime, found.test, found.source) == (
        ("six",),
        ("pytest-cov",),
        "lib.egg-info/requires.txt",
    )


def test_nothing_declared(tmp_path: Path) -> None:
    assert declared(tmp_path) == Declared()
    assert Declared().describe() == ""


def test_a_module_is_named_by_its_distribution(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "lib"\n[project.optional-dependencies]\nyaml = ["PyYAML>=6"]\n'
    )
    found = declared(tmp_path)
    assert distribution_for("yaml", found) == ("PyYAML", "its 'yaml' extra declares it")
    assert distribution_for("PIL", Declared()) == ("Pillow", "the distribution of the module PIL")
    assert distribution_for("whatever", Declared()) == ("whatever", "")


def test_a_namespace_module_is_named_by_the_distribution_declared_below_it(tmp_path: Path) -> None:
    (tmp_path / "PKG-INFO").write_text(
        "Metadata-Version: 2.1\nName: yamale\nVersion: 6\nRequires-Dist: pyyaml\n"
        'Requires-Dist: ruamel.yaml; extra == "ruamel"\n'
    )
    found = declared(tmp_path)
    assert found.requirements() == ("pyyaml",)
    assert distribution_for("ruamel", found) == ("ruamel.yaml", "its 'ruamel' extra declares it")


def test_a_module_is_named_by_a_declared_distribution_of_its_name_and_a_word(tmp_path: Path) -> None:
    # pyparsing 3.2.0: its diagram tests import `railroad`, which its diagrams extra declares as
    # railroad-diagrams; the advice said "add railroad to --requires", which pip cannot install.
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "lib"\n[project.optional-dependencies]\n'
        'diagrams = ["railroad-diagrams", "jinja2"]\n'
    )
    found = declared(tmp_path)
    assert distribution_for("railroad", found) == ("railroad-diagrams", "its 'diagrams' extra declares it")
    assert distribution_for("rail", found) == ("rail", "")
