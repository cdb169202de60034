"""Settings: one frozen object built from defaults, pyproject.toml, the environment and flags.

Precedence, lowest to highest: built-in defaults < ``[tool.coderefine]`` in the project's
pyproject.toml < ``CODEREFINE_*`` environment variables < command-line flags. Keys are kebab-case in
TOML (``test-timeout``), upper snake case in the environment (``CODEREFINE_TEST_TIMEOUT``) and
snake case in Python. An unknown key is an error that names it, because a misspelt setting that is
silently ignored is worse than none.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from coderefine.errors import ConfigError

DEFAULT_INTENT = "fix defects without changing intended behaviour"
# ruff's own default selection changes between releases; naming it keeps results reproducible.
DEFAULT_RUFF_SELECT = ("E4", "E7", "E9", "F", "B")
ENV_PREFIX = "CODEREFINE_"
RULE_SEVERITIES = ("", "error", "warning", "info")


@dataclass(frozen=True)
class RuleEntry:
    """One entry of ``rules`` (``[[tool.coderefine.rules]]``): ``text`` for the files matching ``paths``
    (globs; none: every file), and the severity a finding that applies it carries ("": the critic's)."""

    text: str
    paths: tuple[str, ...] = ()
    severity: str = ""


@dataclass(frozen=True)
class Settings:
    """Everything a run of coderefine may be configured by. Build it with ``load_settings``."""

    model: str = "claude-sonnet-5-5"
    # A model per role ("" = model); each is PROVIDER:MODEL or a bare Anthropic name.
    author_model: str = ""
    critic_model: str = ""
    reviser_model: str = ""
    rounds: int = 3
    intent: str = DEFAULT_INTENT
    ruff_select: tuple[str, ...] = DEFAULT_RUFF_SELECT
    ruff_format: bool = True
    tests: bool | Literal["all"] = True  # True: the related tests; "all": the whole suite
    test_command: tuple[str, ...] = ("{python}", "-m", "pytest")
    python: str = ""
    test_timeout: float = 30.0
    run_timeout: float = 300.0
    max_file_kib: int = 1024
    max_tokens: int = 400_000
    max_cost: float = 2.0
    max_output_tokens: int = 8_192
    model_timeout: float = 120.0
    model_retries: int = 2
    fail_on: str = "warning"
    hook_mode: str = "fix"
    hook_timeout: float = 600.0
    jobs: int = 4
    # Caps shared by every worker of a run, over a sliding minute (0: no cap); see models/ratelimit.py.
    requests_per_minute: int = 0
    input_tokens_per_minute: int = 0
    output_tokens_per_minute: int = 0
    cache_max_entries: int = 2_000
    context_lines: int = 400
    # What the files' views of a request may take, in tokens (0: only the model's window bounds them):
    # sized for a one-bug fix, so a large window is no reason to send a large module whole.
    view_tokens: int = 3_000
    # What a critic's or reviser's request aims at as a whole, in tokens (0: the sum of its sections'
    # budgets): over it, the signals, the failing tests' source and the lines a critique names give way
    # together, down to a floor each (refiner/allot.py).
    request_tokens: int = 6_000
    # The signals section of a request, folded to about this many tokens (0: no limit); see prompting.py.
    signal_tokens: int = 1_500
    # The failing tests' source in a request, cut to about this many tokens (0: no limit); refiner/spec.py.
    spec_tokens: int = 1_200
    # The project's rules (refiner/rules.py): files read at the root and in every folder down to each file
    # under review, the entries of ``rules``, and the budget of their section (0: no limit).
    rules_files: tuple[str, ...] = ("AGENTS.md",)
    rules: tuple[RuleEntry, ...] = ()
    rules_tokens: int = 1_000
    # Fingerprints of review findings a person dismissed, never raised again (doors/review/dismissed.py).
    ignore_file: str = ".coderefine-ignore"
    confirm: str = "signals"
    first_critique: str = "critic"
    merge: str = "one-issue"
    edit_format: str = "auto"  # how edits are written: edits/formats.py
    warm_tests: bool = True
    persistent_trees: bool = True  # test trees kept between runs in the user's cache (basetree.py)
    timings: bool = False  # where a fix's wall time went, phase by phase, on stderr (coderefine/timings.py)
    # [tool.coderefine.providers.NAME] (base-url, structured-output, timeout) and [tool.coderefine.prices]:
    # tables of tables, checked where they are used (models/providers.py, prices.py).
    providers: Mapping[str, Mapping[str, object]] = field(default_factory=dict, hash=False)
    prices: Mapping[str, Mapping[str, object]] = field(default_factory=dict, hash=False)
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)

    def describe(self) -> dict[str, object]:
        """The settings as plain data, with where each value came from."""
        data = {f.name: getattr(self, f.name) for f in _user_fields()}
        return {"values": data, "sources": dict(self.sources)}


