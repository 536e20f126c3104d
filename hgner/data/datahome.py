"""The data home: where catalogue corpora live, and how a missing one gets there.

The data home is ``$HGNER_DATA``, else the platform's user data folder (``platformdirs``). A
corpus downloaded from URLs is kept as ``<data home>/<corpus>/<file>``; NLTK packages go to
``<data home>/nltk_data`` through ``nltk.download`` (NLTK's own folders, ``$NLTK_DATA`` first,
are searched too). A missing file is fetched on first use, with a notice and a progress bar on
stderr: from ``$HGNER_MIRROR`` (a folder or URL laid out as ``<corpus>/<file>``, NLTK packages
as ``nltk_data/corpora/<package>.zip``) first, then the manifest's URLs in order. Every download
goes to a temporary file, its size and sha256 are checked against the manifest, and only then
is it renamed into place; a failed or interrupted download leaves nothing behind and the next
source is tried. Files already present are checked too. With ``--offline`` or
``HGNER_OFFLINE=1`` nothing is downloaded: only a mirror that is a local folder is copied from.
"""

from __future__ import annotations

import hashlib
import http.client
import logging
import os
import shutil
import sys
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import IO

from tqdm import tqdm

from ..core.errors import HgnerError, named
from ..core.fileio import atomic_write, file_sha256
from .catalog import Manifest, Split
from .home import URL_SCHEMES, data_home, is_offline, mirror

CHUNK = 1 << 16
TIMEOUT_SECONDS = 60
log = logging.getLogger("hgner")


class _SourceFailed(Exception):
    """One source did not give the expected bytes; the message says why."""


def file_path(manifest: Manifest, split: Split) -> Path:
    """Where a downloaded split's file lives in the data home."""
    return data_home() / manifest.name / str(split.file)


def nltk_dir() -> Path:
    return data_home() / "nltk_data"


def check_file(path: Path, split: Split) -> str | None:
    """Why ``path`` is not the manifest's file (size, then sha256), or None when it is."""
    size = path.stat().st_size
    if size != split.size:
        return f"{size:,} bytes, expected {split.size:,}"
    digest = file_sha256(path)
    if digest != split.sha256:
        return f"sha256 {digest}, expected {split.sha256}"
    return None


def sources(manifest: Manifest, split: Split, offline: bool) -> list[str]:
    """The places a split's file is fetched from, in order: the mirror, then the manifest's URLs
    (offline: only a mirror that is a local folder)."""
    found: list[str] = []
    base = mirror()
    if base is not None and not (offline and base.startswith(URL_SCHEMES)):
        found.append(f"{base.rstrip('/')}/{manifest.name}/{split.file}")
    if not offline:
        found += [url.format(file=split.file) for url in manifest.urls]
    return found


def ensure(manifest: Manifest, split: Split, offline: bool = False) -> str:
    """Where a reader finds ``split``: the verified local file (fetched first when missing), or
    ``PACKAGE/FILE`` (``PACKAGE`` for a whole package) once NLTK finds the package. An
    :class:`HgnerError` otherwise."""
    if manifest.nltk_package is not None:
        return _ensure_nltk(manifest, split, is_offline(offline))
    target = file_path(manifest, split)
    name = manifest.split_name(split.name)
    if target.is_file():
        problem = check_file(target, split)
        if problem is not None:
            raise HgnerError(f"corpus {name!r}: {target} is not the catalogue's file ({problem}); "
                             "delete it to fetch it again")
        return str(target)
    if target.is_symlink() or target.exists():  # a dangling link, a pipe, a folder: never fetched through
        reason = (f"a link to {os.readlink(target)}, which does not exist" if not target.exists()
                  else "a directory" if target.is_dir() else "not a regular file (a device, pipe or socket)")
        raise HgnerError(f"corpus {name!r}: {target} is {reason}; delete it to fetch the file again")
    fetch_file(manifest, split, is_offline(offline))
    return str(target)


def fetch_file(manifest: Manifest, split: Split, offline: bool) -> Path:
    """Fetch a split's file into the data home from the first source that gives the right bytes."""
    target = file_path(manifest, split)
    name = manifest.split_name(split.name)
    tried = sources(manifest, split, offline)
    by_hand = (f"place {split.file} ({split.size:,} bytes, sha256 {split.sha256}) at {target} by hand, or set "
               f"HGNER_MIRROR to a folder or URL laid out as {manifest.name}/{split.file}")
    if not tried:
        urls = ", ".join(url.format(file=split.file) for url in manifest.urls)
        raise HgnerError(f"corpus {name!r}: {split.file} is not in the data home and downloads are off "
                         f"({named('offline')} or HGNER_OFFLINE); its sources are {urls}; {by_hand}")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise HgnerError(f"corpus {name!r}: cannot create {target.parent} ({error.strerror})") from None
    log.info("hgner: corpus %s is not in the data home %s; fetching %s (%s bytes)", name, data_home(), split.file,
             f"{split.size:,}")
    failures = []
    for source in tried:
        try:
            _download(source, target, split)
        except _SourceFailed as failure:
            failures.append(f"{source} ({failure})")
            log.info("hgner: %s: %s", source, failure)
            continue
        log.info("hgner: %s: size and sha256 verified, saved as %s", split.file, target)
        return target
    try:
        target.parent.rmdir()  # the corpus folder made above, when nothing else is in it
    except OSError:
        pass
    raise HgnerError(f"corpus {name!r}: could not fetch {split.file}; tried {'; '.join(failures)}; {by_hand}")


