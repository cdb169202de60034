"""What goes back into the conversation after an answer (the sizing of a retry to a small window is
tested through the session, in test_session.py)."""

from __future__ import annotations

from coderefine.models.base import Message, ModelReply, ModelRequest, Usage
from coderefine.refiner.asks import Ask
from coderefine.refiner.context import FileView
from coderefine.refiner.follow_up import answered, retry_within, why
from coderefine.refiner.prompting import PromptBuilder

TEXT = "def shut():\n    return 1\n\n\ndef open_():\n    return 2\n"


def test_why_an_answer_could_not_be_used() -> None:
    assert "cut off" in why(ModelReply("x", Usage(1, 1), "m", stop_reason="max_tokens"))
    assert why(ModelReply("", Usage(1, 1), "m")) == " (the answer was empty)"
    assert "only reasoning" in why(ModelReply("", Usage(1, 1), "m", stop_reason="reasoning-only"))
    assert why(ModelReply("fine", Usage(1, 1), "m")) == ""


def test_the_asked_definitions_continue_the_same_conversation() -> None:
    request = ModelRequest("reviser", (), (Message.user("fix it"),), 100)
    views = {"m.py": FileView("m.py", TEXT, ((1, 2),))}
    follow = answered(request, "SHOW: open_", {"m.py": TEXT}, views, 10_000, last=True)
    assert [m.role for m in follow.messages] == ["user", "assistant", "user"]
    assert (
        "def open_():" in follow.messages[2].blocks[0].text
        and "may not ask again" in follow.messages[2].blocks[0].text
    )
    named = answered(request, '{"show": ["shut"]}', {"m.py": TEXT}, views, 10_000, [Ask(None, "shut")])
    assert "def shut():" in named.messages[2].blocks[0].text


def test_a_retry_with_no_known_window_echoes_the_answer() -> None:
    request = ModelRequest("reviser", (), (Message.user("fix it"),), 100)
    retry = retry_within(PromptBuilder(100), request, "my answer", "retry", "no code block", None)
    assert (
        "my answer" in retry.messages[1].blocks[0].text
        and "no code block" in retry.messages[2].blocks[0].text
    )
