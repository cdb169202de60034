"""Write coderefine/bench/suites.json from suites built with ``coderefine bench make-suite``.

    coderefine bench make-suite tabulate==0.9.0 --tasks 70 --seed 1 -o suites/tabulate
    coderefine bench make-suite humanize==4.11.0 --tasks 60 --seed 1 \\
        --requires pytest==9.2.0,freezegun==1.5.5,coverage==7.17.5 -o suites/humanize
    coderefine bench make-suite inflection==0.5.1 --tasks 24 --seed 1 -o suites/inflection
    python benchmarks/suite_manifest.py suites/tabulate suites/humanize suites/inflection

The manifest keeps each library's pin, licence, test dependencies and build settings, and each task's
record (kind, shape, strength, mutation, file, function, line, test split): never the library's code.
A library of the current manifest that no folder names keeps its entry, so one library can be rebuilt
alone (``python benchmarks/suite_manifest.py suites/inflection``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from coderefine.bench.manifest import MANIFEST, record
from coderefine.bench.suite import load_suite

ABOUT = {
    "tabulate": ("MIT", "one 2,700-line module (table formatting), many small helpers and format tables"),
    "humanize": ("MIT", "a src-layout package of 100-600-line modules, time and number wording, freezegun"),
    "inflection": ("MIT", "one 400-line module of regex-driven word functions, heavily parametrized tests"),
}


def main(folders: list[str]) -> int:
    libraries = []
    for folder in folders:
        library, tasks = load_suite(Path(folder))
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
                "records": [record(t) for t in tasks],
            }
        )
    rebuilt = {str(lib["name"]): lib for lib in libraries}
    kept = json.loads(MANIFEST.read_text(encoding="utf-8"))["libraries"] if MANIFEST.exists() else []
    names = [str(lib["name"]) for lib in kept]
    libraries = [rebuilt.get(str(lib["name"]), lib) for lib in kept]
    libraries += [lib for name, lib in rebuilt.items() if name not in names]
    data = {
        "about": "Pinned libraries and the tasks built from them; the code is built on first use.",
        "libraries": libraries,
    }
    MANIFEST.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    total = sum(len(lib["records"]) for lib in libraries)
    print(f"wrote {MANIFEST}: {total} tasks over {len(libraries)} libraries")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
