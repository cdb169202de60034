"""The steps of the coderefine GitHub Action (action.yml at the repository root), as one script.

``python3 coderefine_action.py install`` makes a virtual environment of the action's own and installs
coderefine into it; ``python3 coderefine_action.py review`` runs ``coderefine review`` with the fork-safe
rules of hooks/github/coderefine-review.yml and writes the job summary. With the input ``command: gate`` or
``command: comment`` the same step answers ``/coderefine`` commands in pull request comments instead
(coderefine_comment.py, coderefine_commands.py; the workflow is hooks/github/coderefine-commands.yml).
The action's inputs arrive as ``INPUT_*`` variables (set by action.yml), the run's context as GitHub's
own (``GITHUB_EVENT_PATH``, ``GITHUB_STEP_SUMMARY``, ``GITHUB_OUTPUT``, ...), so a test can run each step
exactly as a runner does.

Standard library only: it runs before coderefine is installed, with whatever Python the runner has.

Fork safety, as in the shipped workflow:
- it refuses ``pull_request_target`` (the pull request's code would run with this repository's secrets);
- a pull request from a fork never publishes a review (its token is read-only) and its coderefine gets no
  token at all; without an API key (forks get none) the model step is skipped and the signals reported;
- nothing here reads a secret: the API key reaches coderefine through the environment the caller sets.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import venv
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path

from coderefine_commands import Tools, outputs, run_command
from coderefine_comment import CommentError, GitHub, screen

BIN = "Scripts" if os.name == "nt" else "bin"
FAIL_ON = ("error", "warning", "info", "never")
_EXIT_MEANING = {
    0: "clean",
    1: "findings at or above fail-on (or a signal that could not be collected)",
    2: "a usage or configuration error (see the log)",
    3: "an internal error of coderefine (please report it with the log)",
    4: "the model provider was unavailable; nothing was found wrong: re-run the job",
    130: "interrupted",
}


class ActionError(Exception):
    """A problem with the action's inputs or context; the message says what to change."""


def _truthy(value: str) -> bool | None:
    lowered = value.strip().lower()
    if lowered in ("true", "yes", "1", "on"):
        return True
    if lowered in ("false", "no", "0", "off"):
        return False
    return None


def read_event(environ: Mapping[str, str]) -> dict[str, object]:
    path = environ.get("GITHUB_EVENT_PATH", "")
    if not path:
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ActionError(f"cannot read the event payload GITHUB_EVENT_PATH={path} ({exc})") from exc
    return data if isinstance(data, dict) else {}


def _pull_request(event: Mapping[str, object]) -> dict[str, object]:
    pull = event.get("pull_request")
    return pull if isinstance(pull, dict) else {}


def _get(data: object, *keys: str) -> str:
    for key in keys:
        if not isinstance(data, dict):
            return ""
        data = data.get(key)
    return data if isinstance(data, str) else ""


def from_fork(event: Mapping[str, object], environ: Mapping[str, str]) -> bool:
    """True when the pull request's head lives in another repository than this run's."""
    pull = _pull_request(event)
    head = _get(pull, "head", "repo", "full_name")
    base = environ.get("GITHUB_REPOSITORY", "") or _get(pull, "base", "repo", "full_name")
    # A head repository that was deleted has no name: treat it as a fork, the safe side.
    return not head or head != base


def base_ref(given: str, event: Mapping[str, object], environ: Mapping[str, str]) -> str:
    """The ``--base`` of the review: the input, else the pull request's base branch on origin."""
    if given.strip():
        return given.strip()
    branch = environ.get("GITHUB_BASE_REF", "") or _get(_pull_request(event), "base", "ref")
    if not branch:
        raise ActionError(
            "no base to review against: this is not a pull_request event; set the action's 'base' input "
            "(for example base: origin/main)"
        )
    return f"origin/{branch}"


def decide_github_review(given: str, fork: bool, has_pull: bool) -> tuple[bool, str]:
    """Whether to publish a pull request review, and why (for the log)."""
    choice = given.strip().lower() or "auto"
    wanted = _truthy(choice) if choice != "auto" else None
    if choice != "auto" and wanted is None:
        raise ActionError(f"github-review must be true, false or auto, not {given!r}")
    if not has_pull:
        return False, "no pull request in this event: nothing to publish a review on"
    if fork:
        if wanted:
            return False, "a pull request from a fork has a read-only token: no review is published"
        return False, "a pull request from a fork: the findings go to the job summary and annotations"
    if wanted is False:
        return False, "github-review is false"
    return True, "a pull request of this repository: the review is published"


