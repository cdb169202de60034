"""Claude through the anthropic SDK: Anthropic's API, or the SDK's own Bedrock and Vertex clients.

``import anthropic`` costs about a second of CPU, so it happens in a background thread started by
``warm_up()`` (the loop calls it before collecting the baseline signals, so the two overlap) and is
never needed by ``--version``, ``--help``, ``check`` or a cache hit. The SDK's own retries (408, 409,
429, 5xx including 529, connection errors; retry-after honoured) and timeouts are used; what still fails
is translated into coderefine's errors, each with what to do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from coderefine.errors import MissingKeyError, ModelError, ReplyCutShortError
from coderefine.models.base import Block, ModelReply, ModelRequest, Usage
from coderefine.models.messages_http import MessagesClient, proxied
from coderefine.models.providers import no_key_message
from coderefine.models.sdk import LazyImport
from coderefine.models.sdk_errors import ErrorWords, translate_errors

Platform = Literal["anthropic", "bedrock", "vertex"]
_EXTRAS = {"bedrock": "pip install 'anthropic[bedrock]'", "vertex": "pip install 'anthropic[vertex]'"}


def _blocks(blocks: tuple[Block, ...]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for block in blocks:
        item: dict[str, Any] = {"type": "text", "text": block.text}
        if block.cache:
            item["cache_control"] = {"type": "ephemeral"}
        out.append(item)
    return out


def request_params(model: str, request: ModelRequest) -> dict[str, Any]:
    """The keyword arguments of ``messages.create`` for ``request``."""
    params: dict[str, Any] = {
        "model": model,
        "max_tokens": request.max_tokens,
        "system": _blocks(request.system),
        "messages": [{"role": m.role, "content": _blocks(m.blocks)} for m in request.messages],
    }
    if request.tool is not None:
        params["tools"] = [
            {
                "name": request.tool.name,
                "description": request.tool.description,
                "input_schema": dict(request.tool.input_schema),
            }
        ]
        params["tool_choice"] = (
            {"type": "tool", "name": request.tool.name} if request.force_tool else {"type": "none"}
        )
    return params


class AnthropicModel:
    """A Claude model through the anthropic SDK. Pass ``http_client`` to test over a mock transport."""

    def __init__(
        self,
        model: str,
        *,
        environ: Mapping[str, str],
        timeout: float = 120.0,
        max_retries: int = 2,
        http_client: Any = None,
        platform: Platform = "anthropic",
        name: str | None = None,
        credentials: Mapping[str, Any] | None = None,
    ) -> None:
        self._model = model
        self._name = name or model
        self._platform = platform
        self._environ = environ
        self._credentials = dict(credentials or {})
        self._api_key = environ.get("ANTHROPIC_API_KEY", "")
        self._base_url = environ.get("ANTHROPIC_BASE_URL") or None
        if platform == "anthropic" and not self._api_key and not self._base_url:
            raise MissingKeyError(no_key_message(self._name))
        if platform == "bedrock" and not (
            environ.get("AWS_REGION") or environ.get("AWS_DEFAULT_REGION") or environ.get("AWS_PROFILE")
        ):
            raise MissingKeyError(
                "Bedrock needs a region: export AWS_REGION=us-east-1 (or AWS_PROFILE with a region).\n"
                + no_key_message(self._name)
            )
        if platform == "vertex" and not environ.get("CLOUD_ML_REGION"):
            raise MissingKeyError(
                "Vertex needs a region: export CLOUD_ML_REGION=us-east5 (and ANTHROPIC_VERTEX_PROJECT_ID).\n"
                + no_key_message(self._name)
            )
        self._timeout = timeout
        self._max_retries = max_retries
        self._http_client = http_client
        self._importer = LazyImport(
            "anthropic", _EXTRAS.get(platform, "pip install anthropic"), build=self._make_client
        )
        # Anthropic's own API is called without the SDK (messages_http.py says why and when not).
        self._direct = (
            MessagesClient(
                base_url=self._base_url,
                headers=self._auth_headers(environ),
                timeout=timeout,
                max_retries=max_retries,
                words=error_words(model, platform),
            )
            if platform == "anthropic" and http_client is None and not proxied(environ)
            else None
        )

    def _auth_headers(self, environ: Mapping[str, str]) -> dict[str, str]:
        """As the SDK sends them: the key (a placeholder for a local server that needs none), and
        ANTHROPIC_AUTH_TOKEN as a bearer token when set."""
        headers = {"x-api-key": self._api_key or "no-key"}
        if environ.get("ANTHROPIC_AUTH_TOKEN"):
            headers["authorization"] = f"Bearer {environ['ANTHROPIC_AUTH_TOKEN']}"
        return headers

    @property
    def name(self) -> str:
        return self._name

    def warm_up(self) -> None:
        """Start importing the SDK in the background, when calls need it."""
        if self._direct is None:
            self._importer.start()

    def ready(self) -> None:
        """Wait for the import and the client (the first call raises what they raised)."""
        if self._direct is None:
            self._importer.wait()

    def _make_client(self, sdk: Any) -> Any:
        if self._platform != "anthropic":
            return self._platform_client(sdk)
        return sdk.Anthropic(
            # A local Anthropic-compatible server may need no key; the SDK insists on one.
            api_key=self._api_key or "no-key",
            base_url=self._base_url,
            timeout=self._timeout,
            max_retries=self._max_retries,
            http_client=self._http_client,
        )

    def _get_client(self) -> Any:
        return self._importer.built()

    def _platform_client(self, sdk: Any) -> Any:
        """The SDK's Bedrock or Vertex client, with credentials from ``environ`` (or ``credentials``)."""
        env = self._environ
        common: dict[str, Any] = {
            "timeout": self._timeout,
            "max_retries": self._max_retries,
            "http_client": self._http_client,
        }
        try:
            if self._platform == "bedrock":
                if env.get("AWS_BEARER_TOKEN_BEDROCK"):
                    auth: dict[str, Any] = {"api_key": env["AWS_BEARER_TOKEN_BEDROCK"]}
                else:
                    auth = {
                        "aws_access_key": env.get("AWS_ACCESS_KEY_ID"),
                        "aws_secret_key": env.get("AWS_SECRET_ACCESS_KEY"),
                        "aws_session_token": env.get("AWS_SESSION_TOKEN"),
                        "aws_profile": env.get("AWS_PROFILE"),
                    }
                return sdk.AnthropicBedrock(
                    aws_region=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION"),
                    base_url=env.get("ANTHROPIC_BEDROCK_BASE_URL") or None,
                    **auth,
                    **common,
                    **self._credentials,
                )
            if env.get("GOOGLE_OAUTH_ACCESS_TOKEN") and "access_token" not in self._credentials:
                # A short-lived token (gcloud auth print-access-token), as Terraform and others take it;
                # without one the SDK asks google-auth for the application-default credentials.
                common["access_token"] = env["GOOGLE_OAUTH_ACCESS_TOKEN"]
            return sdk.AnthropicVertex(
                region=env["CLOUD_ML_REGION"],
                project_id=env.get("ANTHROPIC_VERTEX_PROJECT_ID") or sdk.NOT_GIVEN,
                base_url=env.get("ANTHROPIC_VERTEX_BASE_URL") or None,
                **common,
                **self._credentials,
            )
        except (ImportError, ValueError) as exc:
            raise ModelError(
                f"cannot set up the {self._platform} client ({exc}); {_EXTRAS[self._platform]}"
            ) from exc

    def complete(self, request: ModelRequest) -> ModelReply:
        if self._direct is not None:
            return reply_of_data(self._direct.create(request_params(self._model, request)), self._model)
        client = self._get_client()
        params = request_params(self._model, request)
        for attempt in range(self._max_retries + 1):
            try:
                with translate_errors(self._importer.get(), error_words(self._model, self._platform)):
                    response = client.messages.create(**params)
                break
            except ReplyCutShortError:
                # The SDK retries statuses and connection errors, not a body that ends half-way.
                if attempt == self._max_retries:
                    raise
        return self.reply_of(response)

    # What the batch model (models/batch_anthropic.py) shares with a direct call.

    @property
    def platform(self) -> Platform:
        return self._platform

    def sdk(self) -> Any:
        return self._importer.get()

    def client(self) -> Any:
        return self._get_client()

    def params(self, request: ModelRequest) -> dict[str, Any]:
        return request_params(self._model, request)

    def errors(self) -> ErrorWords:
        return error_words(self._model, self._platform)

    def reply_of(self, response: Any) -> ModelReply:
        """The reply of a Messages API ``response`` (an SDK ``Message``)."""
        text = "".join(block.text for block in response.content if block.type == "text")
        tool_input = next((dict(block.input) for block in response.content if block.type == "tool_use"), None)
        usage = response.usage
        return ModelReply(
            text=text,
            tool_input=tool_input,
            usage=Usage(
                input_tokens=usage.input_tokens or 0,
                output_tokens=usage.output_tokens or 0,
                cache_write_tokens=usage.cache_creation_input_tokens or 0,
                cache_read_tokens=usage.cache_read_input_tokens or 0,
            ),
            model=self._name if self._platform != "anthropic" else str(response.model or self._model),
            stop_reason=str(response.stop_reason or ""),
        )


