"""Model files of arrays (hgner/features/packed.py): written as numpy's .npz, read back without
pickle, and the same bytes each time the same arrays are written."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

from hgner.features.packed import pack_strings, read_arrays, unpack_strings, write_arrays

ARRAYS = {"numbers": np.arange(12, dtype=np.int64).reshape(3, 4), "words": np.array([b"cat", b"the"], "S20"),
          **pack_strings("names", ["Zürich", "", "Paris"])}


@pytest.mark.parametrize(("compressed", "method"), [(False, zipfile.ZIP_STORED), (True, zipfile.ZIP_DEFLATED)])
def test_arrays_read_back_from_a_file_numpy_reads(tmp_path, compressed, method):
    path = tmp_path / "arrays.npz"
    write_arrays(path, ARRAYS, compressed=compressed)
    read = read_arrays(path, set(ARRAYS))
    assert all(np.array_equal(read[name], array) and read[name].dtype == array.dtype for name, array in ARRAYS.items())
    assert unpack_strings(path, "names", read) == ["Zürich", "", "Paris"]
    with np.load(path, allow_pickle=False) as stored:
        assert sorted(stored.files) == sorted(ARRAYS)
    with zipfile.ZipFile(path) as archive:
        assert {member.compress_type for member in archive.infolist()} == {method}


def test_the_same_arrays_make_the_same_bytes(tmp_path):
    first, second = tmp_path / "first.npz", tmp_path / "second.npz"
    write_arrays(first, ARRAYS, compressed=True)
    write_arrays(second, dict(reversed(list(ARRAYS.items()))), compressed=True)
    write_arrays(second, ARRAYS, compressed=True)  # (rewritten in place, atomically)
    assert first.read_bytes() == second.read_bytes()
    with zipfile.ZipFile(first) as archive:  # no member records the time it was written (np.savez's do)
        assert {member.date_time for member in archive.infolist()} == {(1980, 1, 1, 0, 0, 0)}
