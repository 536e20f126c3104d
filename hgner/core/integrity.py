"""A model folder's seal: the size and sha256 of every model file, ``meta.json`` included.

:func:`seal` writes ``seal.json`` after a model's files are written (``hgner train``,
``tools/build_models.py``, :func:`hgner.crf.model.write_metadata`); :func:`verify` checks it before
any model file is read, so that a file changed after sealing (``meta.json``'s feature settings, a
weight, a table) is one clear :class:`~hgner.core.errors.ModelError` and never a different result. A
model without a seal is refused: ``python -m hgner.reseal MODEL_DIR`` seals one (after checking
that it loads), which is how a model built by an older hgner is accepted.

Each file is opened without following a link and without blocking (a FIFO or device where a
model file should be is an error, not a hang) and must be a regular file; its size is compared
with the seal's before any byte is read, and it is hashed in blocks (a huge file in place of a
small one is refused at once, never read into memory). The seal is strict JSON (a file listed
twice is refused), and a model file present but not recorded is refused.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .errors import HgnerError, ModelError
from .fileio import stream_sha256, write_text
from .validation import check, parse_json, read_json

SEAL_FILE = "seal.json"
META_FILE = "meta.json"  # a model's description (hgner.crf.modelfiles), checked against hgner/schemas/meta.schema.json
SEAL_FORMAT = "hgner-seal/1"
MAX_SEAL_BYTES = 1 << 16
MAX_META_BYTES = 2**20


def _open_regular(path: Path) -> tuple[int, os.stat_result]:
    """A descriptor of the regular file ``path`` (opened without following a final symlink and
    without blocking) and its status; an :class:`OSError` (``ELOOP``, ...) or a :class:`ModelError`
    for a file that is not a regular one."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise ModelError(f"{path}: not a regular file (a device, pipe or socket)")
    return fd, info


