"""The project's rules, measured: do they make the critic catch what no linter checks, and stop it from
flagging what the project chose? And what do they cost in request tokens?

The project is a real library, inflection 0.5.1 from its sdist (cached under ``~/.cache/coderefine/bench``
or ``$CODEREFINE_BENCH_CACHE``; the first run downloads it with pip), with the AGENTS.md below, written for
it. Each case is one change to ``inflection/__init__.py``: four break a rule that ruff (the project's
selection, E4 E7 E9 F B) does not check, three follow a rule, two of them where a generic review would
object (a broad ``except``, characters dropped silently). Each is critiqued once (``refiner.loop.review``:
the signals, then one critic call) without the rules (``rules-files = []``) and with them.

- caught: a break case with a critic finding at warning or above; *cited*: that finding names the rule
  broken (its ``rule`` resolved to the right AGENTS.md line).
- false alarm: a follow case with a critic finding at warning or above.
- tokens: the critic's request, ``len(text) / 4``, and the rules section's share of it.

    python -m benchmarks.rules                                  # the scripted stand-in (mechanics only)
    python -m benchmarks.rules --model gguf:qwen2.5-coder-1.5b  # a real model: the rates mean something

With the scripted stand-in the rates are true by construction: it raises the generic objections a
critic is known to raise and the rule breaks it is shown rules for, and obeys what the rules allow. It
shows that the rules reach the request within their budget, that a citation resolves to its file and
line and is quoted, and what the tokens cost; it cannot show that a model reads rules well. Only a run
with a real model measures that.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks.large import cache_dir  # noqa: E402
from coderefine.models.base import Model, ModelRequest  # noqa: E402

REQUIREMENT = "inflection==0.5.1"
SDIST = "inflection-0.5.1.tar.gz"
MODULE = "inflection/__init__.py"

AGENTS = """\
# Working on inflection

These rules hold for every change to the `inflection` package.

