from coderefine.signals.related import imported_modules, related_tests, select_tests


def test_relative_imports_resolve_against_the_package() -> None:
    source = "from ._scan import scan\nfrom . import _util\nfrom ..top import x\n"
    assert {"pkg.sub._scan", "pkg.sub._util", "pkg.top", "pkg.top.x"} <= imported_modules(source, "pkg.sub")


def test_a_private_module_re_exported_by_its_package_in_a_src_layout() -> None:
    files = [
        "src/altsvc/__init__.py",
        "src/altsvc/_scan.py",
        "src/altsvc/_other.py",
        "tests/test_parse.py",
        "tests/test_alias.py",
        "tests/test_sibling.py",
        "tests/test_lazy.py",
    ]
    texts = {
        "src/altsvc/__init__.py": "from ._scan import scan\nfrom altsvc._other import other\n",
        "tests/test_parse.py": "from altsvc import scan\n",
        "tests/test_alias.py": "import altsvc as a\n",
        "tests/test_sibling.py": "from altsvc._other import other\n",
        "tests/test_lazy.py": "def test_it():\n    import altsvc\n",
    }
    assert related_tests(["src/altsvc/_scan.py"], files, texts) == [
        "tests/test_alias.py",
        "tests/test_lazy.py",
        "tests/test_parse.py",
    ]


def test_re_exports_are_followed_through_nested_packages() -> None:
    files = ["mi/__init__.py", "mi/core/__init__.py", "mi/core/more.py", "tests/test_recipes.py"]
    texts = {
        "mi/__init__.py": "from .core import *\n",
        "mi/core/__init__.py": "from .more import *  # noqa\n",
        "tests/test_recipes.py": "import mi as m\n",
    }
    assert related_tests(["mi/core/more.py"], files, texts) == ["tests/test_recipes.py"]


def test_a_package_that_does_not_re_export_the_module_is_not_followed() -> None:
    files = ["pkg/__init__.py", "pkg/mod.py", "tests/test_pkg.py"]
    texts = {"pkg/__init__.py": "VERSION = '1'\n", "tests/test_pkg.py": "import pkg\n"}
    assert related_tests(["pkg/mod.py"], files, texts) == []


def test_whole_suite_on_request_and_as_a_fallback_for_a_small_suite() -> None:
    files = ["pkg/mod.py", "tests/test_a.py", "tests/test_b.py"]
    texts = {"tests/test_a.py": "import json\n", "tests/test_b.py": ""}
    fallback = select_tests(["pkg/mod.py"], files, texts)
    assert fallback.scope == "fallback" and fallback.files == ("tests/test_a.py", "tests/test_b.py")
    assert "whole suite" in fallback.describe()
    nothing = select_tests(["pkg/mod.py"], files, texts, small_suite=1)
    assert nothing.files == () and 'tests = "all"' in nothing.describe()
    everything = select_tests(["tests/test_a.py"], files, texts, run_all=True)
    assert everything.scope == "all" and len(everything.files) == 2


def test_a_test_file_at_the_top_of_the_project() -> None:
    files = ["mod.py", "test_mod_usage.py"]
    assert related_tests(["mod.py"], files, {"test_mod_usage.py": "from . import helper\nimport mod\n"}) == [
        "test_mod_usage.py"
    ]
