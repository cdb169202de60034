"""Translate what the anthropic and openai SDKs raise into coderefine's errors, each with what to do.

Both SDKs share one exception tree (Stainless-generated: AuthenticationError, RateLimitError, APITimeoutError,
...), so one mapping serves both; only the words differ. Unreachable, 429, 5xx (529 included), a timeout and
a reply cut short are ``ProviderUnavailableError``s (exit 4): retrying later is the remedy.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from coderefine.errors import (
    AuthError,
    ConnectionFailedError,
    ModelError,
    ModelTimeoutError,
    OverloadedError,
    RateLimitError,
    ReplyCutShortError,
)
from coderefine.models.ratelimit import retry_after_seconds


def _status_error(who: str) -> Callable[[int, str], Exception]:
    return lambda status, message: ModelError(f"{who} answered {status}: {message}")


@dataclass(frozen=True)
class ErrorWords:
    """What each error tells the user about this provider.

    ``refused`` turns a 400 (and a 422, when ``refuse_unprocessable``) into an error; by default a
    ``ModelError`` that quotes the API."""

    auth: str
    forbidden: str
    not_found: str
    timeout: str
    connection: str
    overloaded: str  # formatted with {status}
    cut_short: str
    answered: str  # who answered an unexpected status, e.g. "the API"
    refused: Callable[[int, str], Exception]
    refuse_unprocessable: bool = False


@contextmanager
def translate_errors(sdk: Any, words: ErrorWords) -> Iterator[None]:
    """Raise coderefine's error for what the SDK ``sdk`` (the imported module) raises inside."""
    try:
        yield
    except sdk.AuthenticationError as exc:
        raise AuthError(words.auth) from exc
    except sdk.PermissionDeniedError as exc:
        raise AuthError(words.forbidden) from exc
    except sdk.NotFoundError as exc:
        raise ModelError(words.not_found) from exc
    except sdk.RateLimitError as exc:
        raise RateLimitError(
            "rate limited (429) after the retries; wait a minute and run again, or lower the number of "
            "files per run",
            retry_after=retry_after_seconds(getattr(getattr(exc, "response", None), "headers", None)),
        ) from exc
    except sdk.APITimeoutError as exc:
        raise ModelTimeoutError(words.timeout) from exc
    except sdk.APIConnectionError as exc:
        raise ConnectionFailedError(words.connection) from exc
    except sdk.InternalServerError as exc:
        raise OverloadedError(words.overloaded.format(status=getattr(exc, "status_code", "5xx"))) from exc
    except (json.JSONDecodeError, sdk.APIResponseValidationError) as exc:
        raise ReplyCutShortError(words.cut_short) from exc
    except sdk.BadRequestError as exc:
        raise words.refused(exc.status_code, str(exc.message)) from exc
    except sdk.APIStatusError as exc:
        if words.refuse_unprocessable and exc.status_code == 422:
            raise words.refused(exc.status_code, str(exc.message)) from exc
        raise _status_error(words.answered)(exc.status_code, str(exc.message)) from exc
