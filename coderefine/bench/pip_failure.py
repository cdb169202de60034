"""Why a ``pip install`` failed, from its output: which requirement, and what happened to it.

pip ends most failures with a line that names the requirement; a user told only "check that the
package index can be reached" when the index answered that no such distribution exists (``yaml``: the
distribution is PyYAML) is sent the wrong way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from coderefine.bench.declared import DISTRIBUTIONS, normalize

_UNREACHABLE = (
    "Could not fetch URL",
    "Max retries exceeded",
    "Temporary failure in name resolution",
    "Failed to establish a new connection",
    "Network is unreachable",
    "ConnectTimeoutError",
    "ReadTimeoutError",
    "No route to host",
    "Name or service not known",
)


def install_failure(output: str, requirements: Sequence[str]) -> str:
    """One sentence: the requirement that failed (one of ``requirements`` when pip names it) and why."""
    unreachable = any(sign in output for sign in _UNREACHABLE)
    missing = re.search(r"No matching distribution found for ([^\s;]+)", output)
    if missing:
        name = missing.group(1)
        versions = re.search(
            rf"satisfies the requirement {re.escape(name)} \(from versions: ([^)]*)\)",
            output,
        )
        listed = versions.group(1).strip() if versions else ""
        if unreachable and (not listed or listed == "none"):
            return f"{name}: the package index could not be reached ({_first(output, _UNREACHABLE)})"
        if listed and listed != "none":
            return f"{name}: no release matches it on the package index (it has {_tail(listed)})"
        project = re.split(r"[<>=!~\[ ]", name, maxsplit=1)[0]
        known = DISTRIBUTIONS.get(project, "")
        hint = (
            f"; the module {project} is installed by the distribution {known}"
            if known and normalize(known) != normalize(project)
            else "; check its spelling, or whether it is an import name rather than a distribution's"
        )
        return f"{name}: the package index has no distribution of that name{hint}"
    if unreachable:
        return f"the package index could not be reached ({_first(output, _UNREACHABLE)})"
    conflict = re.search(r"Cannot install (.+?) because these package versions have conflicting", output)
    if conflict or "ResolutionImpossible" in output:
        what = conflict.group(1) if conflict else ", ".join(requirements)
        causes = re.findall(r"The conflict is caused by:[ \t]*\n((?:[ \t]+\S.*\n?)+)", output)
        lines = causes[0].splitlines() if causes else []
        detail = "; ".join(line.strip() for line in lines)[:240] or "conflicting dependencies"
        return f"{what}: they cannot be installed together ({detail})"
    built = re.search(r"Failed to build ([^\n]+)", output) or re.search(
        r"Failed building wheel for ([^\s]+)", output
    )
    if built:
        return f"{built.group(1).strip()}: it failed to build from source ({_error_line(output)})"
    for requirement in requirements:
        if requirement and requirement in output:
            return f"{requirement}: {_error_line(output)}"
    return _error_line(output) or "pip gave no reason"


def _first(output: str, signs: Sequence[str]) -> str:
    for line in output.splitlines():
        if any(sign in line for sign in signs):
            return line.strip().removeprefix("WARNING: ").removeprefix("ERROR: ")[:200]
    return ""


def _tail(listed: str) -> str:
    versions = [v.strip() for v in listed.split(",") if v.strip()]
    if len(versions) <= 6:
        return ", ".join(versions)
    return f"{', '.join(versions[-6:])} and {len(versions) - 6} older"


def _error_line(output: str) -> str:
    lines = output.splitlines()
    errors = [line.removeprefix("ERROR: ").strip() for line in lines if line.startswith("ERROR:")]
    found = errors or [line.strip() for line in lines if line.strip()]
    return found[-1][:300] if found else ""
