"""Which provider a model name means, and what each provider is known to support.

A model is named ``PROVIDER:MODEL``; a bare name is an Anthropic model, so every existing configuration keeps
its meaning. The capabilities of each provider (how the critic's structured answer is asked for, whether
calls are free, how long a call may take) are declared here per preset, never guessed from the model's name;
``[tool.coderefine.providers.NAME]`` may override the base URL, the structured-output mode and the timeout.
Keys are read only from the environment: a secret never belongs in a committed pyproject.toml.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from coderefine.errors import ConfigError

Family = Literal["anthropic", "bedrock", "vertex", "openai"]
# How the critic's structured answer is asked for, strongest first. "json-object" sends the schema along
# (llama.cpp's servers constrain the output to it; others take it as JSON mode); "text" asks for JSON in
# the text. Either way the repairing parser reads the answer.
Structured = Literal["tools", "json-schema", "json-object", "text"]
STRUCTURED_MODES: tuple[Structured, ...] = ("tools", "json-schema", "json-object", "text")

CLOUD_TIMEOUT = 120.0
# A small model on a CPU writes a few tokens a second: a whole critique can take minutes.
LOCAL_TIMEOUT = 900.0


@dataclass(frozen=True)
class Provider:
    name: str
    family: Family
    description: str
    base_url: str = ""  # the usual local URL of a preset; "" lets the SDK choose or asks for one
    base_url_env: str = ""
    key_env: str = ""
    key_required: bool = False
    structured: Structured = "tools"
    timeout: float = CLOUD_TIMEOUT
    free: bool = False
    caching: str = "none"
    # False: the system prompt leads the first user message instead. Some chat templates (Gemma's in
    # llama-cpp-python) drop system messages without a word, and with them the code under review.
    system_role: bool = True


PROVIDERS: dict[str, Provider] = {
    p.name: p
    for p in (
        Provider(
            "anthropic",
            "anthropic",
            "Anthropic's API",
            base_url_env="ANTHROPIC_BASE_URL",
            key_env="ANTHROPIC_API_KEY",
            key_required=True,
            caching="cache_control on the code under review (writes 1.25x, reads 0.1x)",
        ),
        Provider(
            "bedrock",
            "bedrock",
            "Claude on Amazon Bedrock (pip install 'anthropic[bedrock]')",
            base_url_env="ANTHROPIC_BEDROCK_BASE_URL",
            caching="cache_control, as on Anthropic's API, where the model supports it",
        ),
        Provider(
            "vertex",
            "vertex",
            "Claude on Google Cloud Vertex AI (pip install 'anthropic[vertex]')",
            base_url_env="ANTHROPIC_VERTEX_BASE_URL",
            caching="cache_control, as on Anthropic's API",
        ),
        Provider(
            "openai",
            "openai",
            "OpenAI's API",
            base_url_env="OPENAI_BASE_URL",
            key_env="OPENAI_API_KEY",
            key_required=True,
            caching="automatic prefix caching; cached_tokens reported as cache reads",
        ),
        Provider(
            "openai-compatible",
            "openai",
            "any server with OpenAI's chat completions API (a base URL is needed)",
            base_url_env="OPENAI_BASE_URL",
            key_env="OPENAI_API_KEY",
            structured="json-schema",
            caching="whatever the server reports as cached_tokens",
        ),
        Provider(
            "ollama",
            "openai",
            "Ollama (ollama serve)",
            base_url="http://localhost:11434/v1",
            base_url_env="OLLAMA_HOST",
            structured="json-schema",
            timeout=LOCAL_TIMEOUT,
            free=True,
        ),
        Provider(
            "vllm",
            "openai",
            "vLLM (vllm serve MODEL)",
            base_url="http://localhost:8000/v1",
            base_url_env="VLLM_BASE_URL",
            key_env="VLLM_API_KEY",
            structured="json-schema",
            timeout=LOCAL_TIMEOUT,
            free=True,
            caching="automatic prefix caching inside the server (not reported)",
        ),
        Provider(
            "llamacpp",
            "openai",
            "llama.cpp's llama-server, or llama-cpp-python's server",
            base_url="http://localhost:8080/v1",
            base_url_env="LLAMACPP_BASE_URL",
            key_env="LLAMA_API_KEY",
            structured="json-object",
            timeout=LOCAL_TIMEOUT,
            free=True,
            caching="the server reuses its prompt cache (not reported)",
            system_role=False,
        ),
        Provider(
            "gguf",
            "openai",
            "a GGUF file (or a pinned name) served by llama.cpp, started for the run (local-model extra)",
            # The server's grammar enforces the schema of {"type": "json_object", "schema": ...}; its
            # response_format knows no "json_schema" type (llama-cpp-python 0.3.36).
            structured="json-object",
            timeout=LOCAL_TIMEOUT,
            free=True,
            caching="the slot reuses the KV cache of the last prompt's prefix (bounded by the context)",
            system_role=False,
        ),
        Provider(
            "lmstudio",
            "openai",
            "LM Studio's local server",
            base_url="http://localhost:1234/v1",
            base_url_env="LMSTUDIO_BASE_URL",
            structured="json-schema",
            timeout=LOCAL_TIMEOUT,
            free=True,
        ),
    )
}

_OVERRIDABLE = ("base-url", "structured-output", "timeout", "system-role")


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model name: the provider preset (with the project's overrides) and the provider's model."""

    provider: Provider
    model: str

    @property
    def name(self) -> str:
        """What reports, prices and cache keys call it: bare for Anthropic, as before."""
        return self.model if self.provider.name == "anthropic" else f"{self.provider.name}:{self.model}"


