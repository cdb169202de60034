"""Claude on Bedrock and Vertex: the anthropic SDK's own clients over a mock transport, auth stubbed."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from coderefine.errors import MissingKeyError, OverloadedError
from coderefine.models.anthropic import AnthropicModel
from tests.fake_api import FakeAnthropic, api_error, text_message, tool_message, usage
from tests.models.test_anthropic import request

pytest.importorskip("boto3", reason="the Bedrock extra is not installed: pip install 'anthropic[bedrock]'")

AWS = {
    "AWS_REGION": "eu-west-1",
    "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
}
VERTEX = {"CLOUD_ML_REGION": "us-east5", "ANTHROPIC_VERTEX_PROJECT_ID": "my-project"}


class Recorder(FakeAnthropic):
    def __init__(self, replies: list[Any]) -> None:
        super().__init__(replies)
        self.urls: list[str] = []

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.urls.append(str(request.url))
        return super().handler(request)


def test_bedrock_signs_with_sigv4_and_calls_the_model_path() -> None:
    fake = Recorder([tool_message({"verdict": "pass", "summary": "ok", "issues": []}, usage(10, 5, 7, 3))])
    model = AnthropicModel(
        "anthropic.claude-sonnet-4-5-v1:0",
        environ=AWS,
        platform="bedrock",
        name="bedrock:anthropic.claude-sonnet-4-5-v1:0",
        http_client=fake.client(),
        max_retries=0,
    )
    reply = model.complete(request())
    assert fake.urls[0] == (
        "https://bedrock-runtime.eu-west-1.amazonaws.com/model/anthropic.claude-sonnet-4-5-v1:0/invoke"
    )
    assert fake.headers[0]["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/")
    sent = fake.requests[0]
    assert "model" not in sent and "anthropic_version" in sent
    assert sent["system"][1]["cache_control"] == {"type": "ephemeral"}  # caching kept on Bedrock
    assert sent["tool_choice"] == {"type": "tool", "name": "report_critique"}
    assert reply.tool_input == {"verdict": "pass", "summary": "ok", "issues": []}
    assert reply.usage.cache_read_tokens == 3 and reply.model == "bedrock:anthropic.claude-sonnet-4-5-v1:0"


def test_bedrock_api_key_is_a_bearer_token() -> None:
    fake = Recorder([text_message("ok")])
    env = {"AWS_REGION": "us-east-1", "AWS_BEARER_TOKEN_BEDROCK": "bedrock-key"}
    AnthropicModel("m", environ=env, platform="bedrock", http_client=fake.client()).complete(request(False))
    assert fake.headers[0]["authorization"] == "Bearer bedrock-key"


def test_bedrock_without_a_region_lists_the_ways_in() -> None:
    with pytest.raises(MissingKeyError, match="export AWS_REGION"):
        AnthropicModel("m", environ={}, platform="bedrock")


def test_bedrock_outage_is_a_provider_error() -> None:
    overloaded = api_error(529, "overloaded_error", {"retry-after-ms": "1"})
    fake = Recorder([overloaded, overloaded])
    model = AnthropicModel("m", environ=AWS, platform="bedrock", http_client=fake.client(), max_retries=1)
    with pytest.raises(OverloadedError) as caught:
        model.complete(request())
    assert caught.value.exit_code == 4


def test_vertex_uses_the_project_region_and_token() -> None:
    pytest.importorskip(
        "google.auth", reason="the Vertex extra is not installed: pip install 'anthropic[vertex]'"
    )
    fake = Recorder([text_message("edit blocks")])
    model = AnthropicModel(
        "claude-sonnet-4-5@20250929",
        environ=VERTEX,
        platform="vertex",
        name="vertex:claude-sonnet-4-5@20250929",
        http_client=fake.client(),
        credentials={"access_token": "ya29.test-token"},
    )
    reply = model.complete(request(False))
    assert fake.urls[0] == (
        "https://us-east5-aiplatform.googleapis.com/v1/projects/my-project/locations/us-east5/"
        "publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict"
    )
    assert fake.headers[0]["authorization"] == "Bearer ya29.test-token"
    assert "model" not in fake.requests[0] and "anthropic_version" in fake.requests[0]
    assert reply.text == "edit blocks" and reply.model == "vertex:claude-sonnet-4-5@20250929"


def test_vertex_without_a_region_lists_the_ways_in() -> None:
    with pytest.raises(MissingKeyError, match="CLOUD_ML_REGION"):
        AnthropicModel("m", environ={}, platform="vertex")
