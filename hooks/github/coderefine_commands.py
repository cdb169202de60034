"""The accepted commands, run on the checked-out head of a pull request of this repository.

``review`` runs ``coderefine review`` as the pull_request workflow does (the same command line, with a
pull_request event made from the API's pull request, so the intent, the anchors and the published review
are the same; findings already posted are kept, so a second review adds only what is new). ``fix`` runs
``coderefine fix`` on the change with the comment's intent and offers what it wrote as suggestions in one
review (or pushes it as a commit when the ``fix-push`` input says so). ``explain`` reviews the head again
and answers with the finding of its thread: the critic's evidence and the signals of the run.

Standard library only (the step script imports it before coderefine exists in the job).
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coderefine_comment import Accepted, GitHub
from coderefine_suggestions import fence, fix_hunks, right_lines, suggestions

FINGERPRINT = re.compile(r"<!-- coderefine:fp=([0-9a-f]+) -->")
# The summary comment of a review (doors/review/render.py): its marker, and "`BASE10..HEAD10`" of the run.
SUMMARY_MARKER = "<!-- coderefine:summary -->"
RESOLVED_MARKER = "<!-- coderefine:resolved -->"  # doors/review/github_api.py: a finding gone since
SUMMARY_HEAD = re.compile(r"`[0-9a-f]{7,40}\.\.([0-9a-f]{7,40})`")
BOT = ("github-actions[bot]", "41898282+github-actions[bot]@users.noreply.github.com")

ReviewCommand = Callable[
    [str, Mapping[str, str], Mapping[str, object], Mapping[str, str]], tuple[list[str], bool, str]
]
ChildEnvironment = Callable[[Mapping[str, str], bool], dict[str, str]]


@dataclass(frozen=True)
class Tools:
    """What the step script lends: coderefine's path and its own rules for the review's command line."""

    coderefine: str
    review_command: ReviewCommand
    child_environment: ChildEnvironment
    meaning: Mapping[int, str]


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        # Named without its -c options: the push's holds the token, and this message becomes a comment.
        words = [arg for i, arg in enumerate(args) if arg != "-c" and (i == 0 or args[i - 1] != "-c")]
        words = [word for word in words if not word.startswith("-")]
        raise RuntimeError(f"git {' '.join(words[:1])} failed: {done.stderr.strip()[-500:]}")
    return done.stdout


def run_url(environ: Mapping[str, str]) -> str:
    server = environ.get("GITHUB_SERVER_URL", "https://github.com")
    return f"{server}/{environ.get('GITHUB_REPOSITORY', '')}/actions/runs/{environ.get('GITHUB_RUN_ID', '')}"


class CommandRun:
    def __init__(
        self,
        accepted: Accepted,
        client: GitHub,
        tools: Tools,
        inputs: Mapping[str, str],
        environ: Mapping[str, str],
        cwd: Path,
    ) -> None:
        self.accepted = accepted
        self.client = client
        self.tools = tools
        self.inputs = inputs
        self.environ = environ
        self.cwd = cwd
        self.pull = accepted.pull
        self.head = _git(cwd, "rev-parse", "HEAD").strip()
        self.base_ref = str(self.pull.get("base", {}).get("ref") or "")
        self.folder = Path(
            tempfile.mkdtemp(prefix="coderefine-command-", dir=environ.get("RUNNER_TEMP") or None)
        )

    def reply(self, body: str) -> None:
        self.client.reply(self.accepted.comment, body)

    def pull_event(self) -> dict[str, Any]:
        """The pull_request event of this head, made from the API's pull request (the same shape)."""
        pull = {**self.pull, "head": {**self.pull.get("head", {}), "sha": self.head}}
        return {"action": "synchronize", "number": self.accepted.comment.number, "pull_request": pull}

    def pull_environment(self, publish: bool) -> dict[str, str]:
        """The environment of a pull_request run of this head: coderefine sees the same event either way."""
        path = self.folder / "pull_request.json"
        path.write_text(json.dumps(self.pull_event()), encoding="utf-8")
        env = dict(self.environ)
        env.update(
            GITHUB_EVENT_NAME="pull_request",
            GITHUB_EVENT_PATH=str(path),
            GITHUB_BASE_REF=self.base_ref,
            GITHUB_HEAD_REF=str(self.pull.get("head", {}).get("ref") or ""),
        )
        return self.tools.child_environment(env, publish)

    def run_review(self, publish: bool) -> tuple[int, dict[str, Any]]:
        """``coderefine review`` of the head, as the pull_request workflow runs it; its JSON report."""
        report = self.folder / "review.json"
        inputs = {**self.inputs, "command": "review", "github-review": "true" if publish else "false"}
        event = self.pull_event()
        command, publishes, why = self.tools.review_command(
            self.tools.coderefine, inputs, event, self.pull_environment(publish)
        )
        command += ["--format", f"json={report}"]
        print(f"coderefine action: {why}", flush=True)
        print("coderefine action: " + " ".join(["coderefine", *command[1:]]), flush=True)
        env = self.pull_environment(publishes)
        code = subprocess.run(command, cwd=self.cwd, env=env, check=False).returncode
        data = json.loads(report.read_text(encoding="utf-8")) if report.is_file() else {}
        return code, data

    def failed(self, verb: str, code: int) -> str:
        meaning = self.tools.meaning.get(code, "an unexpected exit code")
        return f"coderefine {verb} exited {code}: {meaning}. The log: {run_url(self.environ)}"

    def already_reviewed(self) -> bool:
        """Whether this head was reviewed before: a reply of this command, or the summary comment of a
        review (pull_request workflow or command) names it."""
        for comment in self.client.conversation(self.accepted.comment.number):
            body = str(comment.get("body") or "")
            if f"<!-- coderefine:reviewed={self.head} -->" in body:
                return True
            if SUMMARY_MARKER in body and self.head[:10] in SUMMARY_HEAD.findall(body):
                return True
        return False

    def open_findings(self) -> set[str]:
        """The fingerprints of coderefine's inline comments not yet marked resolved."""
        found = set()
        for comment in self.client.review_comments(self.accepted.comment.number):
            body = str(comment.get("body") or "")
            match = FINGERPRINT.search(body)
            if match and RESOLVED_MARKER not in body:
                found.add(match.group(1))
        return found

    def review(self) -> int:
        again = self.accepted.command.argument.strip().lower() == "again"
        if not again and self.already_reviewed():
            self.reply(
                f"coderefine already reviewed `{self.head[:10]}`, the head now: its findings are inline "
                "and in the summary comment. Push a change, or comment `/coderefine review again` to pay "
                "for a new review of the same code."
            )
            return 0
        before = self.open_findings()
        code, report = self.run_review(publish=True)
        if not report:
            self.reply(self.failed("review", code))
            return code
        findings = report.get("findings", [])
        inline = {str(f.get("fingerprint")) for f in findings if f.get("inline")}
        everything = {str(f.get("fingerprint")) for f in findings}
        delta = (
            f"Inline: {len(inline - before)} new, {len(inline & before)} already posted, "
            f"{len(before - everything)} resolved since."
        )
        counts = {
            level: sum(1 for f in findings if f.get("severity") == level)
            for level in ("error", "warning", "info")
        }
        said = (
            ", ".join(f"{n} {level}{'s' if n != 1 else ''}" for level, n in counts.items() if n)
            or "no findings"
        )
        note = f"\n\n> {report['model_note']}" if report.get("model_note") else ""
        self.reply(
            f"coderefine reviewed `{self.head[:10]}`: {said} (cost ${report.get('cost_usd', 0):.4f}). "
            f"The findings are inline and in the summary comment. {delta}{note}\n"
            f"<!-- coderefine:reviewed={self.head} -->"
        )
        return 0 if code in (0, 1) else code

    def explain(self) -> int:
        top = self.client.review_comment(self.accepted.comment.thread_id)
        match = FINGERPRINT.search(str(top.get("body") or ""))
        if match is None:
            self.reply("This thread is not one of coderefine's findings: reply `/coderefine explain` to one.")
            return 0
        code, report = self.run_review(publish=False)
        if not report:
            self.reply(self.failed("review", code))
            return code
        finding = next(
            (f for f in report.get("findings", []) if f.get("fingerprint") == match.group(1)), None
        )
        statuses = "; ".join(
            f"{s.get('source')} {s.get('state')}" + (f" ({s['note']})" if s.get("note") else "")
            for s in report.get("statuses", [])
        )
        if finding is None:
            self.reply(f"This finding is no longer found at `{self.head[:10]}`. Signals: {statuses}.")
            return 0
        opening, closing = fence(str(finding.get("message", "")), "text")
        origin = (
            "the critic (a model)"
            if finding.get("source") == "critic"
            else f"the {finding.get('source')} signal"
        )
        self.reply(
            "\n".join(
                [
                    f"**{finding.get('title')}** — `{finding.get('rule_id')}`, {finding.get('severity')}, "
                    f"from {origin}, at `{finding.get('path')}:{finding.get('line')}` of `{self.head[:10]}`.",
                    "",
                    "What it says, with the critic's evidence (or the signal's own message):",
                    opening,
                    str(finding.get("message", "")),
                    closing,
                    "",
                    f"Signals of this head (introduced by the pull request only): {statuses}.",
                    *([f"\n> {report['model_note']}"] if report.get("model_note") else []),
                ]
            )
        )
        return 0

    def finding_of_thread(self) -> tuple[str, str] | None:
        """(path, what it says) of the coderefine finding whose thread the command was asked in."""
        if self.accepted.comment.kind != "thread":
            return None
        top = self.client.review_comment(self.accepted.comment.thread_id)
        body = str(top.get("body") or "")
        if not FINGERPRINT.search(body) or not top.get("path"):
            return None
        said = body.split("Verified by coderefine", 1)[0].split("<!--", 1)[0].strip()
        return str(top["path"]), f"Fix this review finding at {top['path']} line {top.get('line')}:\n{said}"

    def fix(self) -> int:
        pull = self.pull
        files: list[str] = []
        intent = self.accepted.command.argument
        finding = None if intent else self.finding_of_thread()
        if finding is not None:  # `/coderefine fix` in a finding's thread: that finding, in its file
            files, intent = [finding[0]], finding[1]
        intent = intent or "\n\n".join(
            part for part in (str(pull.get("title") or ""), str(pull.get("body") or "")) if part
        )
        command = [self.tools.coderefine, "fix", *files, "--base", f"origin/{self.base_ref}", "-m", intent]
        model = self.inputs.get("model", "").strip()
        if model:
            command += ["--model", model]
        print("coderefine action: coderefine fix --base origin/" + self.base_ref, flush=True)
        code = subprocess.run(command, cwd=self.cwd, env=self.pull_environment(False), check=False).returncode
        diff = _git(self.cwd, "diff", "--unified=0", "--no-color", "--no-ext-diff", "HEAD", "--", "*.py")
        first = intent.splitlines()[0] if intent else ""
        if not diff.strip():
            if code in (0, 1):
                self.reply(f"coderefine fix found nothing to change for: {first}")
                return 0
            self.reply(self.failed("fix", code))
            return code
        if self.inputs.get("fix-push", "").strip().lower() == "true":
            return self.push(first)
        return self.suggest(diff, first)

    def suggest(self, diff: str, intent: str) -> int:
        shown = right_lines(
            _git(self.cwd, "diff", "--no-color", "--no-ext-diff", f"origin/{self.base_ref}...HEAD")
        )

        def head_text(path: str) -> list[str]:
            return _git(self.cwd, "show", f"HEAD:{path}").splitlines()

        comments, rest = suggestions(fix_hunks(diff, head_text), shown)
        whole = _git(self.cwd, "diff", "--no-color", "--no-ext-diff", "HEAD", "--", "*.py")
        opening, closing = fence(whole, "diff")
        outside = (
            f"\n\nOutside the diff GitHub shows, so not a suggestion:\n{opening}\n{whole}{closing}"
            if rest
            else ""
        )
        plural = "s" if len(comments) != 1 else ""
        summary = f"coderefine fix for: {intent}\n\n{len(comments)} suggestion{plural}{outside}"
        if comments:
            payload = {"commit_id": self.head, "event": "COMMENT", "body": summary, "comments": comments}
            if self.client.post_review(self.accepted.comment.number, payload):
                self.reply(
                    f"coderefine fix: {len(comments)} verified suggestion(s) in a review, for: {intent}"
                )
                return 0
        self.reply(f"coderefine fix for: {intent}\n\nThe verified change:\n{opening}\n{whole}{closing}")
        return 0

    def push(self, intent: str) -> int:
        pull_head = str(self.pull.get("head", {}).get("sha") or "")
        branch = str(self.pull.get("head", {}).get("ref") or "")
        if pull_head != self.head:
            self.reply(
                f"coderefine fix: the branch moved past `{self.head[:10]}` while it ran; nothing pushed."
            )
            return 0
        identity = ["-c", f"user.name={BOT[0]}", "-c", f"user.email={BOT[1]}"]
        asked = self.accepted.comment
        message = f"coderefine fix: {intent}\n\nAsked by @{asked.author} in #{asked.number}."
        _git(self.cwd, "add", "-u", "--", "*.py")
        _git(self.cwd, *identity, "commit", "-q", "-m", message)
        commit = _git(self.cwd, "rev-parse", "HEAD").strip()
        server = self.environ.get("GITHUB_SERVER_URL", "https://github.com")
        url = f"{server}/{self.environ.get('GITHUB_REPOSITORY', '')}.git"
        token = self.inputs.get("github-token", "")
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        header = ["-c", f"http.extraheader=AUTHORIZATION: basic {basic}"]
        try:
            _git(self.cwd, *header, "push", "-q", url, f"HEAD:refs/heads/{branch}")
        except RuntimeError as exc:
            raise RuntimeError(f"{exc} (fix-push needs contents: write in the command job)") from exc
        self.reply(f"coderefine fix pushed `{commit[:10]}` to `{branch}`, for: {intent}")
        return 0


