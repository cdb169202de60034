"""A release's changelog entry read as plain items, from Markdown and reStructuredText changelogs."""

from __future__ import annotations

from coderefine.bench.changelog import changelog_entry

MARKDOWN = """# Changelog

Some words about the project.

## 1.2.0

_(September 7, 2026)_

- Added [`units.scale`][units.scale] for sizes ([#453](https://github.com/o/r/pull/453))
- Fixed `core.ordinal` for the teens,
  which said "st" for 11 (#12)

## 1.1.0

- Older things.
"""

RST = """History
=======

1.2.0 (2026-09-07)
------------------

* Fixed :func:`ordinal` for the teens (`#12 <https://example.com/12>`_).
* Sped up ``chunks``.

1.1.0 (2026-01-01)
------------------

* Older.
"""


def test_a_markdown_changelog_entry_is_its_items_without_markup_links_or_date() -> None:
    assert changelog_entry(MARKDOWN, "1.2.0") == [
        "Added `units.scale` for sizes.",
        'Fixed `core.ordinal` for the teens, which said "st" for 11.',
    ]
    assert changelog_entry(MARKDOWN, "1.1.0") == ["Older things."]
    assert changelog_entry(MARKDOWN, "1.2") == []  # 1.2 is not 1.2.0
    assert changelog_entry(MARKDOWN, "9.9.9") == []


def test_an_rst_changelog_entry_ends_at_the_next_version() -> None:
    assert changelog_entry(RST, "1.2.0") == ["Fixed ordinal for the teens.", "Sped up `chunks`."]