_CHOICES: dict[str, tuple[str, ...]] = {
    "fail_on": ("error", "warning", "info", "never"),
    "hook_mode": ("fix", "check", "signals"),
    "confirm": ("always", "signals"),
    "first_critique": ("critic", "signals"),
    "merge": ("never", "one-issue"),
    "edit_format": ("auto", "search-replace", "definition", "whole"),
}
_MINIMUMS: dict[str, float] = {
    "rounds": 1,
    "test_timeout": 0.1,
    "run_timeout": 1,
    "max_file_kib": 1,
    "max_tokens": 0,
    "max_cost": 0,
    "max_output_tokens": 256,
    "model_timeout": 1,
    "model_retries": 0,
    "hook_timeout": 0,
    "jobs": 1,
    "requests_per_minute": 0,
    "input_tokens_per_minute": 0,
    "output_tokens_per_minute": 0,
    "cache_max_entries": 10,
    "context_lines": 0,
    "view_tokens": 0,
    "request_tokens": 0,
    "signal_tokens": 0,
    "spec_tokens": 0,
    "rules_tokens": 0,
}


def _user_fields() -> list[dataclasses.Field[Any]]:
    return [f for f in dataclasses.fields(Settings) if f.name != "sources"]


def _field_types() -> dict[str, object]:
    defaults = Settings()
    return {f.name: type(getattr(defaults, f.name)) for f in _user_fields()}


def _unknown_key_error(key: str, where: str, known: list[str]) -> ConfigError:
    close = difflib.get_close_matches(key, known, n=1)
    hint = f" Did you mean '{close[0]}'?" if close else f" Known keys: {', '.join(sorted(known))}."
    return ConfigError(f"unknown setting '{key}' in {where}.{hint}")


def _coerce(name: str, value: object, where: str) -> object:
    """Turn a TOML value, an environment string or a flag value into the field's type."""
    kind = _field_types()[name]
    label = f"'{name.replace('_', '-')}' in {where}"
    if name == "tests" and isinstance(value, str) and value.lower() in ("all", "related"):
        result: object = "all" if value.lower() == "all" else True
    elif name == "rules":
        result = rule_entries(value, label)
    elif kind is bool:
        if isinstance(value, bool):
            result = value
        elif isinstance(value, str) and value.lower() in {"1", "true", "yes", "on"}:
            result = True
        elif isinstance(value, str) and value.lower() in {"0", "false", "no", "off", ""}:
            result = False
        else:
            extra = ', or "all" for the whole suite' if name == "tests" else ""
            raise ConfigError(f"{label} must be true or false{extra}, not {value!r}")
    elif kind is int:
        try:
            if isinstance(value, bool | float):
                raise ValueError
            result = int(value)  # type: ignore[call-overload]
        except (TypeError, ValueError):
            raise ConfigError(f"{label} must be a whole number, not {value!r}") from None
    elif kind is float:
        try:
            if isinstance(value, bool):
                raise ValueError
            result = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise ConfigError(f"{label} must be a number, not {value!r}") from None
    elif kind is dict:
        result = _table_of_tables(value, label)
    elif kind is tuple:
        if isinstance(value, str):
            result = tuple(part.strip() for part in value.split(",") if part.strip())
        elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            result = tuple(value)
        else:
            raise ConfigError(f"{label} must be a list of strings, not {value!r}")
    else:
        if not isinstance(value, str):
            raise ConfigError(f"{label} must be a string, not {value!r}")
        result = value
    if name in _CHOICES and result not in _CHOICES[name]:
        raise ConfigError(f"{label} must be one of {', '.join(_CHOICES[name])}, not {result!r}")
    if name in _MINIMUMS and isinstance(result, int | float) and result < _MINIMUMS[name]:
        raise ConfigError(f"{label} must be at least {_MINIMUMS[name]:g}, not {result!r}")
    return result


