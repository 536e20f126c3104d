"""crfsuite's model file read and checked by hgner/crf/crfsuite_format.py: what it reads agrees with
crfsuite's own reader, and each kind of damage it checks is refused with one ValueError (the
damage that must never reach crfsuite's C code is tested end to end in tests/test_integrity.py)."""

from __future__ import annotations

import struct

import pycrfsuite
import pytest

from hgner.crf import crfsuite_format
from hgner.crf.modelfiles import MODEL_FILE


@pytest.fixture(scope="module")
def model_bytes(tiny_model) -> bytes:
    return (tiny_model.directory / MODEL_FILE).read_bytes()


def offsets(data: bytes) -> dict[str, int]:
    fields = struct.unpack_from("<4sI4sIIIIIIIII", data, 0)
    return dict(zip(("features", "labels", "attributes"), fields[7:10]))


def test_labels_attributes_and_weights_are_crfsuites_own(tiny_model, model_bytes):
    parsed = crfsuite_format.parse(model_bytes)
    tagger = pycrfsuite.Tagger()
    tagger.open(str(tiny_model.directory / MODEL_FILE))
    info = tagger.info()
    assert {label: str(i) for i, label in enumerate(parsed.labels)} == info.labels  # (its dump's ids are text)
    assert {attribute: str(i) for i, attribute in enumerate(parsed.attributes)} == info.attributes
    assert len(parsed.features) == len(info.state_features) + len(info.transitions)


def test_two_features_of_the_same_type_source_and_target_are_refused(model_bytes):
    data = bytearray(model_bytes)
    first = offsets(data)["features"] + 12  # (FEAT chunk header: id, size, count)
    data[first + 20:first + 32] = data[first:first + 12]  # feature 1 now has feature 0's type, source and target
    with pytest.raises(ValueError, match="two features of the same type, source and target"):
        crfsuite_format.parse(bytes(data))


def fill_a_hash_table(data: bytearray, chunk: int) -> None:
    for table in range(crfsuite_format.CQDB_TABLES):
        offset, n = struct.unpack_from("<II", data, chunk + 24 + 8 * table)
        if n:
            record = next(struct.unpack_from("<I", data, chunk + offset + 8 * b + 4)[0] for b in range(n)
                          if struct.unpack_from("<I", data, chunk + offset + 8 * b + 4)[0])
            for bucket in range(n):
                struct.pack_into("<I", data, chunk + offset + 8 * bucket + 4, record)
            return
    raise AssertionError("no hash table")


@pytest.mark.parametrize("what", ["labels", "attributes"])
def test_a_hash_table_without_an_empty_bucket_is_refused(model_bytes, what):
    data = bytearray(model_bytes)
    fill_a_hash_table(data, offsets(data)[what])
    with pytest.raises(ValueError, match=f"{what[:-1]} CQDB hash table at offset [0-9]+ has no empty bucket"):
        crfsuite_format.parse(bytes(data))


def first_string(data: bytes, chunk: int) -> tuple[int, int]:
    """The file offset and length (with its NUL) of the string of id 0 in the CQDB ``chunk``."""
    backward_at = struct.unpack_from("<I", data, chunk + 20)[0]
    record = chunk + struct.unpack_from("<I", data, chunk + backward_at)[0]
    return record + 8, struct.unpack_from("<I", data, record + 4)[0]


@pytest.mark.parametrize("change, message", [
    (lambda data, at, length: data.__setitem__(at, 0), "not one NUL-terminated string"),
    (lambda data, at, length: data.__setitem__(at + length - 1, ord("x")), "not one NUL-terminated string"),
    (lambda data, at, length: data.__setitem__(at, 0xFF), "can't decode byte 0xff"),
])
def test_a_damaged_string_is_refused(model_bytes, change, message):
    data = bytearray(model_bytes)
    at, length = first_string(data, offsets(data)["attributes"])
    assert length > 2
    change(data, at, length)
    with pytest.raises(ValueError, match=message):
        crfsuite_format.parse(bytes(data))
