"""Import a provider SDK once, in a background thread, and hand it over when the first call needs it.

An SDK import costs about a second of CPU; started when the model is made, it overlaps the first signal
collection, and ``--version``, ``--help``, ``check`` and a hook cache hit never pay for it. The client is
built in the same thread (``build``): an HTTP client's transport and TLS context took 0.15 s of the
first critic call's wall when it was built on the way to the first request.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from typing import Any

from coderefine.errors import ModelError


class LazyImport:
    def __init__(self, module: str, install_hint: str, build: Callable[[Any], Any] | None = None) -> None:
        """``build``: what to make of the module once imported (a client), in the same thread."""
        self._name = module
        self._hint = install_hint
        self._build = build
        self._thread: threading.Thread | None = None
        self._module: Any = None
        self._built: Any = None
        self._error: BaseException | None = None
        self._build_error: BaseException | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="coderefine-sdk-import", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        try:
            self._module = importlib.import_module(self._name)
        except BaseException as exc:  # handed to the caller of get()
            self._error = exc
            return
        if self._build is not None:
            try:
                self._built = self._build(self._module)
            except BaseException as exc:  # handed to the caller of built(), as it was raised
                self._build_error = exc

    def get(self) -> Any:
        self.start()
        assert self._thread is not None
        self._thread.join()
        if self._error is not None:
            raise ModelError(f"cannot import the {self._name} SDK ({self._error}); {self._hint}")
        return self._module

    def wait(self) -> None:
        """Until the import and the build are done, raising nothing: ``get`` and ``built`` do that."""
        self.start()
        assert self._thread is not None
        self._thread.join()

    def built(self) -> Any:
        """What ``build`` made of the module (raising what it raised)."""
        self.get()
        if self._build_error is not None:
            raise self._build_error
        return self._built
