"""The one error hierarchy of coderefine.

Every error a user can meet is a ``CoderefineError``; its ``exit_code`` is what the CLI returns, and its
message says what happened and what to do. Lower-level errors (git, subprocess, the model SDK) are
translated into these at the boundary with ``raise ... from exc``.
"""

from __future__ import annotations

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
# The model provider could not be reached or kept failing after the retries: try again later. Not a bug
# of coderefine (3) and not a mistake of the user (2), so scripts can retry on this code alone.
EXIT_PROVIDER = 4
EXIT_INTERRUPTED = 130


class CoderefineError(Exception):
    """Base of every error coderefine raises on purpose."""

    exit_code = EXIT_INTERNAL


class UsageError(CoderefineError):
    """The command line, the configuration or an input cannot be used as given."""

    exit_code = EXIT_USAGE


class ConfigError(UsageError):
    """``[tool.coderefine]``, a ``CODEREFINE_*`` variable or a flag holds a bad value."""


class InputError(UsageError):
    """A file or patch under review cannot be read (missing, a directory, binary, undecodable, too big)."""


class GitError(UsageError):
    """git cannot give what was asked (no repository, unknown ref, shallow clone, ...)."""


class PatchError(UsageError):
    """A unified diff does not parse or does not apply."""


class ToolError(CoderefineError):
    """An external program (git, ruff, pytest) is missing, crashed or timed out."""


class ToolMissingError(ToolError):
    """The program could not be started at all."""

    exit_code = EXIT_USAGE


class ToolTimeoutError(ToolError):
    """The program ran longer than its time limit and was stopped."""


class WriteError(CoderefineError):
    """Writing a result or the undo journal failed; the files are as they were."""


class LockedError(UsageError):
    """Another coderefine run holds the project's lock."""


class UndoError(UsageError):
    """There is nothing to undo, or the files changed since the write being undone."""


class ModelError(CoderefineError):
    """The model provider failed in a way the user must act on."""

    exit_code = EXIT_USAGE


class MissingKeyError(ModelError):
    """No API key is configured for the chosen model."""


class AuthError(ModelError):
    """The provider refused the key."""


class ProviderUnavailableError(ModelError):
    """The provider could not be reached, was overloaded, limited the rate or timed out, after the retries.

    ``retry_after`` is the wait in seconds the provider asked for (its retry-after header), when it did.
    """

    exit_code = EXIT_PROVIDER

    def __init__(self, message: str = "", *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class RateLimitError(ProviderUnavailableError):
    """The provider kept answering 429 after the retries."""


class OverloadedError(ProviderUnavailableError):
    """The provider kept answering 529/5xx after the retries."""


class ConnectionFailedError(ProviderUnavailableError):
    """The provider could not be reached."""


class ModelTimeoutError(ProviderUnavailableError):
    """The provider did not answer in time."""


class ReplyCutShortError(ProviderUnavailableError):
    """The provider's answer ended half-way or did not parse, after the retries.

    A provider (or a proxy on the way) fault, not a bug of coderefine: trying again later is the remedy.
    """


class ServerDiedError(ModelError):
    """A model server this run started died (a signal, a crash): no request is sent to it again.

    Exit 2, not 4: trying again later starts the same build on the same CPU, so the user must act (the
    message says how the server ended and, for a CPU fault, the rebuild that mends it).
    """


class ReplayError(ModelError):
    """A replay file does not hold an answer for the request being made."""


class BudgetExceededError(CoderefineError):
    """The token or cost budget would be exceeded by another call."""

    exit_code = EXIT_FINDINGS


class TimeLimitError(BudgetExceededError):
    """The run's time limit (the hook's --timeout) is reached."""
