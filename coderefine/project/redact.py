"""Redact secrets before anything is sent to a model provider, and put them back in what it answers.

Each secret is replaced by a placeholder that names its kind and a short hash
(``«secret:github-token:1a2b3c4d»``). The model never sees the value; when its answer quotes the
placeholder (in a SEARCH, or keeps it in a REPLACE), ``restore`` puts the original back, so an edit never
writes a placeholder into a user's file.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
from collections import Counter
from dataclasses import dataclass

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "private-key",
        re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?-----END [A-Z0-9 ]*PRIVATE KEY-----", re.S),
    ),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{20,}")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("slack-token", re.compile(r"\bxox[abpors]-[A-Za-z0-9\-]{10,}")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}")),
)
# name = "value" where the name says secret and the value looks random: AWS secret keys, passwords, tokens.
_ASSIGNMENT = re.compile(
    r"""(?ix)
    (?<![A-Za-z0-9_\-])
    # Bounded repeats: an unbounded name would backtrack quadratically on a long run of letters.
    (?P<name>(?:[A-Za-z_][A-Za-z0-9_\-]{0,40}?)?(?:secret|token|passw(?:or)?d|pwd|api_?key|access_?key|private_?key|credential|auth)[A-Za-z0-9_\-]{0,40})
    (?P<sep>["']?\]?\s*[:=]\s*(?:b|r|u|f)?)
    (?P<quote>["'])(?P<value>[^"'\s]{12,})(?P=quote)
    """
)
_SECRET_NAME = re.compile(
    r"(?i)secret|token|passw(?:or)?d|pwd|api_?key|access_?key|private_?key|credential|auth"
)
_PLACEHOLDER = re.compile(r"«secret:[a-z\-]+:[0-9a-f]{8}»")
MIN_ENTROPY = 3.0


def secret_name(name: str) -> bool:
    """Whether a variable's name says it holds a secret (the names the assignment pattern knows)."""
    return _SECRET_NAME.search(name) is not None


def entropy(text: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values()) if text else 0.0


@dataclass(frozen=True)
class Redaction:
    kind: str
    placeholder: str


class Redactor:
    """Replaces secrets with placeholders and remembers them for ``restore``. Thread-safe."""

    def __init__(self) -> None:
        self._secrets: dict[str, str] = {}
        self._lock = threading.Lock()
        self.found: list[Redaction] = []

    def _placeholder(self, kind: str, value: str) -> str:
        digest = hashlib.sha256(value.encode("utf-8")).hexdigest()[:8]
        placeholder = f"«secret:{kind}:{digest}»"
        with self._lock:
            if placeholder not in self._secrets:
                self._secrets[placeholder] = value
                self.found.append(Redaction(kind, placeholder))
        return placeholder

    def redact(self, text: str) -> str:
        for kind, pattern in _PATTERNS:
            text = pattern.sub(lambda m, k=kind: self._placeholder(k, m.group(0)), text)  # type: ignore[misc]

        def assignment(match: re.Match[str]) -> str:
            value = match.group("value")
            if _PLACEHOLDER.fullmatch(value) or entropy(value) < MIN_ENTROPY:
                return match.group(0)
            quote = match.group("quote")
            secret = self._placeholder("assigned-secret", value)
            return f"{match.group('name')}{match.group('sep')}{quote}{secret}{quote}"

        return _ASSIGNMENT.sub(assignment, text)

    def restore(self, text: str) -> str:
        if "«secret:" not in text:
            return text
        with self._lock:
            secrets = dict(self._secrets)
        return _PLACEHOLDER.sub(lambda m: secrets.get(m.group(0), m.group(0)), text)

    def restore_data(self, data: object) -> object:
        """``restore`` applied to every string inside JSON-like data (the critique's tool input)."""
        if isinstance(data, str):
            return self.restore(data)
        if isinstance(data, list):
            return [self.restore_data(item) for item in data]
        if isinstance(data, dict):
            return {key: self.restore_data(value) for key, value in data.items()}
        return data
