"""The project's rules in the critic's request, and the issues that cite them."""

from __future__ import annotations

from pathlib import Path

from coderefine.config import RuleEntry, Settings
from coderefine.models.scripted import ScriptedModel
from coderefine.project.change import from_worktree
from coderefine.project.gitio import GitRepo
from coderefine.project.rules import RuleSource
from coderefine.project.runner import SubprocessRunner
from coderefine.project.workspace import project_files
from coderefine.refiner.critique import Critique, Issue
from coderefine.refiner.loop import review
from coderefine.refiner.rules import cite_rules, render_plain, rules_section
from coderefine.refiner.sections import fence
from coderefine.signals.evaluate import Evaluator
from tests.conftest import SMALL_PROJECT, RepoFactory, write_files

AGENTS = (
    "# House rules\n\n- Errors are raised as ConfigError, never ValueError.\n- No print in library code.\n"
)


def test_the_section_numbers_each_line_as_in_its_file_and_fences_it() -> None:
    source = RuleSource("AGENTS.md", AGENTS, applies_to=("a.py",))
    section = rules_section([source], ["a.py"], fence, 1_000)
    assert "3: - Errors are raised as ConfigError, never ValueError." in section.text
    assert "<<<DATA kind=rules path=AGENTS.md" in section.text
    assert "The project's own rules" in section.text
    assert section.cut == ()


def test_over_the_budget_the_largest_source_is_cut_first_and_said() -> None:
    big = RuleSource(
        "AGENTS.md", "".join(f"- rule number {n} of many\n" for n in range(1, 200)), applies_to=("a.py",)
    )
    small = RuleSource("pkg/AGENTS.md", "- keep this one\n", applies_to=("a.py",))
    section = rules_section([big, small], ["a.py"], fence, 600)
    assert "1: - keep this one" in section.text
    assert section.cut and section.cut[0].startswith("AGENTS.md lines ")
    assert "Cut to keep this section within about 600 tokens: AGENTS.md lines" in section.text
    assert section.tokens <= 650
    assert "1: - rule number 1 of many" in section.text  # cut from its end


def issue(rule: str, severity: str = "warning") -> Issue:
    return Issue(
        "ValueError raised", severity, "a.py", 3, 3, "raise ValueError(x)", "raise ConfigError", rule=rule
    )  # type: ignore[arg-type]


def test_an_issue_citing_a_rule_quotes_it_and_takes_its_severity() -> None:
    sources = [
        RuleSource("AGENTS.md", AGENTS, applies_to=("a.py",)),
        RuleSource("pyproject.toml", "No print.", 7, "error", "rules[1]", ("a.py",)),
    ]
    critique = Critique(
        "revise", "", (issue("AGENTS.md:3"), issue("pyproject.toml:7"), issue("AGENTS.md:99"))
    )
    cited = cite_rules(critique, sources)
    assert cited.issues[0].rule == "AGENTS.md:3: - Errors are raised as ConfigError, never ValueError."
    assert cited.issues[0].severity == "warning"
    assert cited.issues[1].rule == "pyproject.toml:7 (rules[1]): No print."
    assert cited.issues[1].severity == "error"
    assert cited.issues[2].rule == ""
    assert "no listed rule" in cited.repairs[0]


def test_check_rules_prints_every_line() -> None:
    text = render_plain([RuleSource("AGENTS.md", AGENTS, applies_to=("a.py",))], "a.py")
    assert "  4: - No print in library code." in text
    assert "no project rules apply" in render_plain([], "a.py")


def test_the_critic_is_given_the_rules_and_its_finding_cites_one(make_repo: RepoFactory) -> None:
    root = make_repo({**SMALL_PROJECT, "AGENTS.md": AGENTS})
    write_files(
        root, {"pkg/mod.py": SMALL_PROJECT["pkg/mod.py"] + "\n\ndef check(x):\n    raise ValueError(x)\n"}
    )
    repo = GitRepo.find(root)
    change = from_worktree([Path("pkg/mod.py")], cwd=root, repo=repo, max_bytes=1 << 20)
    critique = {
        "verdict": "revise",
        "summary": "breaks a house rule",
        "issues": [
            {
                "title": "ValueError where the project raises ConfigError",
                "severity": "warning",
                "path": "pkg/mod.py",
                "line": 1,
                "evidence": "raise ValueError(x)",
                "suggestion": "raise ConfigError(x)",
                "rule": "AGENTS.md:3",
            }
        ],
    }
    model = ScriptedModel([critique])
    settings = Settings(rules=(RuleEntry("Public functions keep their signatures.", ("pkg/**",), "error"),))
    with Evaluator(
        change, settings, SubprocessRunner(), {"PATH": "/usr/bin:/bin"}, project_files(root, repo)
    ) as ev:
        result = review(change, settings, model, ev, intent="add check")
    request = model.history[0].prompt_text()
    assert "3: - Errors are raised as ConfigError, never ValueError." in request
    assert "Public functions keep their signatures." in request
    assert result.critique is not None
    found = result.critique.issues[0]
    assert found.rule == "AGENTS.md:3: - Errors are raised as ConfigError, never ValueError."
    assert found.line == 5 or "ValueError" in found.evidence


def test_the_rules_budget_shrinks_with_a_small_critic_unless_chosen(make_repo: RepoFactory) -> None:
    # 1,000 tokens of rules in a gguf: model's 8k window left the file too little room: the budget is
    # scaled like the signals' (a sixteenth of the window: 512), unless the user chose it.
    many = "".join(
        f"- Rule number {n}: keep the module's public names stable and documented.\n" for n in range(80)
    )
    root = make_repo({**SMALL_PROJECT, "AGENTS.md": many})
    write_files(root, {"pkg/mod.py": SMALL_PROJECT["pkg/mod.py"] + "\n\ndef extra():\n    return 1\n"})
    repo = GitRepo.find(root)
    change = from_worktree([Path("pkg/mod.py")], cwd=root, repo=repo, max_bytes=1 << 20)
    passed = {"verdict": "pass", "summary": "fine", "issues": []}

    def rules_chars(settings: Settings) -> int:
        model = ScriptedModel([passed])
        with Evaluator(
            change, settings, SubprocessRunner(), {"PATH": "/usr/bin:/bin"}, project_files(root, repo)
        ) as ev:
            review(change, settings, model, ev, intent="add extra")
        request = model.history[0].prompt_text()
        return sum(len(line) for line in request.splitlines() if "Rule number" in line)

    small = rules_chars(Settings(model="gguf:qwen2.5-coder-1.5b"))
    default = rules_chars(Settings())
    chosen = rules_chars(
        Settings(model="gguf:qwen2.5-coder-1.5b", rules_tokens=1_000, sources=("rules_tokens",))
    )
    assert 0 < small < default
    assert small <= 512 * 4
    assert chosen == default
