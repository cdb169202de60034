"""OpenAI and every OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio), through the openai SDK.

The critic's structured answer is asked for in the strongest way the provider declares (a forced tool call,
JSON-schema output, JSON mode with the schema, or JSON in the text) and read by the repairing parser either
way. A server that refuses the feature (a 400 that names it) is asked again one step lower, and the lower
mode is kept for the rest of the run: that is the probe. What small and local models do wrong is turned
into something the loop can retry with an exact error: a reply cut at the token limit, empty content,
reasoning text around the answer, a tool call whose arguments are not JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from coderefine.errors import MissingKeyError, ModelError, ReplyCutShortError
from coderefine.models.base import ModelReply, ModelRequest, Usage
from coderefine.models.grammar import bounded
from coderefine.models.providers import STRUCTURED_MODES, ModelSpec, Structured, base_url, no_key_message
from coderefine.models.sdk import LazyImport
from coderefine.models.sdk_errors import ErrorWords, translate_errors

_THINK = re.compile(r"<think>.*?(</think>|\Z)", re.S)
# A 400 that names one of these is about the structured-output feature, not about the prompt.
_FEATURE_WORDS = re.compile(r"tool|function|response_format|json|schema|grammar|format", re.I)
_FINISH = {"length": "max_tokens", "stop": "end_turn", "tool_calls": "tool_use", "function_call": "tool_use"}


def json_instruction(request: ModelRequest) -> str:
    """What a model without tool calls is told instead: answer with the tool's input as JSON."""
    assert request.tool is not None
    return (
        f"There is no tool to call here: instead of calling `{request.tool.name}`, answer with its input "
        "as one JSON object and nothing else (no prose, no code fence), following this JSON schema:\n"
        + json.dumps(dict(request.tool.input_schema), separators=(",", ":"))
    )


def request_params(spec: ModelSpec, request: ModelRequest, mode: Structured) -> dict[str, Any]:
    """The keyword arguments of ``chat.completions.create`` for ``request`` in structured ``mode``."""
    system = "\n\n".join(b.text for b in request.system)
    messages: list[dict[str, Any]] = [{"role": m.role, "content": m.text} for m in request.messages]
    if spec.provider.system_role:
        messages.insert(0, {"role": "system", "content": system})
    else:
        # The same text first, so the prefix the server can reuse from call to call stays the same.
        messages[0] = {**messages[0], "content": system + "\n\n" + messages[0]["content"]}
    params: dict[str, Any] = {"model": spec.model, "messages": messages}
    # OpenAI's newer models refuse max_tokens; the local servers know only max_tokens.
    limit = "max_completion_tokens" if spec.provider.name == "openai" else "max_tokens"
    params[limit] = request.max_tokens
    tool = request.tool
    if tool is None:
        return params
    if mode == "tools":
        # Listed in every request, as with Anthropic, so the critic's and reviser's prefixes are equal.
        params["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": dict(tool.input_schema),
                },
            }
        ]
        params["tool_choice"] = (
            {"type": "function", "function": {"name": tool.name}} if request.force_tool else "none"
        )
        return params
    if not request.force_tool:
        return params
    messages[-1] = {**messages[-1], "content": messages[-1]["content"] + "\n\n" + json_instruction(request)}
    if mode == "json-schema":
        params["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": tool.name, "schema": dict(tool.input_schema)},
        }
    elif mode == "json-object":
        # llama.cpp's servers constrain the output to "schema" (a grammar, bounded so that a reply must end
        # before the token limit); other servers read this as JSON mode.
        params["response_format"] = {"type": "json_object", "schema": bounded(tool.input_schema)}
    return params


def _extra(message: Any, name: str) -> Any:
    value = getattr(message, name, None)
    if value is None:
        value = (getattr(message, "model_extra", None) or {}).get(name)
    return value


def read_reply(spec: ModelSpec, request: ModelRequest, response: Any) -> ModelReply:
    """The reply of ``response``: the answer's text (reasoning left out) and the critique's input."""
    choices = getattr(response, "choices", None) or []
    choice = choices[0] if choices else None
    message = getattr(choice, "message", None)
    content = str(getattr(message, "content", None) or "")
    # Reasoning models put their thoughts in a field of their own (reasoning_content, reasoning) or, on
    # some servers, inline between <think> tags; either way only the answer is the reply.
    text = _THINK.sub("", content).strip() if "<think>" in content else content
    stop = str(getattr(choice, "finish_reason", None) or ("empty" if choice is None else ""))
    stop = _FINISH.get(stop, stop)
    if not text.strip() and stop != "tool_use":
        reasoning = _extra(message, "reasoning_content") or _extra(message, "reasoning")
        if reasoning and stop == "end_turn":
            stop = "reasoning-only"
    tool_input: dict[str, Any] | None = None
    wanted = request.tool.name if request.tool is not None and request.force_tool else None
    for call in getattr(message, "tool_calls", None) or []:
        function = getattr(call, "function", None)
        if wanted is None or getattr(function, "name", None) != wanted:
            continue
        arguments = str(getattr(function, "arguments", "") or "")
        parsed = _json_object(arguments)
        if parsed is None:
            # Malformed arguments go to the parser as text, so the retry names the JSON error exactly.
            text = arguments
        else:
            tool_input = parsed
        break
    if tool_input is None and wanted is not None:
        tool_input = _json_object(text)
    return ModelReply(
        text=text,
        tool_input=tool_input,
        usage=_usage(getattr(response, "usage", None)),
        model=spec.name,
        stop_reason=stop,
    )


