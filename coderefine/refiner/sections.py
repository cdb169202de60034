"""The one place that lays out a request's message: named sections, in each role's order.

Each role's request is made of sections a builder fills by name (``PromptBuilder``); what a role's
message holds, and in which order, is the table below, so a new section is one name in it and one
entry where the builder fills it. A section the table does not list for a role is an error, not
silently dropped: a section added for one role must be placed for it. Empty sections are left out.
Every piece of data in a section is fenced (``fence``) with an id derived from its content, so no
content can close its own fence.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

# What each role's message holds, in order. "role": what to answer; "rules": the project's own rules
# (rules.py), fenced as data; "scope": the diff, or that there is none; "changed": the definitions the
# diff touches; "whole": the files with no version before the change, and what of them is shown;
# "localization": where the failing tests point (localize.py);
# "spec": the failing tests' source (spec.py); "files": the files the model may edit; "asks": how to ask
# for code not shown (asks.py), when a file is shown in part.
ORDER: Mapping[str, tuple[str, ...]] = {
    "critic": (
        "role",
        "intent",
        "rules",
        "scope",
        "changed",
        "whole",
        "signals",
        "localization",
        "spec",
        "merge",
        "asks",
    ),
    "reviser": ("role", "intent", "critique", "unseen", "signals", "localization", "spec", "files", "asks"),
    "author": ("role", "intent", "localization", "spec", "files", "asks"),
}

Sections = Mapping[str, str | Sequence[str]]


def fence(kind: str, content: str, label: str = "") -> str:
    """``content`` between data markers that it cannot contain (the id is a hash of the content)."""
    tag = hashlib.sha256(f"{kind}\0{label}\0{content}".encode()).hexdigest()[:12]
    head = f"<<<DATA kind={kind}" + (f" {label}" if label else "") + f" id={tag}>>>"
    body = content if content.endswith("\n") or not content else content + "\n"
    return f"{head}\n{body}<<<END DATA id={tag}>>>"


def assemble(role: str, sections: Sections, order: Mapping[str, tuple[str, ...]] = ORDER) -> str:
    """The message of ``role`` from its named ``sections`` (a name may hold several parts)."""
    names = order.get(role)
    if names is None:
        raise ValueError(f"no section order for role {role!r}; add it to sections.ORDER")
    unplaced = sorted(set(sections) - set(names))
    if unplaced:
        raise ValueError(f"sections {unplaced} have no place in the {role}'s request; add them to ORDER")
    parts: list[str] = []
    for name in names:
        value = sections.get(name, ())
        parts.extend([value] if isinstance(value, str) else value)
    return "\n\n".join(part for part in parts if part)
