"""What a library declares it needs, read from its source distribution: its runtime dependencies and its
test extra, which make-suite installs before running its tests; and the distribution that brings a
module its tests import, for advice (the import name is not always the name to install: ``yaml`` is
PyYAML).

Nothing here runs the library's code: a ``setup.py`` that computes its dependencies is not read, and such
a library's tests that need them say so in the advice of a suite that is not green.
"""

from __future__ import annotations

import configparser
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from email.parser import HeaderParser
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement

# The extras (and PEP 735 dependency groups) that hold a library's test dependencies, in this order.
TEST_EXTRAS = ("test", "tests", "testing")

# Modules whose distribution has another name: the well-known mismatches, for a library that does not
# declare the distribution itself.
DISTRIBUTIONS = {
    "yaml": "PyYAML",
    "PIL": "Pillow",
    "cv2": "opencv-python",
    "sklearn": "scikit-learn",
    "skimage": "scikit-image",
    "bs4": "beautifulsoup4",
    "dateutil": "python-dateutil",
    "attr": "attrs",
    "Crypto": "pycryptodome",
    "OpenSSL": "pyOpenSSL",
    "jwt": "PyJWT",
    "magic": "python-magic",
    "serial": "pyserial",
    "usb": "pyusb",
    "dotenv": "python-dotenv",
    "git": "GitPython",
    "docx": "python-docx",
    "pptx": "python-pptx",
    "zmq": "pyzmq",
    "MySQLdb": "mysqlclient",
    "slugify": "python-slugify",
    "jose": "python-jose",
    "multipart": "python-multipart",
    "socks": "PySocks",
    "nacl": "PyNaCl",
    "markdown": "Markdown",
    "pkg_resources": "setuptools",
    "dns": "dnspython",
    "ldap": "python-ldap",
    "fitz": "PyMuPDF",
    "ruamel": "ruamel.yaml",
    "google": "protobuf",
    "mpl_toolkits": "matplotlib",
    "_pytest": "pytest",
    "tomli_w": "tomli-w",
    "sortedcontainers": "sortedcontainers",
    "Levenshtein": "Levenshtein",
    "typing_extensions": "typing-extensions",
    "lxml": "lxml",
    "wx": "wxPython",
    "gi": "PyGObject",
}


@dataclass(frozen=True)
class Declared:
    """A library's declared needs: ``runtime`` and ``test`` (its test extra's, named ``extra``) as pip
    requirements, and every requirement of every extra by its normalized name (for advice)."""

    runtime: tuple[str, ...] = ()
    test: tuple[str, ...] = ()
    extra: str = ""
    extras: Mapping[str, tuple[str, str]] = field(default_factory=dict)  # name -> (spelled, its extra)
    source: str = ""  # the file they were read from

    def requirements(self) -> tuple[str, ...]:
        """What make-suite installs before ``--requires``: runtime first, then the test extra's."""
        return tuple(dict.fromkeys([*self.runtime, *self.test]))

    def extra_members(self, name: str) -> tuple[str, ...]:
        """Every package of the optional extra that declares ``name`` (none for a runtime one)."""
        extra = self.extras.get(normalize(name), ("", ""))[1]
        return tuple(spelled for spelled, of in self.extras.values() if extra and of == extra)

    def describe(self) -> str:
        """``"2 declared dependencies (attrs, PyYAML) and its test extra (hypothesis)"``, or ""."""
        parts = []
        if self.runtime:
            noun = "dependency" if len(self.runtime) == 1 else "dependencies"
            parts.append(f"{len(self.runtime)} declared {noun} ({', '.join(self.runtime)})")
        if self.test:
            parts.append(f"its '{self.extra}' extra ({', '.join(self.test)})")
        return " and ".join(parts)


NOTHING = Declared()


