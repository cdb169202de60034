"""coderefine: refine a Python change with a self-refine loop grounded in ruff, pytest and a libcst gate.

The public API (see docs/api.md) is what ``__all__`` names; nothing else in the package is promised stable.
Its names are imported on first use, so that ``import coderefine`` (and ``coderefine --version``) stays
cheap: no libcst, gitpython or model SDK until a function is called.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from coderefine.api import CancelledError, check, critique, load_settings, refine, to_data, undo
    from coderefine.check import CheckResult
    from coderefine.config import Settings
    from coderefine.critique import Critique, Issue
    from coderefine.errors import CoderefineError
    from coderefine.fix import FixOutcome
    from coderefine.models.base import Model, ModelReply, ModelRequest, Usage
    from coderefine.models.scripted import ScriptedModel
    from coderefine.records import RefineResult, RoundRecord
    from coderefine.signals.base import Signal
    from coderefine.writes import UndoResult

_EXPORTS = {
    "check": "coderefine.api",
    "critique": "coderefine.api",
    "refine": "coderefine.api",
    "undo": "coderefine.api",
    "load_settings": "coderefine.api",
    "to_data": "coderefine.api",
    "CancelledError": "coderefine.api",
    "CheckResult": "coderefine.check",
    "Settings": "coderefine.config",
    "Critique": "coderefine.critique",
    "Issue": "coderefine.critique",
    "CoderefineError": "coderefine.errors",
    "FixOutcome": "coderefine.fix",
    "RefineResult": "coderefine.records",
    "RoundRecord": "coderefine.records",
    "Model": "coderefine.models.base",
    "ModelReply": "coderefine.models.base",
    "ModelRequest": "coderefine.models.base",
    "Usage": "coderefine.models.base",
    "ScriptedModel": "coderefine.models.scripted",
    "Signal": "coderefine.signals.base",
    "UndoResult": "coderefine.writes",
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


class _Package(types.ModuleType):
    """The package module. Importing a submodule binds it as an attribute of its package, and two
    submodules share their names with API functions (``coderefine.check``, ``coderefine.critique``): the
    functions keep the names; the modules stay importable by their full names."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _EXPORTS and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


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