def parse_spec(spec: str, overrides: Mapping[str, Mapping[str, object]] | None = None) -> ModelSpec:
    """The provider and model that ``spec`` names; ``overrides`` is ``[tool.coderefine.providers]``."""
    head, sep, rest = spec.partition(":")
    if not sep or head not in PROVIDERS:
        if sep and head and "/" not in head and "." not in head and head.isidentifier():
            known = ", ".join(PROVIDERS)
            raise ConfigError(
                f"unknown model provider '{head}' in '{spec}'; write PROVIDER:MODEL with PROVIDER one of "
                f"{known} (a bare name is an Anthropic model)"
            )
        head, rest = "anthropic", spec
    if not rest.strip():
        raise ConfigError(f"'{spec}' names no model; write {head}:MODEL")
    provider = PROVIDERS[head]
    table = (overrides or {}).get(head)
    if table:
        provider = _override(provider, table)
    return ModelSpec(provider, rest.strip())


def _override(provider: Provider, table: Mapping[str, object]) -> Provider:
    where = f"[tool.coderefine.providers.{provider.name}]"
    changes: dict[str, object] = {}
    for key, value in table.items():
        if "key" in key.lower() or "token" in key.lower() or "secret" in key.lower():
            hint = f"; set {provider.key_env}" if provider.key_env else ""
            raise ConfigError(
                f"'{key}' in {where}: keys are never read from pyproject.toml, which is committed{hint} "
                "in the environment instead"
            )
        if key not in _OVERRIDABLE:
            raise ConfigError(f"unknown key '{key}' in {where}; known keys: {', '.join(_OVERRIDABLE)}")
        if key == "base-url":
            if not isinstance(value, str) or not value.startswith(("http://", "https://")):
                raise ConfigError(f"'base-url' in {where} must be an http(s) URL, not {value!r}")
            changes["base_url"] = value
        elif key == "structured-output":
            if value not in STRUCTURED_MODES:
                raise ConfigError(
                    f"'structured-output' in {where} must be one of {', '.join(STRUCTURED_MODES)}, "
                    f"not {value!r}"
                )
            changes["structured"] = value
        elif key == "system-role":
            if not isinstance(value, bool):
                raise ConfigError(f"'system-role' in {where} must be true or false")
            changes["system_role"] = value
        else:
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ConfigError(f"'timeout' in {where} must be a positive number of seconds")
            changes["timeout"] = float(value)
    return dataclasses.replace(provider, **changes)  # type: ignore[arg-type]


def base_url(provider: Provider, environ: Mapping[str, str]) -> str:
    """The base URL to use: the environment's, else the configured or preset one ("" = the SDK's own)."""
    value = environ.get(provider.base_url_env, "").strip() if provider.base_url_env else ""
    if value and provider.name == "ollama":
        # OLLAMA_HOST is "host:port" (or a URL) for the ollama CLI; its OpenAI API lives under /v1.
        if not value.startswith(("http://", "https://")):
            value = "http://" + value
        if not value.rstrip("/").endswith("/v1"):
            value = value.rstrip("/") + "/v1"
    return value or provider.base_url


def no_key_message(spec: str) -> str:
    """What to do when the model named ``spec`` has no credentials: every way in, with its variables."""
    anthropic = parse_spec(spec).provider.name == "anthropic" if not spec.startswith("replay:") else False
    missing = "ANTHROPIC_API_KEY" if anthropic else "credentials"
    return (
        f"no {missing} for the model '{spec}'. Ways in:\n"
        "  Anthropic:  export ANTHROPIC_API_KEY=sk-ant-...  (--model claude-...; or ANTHROPIC_BASE_URL "
        "for an Anthropic-compatible server)\n"
        "  OpenAI:     export OPENAI_API_KEY=sk-...  and --model openai:MODEL\n"
        "  Bedrock:    AWS credentials (AWS_PROFILE, or AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY, or "
        "AWS_BEARER_TOKEN_BEDROCK) and AWS_REGION; --model bedrock:MODEL-ID\n"
        "  Vertex:     gcloud auth application-default login, CLOUD_ML_REGION and "
        "ANTHROPIC_VERTEX_PROJECT_ID; --model vertex:MODEL\n"
        "  local, no key: --model ollama:MODEL (OLLAMA_HOST), vllm:MODEL (VLLM_BASE_URL), llamacpp:MODEL "
        "(LLAMACPP_BASE_URL), lmstudio:MODEL (LMSTUDIO_BASE_URL), gguf:PATH or gguf:qwen2.5-coder-0.5b "
        "(llama.cpp's server started for the run)\n"
        "  any OpenAI-compatible server: --model openai-compatible:MODEL with OPENAI_BASE_URL "
        "(and OPENAI_API_KEY if it wants one)\n"
        "The model can be set per role too: author-model, critic-model, reviser-model. "
        "'coderefine check' works without a model; see docs/models.md"
    )
