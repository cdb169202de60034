"""Release dates from PyPI's JSON API (``/pypi/NAME/json``): which releases of a library came out after a
date, so that a release suite can be newer than a model's training."""

from __future__ import annotations

import hashlib
import json
import re
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from urllib.parse import urljoin

from coderefine.errors import UsageError

INDEX = "https://pypi.org/pypi"
TIMEOUT = 30.0
Fetch = Callable[[str], object]  # URL -> the JSON document


@dataclass(frozen=True)
class Release:
    version: str
    uploaded: datetime  # the first upload of its source distribution


def fetch_json(url: str) -> object:
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT) as reply:
            return json.load(reply)
    except (OSError, ValueError, urllib.error.URLError) as exc:
        raise UsageError(f"cannot read {url} ({exc}); check that pypi.org can be reached") from exc


def releases(name: str, fetch: Fetch | None = None) -> list[Release]:
    """The final releases of ``name`` that have a source distribution, oldest upload first (pre-releases
    and yanked releases left out). ``fetch`` reads a URL's JSON (default: ``fetch_json``)."""
    page = f"{INDEX}/{name}/json"
    data = (fetch or fetch_json)(page)
    found = []
    listed = data.get("releases") if isinstance(data, dict) else None
    if not isinstance(listed, dict):
        raise UsageError(f"{name}: PyPI's answer is not the JSON API's (no releases)")
    try:
        for version, files in listed.items():
            if not re.fullmatch(r"\d+(\.\d+)*(\.post\d+)?", version):
                continue
            times = [
                f["upload_time_iso_8601"]
                for f in files
                if f.get("packagetype") == "sdist" and not f.get("yanked")
            ]
            if times:
                found.append(Release(version, _parse(min(times))))
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"{name}: PyPI's answer is not the JSON API's ({exc})") from exc
    if not found:
        raise UsageError(f"{name}: PyPI lists no release with a source distribution; check the name")
    return sorted(found, key=lambda r: r.uploaded)


def pairs_after(name: str, after: date, fetch: Fetch | None = None) -> list[tuple[str, str]]:
    """Each release uploaded after ``after`` with the release before it in version order: (OLD, NEW),
    oldest upload first. Not the upload before it: a backport (2.3.2 uploaded after 2.5.0) is the change
    from 2.3.1, and 2.5.1 the change from 2.5.0."""
    known = releases(name, fetch)
    pairs = []
    for new in known:
        if new.uploaded.date() <= after:
            continue
        # Released before it, too: 2.4.0 was made from 2.3.1, not from a 2.3.2 backported later.
        older = [
            r
            for r in known
            if version_key(r.version) < version_key(new.version) and r.uploaded <= new.uploaded
        ]
        if older:
            pairs.append((max(older, key=lambda r: version_key(r.version)).version, new.version))
    return pairs


def version_key(version: str) -> tuple[tuple[int, ...], int]:
    """A final release's version for ordering: its numbers without trailing zeros (1.0 == 1.0.0), then
    its post-release number (-1 for none)."""
    main, _, post = version.partition(".post")
    numbers = [int(n) for n in main.split(".")]
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers.pop()
    return tuple(numbers), int(post) if post else -1


def released(name: str, version: str, fetch: Fetch | None = None) -> datetime:
    """When ``version`` of ``name`` was uploaded (its source distribution)."""
    for release in releases(name, fetch):
        if release.version == version:
            return release.uploaded
    raise UsageError(f"{name}=={version}: PyPI lists no source distribution of this version")


def parse_date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError as exc:
        raise UsageError(f"--released-after {text!r}: give a date as YYYY-MM-DD") from exc


def _parse(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


# A file's URL -> its bytes; a parameter so tests need no network.
Download = Callable[[str], bytes]


def read_url(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT * 10) as reply:
            data: bytes = reply.read()
            return data
    except (OSError, ValueError, urllib.error.URLError) as exc:
        raise UsageError(f"cannot download {url} ({exc}); check that pypi.org can be reached") from exc


def sdist_from_index(
    name: str, version: str, folder: Path, fetch: Fetch | None = None, download: Download = read_url
) -> Path:
    """The source distribution of ``name==version`` as PyPI's JSON API lists it, saved in ``folder`` and
    checked against its sha256. No build is run: ``pip download`` prepares a source distribution's
    metadata, which needs its build back end, and a back end that does not install here (a build
    dependency for a newer Python) made a release with a perfectly good archive impossible to fetch."""
    page = f"{INDEX}/{name}/json"  # the project's page: a page per version is not served everywhere
    data = (fetch or fetch_json)(page)
    listed = data.get("releases") if isinstance(data, dict) else None
    files = listed.get(version) if isinstance(listed, dict) else None
    sdists = [
        f
        for f in files or []
        if isinstance(f, dict) and f.get("packagetype") == "sdist" and not f.get("yanked")
    ]
    if not sdists:
        raise UsageError(f"{name}=={version}: PyPI lists no source distribution of this version")
    chosen = sdists[0]
    filename = str(chosen.get("filename") or "")
    if not filename or "/" in filename or "\\" in filename or filename.startswith("."):
        raise UsageError(f"{name}=={version}: PyPI's answer names no usable file ({filename!r})")
    body = download(urljoin(page, str(chosen.get("url") or "")))  # a mirror may list relative URLs
    expected = str((chosen.get("digests") or {}).get("sha256") or "")
    if hashlib.sha256(body).hexdigest() != expected:
        raise UsageError(f"{name}=={version}: {filename} does not match the sha256 PyPI lists; try again")
    target = folder / filename
    partial = target.with_name(target.name + ".partial")
    partial.write_bytes(body)
    partial.replace(target)
    return target
