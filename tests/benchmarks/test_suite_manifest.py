"""Writing the manifest from built suites: a suite rebuilt alone replaces its own entry only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import suite_manifest
from coderefine.bench.suite import LibraryTask, write_suite


def test_a_library_rebuilt_alone_replaces_only_its_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = tmp_path / "suites.json"
    old = [
        {"name": "alpha", "version": "1", "records": ["old"]},
        {"name": "alpha", "version": "1", "upgrade_to": "2", "records": ["release"]},
        {"name": "beta", "version": "3", "records": ["kept"]},
    ]
    manifest.write_text(json.dumps({"about": "", "libraries": old}))
    monkeypatch.setattr(suite_manifest, "MANIFEST", manifest)
    folder = tmp_path / "alpha"
    folder.mkdir()
    task = LibraryTask(
        "alpha/000", "bug", "single", "function", "constant", "m.py", "f", 3, "fix", (), ("t",), ()
    )
    library = {"name": "alpha", "version": "1", "python": "python", "deselect": [], "requires": ["pytest"]}
    write_suite(folder, library | {"seed": 1, "requested": 4, "tests": 9}, [task])
    assert suite_manifest.main([str(folder)], lambda name, version: f"day of {name} {version}") == 0
    written = json.loads(manifest.read_text())["libraries"]
    # Entries are told apart by (name, version, upgrade_to): a release pair of the same library stays.
    assert [lib["name"] for lib in written] == ["alpha", "alpha", "beta"]
    assert written[0]["records"][0]["task_id"] == "alpha/000"
    assert written[1]["records"] == ["release"] and written[2]["records"] == ["kept"]
    # A release pair kept from the manifest gets the day its new release reached PyPI.
    assert written[1]["released"] == "day of alpha 2" and "released" not in written[0]
