"""feature-tests tasks: what is removed and what the intent says (the build itself runs in test_build)."""

from __future__ import annotations

from coderefine.bench.mutate import remove_body
from coderefine.bench.spec_tests import annotated_signature, spec_intent

SOURCE = '''import re


@staticmethod
def words(text: str, limit: int = 3, *, sep: str = " ") -> str:
    """The first ``limit`` words of ``text``."""
    parts = text.split()
    return sep.join(parts[:limit])


def plain(text, limit=3):
    parts = text.split()
    return " ".join(parts[:limit])
'''


def test_the_body_and_the_docstring_are_removed_the_signature_kept() -> None:
    changed = remove_body(SOURCE, "words", keep_docstring=False)
    assert "The first" not in changed and "parts = text.split()\n    return sep" not in changed
    assert (
        'def words(text: str, limit: int = 3, *, sep: str = " ") -> str:\n    raise NotImplementedError'
        in changed
    )
    assert "@staticmethod" in changed and "def plain(text, limit=3):\n    parts" in changed
    # A function without a docstring loses its body alone.
    assert "def plain(text, limit=3):\n    raise NotImplementedError\n" in remove_body(
        SOURCE, "plain", keep_docstring=False
    )
    assert "The first" in remove_body(SOURCE, "words")  # the feature family keeps it


def test_the_intent_names_function_and_file_and_an_annotated_signature_only() -> None:
    function = SOURCE[SOURCE.index("@staticmethod") : SOURCE.index("def plain")]
    assert annotated_signature(function) == 'def words(text: str, limit: int = 3, *, sep: str = " ") -> str'
    assert spec_intent("words", "pkg/text.py", function) == (
        "Implement `words` in pkg/text.py so that the project's tests pass. "
        'Its signature: `def words(text: str, limit: int = 3, *, sep: str = " ") -> str`.'
    )
    plain = SOURCE[SOURCE.index("def plain") :]
    assert annotated_signature(plain) == ""
    assert spec_intent("plain", "pkg/text.py", plain) == (
        "Implement `plain` in pkg/text.py so that the project's tests pass."
    )
    method = "    def size(\n        self,\n    ) -> int:\n        return 1\n"
    assert annotated_signature(method) == "def size(self) -> int"