def _table_of_tables(value: object, label: str) -> dict[str, dict[str, object]]:
    """A TOML table of tables, or the same as JSON text (from the environment)."""
    wrong = ConfigError(
        f"{label} must be a table of tables ([tool.coderefine.KEY.NAME] tables; in the environment, a JSON "
        f"object of objects), not {value!r}"
    )
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except ValueError:
            raise wrong from None
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise wrong
    return {str(k): dict(v) for k, v in value.items()}


def rule_entries(value: object, label: str) -> tuple[RuleEntry, ...]:
    """``rules`` as entries: a text for every file, a list of texts, or ``[[tool.coderefine.rules]]``
    tables (``text``, optional ``paths`` and ``severity``); from the environment, text or that as JSON."""
    example = (
        f"{label} must be a text, a list of texts, or [[tool.coderefine.rules]] tables with text = '...' "
        "and optional paths = ['src/**'] and severity = 'error'|'warning'|'info'"
    )
    if isinstance(value, str):
        stripped = value.strip()
        if stripped.startswith(("[", "{")):
            try:
                value = json.loads(stripped)
            except ValueError:
                raise ConfigError(f"{example}; the JSON did not parse") from None
        else:
            return (RuleEntry(stripped),) if stripped else ()
    items = value if isinstance(value, list | tuple) else [value]
    entries: list[RuleEntry] = []
    for number, item in enumerate(items, start=1):
        if isinstance(item, RuleEntry):
            entries.append(item)
            continue
        if isinstance(item, str):
            item = {"text": item}
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise ConfigError(f"{example}; entry {number} is {item!r}")
        unknown = sorted(set(item) - {"text", "paths", "severity"})
        if unknown:
            raise ConfigError(f"{example}; entry {number} has unknown key(s) {', '.join(unknown)}")
        paths = item.get("paths", [])
        if isinstance(paths, str):
            paths = [paths]
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            raise ConfigError(f"{example}; entry {number}'s paths must be a list of globs, not {paths!r}")
        severity = str(item.get("severity", "")).lower()
        if severity not in RULE_SEVERITIES:
            raise ConfigError(
                f"{example}; entry {number}'s severity {item.get('severity')!r} is none of them"
            )
        entries.append(RuleEntry(item["text"].strip(), tuple(paths), severity))
    return tuple(entries)


def read_pyproject_table(project_root: Path) -> dict[str, object]:
    """The ``[tool.coderefine]`` table of the project's pyproject.toml, or an empty table."""
    path = project_root / "pyproject.toml"
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}); fix it or move it aside") from exc
    table = data.get("tool", {}).get("coderefine", {})
    if not isinstance(table, dict):
        raise ConfigError(f"[tool.coderefine] in {path} must be a table")
    return table


def load_settings(
    project_root: Path,
    environ: Mapping[str, str],
    flags: Mapping[str, object] | None = None,
) -> Settings:
    """Merge defaults, pyproject.toml, ``CODEREFINE_*`` variables and flags into one Settings."""
    known = [f.name for f in _user_fields()]
    values: dict[str, object] = {}
    sources: dict[str, str] = {}

    table = read_pyproject_table(project_root)
    where = "[tool.coderefine] of pyproject.toml"
    for key, value in table.items():
        name = key.replace("-", "_")
        if name not in known or "_" in key:
            raise _unknown_key_error(key, where, [k.replace("_", "-") for k in known])
        values[name] = _coerce(name, value, where)
        sources[name] = "pyproject.toml"

    for env_key, raw in environ.items():
        if not env_key.startswith(ENV_PREFIX):
            continue
        name = env_key[len(ENV_PREFIX) :].lower()
        if name not in known:
            raise _unknown_key_error(env_key, "the environment", [ENV_PREFIX + k.upper() for k in known])
        values[name] = _coerce(name, raw, f"the environment ({env_key})")
        sources[name] = "environment"

    for name, value in (flags or {}).items():
        if value is None:
            continue
        if name not in known:
            raise _unknown_key_error(name, "the command line", known)
        values[name] = _coerce(name, value, "the command line")
        sources[name] = "command line"

    return Settings(**values, sources=sources)  # type: ignore[arg-type]