def run_command(
    accepted: Accepted,
    client: GitHub,
    tools: Tools,
    inputs: Mapping[str, str],
    environ: Mapping[str, str],
    cwd: Path,
) -> int:
    """Run an accepted command; whatever happens, the comment gets an answer (or the log says why not)."""
    run = CommandRun(accepted, client, tools, inputs, environ, cwd)
    steps: Mapping[str, Callable[[], int]] = {"review": run.review, "fix": run.fix, "explain": run.explain}
    try:
        return steps[accepted.command.verb]()
    except (RuntimeError, OSError, ValueError) as exc:
        # A git failure (a push refused: the job needs contents: write), an unreadable report: say so
        # where the command was asked, then fail the job.
        run.reply(f"coderefine {accepted.command.verb} failed: {exc}. The log: {run_url(environ)}")
        return 3
    finally:
        shutil.rmtree(run.folder, ignore_errors=True)


def outputs(accepted: Accepted | None) -> Sequence[tuple[str, str]]:
    """The gate's outputs, which the second job reads."""
    if accepted is None:
        return (("run", "false"), ("command", ""), ("head-sha", ""))
    head = str(accepted.pull.get("head", {}).get("sha") or "")
    return (("run", "true"), ("command", accepted.command.verb), ("head-sha", head))
