"""Which of the definitions a failing test runs it is named after: test-to-code traceability by naming.

A spectrum (``localize.py``) cannot single out a function that the passing tests run as well: pyflakes'
AST handlers (``COMPARE``, ``AUGASSIGN``) and ``handleDoctests`` run in hundreds of passing tests, so with
a bug in each, the ranking named helpers and message classes and the views hid every bug. Tests are
named after what they check (``test_undefinedAugmentedAssignment``, ``test_invalid_percent_format_calls``,
``CheckTests``), and naming conventions are the most precise of the classic ways to trace a test to the
code it tests. Only the definitions a failing test runs are candidates, so a name alone never brings in
code the test does not reach.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from difflib import SequenceMatcher
from functools import lru_cache

# A word of a name: an acronym, a capitalised or lower-case word, or digits (camelCase and snake_case).
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
# Words of test names that say nothing of the code tested.
_STOP = frozenset(
    {"test", "tests", "testcase", "case", "cases", "the", "and", "with", "for", "from", "when", "that",
     "not", "does", "should", "can", "are", "has", "have", "its", "into", "then", "basic", "simple",
     "works", "work", "function", "method", "class", "value", "values", "result", "results"}
)  # fmt: skip
# Two words match when they share this many characters in a row, and at least half of the shorter:
# ``assignment`` and ``augassign`` share "assign", ``except`` and ``excepthandler`` "except".
MIN_SHARED = 5


def words(name: str) -> frozenset[str]:
    """The words of an identifier (a test id's class and function, a definition's name), lower-cased,
    without the short ones and those that name no code."""
    return frozenset(w.lower() for w in _WORD.findall(name) if len(w) >= 3 and w.lower() not in _STOP)


def words_of_test(nodeid: str) -> tuple[frozenset[str], frozenset[str]]:
    """The words of a test id's function, and of its classes (``file::Class::test_name[param]``)."""
    parts = [part.split("[", 1)[0] for part in nodeid.split("::")[1:]]
    if not parts:
        return frozenset(), frozenset()
    return words(parts[-1]), frozenset().union(*(words(part) for part in parts[:-1]))


def shared(test: Iterable[str], definition: Iterable[str]) -> int:
    """How many characters of ``test``'s words the words of ``definition`` match (0: none)."""
    return sum(max((_match(word, other) for other in definition), default=0) for word in test)


@lru_cache(maxsize=65_536)
def _match(word: str, other: str) -> int:
    if word == other:
        return len(word)
    if not _grams(word) & _grams(other):  # no run of MIN_SHARED characters in common: the cheap no
        return 0
    size = SequenceMatcher(None, word, other, autojunk=False).find_longest_match().size
    return size if size * 2 >= min(len(word), len(other)) else 0


@lru_cache(maxsize=16_384)
def _grams(word: str) -> frozenset[str]:
    return frozenset(word[i : i + MIN_SHARED] for i in range(len(word) - MIN_SHARED + 1))


# A failing test whose name matches more definitions than this equally says nothing of which it tests.
MAX_TIED = 3


def named_after(nodeid: str, names: Iterable[str]) -> list[str]:
    """Of ``names`` (definitions the test ``nodeid`` runs, by their own names), those it is named after:
    the best match of the test function's words (its class's when they match none: ``CheckTests`` is
    about ``check``, ``TestUnusedAssignment::test_exceptWithoutName`` about ``EXCEPTHANDLER``), when at
    most ``MAX_TIED`` share it."""
    own, family = words_of_test(nodeid)
    names = list(names)
    for wanted in (own, family):
        scored = {name: shared(wanted, words(name)) for name in names}
        best = max(scored.values(), default=0)
        if best:
            tied = [name for name, score in scored.items() if score == best]
            return tied if len(tied) <= MAX_TIED else []
    return []