def reply_of_data(data: Mapping[str, Any], model: str) -> ModelReply:
    """The reply of a Messages API response body (parsed JSON), as ``reply_of`` reads the SDK's."""
    content = [b for b in data.get("content") or [] if isinstance(b, dict)]
    text = "".join(str(b.get("text") or "") for b in content if b.get("type") == "text")
    tool_input = next((dict(b.get("input") or {}) for b in content if b.get("type") == "tool_use"), None)
    usage = data.get("usage") or {}
    return ModelReply(
        text=text,
        tool_input=tool_input,
        usage=Usage(
            input_tokens=int(usage.get("input_tokens") or 0),
            output_tokens=int(usage.get("output_tokens") or 0),
            cache_write_tokens=int(usage.get("cache_creation_input_tokens") or 0),
            cache_read_tokens=int(usage.get("cache_read_input_tokens") or 0),
        ),
        model=str(data.get("model") or model),
        stop_reason=str(data.get("stop_reason") or ""),
    )


def error_words(model: str, platform: Platform = "anthropic") -> ErrorWords:
    """What the translated SDK errors say for ``model`` on ``platform``."""
    return ErrorWords(
        auth="the API refused the key (401); check ANTHROPIC_API_KEY, or unset it to use ANTHROPIC_BASE_URL"
        if platform == "anthropic"
        else f"{platform} refused the credentials (401); check them (see docs/models.md)",
        forbidden=f"the key may not use {model} (403); choose another model with --model",
        not_found=f"the API does not know the model '{model}' (404); set a valid one with --model",
        timeout="the model did not answer in time; raise model-timeout in [tool.coderefine] or try again",
        connection=(
            "cannot reach the model API; check the network or ANTHROPIC_BASE_URL, or use 'coderefine check'"
        ),
        overloaded="the model API is overloaded or failing ({status}) after the retries; try again later",
        cut_short="the API's reply was cut short or malformed after the retries; try again",
        answered="the API",
        refused=lambda status, message: ModelError(f"the API rejected the request ({status}): {message}"),
    )
