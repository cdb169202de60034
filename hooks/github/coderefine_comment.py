"""Commands in pull request comments (``/coderefine review``): who may, which pull request, the answer.

The comment workflow (hooks/github/coderefine-commands.yml) runs on ``issue_comment`` and
``pull_request_review_comment``, in two jobs. The first (the action with ``command: gate``) checks out
nothing: it reads the comment, refuses an author the workflow does not allow, answers ``help`` and unknown
commands, refuses a pull request from a fork, and acknowledges an accepted command with a reaction. Only
then the second job checks out the pull request's head (by the commit the gate read) and runs the command
(``command: comment``, hooks/github/coderefine_commands.py), which checks all of it again before it runs
anything.

Why a fork is refused: ``issue_comment`` runs in this repository's context, with its secrets and a token
that can write; running a fork's code there (its tests, its setup.py) would hand both to whoever wrote it.
A fork's pull request is reviewed by the ``pull_request`` workflow, which gives it no secrets.

Standard library only, like the step script that imports it.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

PREFIX = "/coderefine"
KNOWN = ("review", "fix", "explain", "help")
DEFAULT_ALLOWED = ("OWNER", "MEMBER", "COLLABORATOR")
EVENTS = ("issue_comment", "pull_request_review_comment")
HELP = """\
coderefine commands (in a comment on this pull request):
- `/coderefine review`: review the pull request's head as the pull_request workflow does; findings already \
posted are kept, new ones added, fixed ones marked resolved (a head reviewed before is not paid for twice: \
`/coderefine review again` does)
- `/coderefine fix [what to change]`: run the refine loop on the changed files (the intent: your words, else \
the pull request's title and body; in a finding's thread, that finding) and offer the result as verified \
suggestions
- `/coderefine explain`: in the thread of a coderefine finding, the critic's evidence and the signals \
behind it
- `/coderefine help`: this list"""


class CommentError(Exception):
    """A problem with the comment's context or the GitHub API; the message says what to change."""


@dataclass(frozen=True)
class Command:
    verb: str  # one of KNOWN, or the word that was not understood
    argument: str  # the rest: the intent of fix


@dataclass(frozen=True)
class CommentEvent:
    kind: str  # "conversation" (the pull request's timeline) or "thread" (a review comment's thread)
    number: int  # the pull request
    comment_id: int
    thread_id: int  # the first comment of the review thread (kind "thread"), else 0
    author: str
    association: str  # GitHub's author_association: OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE...
    bot: bool
    body: str


@dataclass(frozen=True)
class Decision:
    run: bool  # whether the command runs (in the second job)
    reply: str  # answered at once ("" for none)
    reaction: str  # the acknowledgement ("" for none)
    log: str


def parse_command(body: str) -> Command | None:
    """The command of a comment whose first non-blank line starts with ``/coderefine``, else None."""
    lines = body.strip().splitlines()
    if not lines:
        return None
    first = lines[0].strip()
    if first != PREFIX and not first.startswith((PREFIX + " ", PREFIX + "\t")):
        return None
    verb, _, rest = first[len(PREFIX) :].strip().partition(" ")
    argument = "\n".join([rest.strip(), *lines[1:]]).strip()
    return Command(verb.lower() or "help", argument)


def _dict(data: object, key: str) -> dict[str, Any]:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def comment_event(name: str, event: Mapping[str, Any]) -> tuple[CommentEvent | None, str]:
    """The comment of a command event on a pull request, or None and why it is ignored."""
    if name not in EVENTS:
        return None, f"the event is {name or 'unknown'}, not a comment ({' or '.join(EVENTS)})"
    if event.get("action") != "created":
        return None, f"the comment was {event.get('action')}, not created: only new comments are commands"
    comment = _dict(event, "comment")
    user = _dict(comment, "user")
    if name == "issue_comment":
        issue = _dict(event, "issue")
        if not issue.get("pull_request"):
            return None, f"#{issue.get('number')} is an issue, not a pull request"
        number, kind, thread = int(issue.get("number") or 0), "conversation", 0
    else:
        number, kind = int(_dict(event, "pull_request").get("number") or 0), "thread"
        thread = int(comment.get("in_reply_to_id") or comment.get("id") or 0)
    found = CommentEvent(
        kind=kind,
        number=number,
        comment_id=int(comment.get("id") or 0),
        thread_id=thread,
        author=str(user.get("login") or ""),
        association=str(comment.get("author_association") or "NONE").upper(),
        bot=user.get("type") == "Bot",
        body=str(comment.get("body") or ""),
    )
    if not found.number or not found.comment_id:
        return None, "the payload names no pull request or comment"
    if found.bot:
        return None, f"{found.author} is a bot: its comments are never commands"
    return found, ""


