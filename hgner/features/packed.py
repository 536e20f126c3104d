"""Model files made of arrays in numpy's ``.npz`` format (no pickle), with strings stored as UTF-8
bytes and end offsets: read, checked and written the same way by every such file of a model
(``types.npz``, ``outside_truecase.npz``, ``word_frequency.npz``; ``skip.npz`` is written here and
read by :mod:`hgner.crf.skip`). The same arrays always make the same bytes, so a rebuilt model's seal
records the same checksums."""

from __future__ import annotations

import io
import operator
import zipfile
from collections.abc import Sequence
from itertools import islice
from pathlib import Path

import numpy as np

from ..core.errors import ModelError


def read_arrays(path: Path, expected: set[str],
                optional: tuple[frozenset[str], ...] = ()) -> dict[str, np.ndarray]:
    """The arrays of the ``.npz`` file ``path`` (a regular file, read without pickle): exactly
    the names ``expected``, and of each group of ``optional`` names all or none; a
    :class:`~hgner.core.errors.ModelError` naming the file otherwise."""
    from ..core.integrity import read_regular

    try:
        with np.load(io.BytesIO(read_regular(path)), allow_pickle=False) as stored:
            arrays = {name: stored[name] for name in stored.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as error:
        raise ModelError(f"{path}: cannot read ({error})") from None
    present = set(arrays)
    if not expected <= present or present - expected != set().union(*(g for g in optional if g & present)):
        groups = " and ".join(str(sorted(group)) for group in optional)
        also = f" (and optionally {groups}, each whole or not at all)" if optional else ""
        raise ModelError(f"{path}: holds {sorted(arrays)}, expected {sorted(expected)}{also}")
    return arrays


# the time every member of a written .npz records (np.savez records the time of writing, so the
# same arrays would make a file with other bytes, and another sha256 in the model's seal, each build)
_MEMBER_TIME = (1980, 1, 1, 0, 0, 0)


def write_arrays(path: Path, arrays: dict[str, np.ndarray], compressed: bool = False) -> None:
    """Write ``arrays`` to ``path`` in numpy's ``.npz`` format, as ``np.savez`` (``compressed``:
    ``np.savez_compressed``) does but byte for byte the same for the same arrays (atomically)."""
    from ..core.fileio import atomic_write

    method = zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED
    with atomic_write(path, binary=True) as out, zipfile.ZipFile(out, "w", compression=method) as archive:
        for name, array in arrays.items():
            member = zipfile.ZipInfo(f"{name}.npy", date_time=_MEMBER_TIME)
            member.compress_type = method
            with archive.open(member, "w", force_zip64=True) as stream:
                np.lib.format.write_array(stream, np.asanyarray(array), allow_pickle=False)


def check_array(path: Path, name: str, array: np.ndarray, dtype: type, shape: tuple[int, ...]) -> None:
    """A :class:`~hgner.core.errors.ModelError` naming ``path`` and the array unless it has ``dtype`` and ``shape``."""
    if array.dtype != dtype or array.shape != shape:
        raise ModelError(f"{path}: {name}: expected shape {shape} of {np.dtype(dtype)}, got {array.shape} of {array.dtype}")


def read_keyed_table(path: Path, keys: str, strings: str, values: str, dtype: type) -> tuple[list[str], list[str], np.ndarray]:
    """A table stored as ``keys`` (strings, distinct and sorted, looked up by bisection), another
    list of ``strings``, and ``values`` ((len(keys),) of ``dtype``), all packed by
    :func:`pack_strings` and read from ``path``; a :class:`~hgner.core.errors.ModelError` naming the
    file and the array when one does not fit."""
    arrays = read_arrays(path, {f"{keys}_utf8", f"{keys}_ends", f"{strings}_utf8", f"{strings}_ends", values})
    keyed, others = unpack_strings(path, keys, arrays), unpack_strings(path, strings, arrays)
    check_array(path, values, arrays[values], dtype, (len(keyed),))
    if not all(map(operator.lt, keyed, islice(keyed, 1, None))):
        raise ModelError(f"{path}: {keys}: expected distinct {keys} in sorted order")
    return keyed, others, arrays[values]


def pack_strings(name: str, strings: Sequence[str]) -> dict[str, np.ndarray]:
    """``strings`` as the arrays ``NAME_utf8`` (their UTF-8 bytes, one after another) and
    ``NAME_ends`` ((n,) int64: where each one ends), which :func:`unpack_strings` reads."""
    encoded = [s.encode("utf-8") for s in strings]
    return {f"{name}_utf8": np.frombuffer(b"".join(encoded), np.uint8),
            f"{name}_ends": np.cumsum([len(e) for e in encoded], dtype=np.int64)}


def unpack_strings(path: Path, name: str, arrays: dict[str, np.ndarray]) -> list[str]:
    """The strings :func:`pack_strings` stored under ``name`` in ``arrays`` (read from ``path``,
    which errors name)."""
    utf8, ends = arrays[f"{name}_utf8"], arrays[f"{name}_ends"]
    if utf8.dtype != np.uint8 or utf8.ndim != 1 or ends.dtype != np.int64 or ends.ndim != 1:
        raise ModelError(f"{path}: {name}: expected UTF-8 bytes and int64 end offsets")
    if len(ends) and (ends[0] < 0 or np.any(np.diff(ends) < 0) or ends[-1] != len(utf8)):
        raise ModelError(f"{path}: {name}: end offsets out of order or range")
    if not len(ends):
        if len(utf8):
            raise ModelError(f"{path}: {name}: bytes without end offsets")
        return []
    try:
        if not (utf8 == 0).any():  # NUL between the strings, then all decoded and cut at once
            return np.insert(utf8, ends[:-1], 0).tobytes().decode("utf-8").split("\0")
        data = utf8.tobytes()
        return [data[a:b].decode("utf-8") for a, b in zip([0, *ends[:-1].tolist()], ends.tolist())]
    except UnicodeDecodeError:
        raise ModelError(f"{path}: {name}: not UTF-8") from None
