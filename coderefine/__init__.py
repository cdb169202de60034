"""coderefine: refine a Python change with a self-refine loop grounded in ruff, pytest and a libcst gate.

The public API (see docs/api.md) is what ``__all__`` names; nothing else in the package is promised stable.
Its names are imported on first use, so that ``import coderefine`` (and ``coderefine --version``) stays
cheap: no libcst, gitpython or model SDK until a function is called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coderefine.version import __version__

if TYPE_CHECKING:
    from coderefine.api import CancelledError, check, critique, load_settings, refine, to_data, undo
    from coderefine.config import Settings
    from coderefine.doors.fix import FixOutcome
    from coderefine.errors import CoderefineError
    from coderefine.models.base import Model, ModelReply, ModelRequest, Usage
    from coderefine.models.scripted import ScriptedModel
    from coderefine.project.writes import UndoResult
    from coderefine.refiner.critique import Critique, Issue
    from coderefine.refiner.records import RefineResult, RoundRecord
    from coderefine.signals.base import Signal
    from coderefine.signals.check import CheckResult

_EXPORTS = {
    "check": "coderefine.api",
    "critique": "coderefine.api",
    "refine": "coderefine.api",
    "undo": "coderefine.api",
    "load_settings": "coderefine.api",
    "to_data": "coderefine.api",
    "CancelledError": "coderefine.api",
    "CheckResult": "coderefine.signals.check",
    "Settings": "coderefine.config",
    "Critique": "coderefine.refiner.critique",
    "Issue": "coderefine.refiner.critique",
    "CoderefineError": "coderefine.errors",
    "FixOutcome": "coderefine.doors.fix",
    "RefineResult": "coderefine.refiner.records",
    "RoundRecord": "coderefine.refiner.records",
    "Model": "coderefine.models.base",
    "ModelReply": "coderefine.models.base",
    "ModelRequest": "coderefine.models.base",
    "Usage": "coderefine.models.base",
    "ScriptedModel": "coderefine.models.scripted",
    "Signal": "coderefine.signals.base",
    "UndoResult": "coderefine.project.writes",
}

__all__ = [
    "CancelledError",
    "CheckResult",
    "CoderefineError",
    "Critique",
    "FixOutcome",
    "Issue",
    "Model",
    "ModelReply",
    "ModelRequest",
    "RefineResult",
    "RoundRecord",
    "ScriptedModel",
    "Settings",
    "Signal",
    "UndoResult",
    "Usage",
    "__version__",
    "check",
    "critique",
    "load_settings",
    "refine",
    "to_data",
    "undo",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'coderefine' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
