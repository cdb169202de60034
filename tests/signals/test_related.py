from coderefine.signals.related import MODULE_HOPS, imported_modules, related_tests, select_tests


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


IDCHECK = {
    "src/idcheck/__init__.py": "from ._uuid import new_id\n",
    "src/idcheck/_uuid.py": "from ._time import now\n",
    "src/idcheck/_time.py": "import time\n",
    "src/idcheck/_spare.py": "from . import _time\n",
    "tests/test_ids.py": "import idcheck\n",
    "tests/test_spare.py": "from idcheck._spare import x\n",
    "tests/test_other.py": "import json\n",
}


def test_imports_are_followed_through_private_modules_and_each_test_says_how() -> None:
    selection = select_tests(["src/idcheck/_time.py"], sorted(IDCHECK), IDCHECK, small_suite=0)
    assert selection.scope == "related"
    assert dict(selection.reasons) == {
        "tests/test_ids.py": "imports idcheck, which imports idcheck._uuid, which imports idcheck._time",
        "tests/test_spare.py": "imports idcheck._spare, which imports idcheck._time",
    }


def test_a_packages_own_relative_import_of_it_does_not_relate_its_modules_tests() -> None:
    texts = {**IDCHECK, "src/idcheck/_spare.py": "from . import helpers\n"}
    assert related_tests(["src/idcheck/_uuid.py"], sorted(texts), texts) == ["tests/test_ids.py"]


def test_an_import_chain_is_followed_only_so_far() -> None:
    chain = {f"pkg/m{i}.py": f"import pkg.m{i + 1}\n" for i in range(MODULE_HOPS + 1)}
    texts = {
        **chain,
        "pkg/__init__.py": "",
        "tests/test_near.py": f"import pkg.m{MODULE_HOPS}\n",
        "tests/test_far.py": "import pkg.m0\n",
    }
    changed = [f"pkg/m{MODULE_HOPS + 1}.py"]
    # the near test's module imports the changed one; m0 is MODULE_HOPS + 1 modules away from it
    assert related_tests(changed, [*sorted(texts), *changed], texts) == ["tests/test_near.py"]