def _open(source: str) -> tuple[IO[bytes], int | None]:
    """A byte stream for a URL or a local path, with its announced length when there is one."""
    try:
        if source.startswith(URL_SCHEMES):
            response = urllib.request.urlopen(source, timeout=TIMEOUT_SECONDS)
            length = response.headers.get("Content-Length")
            return response, int(length) if length and length.isdigit() else None
        return open(source, "rb"), None
    except urllib.error.HTTPError as error:
        raise _SourceFailed(f"HTTP {error.code} {error.reason}") from None
    except urllib.error.URLError as error:
        raise _SourceFailed(str(error.reason)) from None
    except (OSError, http.client.HTTPException, ValueError) as error:
        raise _SourceFailed(getattr(error, "strerror", None) or str(error) or type(error).__name__) from None


def _download(source: str, target: Path, split: Split) -> None:
    """Copy ``source`` to ``target`` through a temporary file, renamed only when the size and
    sha256 match ``split``; any failure leaves no file and raises :class:`_SourceFailed`."""
    stream, announced = _open(source)
    with stream, tqdm(total=split.size, unit="B", unit_scale=True, desc=str(split.file), file=sys.stderr,
                      disable=None, leave=False) as bar:
        if announced is not None and announced != split.size:
            raise _SourceFailed(f"it announces {announced:,} bytes, expected {split.size:,}")
        digest = hashlib.sha256()
        received = 0
        with atomic_write(target, binary=True) as out:
            while True:
                try:
                    chunk = stream.read(CHUNK)
                except (OSError, http.client.HTTPException) as error:
                    raise _SourceFailed(f"cut after {received:,} of {split.size:,} bytes "
                                        f"({type(error).__name__})") from None
                if not chunk:
                    break
                received += len(chunk)
                if received > (split.size or 0):
                    raise _SourceFailed(f"more than the expected {split.size:,} bytes")
                digest.update(chunk)
                out.write(chunk)
                bar.update(len(chunk))
            if received != split.size:
                raise _SourceFailed(f"cut after {received:,} of {split.size:,} bytes")
            if digest.hexdigest() != split.sha256:
                raise _SourceFailed(f"sha256 {digest.hexdigest()}, expected {split.sha256}")


# --- NLTK packages ----------------------------------------------------------------------------


def nltk_find(resource: str) -> str | None:
    """Where NLTK finds ``resource`` (``corpora/PACKAGE.zip``, ``corpora/PACKAGE/FILE``), or None;
    an :class:`HgnerError` naming the package's zip file when that is damaged."""
    import nltk

    try:
        return str(nltk.data.find(resource))
    except LookupError:
        return None
    except (zipfile.BadZipFile, EOFError, OSError) as error:
        raise damaged_nltk_package(resource.split("/")[1].removesuffix(".zip"), error) from None


def nltk_pointer_file(pointer: object) -> str | None:
    """The file behind an NLTK path pointer: the zip file it points into, or the file itself."""
    archive = getattr(pointer, "zipfile", None)
    return archive.filename if archive is not None else getattr(pointer, "path", None)


NLTK_READ_ERRORS = (zipfile.BadZipFile, EOFError, OSError, ValueError, AttributeError, TypeError)
"""What NLTK raises on a damaged package (a truncated zip or member: its parsers meet ``None``)."""


def damaged_nltk_package(package: str, error: BaseException) -> HgnerError:
    """The error for an NLTK package whose zip file cannot be read: it names the first such file
    on NLTK's search path."""
    import nltk

    zips = [path for folder in nltk.data.path if (path := Path(folder, "corpora", f"{package}.zip")).is_file()]
    where = str(zips[0]) if zips else f"corpora/{package}.zip on NLTK's path"
    reason = " ".join(str(error).split()) or type(error).__name__
    return HgnerError(f"NLTK package {package!r}: {where} is damaged ({reason}); delete it to fetch it again")


def use_nltk_data_home() -> None:
    """Let NLTK search ``<data home>/nltk_data`` after its own folders."""
    import nltk

    path = str(nltk_dir())
    if path not in nltk.data.path:
        nltk.data.path.append(path)


