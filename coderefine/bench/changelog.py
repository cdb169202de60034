"""A release's entry in a library's changelog (CHANGES, CHANGELOG, HISTORY, NEWS, docs/changelog*), read
as plain items: the intent of a ``release`` task where the source distribution has one."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

_CHANGELOGS = ("changes", "changelog", "history", "news")


def release_entry(tree: Path, version: str) -> list[str]:
    """The items of ``version``'s entry in the first changelog of ``tree`` that has one."""
    for path in _changelog_files(tree):
        items = changelog_entry(path.read_text("utf-8", errors="replace"), version)
        if items:
            return items
    return []


def _changelog_files(tree: Path) -> list[Path]:
    top = [p for p in sorted(tree.iterdir()) if p.is_file() and p.name.lower().split(".")[0] in _CHANGELOGS]
    docs = tree / "docs"
    more = sorted(docs.iterdir()) if docs.is_dir() else []
    return top + [p for p in more if p.is_file() and p.name.lower().startswith("changelog")]


_VERSIONISH = re.compile(r"(?<![\w.])v?\d+\.\d+(?:\.\d+)*(?![\w.]*\d)")


def changelog_entry(text: str, version: str) -> list[str]:
    """The items (bullets, or paragraphs) under the heading of ``version`` in a changelog, up to the next
    version's heading; markup, links and issue numbers dropped. Empty when ``version`` has no heading."""
    lines = text.splitlines()
    mine = re.compile(rf"(?<![\w.]){re.escape(version)}(?![\w.]*\d)")
    start = next((i for i, line in enumerate(lines) if _heading(lines, i) and mine.search(line)), None)
    if start is None:
        return []
    body: list[str] = []
    for i in range(start + 1, len(lines)):
        if _heading(lines, i) and _VERSIONISH.search(lines[i]):
            break
        body.append(lines[i])
    items: list[str] = []
    for line in body:
        stripped = line.strip()
        if not stripped or set(stripped) <= set("=-~^*#`"):
            continue
        bullet = re.match(r"^([-*+]|\d+\.)\s+", stripped)
        plain = _plain(stripped[bullet.end() :] if bullet else stripped)
        if re.match(r"^#+\s", stripped) or not plain:
            continue  # a sub-heading (Added, Fixed...)
        if not bullet and len(plain) < 40 and re.search(r"\b(19|20)\d\d\b", plain):
            continue  # the release's date
        if bullet or not items:
            items.append(plain)
        else:
            items[-1] += " " + plain
    # An item cut off in a parenthesis (a credit wrapped to a line that was dropped) ends before it.
    items = [i[: i.rfind("(")] if i.count("(") > i.count(")") else i for i in items]
    items = [i.strip(" ,;") for i in items]
    return [i if i.endswith((".", "!", "?")) else i + "." for i in items if i]


def _heading(lines: Sequence[str], i: int) -> bool:
    line = lines[i].strip()
    if not line:
        return False
    if line.startswith("#"):
        return True
    underline = lines[i + 1].strip() if i + 1 < len(lines) else ""
    if len(underline) >= 3 and len(set(underline)) == 1 and underline[0] in "=-~^*":
        return True
    # "1.2.0 (2024-01-01)", "v1.2.0", "Version 1.2.0", "[1.2.0] - 2024-01-01" on a line of their own.
    return bool(re.match(r"^(version\s+|v|\[)?\d+\.\d+[\w.]*\]?(\s*[-\u2013(:]\s*.*)?$", line, re.IGNORECASE))


def _plain(text: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # [text](url)
    text = re.sub(r"\[([^\]]*)\]\[[^\]]*\]", r"\1", text)  # [text][reference]
    text = re.sub(r"`([^`<]*)\s*<[^>]*>`_*", r"\1", text)  # `text <url>`_
    text = re.sub(r"https?://\S+", "", text)
    text = re.sub(r":\w+:`~?([^`]*)`", r"\1", text)  # :func:`name`
    text = re.sub(r"\(?\s*(?:#|gh-|GH-)\d+\s*\)?,?", "", text)  # issue numbers
    text = re.sub(r"\(\s*\)", "", text.replace("``", "`").replace("**", ""))
    return re.sub(r"\s+([.,;:!?])", r"\1", " ".join(text.split()))