def allowed_associations(given: str) -> tuple[str, ...]:
    """The ``allowed-associations`` input: comma- or space-separated, upper case; default the three."""
    names = tuple(part.strip().upper() for part in given.replace(",", " ").split() if part.strip())
    known = {
        "OWNER",
        "MEMBER",
        "COLLABORATOR",
        "CONTRIBUTOR",
        "FIRST_TIME_CONTRIBUTOR",
        "FIRST_TIMER",
        "NONE",
    }
    unknown = [name for name in names if name not in known]
    if unknown:
        raise CommentError(
            f"allowed-associations: {', '.join(unknown)} is not a GitHub author_association; use some of "
            f"{', '.join(sorted(known))}"
        )
    return names or DEFAULT_ALLOWED


def _either(names: tuple[str, ...]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def head_repository(pull: Mapping[str, Any]) -> str:
    return str(_dict(_dict(pull, "head"), "repo").get("full_name") or "")


def decide(
    command: Command,
    comment: CommentEvent,
    pull: Mapping[str, Any],
    allowed: tuple[str, ...],
    repository: str,
) -> Decision:
    """What to do with a command: refuse (one line, why), answer at once, or run it."""
    who = f"@{comment.author}"
    if comment.association not in allowed:
        return Decision(
            False,
            f"{who}: coderefine commands run only for authors whose association with this repository is "
            f"{_either(allowed)} (yours: {comment.association}); nothing was run.",
            "",
            f"refused: {comment.author} is {comment.association}, allowed: {', '.join(allowed)}",
        )
    if command.verb == "help":
        return Decision(False, HELP, "", "help")
    if command.verb not in KNOWN:
        known = ", ".join(f"`{PREFIX} {verb}`" for verb in KNOWN)
        word = command.verb.replace("`", "")[:40]  # echoed as code, never as markup or a mention
        return Decision(
            False, f"{who}: unknown command `{word}`; the known ones: {known}.", "", "unknown command"
        )
    if command.verb == "explain" and comment.kind != "thread":
        return Decision(
            False,
            f"{who}: `{PREFIX} explain` answers in the thread of a finding: reply it to coderefine's inline "
            "comment.",
            "",
            "explain outside a thread",
        )
    if pull.get("state") != "open":
        return Decision(
            False, f"{who}: this pull request is {pull.get('state')}; nothing was run.", "", "closed"
        )
    head = head_repository(pull)
    if head != repository:
        return Decision(
            False,
            f"{who}: this pull request comes from a fork ({head or 'a deleted repository'}); a command never "
            "runs a fork's code with this repository's secrets. Its `pull_request` workflow reviews it with "
            "the signals and no secrets; for a model's review, once you have read the change, push its "
            "branch to this repository and comment on a pull request from there (docs/security.md).",
            "",
            f"refused: a fork ({head or 'deleted'})",
        )
    return Decision(
        True, "", "eyes", f"accepted: {command.verb} from {comment.author} ({comment.association})"
    )


Opener = Callable[[urllib.request.Request], Any]


class GitHub:
    """The few REST calls of the commands, with urllib (the gate runs before anything is installed)."""

    def __init__(
        self, api_url: str, token: str, repository: str, opener: Opener = urllib.request.urlopen
    ) -> None:
        if not token:
            raise CommentError("no token to answer with: set the action's github-token input")
        self._api = api_url.rstrip("/")
        self._token = token
        self._opener = opener
        self.base = f"/repos/{repository}"

    def call(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        request = urllib.request.Request(
            self._api + path,
            data=json.dumps(body).encode("utf-8") if body is not None else None,
            method=method,
            headers={
                "Authorization": f"Bearer {self._token}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "Content-Type": "application/json",
                "User-Agent": "coderefine-action",
            },
        )
        try:
            with self._opener(request) as response:
                text = response.read().decode("utf-8")
        except urllib.error.HTTPError as exc:
            hint = " (the job needs pull-requests: write)" if exc.code in (401, 403) else ""
            raise CommentError(f"GitHub refused {method} {path}: {exc.code} {exc.reason}{hint}") from exc
        except urllib.error.URLError as exc:
            raise CommentError(f"GitHub's API did not answer {method} {path}: {exc.reason}") from exc
        return json.loads(text) if text.strip() else {}

    def pull(self, number: int) -> dict[str, Any]:
        data = self.call("GET", f"{self.base}/pulls/{number}")
        if not isinstance(data, dict):
            raise CommentError(f"GitHub answered pull request #{number} with no object")
        return data

    def react(self, comment: CommentEvent, content: str) -> None:
        where = "issues" if comment.kind == "conversation" else "pulls"
        self.call(
            "POST", f"{self.base}/{where}/comments/{comment.comment_id}/reactions", {"content": content}
        )

    def reply(self, comment: CommentEvent, body: str) -> None:
        """In the same place: the pull request's conversation, or the review thread."""
        if comment.kind == "conversation":
            self.call("POST", f"{self.base}/issues/{comment.number}/comments", {"body": body})
        else:
            path = f"{self.base}/pulls/{comment.number}/comments/{comment.thread_id}/replies"
            self.call("POST", path, {"body": body})

    def conversation(self, number: int) -> list[dict[str, Any]]:
        """The comments of a pull request's conversation, every page."""
        return self._pages(f"{self.base}/issues/{number}/comments")

    def review_comments(self, number: int) -> list[dict[str, Any]]:
        """The review (inline) comments of a pull request, every page."""
        return self._pages(f"{self.base}/pulls/{number}/comments")

    def _pages(self, path: str) -> list[dict[str, Any]]:
        comments: list[dict[str, Any]] = []
        for page in range(1, 51):
            batch = self.call("GET", f"{path}?per_page=100&page={page}")
            comments += [c for c in batch if isinstance(c, dict)] if isinstance(batch, list) else []
            if not isinstance(batch, list) or len(batch) < 100:
                break
        return comments

    def review_comment(self, comment_id: int) -> dict[str, Any]:
        data = self.call("GET", f"{self.base}/pulls/comments/{comment_id}")
        return data if isinstance(data, dict) else {}

    def post_review(self, number: int, payload: Mapping[str, Any]) -> bool:
        """A review with inline comments; False when GitHub refuses a comment's place (422)."""
        try:
            self.call("POST", f"{self.base}/pulls/{number}/reviews", payload)
        except CommentError as exc:
            if ": 422 " in str(exc):
                return False
            raise
        return True


@dataclass(frozen=True)
class Accepted:
    command: Command
    comment: CommentEvent
    pull: dict[str, Any]


def screen(
    environ: Mapping[str, str],
    event: Mapping[str, Any],
    github: Callable[[], GitHub],
    acknowledge: bool = True,
) -> Accepted | None:
    """Read the comment, answer or refuse it at once, acknowledge an accepted one; None when nothing runs.

    A comment that is no command is ignored without a call to GitHub; a refused author costs one reply
    and nothing else (no checkout, no model). The command job screens again without acknowledging: the
    gate did.
    """
    name = environ.get("GITHUB_EVENT_NAME", "")
    comment, why = comment_event(name, event)
    if comment is None:
        print(f"coderefine action: ignored: {why}", flush=True)
        return None
    command = parse_command(comment.body)
    if command is None:
        print("coderefine action: ignored: the comment is not a /coderefine command", flush=True)
        return None
    allowed = allowed_associations(environ.get("INPUT_ALLOWED_ASSOCIATIONS", ""))
    client = github()
    needs_pull = comment.association in allowed and command.verb in KNOWN and command.verb != "help"
    pull = client.pull(comment.number) if needs_pull else {}
    decision = decide(command, comment, pull, allowed, environ.get("GITHUB_REPOSITORY", ""))
    print(f"coderefine action: {decision.log}", flush=True)
    try:
        if decision.reaction and acknowledge:
            client.react(comment, decision.reaction)
        if decision.reply:
            client.reply(comment, decision.reply)
    except CommentError as exc:
        if decision.run or ": 403 " not in str(exc):
            raise
        # GitHub gives a review comment's run on a fork's pull request a read-only token (and no
        # secrets): the refusal cannot be posted, and nothing runs anyway.
        print(
            f"::warning title=coderefine::could not answer the comment ({exc}); nothing was run", flush=True
        )
    return Accepted(command, comment, pull) if decision.run else None