def nltk_location(manifest: Manifest) -> str | None:
    """Where NLTK finds the manifest's package, or None."""
    use_nltk_data_home()
    return nltk_find(f"corpora/{manifest.nltk_package}.zip") or nltk_find(f"corpora/{manifest.nltk_package}")


def fetch_nltk(manifest: Manifest, offline: bool) -> str:
    """The package's location, downloaded with ``nltk.download`` into the data home when missing."""
    import nltk

    found = nltk_location(manifest) or _nltk_from_mirror(manifest, offline)
    if found is not None:
        return found
    package = manifest.nltk_package
    tried = _nltk_mirror_file(manifest)
    on_mirror = (f"put {package}.zip at {tried}, where HGNER_MIRROR's NLTK packages are looked for" if tried else
                 f"point HGNER_MIRROR at a folder holding nltk_data/corpora/{package}.zip")
    by_hand = (f"run `python -m nltk.downloader -d {nltk_dir()} {package}` where there is internet and copy "
               f"{nltk_dir()}, {on_mirror}, or point NLTK_DATA at a folder with corpora/{package}.zip")
    if offline:
        raise HgnerError(f"corpus {manifest.name!r}: NLTK's {package} package is not installed and downloads are "
                         f"off ({named('offline')} or HGNER_OFFLINE); it comes from NLTK's downloader "
                         f"({nltk.downloader.Downloader.DEFAULT_URL}); {by_hand}")
    log.info("hgner: corpus %s is not installed; fetching NLTK's %s package into %s", manifest.name, package,
             nltk_dir())
    try:
        nltk_dir().mkdir(parents=True, exist_ok=True)
        nltk.download(package, download_dir=str(nltk_dir()), quiet=True, raise_on_error=True)
    except (OSError, ValueError) as error:
        message = str(error).replace("\n", " ")
        raise HgnerError(f"corpus {manifest.name!r}: nltk.download({package!r}) failed ({message}); {by_hand}") from None
    found = nltk_location(manifest)
    if found is None:
        raise HgnerError(f"corpus {manifest.name!r}: nltk.download({package!r}) did not install it; {by_hand}")
    log.info("hgner: installed NLTK's %s package (checked by NLTK's downloader) in %s", package, nltk_dir())
    return found


def _nltk_from_mirror(manifest: Manifest, offline: bool) -> str | None:
    """The package's location once copied from ``$HGNER_MIRROR`` (laid out as NLTK's data folder:
    ``nltk_data/corpora/PACKAGE.zip``) into the data home; None when there is no mirror, or the
    mirror does not have it (offline: only a mirror that is a local folder is read)."""
    base = mirror()
    if base is None or (offline and base.startswith(URL_SCHEMES)):
        return None
    name = f"{manifest.nltk_package}.zip"
    target = nltk_dir() / "corpora" / name
    try:
        stream, _ = _open(_nltk_mirror_file(manifest) or "")
    except _SourceFailed as failure:
        log.info("hgner: HGNER_MIRROR has no NLTK package %s (%s)", manifest.nltk_package, failure)
        return None
    log.info("hgner: corpus %s: copying NLTK's %s package from HGNER_MIRROR into %s", manifest.name,
             manifest.nltk_package, nltk_dir())
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with stream, atomic_write(target, binary=True) as out:
            shutil.copyfileobj(stream, out, CHUNK)
        with zipfile.ZipFile(target) as archive:
            damaged = archive.testzip()
    except (OSError, zipfile.BadZipFile, http.client.HTTPException) as error:
        target.unlink(missing_ok=True)
        raise HgnerError(f"corpus {manifest.name!r}: cannot copy {name} from HGNER_MIRROR ({error})") from None
    if damaged is not None:
        target.unlink(missing_ok=True)
        raise HgnerError(f"corpus {manifest.name!r}: {name} from HGNER_MIRROR is damaged ({damaged})")
    return nltk_location(manifest)


def _nltk_mirror_file(manifest: Manifest) -> str | None:
    """Where ``$HGNER_MIRROR`` keeps the manifest's NLTK package (``<mirror>/nltk_data/corpora/PACKAGE.zip``),
    or None without a mirror."""
    base = mirror()
    return None if base is None else f"{base.rstrip('/')}/nltk_data/corpora/{manifest.nltk_package}.zip"


def _ensure_nltk(manifest: Manifest, split: Split, offline: bool) -> str:
    location = fetch_nltk(manifest, offline)
    if split.file is not None and nltk_find(f"corpora/{manifest.nltk_package}/{split.file}") is None:
        raise HgnerError(f"corpus {manifest.split_name(split.name)!r}: the {manifest.nltk_package} package NLTK "
                         f"found at {location} has no {split.file} (a partial copy); remove it or put a full copy "
                         "first on NLTK_DATA")
    return f"{manifest.nltk_package}/{split.file}" if split.file else str(manifest.nltk_package)
