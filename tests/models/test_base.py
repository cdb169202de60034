from __future__ import annotations

from coderefine.models.base import ModelReply, ModelRequest, Usage, Wrapped, warm_up


class Inner:
    def __init__(self) -> None:
        self.warmed = 0

    @property
    def name(self) -> str:
        return "inner-model"

    def warm_up(self) -> None:
        self.warmed += 1

    def complete(self, request: ModelRequest) -> ModelReply:
        return ModelReply(f"answer to {request.role}", Usage(3, 2), self.name)


class Cold:
    name = "cold"


def request() -> ModelRequest:
    return ModelRequest("critic", (), (), 10)


def test_a_wrapped_model_has_the_inner_name_warm_up_and_answers() -> None:
    inner = Inner()
    wrapped = Wrapped(inner)
    assert wrapped.name == "inner-model"
    wrapped.warm_up()
    assert inner.warmed == 1
    assert wrapped.complete(request()).text == "answer to critic"


def test_warm_up_of_a_model_without_one_does_nothing() -> None:
    warm_up(Cold())
    inner = Inner()
    warm_up(Wrapped(Wrapped(inner)))
    assert inner.warmed == 1
