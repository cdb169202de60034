"""Write coderefine/bench/suites.json from suites built with ``coderefine bench make-suite``.

    coderefine bench make-suite tabulate==0.9.0 --tasks 70 --seed 1 -o suites/tabulate
    coderefine bench make-suite humanize==4.11.0 --tasks 60 --seed 1 \\
        --requires pytest==9.2.0,freezegun==1.5.5,coverage==7.17.5 -o suites/humanize
    coderefine bench make-suite inflection==0.5.1 --tasks 24 --seed 1 -o suites/inflection
    python benchmarks/suite_manifest.py suites/tabulate suites/humanize suites/inflection
    python benchmarks/suite_manifest.py suites/boltons-26.2.0   # replace or add only this one

The manifest keeps each library's pin, licence, test dependencies and build settings, and each task's
record (kind, shape, strength, mutation, file, function, line, test split): never the library's code.
A library of the current manifest that no folder names keeps its entry, so one library can be rebuilt
alone (``python benchmarks/suite_manifest.py suites/inflection``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from coderefine.bench.manifest import MANIFEST, record
from coderefine.bench.pypi import released
from coderefine.bench.suite import load_suite

ABOUT = {
    "tabulate": ("MIT", "one 2,700-line module (table formatting), many small helpers and format tables"),
    "humanize": ("MIT", "a src-layout package of 100-600-line modules, time and number wording, freezegun"),
    "inflection": ("MIT", "one 400-line module of regex-driven word functions, heavily parametrized tests"),
    "boltons": ("BSD-3-Clause", "release suites: 30 independent utility modules (strings, lists, URLs...)"),
    "more-itertools": ("MIT", "release suites: two large modules of iterator recipes, doctested"),
    "python-slugify": ("MIT", "release suites: one module turning text into URL slugs, with a CLI"),
    "cachetools": ("MIT", "release suites: a src-layout package of cache classes and memoizing decorators"),
    "click": ("BSD-3-Clause", "release suites: a command-line toolkit, src layout, 2,600 tests"),
    "platformdirs": (
        "MIT",
        "release suites: per-platform folders (unix, macOS, Windows, Android), src layout",
    ),
    "funcy": ("BSD-3-Clause", "release suites: functional helpers (colls, seqs, flow, decorators)"),
    "parse": ("MIT", "release suites: one module, format()-style patterns parsed back into values"),
    "sqlparse": ("BSD-3-Clause", "release suites: a non-validating SQL parser (lexer, grouping, filters)"),
    "toolz": (
        "BSD-3-Clause",
        "release suites: functional utilities (itertoolz, functoolz, dicttoolz), curried",
    ),
}


def release_day(name: str, version: str) -> str:
    """The day ``version`` of ``name`` reached PyPI: what "a release after DATE" is counted by."""
    return released(name, version).date().isoformat()


def main(folders: list[str], day_of: Callable[[str, str], str] = release_day) -> int:
    """``day_of(name, version)``: the day a release reached PyPI (a parameter so tests need no network)."""
    folders = [f for f in folders if f != "--keep"]  # keeping the others is the default; the flag stays valid
    libraries: list[dict[str, object]] = []
    kept: list[list[dict[str, object]]] = []
    for folder in folders:
        library, tasks = load_suite(Path(folder))
        kept.append([record(t) for t in tasks])
        name = str(library["name"])
        licence, style = ABOUT.get(name, (str(library.get("licence", "")), ""))
        libraries.append(
            {
                "name": name,
                "version": library["version"],
                "licence": licence,
                "style": style,
                "requires": library["requires"],
                "seed": library["seed"],
                "tasks": library.get("requested", len(tasks)),
                "baseline_tests": library["tests"],
                "records": kept[-1],
            }
        )
        if library.get("deselect_given"):
            libraries[-1]["deselect_given"] = library["deselect_given"]
        if library.get("upgrade_to"):
            libraries[-1]["upgrade_to"] = library["upgrade_to"]
            libraries[-1]["fail_to_pass"] = library["fail_to_pass"]
            libraries[-1]["pass_to_pass"] = library["pass_to_pass"]
            libraries[-1]["released"] = day_of(name, str(library["upgrade_to"]))
    if MANIFEST.exists():
        # The manifest's other suites stay as they are, in their place; the built ones replace theirs.
        def key(row: dict[str, object]) -> tuple[object, ...]:
            return row["name"], row["version"], row.get("upgrade_to", "")

        built = {key(row): row for row in libraries}
        shipped = json.loads(MANIFEST.read_text(encoding="utf-8"))["libraries"]
        kept.extend(row["records"] for row in shipped if key(row) not in built)
        merged = [built.pop(key(row), row) for row in shipped]
        for row in merged:
            if row.get("upgrade_to") and not row.get("released"):
                row["released"] = day_of(str(row["name"]), str(row["upgrade_to"]))
        libraries = merged + list(built.values())
    data = {
        "about": "Pinned libraries and the tasks built from them; the code is built on first use.",
        "libraries": libraries,
    }
    MANIFEST.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    total = sum(len(records) for records in kept)
    print(f"wrote {MANIFEST}: {total} tasks over {len(libraries)} libraries")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
