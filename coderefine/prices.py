"""Prices per million tokens, by model, in US dollars: the one place they live.

Cache writes cost 1.25x the input price and cache reads 0.1x (Anthropic's 5-minute cache). A model
that is not listed is priced by the family its name contains, else by the most expensive family, so
that a budget errs on the side of stopping early.
"""

from __future__ import annotations

from dataclasses import dataclass

from coderefine.models.base import Usage


@dataclass(frozen=True)
class Price:
    input: float
    output: float

    @property
    def cache_write(self) -> float:
        return self.input * 1.25

    @property
    def cache_read(self) -> float:
        return self.input * 0.1


_FAMILIES: dict[str, Price] = {
    "opus": Price(15.0, 75.0),
    "mythos": Price(15.0, 75.0),
    "fable": Price(3.0, 15.0),
    "sonnet": Price(3.0, 15.0),
    "haiku": Price(1.0, 5.0),
}
_FREE = ("replay:", "scripted", "local", "oracle", "do-nothing", "sampling:")
_DEFAULT = Price(15.0, 75.0)


def price_of(model: str) -> Price:
    name = model.lower()
    if name.startswith(_FREE):
        return Price(0.0, 0.0)
    for family, price in _FAMILIES.items():
        if family in name:
            return price
    return _DEFAULT


def cost_of(model: str, usage: Usage) -> float:
    """The cost of ``usage`` on ``model`` in US dollars."""
    price = price_of(model)
    return (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_write_tokens * price.cache_write
        + usage.cache_read_tokens * price.cache_read
    ) / 1_000_000
