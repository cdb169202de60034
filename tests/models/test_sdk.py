"""The SDK imported, and its client built, in a background thread; errors reach the first caller."""

from __future__ import annotations

import threading

import pytest

from coderefine.errors import ModelError
from coderefine.models.sdk import LazyImport


def test_the_client_is_built_in_the_import_thread() -> None:
    threads: list[str] = []

    def build(module: object) -> str:
        threads.append(threading.current_thread().name)
        return f"client of {getattr(module, '__name__', '')}"

    lazy = LazyImport("json", "pip install json", build=build)
    lazy.start()
    assert lazy.built() == "client of json" and lazy.built() == "client of json"
    assert threads == ["coderefine-sdk-import"]  # built once, off the caller's thread


def test_a_client_that_cannot_be_built_raises_its_own_error_and_a_missing_sdk_says_how_to_install() -> None:
    def refuse(module: object) -> object:
        raise ValueError("no region")

    with pytest.raises(ValueError, match="no region"):
        LazyImport("json", "pip install json", build=refuse).built()
    with pytest.raises(ModelError, match="pip install nowhere"):
        LazyImport("nowhere_such_sdk", "pip install nowhere").built()
