"""Prices per million tokens, by model, in US dollars: the one place they live.

Anthropic's cache writes cost 1.25x the input price and reads 0.1x (the 5-minute cache); OpenAI has no
write surcharge and bills cached input at a fraction that depends on the model. A model served locally
(ollama, vllm, llamacpp, lmstudio) costs nothing. ``[tool.coderefine.prices]`` can set any model's price
(keys may use ``*``). A model that is not listed is priced by the family its name contains, else by the most
expensive family, so that a budget errs on the side of stopping early. Requests sent through a batch API
(``--batch``) cost half, on Anthropic's and OpenAI's alike, cache reads and writes included.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass

from coderefine.errors import ConfigError
from coderefine.models.base import Usage


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    write_factor: float = 1.25
    read_factor: float = 0.1

    @property
    def cache_write(self) -> float:
        return self.input * self.write_factor

    @property
    def cache_read(self) -> float:
        return self.input * self.read_factor


_FAMILIES: dict[str, Price] = {
    "opus": Price(15.0, 75.0),
    "mythos": Price(15.0, 75.0),
    "fable": Price(3.0, 15.0),
    "sonnet": Price(3.0, 15.0),
    "haiku": Price(1.0, 5.0),
}
# Longest prefix first: "gpt-4.1-mini" before "gpt-4.1".
_OPENAI: dict[str, Price] = {
    "gpt-5-nano": Price(0.05, 0.4, 1.0, 0.1),
    "gpt-5-mini": Price(0.25, 2.0, 1.0, 0.1),
    "gpt-5": Price(1.25, 10.0, 1.0, 0.1),
    "gpt-4.1-nano": Price(0.1, 0.4, 1.0, 0.25),
    "gpt-4.1-mini": Price(0.4, 1.6, 1.0, 0.25),
    "gpt-4.1": Price(2.0, 8.0, 1.0, 0.25),
    "gpt-4o-mini": Price(0.15, 0.6, 1.0, 0.5),
    "gpt-4o": Price(2.5, 10.0, 1.0, 0.5),
    "o4-mini": Price(1.1, 4.4, 1.0, 0.25),
    "o3": Price(2.0, 8.0, 1.0, 0.25),
}
_FREE = (
    "replay:",
    "scripted",
    "local",
    "oracle",
    "do-nothing",
    "ollama:",
    "vllm:",
    "llamacpp:",
    "gguf:",
    "lmstudio:",
    "sampling:",
)
_DEFAULT = Price(15.0, 75.0)
BATCH_DISCOUNT = 0.5  # the share of the price a batch request costs
_ENTRY_KEYS = {"input": "input", "output": "output", "cache-write": "write", "cache-read": "read"}


def configured_price(entry: object, where: str) -> Price:
    """A price from a ``[tool.coderefine.prices]`` entry: input and output per million tokens (required),
    cache-write and cache-read per million tokens (default 1.25x and 0.1x the input price)."""
    if not isinstance(entry, Mapping) or not {"input", "output"} <= set(entry):
        raise ConfigError(f"{where} must be a table with input and output prices per million tokens")
    values: dict[str, float] = {}
    for key, value in entry.items():
        if key not in _ENTRY_KEYS:
            raise ConfigError(f"unknown key '{key}' in {where}; known keys: {', '.join(_ENTRY_KEYS)}")
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ConfigError(f"'{key}' in {where} must be a price in dollars per million tokens")
        values[_ENTRY_KEYS[key]] = float(value)
    inp = values["input"]
    write = values["write"] / inp if "write" in values and inp else 1.25
    read = values["read"] / inp if "read" in values and inp else 0.1
    return Price(inp, values["output"], write, read)


def price_of(model: str, table: Mapping[str, object] | None = None) -> Price:
    for pattern, entry in (table or {}).items():
        if fnmatch.fnmatchcase(model, pattern):
            return configured_price(entry, f"[tool.coderefine.prices] '{pattern}'")
    name = model.lower()
    if name.startswith(_FREE):
        return Price(0.0, 0.0)
    if name.startswith("openai:"):
        bare = name.removeprefix("openai:")
        for prefix, price in _OPENAI.items():
            if bare.startswith(prefix):
                return price
        return _DEFAULT
    for family, price in _FAMILIES.items():
        if family in name:
            return price
    return _DEFAULT


def cost_of(
    model: str, usage: Usage, table: Mapping[str, object] | None = None, *, batch: bool = False
) -> float:
    """The cost of ``usage`` on ``model`` in US dollars; ``table`` is ``[tool.coderefine.prices]``;
    ``batch``: sent through a batch API, at ``BATCH_DISCOUNT`` of the price."""
    price = price_of(model, table)
    factor = BATCH_DISCOUNT if batch else 1.0
    return (
        factor
        * (
            usage.input_tokens * price.input
            + usage.output_tokens * price.output
            + usage.cache_write_tokens * price.cache_write
            + usage.cache_read_tokens * price.cache_read
        )
        / 1_000_000
    )