def _json_object(text: str) -> dict[str, Any] | None:
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.strip("`").removeprefix("json").strip()
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _usage(usage: Any) -> Usage:
    if usage is None:
        return Usage()
    prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
    details = getattr(usage, "prompt_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    return Usage(
        input_tokens=max(prompt - cached, 0),
        output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        cache_read_tokens=cached,
    )


class OpenAIChatModel:
    """A model behind OpenAI's chat completions API. Pass ``http_client`` to test over a mock transport."""

    def __init__(
        self,
        spec: ModelSpec,
        *,
        environ: Mapping[str, str],
        timeout: float,
        max_retries: int = 2,
        http_client: Any = None,
    ) -> None:
        provider = spec.provider
        self._spec = spec
        self._base_url = base_url(provider, environ)
        self._api_key = environ.get(provider.key_env, "") if provider.key_env else ""
        from_env = bool(provider.base_url_env and environ.get(provider.base_url_env))
        if provider.key_required and not self._api_key and not from_env:
            raise MissingKeyError(no_key_message(spec.name))
        if not self._base_url and provider.name != "openai":
            raise MissingKeyError(
                f"{provider.name} needs a base URL: export {provider.base_url_env}=http://HOST:PORT/v1, "
                f"or set base-url in [tool.coderefine.providers.{provider.name}].\n"
                + no_key_message(spec.name)
            )
        self._structured: Structured = provider.structured
        self._timeout = timeout
        self._max_retries = max_retries
        self._http_client = http_client
        self._importer = LazyImport(
            "openai", "pip install 'coderefine[openai]' (or pip install openai)", build=self._make_client
        )

    @property
    def name(self) -> str:
        return self._spec.name

    @property
    def structured(self) -> Structured:
        """The structured-output mode in use (lower than declared once the server refused one)."""
        return self._structured

    def warm_up(self) -> None:
        self._importer.start()

    def ready(self) -> None:
        """Wait for the import and the client (the first call raises what they raised)."""
        self._importer.wait()

    def _make_client(self, sdk: Any) -> Any:
        return sdk.OpenAI(
            # Local servers want no key; the SDK insists on one.
            api_key=self._api_key or "no-key",
            base_url=self._base_url or None,
            timeout=self._timeout,
            max_retries=self._max_retries,
            http_client=self._http_client,
        )

    def _get_client(self) -> Any:
        return self._importer.built()

    def complete(self, request: ModelRequest) -> ModelReply:
        client = self._get_client()
        sdk = self._importer.get()
        attempt = 0
        while True:
            params = request_params(self._spec, request, self._structured)
            try:
                with translate_errors(sdk, error_words(self._spec)):
                    response = client.chat.completions.create(**params)
                break
            except ReplyCutShortError:
                # The SDK retries statuses and connection errors, not a body that ends half-way.
                attempt += 1
                if attempt > self._max_retries:
                    raise
            except _Refused as exc:
                uses_feature = "tools" in params or "response_format" in params
                names_feature = _FEATURE_WORDS.search(exc.message) is not None
                if not (uses_feature and names_feature) or self._structured == "text":
                    raise ModelError(
                        f"{self._spec.provider.name} rejected the request for '{self._spec.model}' "
                        f"({exc.status}): {exc.message}"
                    ) from exc
                self._structured = STRUCTURED_MODES[STRUCTURED_MODES.index(self._structured) + 1]
        return read_reply(self._spec, request, response)

    # What the batch model (models/batch_openai.py) shares with a direct call.

    @property
    def spec(self) -> ModelSpec:
        return self._spec

    def sdk(self) -> Any:
        return self._importer.get()

    def client(self) -> Any:
        return self._get_client()

    def params(self, request: ModelRequest) -> dict[str, Any]:
        return request_params(self._spec, request, self._structured)

    def errors(self) -> ErrorWords:
        return error_words(self._spec)


class _Refused(Exception):
    """The server answered 400/422 to a request that used tools or response_format."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def error_words(spec: ModelSpec) -> ErrorWords:
    """What the translated SDK errors say for ``spec``; a 400/422 becomes ``_Refused`` (the probe's cue)."""
    provider = spec.provider
    where = f" at {provider.base_url_env}" if provider.base_url_env else ""
    hint = f" (ollama pull {spec.model})" if provider.name == "ollama" else ""
    return ErrorWords(
        auth=f"{provider.name} refused the key (401); check {provider.key_env or 'the key'}",
        forbidden=f"the key may not use {spec.model} (403); choose another model with --model",
        not_found=(
            f"{provider.name} does not know the model '{spec.model}' or the URL is wrong (404){hint}; "
            "set a valid one with --model"
        ),
        timeout=(
            f"{spec.name} did not answer in time; raise model-timeout (or timeout in "
            f"[tool.coderefine.providers.{provider.name}]) or try again"
        ),
        connection=(
            f"cannot reach {provider.name}; is the server running{where}? Check the URL, or use "
            "'coderefine check'"
        ),
        overloaded=provider.name + " is overloaded or failing ({status}) after the retries; try again later",
        cut_short=f"{provider.name}'s reply was cut short or malformed after the retries; try again",
        answered=provider.name,
        refused=_Refused,
        refuse_unprocessable=True,
    )
