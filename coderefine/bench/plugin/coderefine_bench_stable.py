"""A pytest plugin that makes the bench's test runs give the same outcome and the same text on a busy
machine as on a quiet one: hypothesis derandomized, without deadlines, without its example database,
its "Explanation" phase and its reproduction blob, and without the health check that times test setup.

``coderefine bench`` loads it (``PYTEST_PLUGINS``) in every pytest run it starts: the baseline and the
candidates of ``make-suite``, the scoring runs, and the signals of the loop and of ``review`` on a task.
The per-test time limit of coderefine's report plugin stays the guard against a test that hangs. Nothing
happens unless the tests imported hypothesis, so a suite without it pays nothing. Settings a test gives
itself (``@settings(deadline=200)``) are fixed when its module is imported, so the collected tests' own
settings are replaced here, after collection, and the profile is loaded for anything decorated later.
Standard library and pytest only: it is loaded into the library's own interpreter.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

PROFILE = "coderefine-bench"
_MARK = "_coderefine_bench_stable"


def _stable(current: Any) -> Any:
    """``current`` (a hypothesis ``settings``) with everything that depends on time or chance turned off."""
    from hypothesis import HealthCheck, Phase, settings

    explain = getattr(Phase, "explain", None)
    suppressed = list(current.suppress_health_check)
    if HealthCheck.too_slow not in suppressed:
        suppressed.append(HealthCheck.too_slow)
    return settings(
        current,
        derandomize=True,
        database=None,
        deadline=None,
        print_blob=False,
        phases=[phase for phase in current.phases if phase is not explain],
        suppress_health_check=suppressed,
    )


def _load_profile() -> None:
    from hypothesis import settings

    if settings.get_current_profile_name() != PROFILE:
        settings.register_profile(PROFILE, _stable(settings.default))
        settings.load_profile(PROFILE)


def pytest_configure(config: Any) -> None:
    if "hypothesis" in sys.modules:
        _load_profile()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session: Any, config: Any, items: list[Any]) -> None:
    if "hypothesis" not in sys.modules:
        return
    from hypothesis import settings

    _load_profile()
    for item in items:
        test = getattr(item, "obj", None)
        test = getattr(test, "__func__", test)
        current = getattr(test, "_hypothesis_internal_use_settings", None)
        if isinstance(current, settings) and not getattr(test, _MARK, False):
            test._hypothesis_internal_use_settings = _stable(current)  # type: ignore[union-attr]
            setattr(test, _MARK, True)
        # A state machine's TestCase carries its settings on the class.
        owner = getattr(item, "cls", None)
        if isinstance(getattr(owner, "settings", None), settings) and not getattr(owner, _MARK, False):
            owner.settings = _stable(owner.settings)  # type: ignore[union-attr]
            setattr(owner, _MARK, True)