def normalize(name: str) -> str:
    """A distribution's name as PyPI compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def declared(tree: Path, own_name: str = "") -> Declared:
    """The declared needs of the library unpacked at ``tree`` (its own name left out of them), from the
    first of: PKG-INFO's Requires-Dist, an egg-info's requires.txt, pyproject.toml's [project] and
    dependency groups, setup.cfg; nothing when none declares any."""
    for source, entries in _sources(tree):
        if entries:
            return _sorted_out(entries, normalize(own_name or _own_name(tree)), source)
    return Declared()


def distribution_for(module: str, found: Declared) -> tuple[str, str]:
    """The distribution to install for a top-level ``module`` its tests import, and where that comes
    from ("" when it is the module's own name): the library's own declaration first, then the
    well-known mismatches."""
    known = DISTRIBUTIONS.get(module, "")
    # A namespace's distribution is named after the module below it: ``ruamel`` is ruamel.yaml.
    below = [name for name, (spelled, _) in found.extras.items() if spelled.startswith(f"{module}.")]
    # Or after the module with a word added: pyparsing's diagrams extra declares railroad-diagrams, which
    # its tests import as ``railroad``.
    longer = sorted(name for name in found.extras if name.startswith(f"{normalize(module)}-"))
    for candidate in (known, module, *below, *longer):
        if candidate and normalize(candidate) in found.extras:
            spelled, extra = found.extras[normalize(candidate)]
            where = f"its '{extra}' extra declares it" if extra else "it declares it"
            return spelled, where
    if known and normalize(known) != normalize(module):
        return known, f"the distribution of the module {module}"
    return module, ""


# An entry: (requirement text, the extra or group it is under, "" for runtime).
_Entry = tuple[str, str]


def _sources(tree: Path) -> Iterable[tuple[str, list[_Entry]]]:
    yield "PKG-INFO", _pkg_info(tree / "PKG-INFO")
    infos = [*tree.glob("*.egg-info/requires.txt"), *tree.glob("src/*.egg-info/requires.txt")]
    for requires in sorted(infos):
        yield requires.relative_to(tree).as_posix(), _requires_txt(requires)
    yield "pyproject.toml", _pyproject(tree / "pyproject.toml")
    yield "setup.cfg", _setup_cfg(tree / "setup.cfg")


def _pkg_info(path: Path) -> list[_Entry]:
    if not path.is_file():
        return []
    headers = HeaderParser().parsestr(path.read_text("utf-8", errors="replace"))
    return [(value, "") for value in headers.get_all("Requires-Dist") or []]


def _requires_txt(path: Path) -> list[_Entry]:
    entries: list[_Entry] = []
    section = ""
    for raw in path.read_text("utf-8", errors="replace").splitlines():
        line = raw.strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
        elif line and not line.startswith("#"):
            extra, _, marker = section.partition(":")
            entries.append((f"{line}; {marker}" if marker else line, extra))
    return entries


def _pyproject(path: Path) -> list[_Entry]:
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return []
    found = data.get("project")
    project: dict[str, object] = found if isinstance(found, dict) else {}
    entries: list[_Entry] = [(r, "") for r in _strings(project.get("dependencies"))]
    optional = project.get("optional-dependencies")
    for extra, reqs in optional.items() if isinstance(optional, dict) else ():
        entries += [(r, str(extra)) for r in _strings(reqs)]
    groups = data.get("dependency-groups")
    for group, reqs in groups.items() if isinstance(groups, dict) else ():
        # A group's {include-group = ...} tables are left out: what the strings name is enough for tests.
        entries += [(r, f"group:{group}") for r in _strings(reqs)]
    return entries


def _setup_cfg(path: Path) -> list[_Entry]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return []
    entries: list[_Entry] = []
    if parser.has_option("options", "install_requires"):
        entries += [(r, "") for r in _lines(parser.get("options", "install_requires"))]
    if parser.has_section("options.extras_require"):
        for extra, value in parser.items("options.extras_require"):
            entries += [(r, extra) for r in _lines(value)]
    return entries


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _lines(value: str) -> list[str]:
    return [line.strip() for line in value.splitlines() if line.strip() and not line.strip().startswith("#")]


def _own_name(tree: Path) -> str:
    """The library's name from its PKG-INFO, else from its folder (``name-1.0``)."""
    info = tree / "PKG-INFO"
    if info.is_file():
        name = HeaderParser().parsestr(info.read_text("utf-8", errors="replace")).get("Name")
        if name:
            return str(name)
    return tree.name.rpartition("-")[0] or tree.name


def _sorted_out(entries: list[_Entry], own: str, source: str) -> Declared:
    parsed: list[tuple[Requirement, str]] = []
    for text, extra in entries:
        try:
            parsed.append((Requirement(text), extra))
        except InvalidRequirement:
            continue
    by_extra: dict[str, list[Requirement]] = {}
    extras: dict[str, tuple[str, str]] = {}
    for requirement, extra in parsed:
        marker_extra = _marker_extra(requirement.marker)
        where = extra or marker_extra
        if not _applies(requirement.marker, marker_extra):
            continue
        by_extra.setdefault(where, []).append(requirement)
        if normalize(requirement.name) != own:
            extras.setdefault(normalize(requirement.name), (requirement.name, where.removeprefix("group:")))
    runtime = _expand(by_extra.get("", []), by_extra, own)
    test_extra = next((e for e in TEST_EXTRAS if e in by_extra), "")
    test_extra = test_extra or next((f"group:{e}" for e in TEST_EXTRAS if f"group:{e}" in by_extra), "")
    test = _expand(by_extra.get(test_extra, []), by_extra, own) if test_extra else []
    return Declared(
        tuple(runtime),
        tuple(r for r in test if r not in runtime),
        test_extra.removeprefix("group:"),
        extras,
        source,
    )


def _expand(
    requirements: list[Requirement], by_extra: Mapping[str, list[Requirement]], own: str
) -> list[str]:
    """Requirements as pip arguments, without their markers (already evaluated); the library's own name
    (``pkg[yaml]`` in its test extra) is replaced by what those extras of it declare."""
    found: list[str] = []
    for requirement in requirements:
        if normalize(requirement.name) == own:
            for extra in sorted(requirement.extras):
                found += _expand(
                    [r for r in by_extra.get(extra, []) if normalize(r.name) != own], by_extra, own
                )
            continue
        bare = Requirement(str(requirement))
        bare.marker = None
        found.append(str(bare))
    return list(dict.fromkeys(found))


def _marker_extra(marker: Marker | None) -> str:
    """The extra a Requires-Dist marker names (``extra == "test"``), or ""."""
    if marker is None:
        return ""
    found = re.search(r"""extra\s*==\s*["']([^"']+)["']""", str(marker))
    return found.group(1) if found else ""


def _applies(marker: Marker | None, extra: str) -> bool:
    """Whether a requirement's marker holds for this Python, with its extra asked for."""
    if marker is None:
        return True
    try:
        return bool(marker.evaluate({"extra": extra}))
    except Exception:  # an unknown marker variable: install it rather than guess it away
        return True
