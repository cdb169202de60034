"""One mapping of SDK errors for both SDKs: the same status gives the same class (and exit code) from each."""

import anthropic
import httpx2
import openai
import pytest

from coderefine.errors import (
    EXIT_PROVIDER,
    AuthError,
    ModelError,
    OverloadedError,
    RateLimitError,
    ReplyCutShortError,
)
from coderefine.models.anthropic import error_words as anthropic_words
from coderefine.models.openai_chat import error_words as openai_words
from coderefine.models.providers import parse_spec
from coderefine.models.sdk_errors import translate_errors


def _status(sdk: object, status: int) -> Exception:
    request = httpx2.Request("POST", "http://api.test/v1")
    response = httpx2.Response(status, json={"error": {"message": "for the test"}}, request=request)
    client = sdk.Anthropic(api_key="k") if sdk is anthropic else sdk.OpenAI(api_key="k")  # type: ignore[attr-defined]
    return client._make_status_error_from_response(response)  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("status", "kind"),
    [(401, AuthError), (403, AuthError), (404, ModelError), (429, RateLimitError), (503, OverloadedError)],
)
@pytest.mark.parametrize("sdk", [anthropic, openai])
def test_same_status_same_error_from_either_sdk(sdk: object, status: int, kind: type[Exception]) -> None:
    words = anthropic_words("claude-x") if sdk is anthropic else openai_words(parse_spec("openai:gpt-5", {}))
    with pytest.raises(kind) as caught, translate_errors(sdk, words):
        raise _status(sdk, status)
    if status in (429, 503):
        assert caught.value.exit_code == EXIT_PROVIDER  # type: ignore[attr-defined]


def test_a_reply_that_does_not_parse_is_cut_short() -> None:
    import json

    with pytest.raises(ReplyCutShortError), translate_errors(anthropic, anthropic_words("claude-x")):
        json.loads("{")


def test_a_400_goes_to_the_providers_own_refusal() -> None:
    words = anthropic_words("claude-x")
    with pytest.raises(ModelError, match=r"rejected the request \(400\)"), translate_errors(anthropic, words):
        raise _status(anthropic, 400)