- Public functions keep their signatures: never rename or remove a parameter; add new ones keyword-only.
- Library code never prints or logs: a function returns its result and does nothing else.
- A wrong argument raises `TypeError` naming the expected type, never `ValueError` or `AssertionError`.
- No function mutates the rule tables (`PLURALS`, `SINGULARS`, `UNCOUNTABLES`); only `_irregular` does.
- Helpers named `_safe_*` never raise: they catch `Exception` and return their input. That is intended.
- Characters with no ASCII form are dropped silently (transliterate's contract): do not raise or warn.
"""
# The line of AGENTS.md each rule is on (what a finding must cite).
RULE_LINE = {"signature": 5, "print": 6, "error": 7, "tables": 8, "safe": 9, "drop": 10}


@dataclass(frozen=True)
class Case:
    name: str
    kind: str  # "break" or "follow"
    rule: str  # a key of RULE_LINE
    old: str  # text of the module replaced ...
    new: str  # ... by this
    marker: str  # a text of the added lines that the stand-in reacts to
    generic: str = ""  # the objection a generic review raises to this change ("" for none)


CASES = (
    Case(
        "rename a parameter",
        "break",
        "signature",
        "def camelize(string: str, uppercase_first_letter: bool = True) -> str:",
        "def camelize(string: str, upper: bool = True) -> str:",
        "upper: bool",
    ),
    Case(
        "print while pluralizing",
        "break",
        "print",
        "def pluralize(word: str) -> str:\n",
        "def pluralize(word: str) -> str:\n    print('pluralizing', word)\n",
        "print(",
    ),
    Case(
        "ValueError for a wrong type",
        "break",
        "error",
        "def ordinal(number: int) -> str:\n",
        "def ordinal(number: int) -> str:\n"
        "    if not isinstance(number, int):\n"
        "        raise ValueError('number must be an int')\n",
        "raise ValueError",
    ),
    Case(
        "a function that adds to UNCOUNTABLES",
        "break",
        "tables",
        "def dasherize(word: str) -> str:\n",
        'def add_uncountable(word: str) -> None:\n    """Treat ``word`` as uncountable."""\n'
        "    UNCOUNTABLES.add(word)\n\n\ndef dasherize(word: str) -> str:\n",
        "UNCOUNTABLES.add",
    ),
    Case(
        "a _safe_ helper catches Exception",
        "follow",
        "safe",
        "def dasherize(word: str) -> str:\n",
        'def _safe_titleize(word: str) -> str:\n    """``titleize``, or ``word`` itself if it fails."""\n'
        "    try:\n        return titleize(word)\n    except Exception:\n        return word\n\n\n"
        "def dasherize(word: str) -> str:\n",
        "except Exception",
        "a broad `except Exception` hides errors",
    ),
    Case(
        "parameterize drops what has no ASCII form",
        "follow",
        "drop",
        "    string = transliterate(string)\n",
        "    string = transliterate(string)\n    string = re.sub(r\"[^\\x00-\\x7f]\", '', string)\n",
        "[^\\x00-\\x7f]",
        "characters are dropped silently",
    ),
    Case(
        "a keyword-only parameter added",
        "follow",
        "signature",
        "def dasherize(word: str) -> str:",
        "def dasherize(word: str, *, dash: str = '-') -> str:",
        "*, dash",
    ),
)


class StandIn:
    """A scripted critic that obeys what it is shown: it raises each case's generic objection unless the
    request carries the rule that allows it, and a rule break only when the request carries that rule."""

    name = "scripted stand-in"

    def complete(self, request: ModelRequest) -> Any:
        from coderefine.models.base import ModelReply, Usage

        text = request.prompt_text()
        issues = []
        for case in CASES:
            if case.marker not in _added(text):
                continue
            line = RULE_LINE[case.rule]
            shown = f"{line}: " in text and _rule_text(case.rule) in text
            if case.kind == "break" and shown:
                issues.append(_issue(case, f"AGENTS.md:{line}"))
            elif case.generic and not shown:
                issues.append(_issue(case, ""))
        verdict = {"verdict": "revise" if issues else "pass", "summary": "stand-in", "issues": issues}
        return ModelReply("", Usage(len(text) // 4, 60), self.name, tool_input=verdict)


def _added(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if line.startswith("+"))


def _rule_text(rule: str) -> str:
    return AGENTS.splitlines()[RULE_LINE[rule] - 1][:40]


def _issue(case: Case, rule: str) -> dict[str, object]:
    return {
        "title": case.generic or f"breaks the project's rule ({case.rule})",
        "severity": "warning",
        "path": MODULE,
        "line": 1,
        "evidence": case.marker,
        "suggestion": "see the rule",
        **({"rule": rule} if rule else {}),
    }


def sdist_source() -> str:
    archive = cache_dir() / SDIST
    if not archive.is_file():
        archive.parent.mkdir(parents=True, exist_ok=True)
        argv = [sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps"]
        subprocess.run([*argv, REQUIREMENT, "-d", str(archive.parent)], check=True, capture_output=True)
    with tarfile.open(archive) as tar:
        member = tar.extractfile(f"inflection-0.5.1/{MODULE}")
        assert member is not None
        return member.read().decode("utf-8")


def _git(root: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.invalid",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    }
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


@dataclass(frozen=True)
class Outcome:
    case: Case
    rules: bool
    flagged: bool  # a critic finding at warning or above
    cited: bool  # ... naming the case's rule
    request_tokens: int
    rules_tokens: int
    seconds: float
    note: str = ""
    said: tuple[str, ...] = ()  # the critic's issues, one line each


def run_case(
    case: Case, source: str, model: Model, rules: bool, settings_extra: Mapping[str, Any]
) -> Outcome:
    from coderefine.config import Settings
    from coderefine.project.change import from_worktree
    from coderefine.project.gitio import GitRepo
    from coderefine.project.runner import SubprocessRunner
    from coderefine.project.workspace import project_files
    from coderefine.refiner.loop import review
    from coderefine.refiner.rules import ProjectRules
    from coderefine.refiner.sections import fence
    from coderefine.signals.evaluate import Evaluator

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "inflection").mkdir()
        (root / MODULE).write_text(source, encoding="utf-8")
        (root / "AGENTS.md").write_text(AGENTS, encoding="utf-8")
        _git(root, "init", "-q")
        _git(root, "add", "-A")
        _git(root, "commit", "-qm", "inflection 0.5.1")
        assert source.count(case.old) == 1, case.name
        (root / MODULE).write_text(source.replace(case.old, case.new), encoding="utf-8")
        repo = GitRepo.find(root)
        change = from_worktree([Path(MODULE)], cwd=root, repo=repo, max_bytes=1 << 20)
        settings = Settings(tests=False, rules_files=("AGENTS.md",) if rules else (), **settings_extra)
        section = ProjectRules(
            settings, lambda rel: (root / rel).read_text() if (root / rel).is_file() else None
        )
        rules_tokens = section.section([MODULE], fence).tokens
        sent: list[ModelRequest] = []

        class Keep:
            name = model.name

            def complete(self, request: ModelRequest) -> Any:
                sent.append(request)
                return model.complete(request)

        start = time.monotonic()
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        with Evaluator(change, settings, SubprocessRunner(), env, project_files(root, repo)) as evaluator:
            result = review(change, settings, Keep(), evaluator, intent=f"inflection: {case.name}")  # type: ignore[arg-type]
        seconds = time.monotonic() - start
    critique = result.critique
    issues = critique.issues if critique is not None else ()
    serious = [i for i in issues if i.severity in ("error", "warning")]
    wanted = f"AGENTS.md:{RULE_LINE[case.rule]}:"
    critic = next((r for r in sent if r.role == "critic"), None)
    return Outcome(
        case,
        rules,
        bool(serious),
        any(i.rule.startswith(wanted) for i in serious),
        len(critic.prompt_text()) // 4 if critic else 0,
        rules_tokens,
        seconds,
        "" if critique is not None else (result.rounds[0].note if result.rounds else "no critique"),
        tuple(f"[{i.severity}] {i.title}" + (f" (rule {i.rule})" if i.rule else "") for i in issues),
    )


def rates(outcomes: list[Outcome], rules: bool) -> dict[str, str]:
    mine = [o for o in outcomes if o.rules == rules]
    breaks = [o for o in mine if o.case.kind == "break"]
    follows = [o for o in mine if o.case.kind == "follow"]
    tokens = sorted(o.request_tokens for o in mine)
    return {
        "caught": f"{sum(o.flagged for o in breaks)}/{len(breaks)}",
        "cited": f"{sum(o.cited for o in breaks)}/{len(breaks)}",
        "false alarms": f"{sum(o.flagged for o in follows)}/{len(follows)}",
        "critic request tokens (median)": f"{tokens[len(tokens) // 2]:,}" if tokens else "-",
        "rules section tokens": f"{max((o.rules_tokens for o in mine), default=0):,}",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="", help="PROVIDER:MODEL (default: the scripted stand-in)")
    parser.add_argument("--cases", default="", help="comma-separated case numbers (default: all)")
    args = parser.parse_args(argv)
    if args.model:
        from coderefine.config import load_settings
        from coderefine.models.factory import make_role_model

        # CODEREFINE_* settings apply (a longer model-timeout for a small model on a loaded machine).
        settings = load_settings(Path(tempfile.gettempdir()), os.environ, {"model": args.model})
        model: Model = make_role_model(settings, os.environ, progress=sys.stderr)
    else:
        model = StandIn()  # type: ignore[assignment]
    chosen = [CASES[int(n)] for n in args.cases.split(",")] if args.cases else list(CASES)
    source = sdist_source()
    outcomes: list[Outcome] = []
    try:
        for case in chosen:
            for rules in (False, True):
                outcome = run_case(case, source, model, rules, {"model": args.model} if args.model else {})
                outcomes.append(outcome)
                flag = "flagged" if outcome.flagged else "no finding"
                print(
                    f"{case.kind:6} {case.name:45} rules={'on ' if rules else 'off'} {flag:10}"
                    f"{' cited' if outcome.cited else '':7} {outcome.request_tokens:6,} tokens "
                    f"{outcome.seconds:6.1f} s {outcome.note}",
                    file=sys.stderr,
                    flush=True,
                )
                for line in outcome.said:
                    print(f"         {line[:160]}", file=sys.stderr, flush=True)
    finally:
        close = getattr(model, "close", None)
        if callable(close):
            close()
    print(f"model: {model.name}; {len(chosen)} cases on inflection 0.5.1 with its AGENTS.md\n")
    print("| rules | caught | cited | false alarms | critic request tokens (median) | rules section tokens |")
    print("| --- | --- | --- | --- | --- | --- |")
    for rules in (False, True):
        row = rates(outcomes, rules)
        print(f"| {'with' if rules else 'without'} | " + " | ".join(row.values()) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
