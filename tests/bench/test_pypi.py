"""PyPI for make-suite: a source distribution fetched even when pip cannot prepare its metadata."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from coderefine.bench.library import download_sdist
from coderefine.bench.pypi import sdist_from_index
from coderefine.errors import UsageError
from coderefine.project.runner import Completed

ARCHIVE = b"not really a tarball, but bytes with a digest"
URL = "https://files.example/lib-1.2.tar.gz"


def index(digest: str = hashlib.sha256(ARCHIVE).hexdigest()) -> dict[str, object]:
    wheel = {"packagetype": "bdist_wheel", "filename": "lib-1.2-py3-none-any.whl", "url": "w"}
    sdist = {"packagetype": "sdist", "filename": "lib-1.2.tar.gz", "url": URL, "digests": {"sha256": digest}}
    return {"releases": {"1.2": [wheel, sdist], "1.1": []}}


def test_the_archive_pypi_lists_is_saved_and_checked(tmp_path: Path) -> None:
    asked: list[str] = []

    def fetch(url: str) -> object:
        asked.append(url)
        return index()

    path = sdist_from_index("lib", "1.2", tmp_path, fetch, {URL: ARCHIVE}.__getitem__)
    assert path == tmp_path / "lib-1.2.tar.gz" and path.read_bytes() == ARCHIVE
    assert asked == ["https://pypi.org/pypi/lib/json"]
    with pytest.raises(UsageError, match="does not match the sha256"):
        sdist_from_index(
            "lib", "1.2", tmp_path / "x", lambda url: index("0" * 64), {URL: ARCHIVE}.__getitem__
        )
    with pytest.raises(UsageError, match="no source distribution"):
        sdist_from_index(
            "lib", "1.2", tmp_path, lambda url: {"releases": {"1.2": []}}, {URL: ARCHIVE}.__getitem__
        )


class FailingPip:
    def __init__(self, err: str) -> None:
        self.err = err

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
    ) -> Completed:
        return Completed(tuple(argv), 1, "", self.err)


def test_a_build_back_end_that_does_not_install_is_no_reason_to_give_up(tmp_path: Path) -> None:
    """pip download prepares an sdist's metadata; when its build dependencies do not install (one needs
    a newer Python), the archive is taken from the JSON API instead."""
    fetched: list[tuple[str, str]] = []

    def fetch(name: str, version: str, folder: Path) -> Path:
        fetched.append((name, version))
        (folder / "lib-1.2.tar.gz").write_bytes(ARCHIVE)
        return folder / "lib-1.2.tar.gz"

    pip = FailingPip("ERROR: Failed to build 'lib' when installing build dependencies for lib")
    assert download_sdist("lib==1.2", tmp_path, pip, fetch) == tmp_path / "lib-1.2.tar.gz"
    assert fetched == [("lib", "1.2")]
    # Any other failure (no such version) is reported as before, with pip's words.
    with pytest.raises(UsageError, match="No matching distribution"):
        download_sdist("lib==9.9", tmp_path, FailingPip("ERROR: No matching distribution"), fetch)


def test_a_version_the_index_does_not_have_is_said_as_such(tmp_path: Path) -> None:
    said = (
        "ERROR: Could not find a version that satisfies the requirement lib==9.9 (from versions: 1.0, 1.2)\n"
        "ERROR: No matching distribution found for lib==9.9\n"
    )
    with pytest.raises(UsageError) as error:
        download_sdist("lib==9.9", tmp_path, FailingPip(said), lambda n, v, f: f)
    assert "lib==9.9: no release matches it on the package index (it has 1.0, 1.2)" in str(error.value)
    assert "can be reached" not in str(error.value)
