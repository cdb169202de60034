"""A local package index for make-suite's tests, with no network: a folder of wheels and sdists that pip
reads with ``PIP_NO_INDEX=1`` and ``PIP_FIND_LINKS``.

pytest and what it needs are repacked from this interpreter's installed files (a venv made by the build
needs them); a tiny distribution and a tiny library's sdist (with an in-tree build back end, so that
pip prepares its metadata without downloading setuptools) are written from text.
"""

from __future__ import annotations

import io
import re
import tarfile
import zipfile
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement


def repack(name: str, folder: Path, done: set[str] | None = None) -> None:
    """The installed distribution ``name`` as a wheel in ``folder``, with its dependencies."""
    done = set() if done is None else done
    dist = metadata.distribution(name)
    key = _norm(dist.metadata["Name"])
    if key in done:
        return
    done.add(key)
    files = [
        f
        for f in dist.files or ()
        if not str(f).startswith("..") and "__pycache__" not in f.parts and not str(f).endswith(".pyc")
    ]
    info = next(f.parts[0] for f in files if f.parts[0].endswith(".dist-info"))
    wheel = folder / f"{key.replace('-', '_')}-{dist.version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as out:
        for file in files:
            if file.name in ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json"):
                continue
            out.writestr(str(file), Path(str(file.locate())).read_bytes())
        listed = [str(f) for f in files if f.name not in ("RECORD", "INSTALLER", "REQUESTED")]
        out.writestr(f"{info}/RECORD", "".join(f"{p},,\n" for p in [*listed, f"{info}/RECORD"]))
    for text in dist.requires or ():
        requirement = Requirement(text)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            repack(requirement.name, folder, done)


def write_wheel(folder: Path, name: str, version: str, files: dict[str, str]) -> Path:
    """A pure-Python wheel of ``files`` (paths inside it, and their text)."""
    key = _norm(name).replace("-", "_")
    info = f"{key}-{version}.dist-info"
    meta = {
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    everything = {**files, **meta}
    record = "".join(f"{p},,\n" for p in [*everything, f"{info}/RECORD"])
    wheel = folder / f"{key}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as out:
        for path, text in {**everything, f"{info}/RECORD": record}.items():
            out.writestr(path, text)
    return wheel


BACKEND = '''"""An in-tree build back end: metadata only (pip download prepares it; nothing here builds a wheel)."""
import os

METADATA = open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "PKG-INFO")).read()


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    name, version = [line.split(": ", 1)[1] for line in METADATA.splitlines()[1:3]]
    info = f"{name}-{version}.dist-info"
    os.makedirs(os.path.join(metadata_directory, info))
    with open(os.path.join(metadata_directory, info, "METADATA"), "w") as handle:
        handle.write(METADATA)
    return info


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    raise NotImplementedError("metadata only")
'''


def write_sdist(folder: Path, name: str, version: str, requires: list[str], files: dict[str, str]) -> Path:
    """A source distribution of ``files`` that declares ``requires`` (PKG-INFO and pyproject.toml)."""
    top = f"{name}-{version}"
    info = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    info += "".join(f"Requires-Dist: {r}\n" for r in requires)
    listed = ", ".join(f'"{r}"' for r in requires)
    pyproject = (
        f'[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["_build"]\n\n'
        f'[project]\nname = "{name}"\nversion = "{version}"\ndependencies = [{listed}]\n'
    )
    everything = {**files, "PKG-INFO": info, "pyproject.toml": pyproject, "_build/backend.py": BACKEND}
    archive = folder / f"{top}.tar.gz"
    with tarfile.open(archive, "w:gz") as out:
        for path, text in everything.items():
            data = text.encode()
            entry = tarfile.TarInfo(f"{top}/{path}")
            entry.size = len(data)
            out.addfile(entry, io.BytesIO(data))
    return archive


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()