def review_command(
    coderefine: str,
    inputs: Mapping[str, str],
    event: Mapping[str, object],
    environ: Mapping[str, str],
) -> tuple[list[str], bool, str]:
    """The ``coderefine review`` (or ``merge``) command line, whether it publishes, and why."""
    if environ.get("GITHUB_EVENT_NAME") == "pull_request_target":
        raise ActionError(
            "coderefine runs the pull request's code (its tests); under pull_request_target that code would "
            "run with this repository's secrets and a write token. Trigger the workflow on pull_request"
        )
    fail_on = inputs.get("fail-on", "").strip() or "error"
    if fail_on not in FAIL_ON:
        raise ActionError(f"fail-on must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
    has_pull = bool(_pull_request(event))
    fork = from_fork(event, environ) if has_pull else False
    publish, why = decide_github_review(inputs.get("github-review", ""), fork, has_pull)
    verb = inputs.get("command", "").strip() or "review"
    if verb not in ("review", "merge"):
        raise ActionError(f"command must be review or merge, not {verb!r}")
    summary = _truthy(inputs.get("job-summary", "") or "true")
    if summary is None:
        raise ActionError(f"job-summary must be true or false, not {inputs.get('job-summary')!r}")
    command = [coderefine, verb]
    if verb == "review":
        command += ["--base", base_ref(inputs.get("base", ""), event, environ)]
        model = inputs.get("model", "").strip()
        if model:
            command += ["--model", model]
    command += ["--fail-on", fail_on]
    if summary:
        command += ["--format", "github"]
    sarif = inputs.get("sarif", "").strip()
    if sarif:
        command += ["--format", f"sarif={sarif}"]
    if publish:
        command.append("--github-review")
    extra = shlex.split(inputs.get("args", ""))
    if verb == "merge":
        # No shell runs these arguments: expand the shards' glob (shards/*.json) here.
        extra = [match for arg in extra for match in (sorted(glob.glob(arg)) or [arg])]
    return [*command, *extra], publish, why


def inputs_from(environ: Mapping[str, str]) -> dict[str, str]:
    """The action's inputs: action.yml passes each as INPUT_<NAME> (upper case, '_' for '-')."""
    return {
        key[len("INPUT_") :].lower().replace("_", "-"): value
        for key, value in environ.items()
        if key.startswith("INPUT_")
    }


def append(path_variable: str, text: str, environ: Mapping[str, str]) -> None:
    target = environ.get(path_variable, "")
    if target:
        with Path(target).open("a", encoding="utf-8") as handle:
            handle.write(text)


def set_output(name: str, value: str, environ: Mapping[str, str]) -> None:
    append("GITHUB_OUTPUT", f"{name}={value}\n", environ)


def install_spec(version: str, action_path: str) -> str:
    """What pip installs: the action's own checkout by default, else a version or a pip requirement."""
    version = version.strip()
    if not version:
        if not action_path or not (Path(action_path) / "pyproject.toml").is_file():
            raise ActionError(
                "the action's own source is not here (GITHUB_ACTION_PATH); set the 'version' input, "
                "for example version: 0.1.0"
            )
        return action_path
    if re.fullmatch(r"v?\d+(\.\d+)*([a-z]+\d*)?", version):
        return f"coderefine=={version.removeprefix('v')}"
    return version  # a requirement (coderefine[mcp]==0.2.0), a path, or git+https://...


def install(environ: Mapping[str, str]) -> int:
    inputs = inputs_from(environ)
    spec = install_spec(inputs.get("version", ""), environ.get("GITHUB_ACTION_PATH", ""))
    home = Path(environ.get("RUNNER_TEMP", "") or tempfile.gettempdir()) / "coderefine-action-venv"
    # Its own environment: the project's dependencies (installed by the caller for its tests) and
    # coderefine's never constrain each other.
    venv.EnvBuilder(with_pip=True, clear=True).create(home)
    python = home / BIN / "python"
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    print(f"coderefine action: installing {spec} into {home}", flush=True)
    done = subprocess.run([*pip, spec], check=False)
    if done.returncode != 0:
        append(
            "GITHUB_STEP_SUMMARY",
            f"### coderefine\n\ncoderefine could not be installed (`pip install {spec}` exited "
            f"{done.returncode}); see the log.\n",
            environ,
        )
        return done.returncode
    set_output("coderefine", str(home / BIN / "coderefine"), environ)
    return 0


def child_environment(environ: Mapping[str, str], publish: bool) -> dict[str, str]:
    env: MutableMapping[str, str] = dict(environ)
    token = environ.get("INPUT_GITHUB_TOKEN", "")
    if publish and token and not env.get("GITHUB_TOKEN"):
        env["GITHUB_TOKEN"] = token
    if not publish:
        # Least privilege: a run that publishes nothing gets no token to publish with.
        env.pop("GITHUB_TOKEN", None)
    if not env.get("VIRTUAL_ENV") and (Path(sys.prefix) / BIN / "python").is_file():
        # coderefine lives in its own venv, but the project's tests need the Python the job installed
        # the project into (the one running this script); VIRTUAL_ENV names it, and a .venv of the
        # project or the `python` setting still come first.
        env["VIRTUAL_ENV"] = sys.prefix
    return {k: v for k, v in env.items() if not k.startswith(("INPUT_", "ACTION_CODEREFINE"))}


def comment_step(verb: str, environ: Mapping[str, str]) -> int:
    """``command: gate`` (screen a comment: refuse, answer or acknowledge it; outputs for the next job) and
    ``command: comment`` (screen it again, then run it on the checked-out head): coderefine_comment.py."""
    inputs = inputs_from(environ)
    event = read_event(environ)

    def client() -> GitHub:
        api = environ.get("GITHUB_API_URL", "") or "https://api.github.com"
        return GitHub(api, inputs.get("github-token", ""), environ.get("GITHUB_REPOSITORY", ""))

    accepted = screen(environ, event, client, acknowledge=verb == "gate")
    if verb == "gate":
        for name, value in outputs(accepted):
            set_output(name, value, environ)
        return 0
    code = 0
    if accepted is not None:
        coderefine = environ.get("ACTION_CODEREFINE", "") or "coderefine"
        tools = Tools(coderefine, review_command, child_environment, _EXIT_MEANING)
        code = run_command(accepted, client(), tools, inputs, environ, Path.cwd())
    set_output("exit-code", str(code), environ)
    return code


def review(environ: Mapping[str, str]) -> int:
    inputs = inputs_from(environ)
    verb = inputs.get("command", "").strip()
    if verb in ("gate", "comment"):
        return comment_step(verb, environ)
    coderefine = environ.get("ACTION_CODEREFINE", "") or "coderefine"
    event = read_event(environ)
    command, publish, why = review_command(coderefine, inputs, event, environ)
    print(f"coderefine action: {why}", flush=True)
    print("coderefine action: " + shlex.join(["coderefine", *command[1:]]), flush=True)
    summary = Path(environ.get("GITHUB_STEP_SUMMARY", "") or os.devnull)
    before = summary.stat().st_size if summary.is_file() else 0
    code = subprocess.run(command, env=child_environment(environ, publish), check=False).returncode
    written = summary.is_file() and summary.stat().st_size > before
    if not written and _truthy(inputs.get("job-summary", "") or "true"):
        # coderefine stopped before its report (a usage error, an outage): the summary still says why.
        meaning = _EXIT_MEANING.get(code, "an unexpected exit code")
        append(
            "GITHUB_STEP_SUMMARY", f"### coderefine\n\ncoderefine review exited {code}: {meaning}.\n", environ
        )
    set_output("exit-code", str(code), environ)
    set_output("github-review", "true" if publish else "false", environ)
    set_output("sarif", inputs.get("sarif", "").strip(), environ)
    return code


def main(argv: Sequence[str], environ: Mapping[str, str]) -> int:
    steps = {"install": install, "review": review}
    if len(argv) != 1 or argv[0] not in steps:
        print("usage: coderefine_action.py install|review", file=sys.stderr)
        return 2
    try:
        return steps[argv[0]](environ)
    except (ActionError, CommentError) as exc:
        print(f"::error title=coderefine action::{exc}", flush=True)
        append("GITHUB_STEP_SUMMARY", f"### coderefine\n\nThe action was not run: {exc}.\n", environ)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], os.environ))