def read_regular(path: Path, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path`` (see :func:`_open_regular`); a :class:`ModelError`
    for one larger than ``limit``."""
    fd, info = _open_regular(path)
    with os.fdopen(fd, "rb") as stream:
        if limit is not None and info.st_size > limit:
            raise ModelError(f"{path}: {info.st_size} bytes, expected at most {limit}")
        return stream.read()


def _describe(path: Path, size: int | None = None) -> dict[str, object]:
    """The size and sha256 of the regular file ``path``, hashed in blocks; when its size is not
    ``size``, that size alone (sha256 None: nothing is read)."""
    fd, info = _open_regular(path)
    with os.fdopen(fd, "rb") as stream:
        if size is not None and info.st_size != size:
            return {"size": info.st_size, "sha256": None}
        return {"size": info.st_size, "sha256": stream_sha256(stream)}


def is_model_folder(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` is an hgner model's: it holds a seal, or a ``meta.json`` that reads as an
    hgner model's (its schema's); such a folder is written only as a model, never among its files."""
    folder = Path(folder)
    if os.path.lexists(folder / SEAL_FILE):
        return True
    meta = folder / META_FILE
    if not meta.is_file():
        return False
    try:
        check(read_json(meta, MAX_META_BYTES), "meta", meta)
    except ModelError:
        return False
    return True


def refuse_model_folder(output: str | os.PathLike) -> None:
    """An :class:`HgnerError` when ``output`` is a model folder or a file in one
    (:func:`is_model_folder`): a command's output never replaces or joins a model's files (the
    ``refuse`` of :func:`~hgner.core.fileio.output_stream` and
    :func:`~hgner.core.fileio.outputs_together`). Model files are written by their own code."""
    target = Path(output)
    folder = target if target.is_dir() else target.parent
    if is_model_folder(folder):
        raise HgnerError(f"{output}: inside the model folder {folder}; refusing to write among a model's files "
                         "(choose another folder)")


def seal(directory: str | os.PathLike, names: Iterable[str]) -> None:
    """Write ``directory/seal.json`` recording the size and sha256 of each of ``names`` present
    in ``directory`` (written atomically)."""
    directory = Path(directory)
    files = {}
    for name in names:
        if os.path.lexists(directory / name):
            try:
                files[name] = _describe(directory / name)
            except OSError as error:
                raise ModelError(f"{directory / name}: cannot read to seal ({error.strerror or error})") from None
    write_text(directory / SEAL_FILE, json.dumps({"format": SEAL_FORMAT, "files": files}, indent=2) + "\n")


def verify(directory: str | os.PathLike, names: Iterable[str],
           only: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
    """Check ``directory``'s seal: it exists, records exactly the files among ``names`` present in
    ``directory``, and each has its recorded size and sha256 (each file is read and hashed once);
    with ``only``, the sizes and sha256 of those only (the seal itself is read and checked, and
    no file among ``names`` may be present unrecorded, all the same).
    A :class:`ModelError` otherwise; the seal's record ``{name: {"size", "sha256"}}`` when it holds."""
    directory = Path(directory)
    names = list(names)
    files = _recorded(directory, names)
    checked = set(names if only is None else only)
    for name in names:
        if name in checked or name not in files:  # a model file the seal does not record: refused all the same
            _check_file(directory / name, files.get(name))
    return {name: {"size": entry["size"], "sha256": entry["sha256"]} for name, entry in files.items()}


def _recorded(directory: Path, names: list[str]) -> dict[str, Any]:
    """The seal's ``files`` record, checked to be one this hgner reads and to name only ``names``."""
    path = directory / SEAL_FILE
    how = f"python -m hgner.reseal {directory} seals a model you trust"
    try:
        raw = read_regular(path, MAX_SEAL_BYTES)
    except FileNotFoundError:
        raise ModelError(f"{directory}: the model is not sealed (no {SEAL_FILE}); {how}") from None
    except OSError as error:
        raise ModelError(f"{path}: cannot read ({error.strerror or error})") from None
    try:
        recorded = parse_json(raw.decode("utf-8"))
    except (ValueError, RecursionError) as error:  # (a file listed twice: "key ... appears twice in one object")
        raise ModelError(f"{path}: not valid JSON ({error})") from None
    try:
        files = recorded["files"]
        if recorded.get("format") != SEAL_FORMAT or not isinstance(files, dict):
            raise ValueError
        for name, entry in files.items():
            if name not in names or not isinstance(entry["size"], int) or not isinstance(entry["sha256"], str):
                raise ValueError
    except (ValueError, KeyError, TypeError, AttributeError):
        raise ModelError(f"{path}: not a seal this hgner reads (expected format {SEAL_FORMAT!r} and a size "
                         "and sha256 for each model file)") from None
    return files


def _check_file(target: Path, entry: dict[str, Any] | None) -> None:
    """A :class:`ModelError` unless ``target`` has the size and sha256 of the seal's ``entry``
    (None: the seal does not record it, so it must not exist)."""
    if entry is None:
        if os.path.lexists(target):
            raise ModelError(f"{target}: added after the model was sealed ({SEAL_FILE} does not record it)")
        return
    try:
        found = _describe(target, entry["size"])
    except FileNotFoundError:
        raise ModelError(f"{target}: missing ({SEAL_FILE} records it)") from None
    except OSError as error:
        reason = "a symbolic link" if error.errno == errno.ELOOP else (error.strerror or error)
        raise ModelError(f"{target}: cannot read ({reason})") from None
    if found != {"size": entry["size"], "sha256": entry["sha256"]}:
        raise ModelError(f"{target}: damaged or edited after the model was sealed (its size or sha256 differs "
                         f"from the one {SEAL_FILE} records); rebuild the model, or reseal it if you changed it "
                         "on purpose")


def copy_sealed(source: Path, target: Path, names: Iterable[str]) -> None:
    """Copy the sealed model in ``source`` into the folder ``target``: its seal is verified, then
    exactly the files it records (and the seal) are copied, each read as a regular file never
    through a link (a stray link to ``/dev/zero`` in a model folder is an error, not a full disk)."""
    names = list(names)
    verify(source, names)
    recorded = parse_json(read_regular(source / SEAL_FILE, MAX_SEAL_BYTES).decode("utf-8"))["files"]
    for name in [*recorded, SEAL_FILE]:
        try:
            data = read_regular(source / name)
        except OSError as error:
            raise ModelError(f"{source / name}: cannot read ({error.strerror or error})") from None
        (target / name).write_bytes(data)
    verify(target, names)
