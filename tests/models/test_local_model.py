"""``gguf:`` models: the server started on the first call and stopped after, replies capped, bounded memory.

The server here is a fake process; tests/models/test_local_server.py and tests/bench/test_small_model.py
run the real one."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from coderefine.config import Settings
from coderefine.errors import EXIT_USAGE, ProviderUnavailableError, ServerDiedError
from coderefine.models.base import Message, Model, ModelReply, ModelRequest, Usage
from coderefine.models.factory import make_model
from coderefine.models.local_model import SMALL_OUTPUT, GGUFModel
from coderefine.models.local_server import NEEDS, LocalServer, ServerOptions
from coderefine.models.openai_chat import OpenAIChatModel
from coderefine.models.providers import ModelSpec, parse_spec
from coderefine.models.scripted import ScriptedModel
from tests.models.fake_llama_server import SCRIPT as FAKE_SERVER
from tests.models.gguf_files import gguf_bytes


class FakeProcess:
    def __init__(self, argv: list[str], exits: int | None = None, **kwargs: Any) -> None:
        self.argv = argv
        self.kwargs = kwargs
        self.returncode = exits
        self.stdin = kwargs.get("stdin") and open("/dev/null", "wb")  # noqa: SIM115
        self.terminated = False
        kwargs["stdout"].write(b"llama_model_load: loading\n")

    def poll(self) -> int | None:
        return self.returncode

    def terminate(self) -> None:
        self.terminated = True
        self.returncode = -15

    def kill(self) -> None:
        self.returncode = -9

    def wait(self, timeout: float | None = None) -> int:
        return self.returncode or 0


def fake_popen(started: list[FakeProcess], exits: int | None = None) -> Callable[..., Any]:
    def popen(argv: list[str], **kwargs: Any) -> FakeProcess:
        process = FakeProcess(argv, exits, **kwargs)
        started.append(process)
        return process

    return popen


def server(started: list[FakeProcess], *, ready: bool = True, exits: int | None = None) -> LocalServer:
    options = ServerOptions(Path("m.gguf"), "python3", startup_timeout=0.5)
    return LocalServer(
        options, popen=fake_popen(started, exits), ready=lambda url: ready, probe=lambda python: True
    )


def test_the_command_line_fits_a_small_model_on_a_cpu() -> None:
    argv = ServerOptions(Path("m.gguf"), "py", threads=2).argv(4321)
    assert argv[:2] == ["py", "-c"] and "llama_cpp.server" in argv[2]
    flags = dict(zip(argv[3::2], argv[4::2], strict=True))
    assert flags == {
        "--model": "m.gguf",
        "--n_ctx": "8192",
        "--n_threads": "2",
        "--n_threads_batch": "2",
        "--logits_all": "false",  # a row of logits per context position: 5 GB at 8k for Qwen
        "--host": "127.0.0.1",
        "--port": "4321",
    }
    assert "--cache" not in argv  # the RAM prompt cache grew without bound; the slot's KV reuse stays


def test_started_once_on_the_first_call_and_stopped_on_close() -> None:
    started: list[FakeProcess] = []
    made: list[ModelSpec] = []
    inner = ScriptedModel(["a", "b"])
    registered: list[Callable[[], None]] = []

    def make_inner(spec: ModelSpec) -> Model:
        made.append(spec)
        return inner

    model = GGUFModel(
        parse_spec("gguf:tiny"), server(started), make_inner, at_exit=registered.append, max_output=100
    )
    assert not started  # nothing runs until a call needs it
    request = ModelRequest(role="critic", system=(), messages=(Message.user("hi"),), max_tokens=8192)
    model.complete(request)
    model.complete(request)
    assert len(started) == 1 and started[0].kwargs["start_new_session"] is True
    assert made[0].provider.base_url.startswith("http://127.0.0.1:") and made[0].model == "tiny"
    assert [r.max_tokens for r in inner.history] == [100, 100]
    assert model.name == "gguf:tiny" and registered == [model.close]
    model.close()
    assert started[0].terminated and not model.server.running
    model.close()  # twice is harmless (atexit calls it again)


def test_a_server_that_dies_or_hangs_is_reported_with_its_output() -> None:
    started: list[FakeProcess] = []
    dead = server(started, ready=False, exits=1)
    with pytest.raises(
        ServerDiedError, match=r"(?s)exited \(1\) before it answered.*llama_model_load"
    ) as caught:
        dead.start()
    assert "GGML_NATIVE" not in str(caught.value)  # a plain exit is no CPU fault: no rebuild offered
    # An exit while starting is tried once more on a new port (the port may have been taken between
    # choosing and binding it); the second exit is for good.
    assert len(started) == 2
    with pytest.raises(ServerDiedError):
        dead.start()  # a server that died is not started again for the next task
    assert len(started) == 2
    faulted: list[FakeProcess] = []
    with pytest.raises(ServerDiedError, match="GGML_NATIVE=OFF"):
        server(faulted, ready=False, exits=-4).start()  # SIGILL: the same build would die the same way
    assert len(faulted) == 1
    with pytest.raises(ProviderUnavailableError, match="did not answer within"):
        server(started, ready=False).start()
    assert started[2].terminated  # a server that did not come up is not left running


def test_a_failed_call_to_a_live_server_is_not_kept_waiting() -> None:
    """Only a lost connection is given time to be seen as the server's death; a timeout from a live
    server is raised at once."""
    from coderefine.errors import ModelTimeoutError

    started: list[FakeProcess] = []
    live = server(started)
    waits: list[float | None] = []
    live.start()

    def wait(timeout: float | None = None) -> int:
        waits.append(timeout)
        return 0

    started[0].wait = wait  # type: ignore[method-assign]

    class Timing(ScriptedModel):
        def complete(self, request: ModelRequest) -> ModelReply:
            raise ModelTimeoutError("timed out")

    model = GGUFModel(parse_spec("gguf:tiny"), live, lambda spec: Timing([]), at_exit=lambda f: None)
    request = ModelRequest(role="critic", system=(), messages=(Message.user("hi"),), max_tokens=8)
    with pytest.raises(ModelTimeoutError):
        model.complete(request)
    assert waits == []
    model.close()


def test_no_llama_cpp_says_how_to_install_it() -> None:
    options = ServerOptions(Path("m.gguf"), "python3")
    with pytest.raises(ProviderUnavailableError, match=r"coderefine\[local-model\]") as caught:
        LocalServer(options, probe=lambda python: False).start()
    assert str(caught.value) == NEEDS


def test_the_factory_makes_a_gguf_model_with_the_small_output_limit(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    path.write_bytes(gguf_bytes({"general.architecture": "qwen2", "general.name": "M"}))
    model = make_model(f"gguf:{path}", Settings(), {})
    assert isinstance(model, GGUFModel) and model.name == f"gguf:{path}"
    assert model.max_output == SMALL_OUTPUT
    assert not model.server.running


def test_a_reply_passes_through() -> None:
    reply = ModelReply(text="t", tool_input=None, usage=Usage(), model="gguf:x", stop_reason="end_turn")

    class One:
        name = "x"

        def complete(self, request: ModelRequest) -> ModelReply:
            return reply

    model = GGUFModel(parse_spec("gguf:x"), server([]), lambda spec: One(), at_exit=lambda f: None)
    request = ModelRequest(role="author", system=(), messages=(Message.user("hi"),), max_tokens=10)
    assert model.complete(request) is reply
    model.close()


@pytest.mark.parametrize(
    ("signal", "words"), [("SIGILL", "illegal instruction"), ("SIGSEGV", "segmentation")]
)
def test_a_server_that_dies_on_a_request_names_the_signal_its_log_and_the_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signal: str, words: str
) -> None:
    """A real process stands in for llama.cpp's server: it loads, answers that it is ready, and kills itself
    with the signal on the first chat request, as a native build on an AMX-advertising CPU does."""
    requests = tmp_path / "requests"
    monkeypatch.setenv("FAKE_LLAMA_REQUESTS", str(requests))
    monkeypatch.setenv("FAKE_LLAMA_SIGNAL", signal)
    options = ServerOptions(tmp_path / "m.gguf", "/opt/llama/bin/python", startup_timeout=120)
    local = LocalServer(
        options,
        command=lambda port: [sys.executable, str(FAKE_SERVER), "--port", str(port)],
        probe=lambda python: True,
    )

    def make_inner(spec: ModelSpec) -> Model:
        return OpenAIChatModel(spec, environ={}, timeout=60, max_retries=0)

    model = GGUFModel(parse_spec("gguf:m"), local, make_inner, at_exit=lambda f: None)
    request = ModelRequest(role="critic", system=(), messages=(Message.user("hi"),), max_tokens=10)
    try:
        with pytest.raises(ServerDiedError) as caught:
            model.complete(request)
        message = str(caught.value)
        assert f"was killed by {signal} ({words}" in message and "while this run used it" in message
        assert "llm_load_tensors: CPU_REPACK" in message and "repacking the weights" in message  # its log
        assert (
            'CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" '
            "/opt/llama/bin/python -m pip install --force-reinstall --no-cache-dir llama-cpp-python==0.3.36"
        ) in message
        assert "cannot reach" not in message and caught.value.exit_code == EXIT_USAGE
        # The next call is refused at once: nothing more is sent to a server known to be dead.
        with pytest.raises(ServerDiedError, match=signal):
            model.complete(request)
        assert requests.read_text().splitlines() == ["/v1/chat/completions"]
    finally:
        model.close()
