"""crfsuite's CRF1d model file, read and checked by us before crfsuite's C code sees a byte of it.

crfsuite (``lib/crf/src/crf1d_model.c``, ``lib/cqdb/src/cqdb.c``) trusts its model file: every
offset and id it reads is used without a bounds check, so a damaged file can make it read or write
outside its buffer (a segfault) or loop forever. :func:`parse` checks everything crfsuite will read
when pycrfsuite opens the file, tags with it, asks for marginals, labels or its dump, and raises
:class:`ValueError` (one line) at the first problem. The layout, little-endian throughout:

- **header** (48 bytes): ``magic "lCRF"``, file size, ``type "FOMC"``, version, then the counts of
  features (never filled in: 0), labels (L) and attributes (A), and the offsets of the ``FEAT`` chunk, the labels' and
  attributes' CQDB chunks, and the ``LFRF`` and ``AFRF`` chunks;
- **FEAT**: ``"FEAT"``, chunk size, count, then 20-byte records ``type, source, target (u32),
  weight (f64)``; type 0 is a state feature (attribute -> label), 1 a transition (label -> label);
- **LFRF** / **AFRF**: ``"LFRF"``/``"AFRF"``, chunk size, count (L or A), one absolute file offset
  per label (attribute) of a list ``n (u32), n feature ids (u32)``; crfsuite writes
  ``trans[target]`` and adds to ``state[target]`` for each listed feature;
- **CQDB** (string <-> id): a 24-byte header ``"CQDB"``, chunk size, flags, byte-order mark
  ``0x62445371``, backward-array size and offset; 256 table references ``offset, bucket count``;
  records ``id (u32), size (u32, with the NUL), bytes, NUL``; bucket arrays of ``hash, record
  offset``, looked up by open addressing until an empty bucket (offset 0); the backward array holds
  each id's record offset. Every offset in a CQDB chunk counts from the chunk's start.

Beyond crfsuite's own safety, what it reads must agree with what our reader gives the decoders:
a label's transitions are type-1 features from that label, an attribute's references type-0
features of that attribute, strings hold no NUL, ids are unique, crfsuite's lookup of every label
and attribute by its hash (``cqdb_to_id``, replayed by a numba kernel over all strings) finds that
string's own id, and weights are finite and at most :data:`MAX_WEIGHT` in size.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass

import numba
import numpy as np

HEADER = struct.Struct("<4sI4sIIIIIIIII")  # magic, size, type, version, features, labels, attrs, 5 offsets
CHUNK = struct.Struct("<4sII")  # id, size, count
CQDB_HEADER = struct.Struct("<4sIIIII")  # id, size, flag, byte order, backward size, backward offset
CQDB_BYTE_ORDER = 0x62445371
CQDB_TABLES = 256
CQDB_DATA = CQDB_HEADER.size + 8 * CQDB_TABLES  # the smallest CQDB chunk crfsuite accepts (2072 bytes)
FEATURE = np.dtype([("type", "<u4"), ("source", "<u4"), ("target", "<u4"), ("weight", "<f8")])
MAX_LABELS = 1000  # crfsuite allocates L x L matrices; a model has tens of labels
MAX_WEIGHT = 1e6  # trained weights are within +-100; larger ones overflow the decoders' sums and exps


@dataclass(frozen=True)
class Crf1dModel:
    """What a checked file holds: ``labels`` (L,), ``attributes`` (A,) and ``features`` (F,) of
    dtype :data:`FEATURE`."""

    labels: list[str]
    attributes: list[str]
    features: np.ndarray


def _u32(data: bytes, at: int, what: str) -> int:
    if at < 0 or at + 4 > len(data):
        raise ValueError(f"{what} at byte {at} lies outside the file ({len(data)} bytes)")
    return struct.unpack_from("<I", data, at)[0]


def _within(start: int, length: int, end: int, what: str) -> None:
    if start < 0 or length < 0 or start + length > end:
        raise ValueError(f"{what} (bytes {start}..{start + length}) runs past {end}")


def parse(data: bytes) -> Crf1dModel:
    """The model in ``data`` (a whole ``model.crfsuite``), every structure crfsuite reads checked;
    a :class:`ValueError` naming the first problem otherwise."""
    size = len(data)
    if size < HEADER.size:
        raise ValueError(f"truncated crfsuite model: {size} bytes, shorter than its {HEADER.size}-byte header")
    (magic, recorded, kind, _version, _, n_labels, n_attributes, features_at, labels_at, attributes_at,
     labelrefs_at, attrrefs_at) = HEADER.unpack_from(data, 0)
    if magic != b"lCRF" or kind != b"FOMC":
        raise ValueError(f"not a crfsuite CRF1d model (magic {magic!r}, type {kind!r})")
    if recorded != size:
        raise ValueError(f"truncated or padded crfsuite model: header says {recorded} bytes, file has {size}")
    if not 1 <= n_labels <= MAX_LABELS:
        raise ValueError(f"implausible crfsuite header: {n_labels} labels, expected 1..{MAX_LABELS}")
    features = _features(data, features_at)
    labels = _cqdb(data, labels_at, n_labels, "label")
    attributes = _cqdb(data, attributes_at, n_attributes, "attribute")
    kinds = features["type"]
    if not np.isin(kinds, (0, 1)).all():
        raise ValueError("crfsuite model has features of unknown type (expected 0, state, or 1, transition)")
    if not np.isfinite(features["weight"]).all() or (np.abs(features["weight"]) > MAX_WEIGHT).any():
        raise ValueError(f"crfsuite model has weights that are not finite or exceed {MAX_WEIGHT:g} in size")
    if (features["target"] >= n_labels).any():
        raise ValueError("crfsuite model has features whose target label is past its labels")
    if (features["source"][kinds == 0] >= n_attributes).any() or (features["source"][kinds == 1] >= n_labels).any():
        raise ValueError("crfsuite model has features whose source is past its attributes or labels")
    key = (kinds.astype(np.int64) << 62) | (features["source"].astype(np.int64) << 31) | features["target"]
    key.sort()  # (sorting is far cheaper than np.unique; crfsuite writes its features in this order)
    if (key[1:] == key[:-1]).any():
        raise ValueError("crfsuite model has two features of the same type, source and target")
    _references(data, labelrefs_at, b"LFRF", n_labels, features, 1, "label")
    _references(data, attrrefs_at, b"AFRF", n_attributes, features, 0, "attribute")
    return Crf1dModel(labels, attributes, features)


def _features(data: bytes, start: int) -> np.ndarray:
    """The FEAT chunk's records (crfsuite reads feature ``i`` at ``start + 12 + 20 i``; the
    header's feature count is never written, the chunk's is)."""
    _within(start, CHUNK.size, len(data), "FEAT chunk header")
    chunk, _, count = CHUNK.unpack_from(data, start)
    if chunk != b"FEAT":
        raise ValueError(f"expected the FEAT chunk at byte {start}, got {chunk!r}")
    _within(start + CHUNK.size, count * FEATURE.itemsize, len(data), f"FEAT chunk of {count} features")
    return np.frombuffer(data, dtype=FEATURE, count=count, offset=start + CHUNK.size)


def _u32_at(data: bytes, positions: np.ndarray, end: int, what: str) -> np.ndarray:
    """(n,) the little-endian u32 at each of ``positions`` (n,), each checked to lie before ``end``."""
    positions = np.asarray(positions, dtype=np.int64)
    if len(positions) and (positions.min() < 0 or positions.max() + 4 > end):
        raise ValueError(f"{what} lies outside its chunk or the file")
    raw = np.frombuffer(data, dtype=np.uint8)
    return (raw[positions].astype(np.int64) | raw[positions + 1].astype(np.int64) << 8
            | raw[positions + 2].astype(np.int64) << 16 | raw[positions + 3].astype(np.int64) << 24)


def _spans(starts: np.ndarray, lengths: np.ndarray, step: int = 4) -> np.ndarray:
    """The concatenated ranges of ``lengths[i]`` positions from ``starts[i]``, ``step`` apart, as one array."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    first = np.repeat(starts - np.concatenate(([0], np.cumsum(lengths)[:-1])) * step, lengths)
    return first + step * np.arange(total, dtype=np.int64)


def _references(data: bytes, start: int, name: bytes, count: int, features: np.ndarray, kind: int,
                what: str) -> None:
    """The LFRF or AFRF chunk: for each of ``count`` labels (attributes) an in-file list of ids of
    features of type ``kind`` whose source is that label (attribute)."""
    _within(start, CHUNK.size + 4 * count, len(data), f"{name.decode()} chunk")
    chunk, _, stored = CHUNK.unpack_from(data, start)
    if chunk != name or stored < count:  # (crfsuite's trainer reserves 2 more label lists than it fills)
        raise ValueError(f"expected the {name.decode()} chunk of {count} {what}s at byte {start}, got {chunk!r} of "
                         f"{stored}")
    offsets = np.frombuffer(data, dtype="<u4", count=count, offset=start + CHUNK.size).astype(np.int64)
    lengths = _u32_at(data, offsets, len(data), f"{what}'s feature list")
    if (offsets + 4 + 4 * lengths > len(data)).any():
        raise ValueError(f"{what}'s feature list runs past the end of the file")
    ids = _u32_at(data, _spans(offsets + 4, lengths), len(data), f"{what}'s feature list")
    owner_of = np.repeat(np.arange(count, dtype=np.int64), lengths)
    if (ids >= len(features)).any():
        raise ValueError(f"{what}'s feature list names a feature past the FEAT chunk")
    listed = features[ids]
    if (listed["type"] != kind).any() or (listed["source"] != owner_of).any():
        raise ValueError(f"{what}'s feature list names a feature that is not one of its own")


def _hash_tables(data: bytes, start: int, end: int, tables: np.ndarray, what: str,
                 records: Callable[[np.ndarray], np.ndarray]) -> int:
    """How many records the CQDB chunk's hash ``tables`` (T, 2: offset, buckets) hold, each table
    checked (inside the chunk, an empty bucket to stop at) and each record by ``records`` (all the
    tables' records in one call)."""
    for offset, n in tables.tolist():
        if (offset == 0) != (n == 0):
            raise ValueError(f"{what} CQDB hash table at offset {offset} with {n} buckets")
        if n:
            _within(start + offset, 8 * n, end, f"{what} CQDB hash table of {n} buckets")
    counts = tables[:, 1].astype(np.int64)
    # (every bucket's record offset: the second u32 of each 8-byte bucket, table after table)
    used = _u32_at(data, _spans(start + tables[:, 0].astype(np.int64) + 4, counts, 8), end, f"{what} CQDB bucket")
    filled = np.bincount(np.repeat(np.arange(len(tables)), counts)[used != 0], minlength=len(tables))
    full = np.flatnonzero((filled == counts) & (counts > 0))
    if len(full):  # crfsuite probes until it meets an empty bucket: it would never stop
        raise ValueError(f"{what} CQDB hash table at offset {int(tables[full[0], 0])} has no empty bucket")
    records(used[used != 0])
    return int(filled.sum())


def _cqdb(data: bytes, start: int, count: int, what: str) -> list[str]:
    """Strings 0..count-1 of the CQDB chunk at ``start``, after checking its header, every hash
    table crfsuite may probe (in the chunk, an empty bucket to stop at, each record in the chunk,
    NUL-terminated, with an id below ``count``), its backward array, and that crfsuite's lookup of
    each string by its hash finds that string's id."""
    end_of_file = len(data)
    _within(start, CQDB_DATA, end_of_file, f"{what} CQDB chunk")
    chunk, size, _, order, backward_size, backward_at = CQDB_HEADER.unpack_from(data, start)
    if chunk != b"CQDB" or order != CQDB_BYTE_ORDER:
        raise ValueError(f"expected the {what} CQDB chunk at byte {start}, got {chunk!r} (byte order {order:#x})")
    _within(start, size, end_of_file, f"{what} CQDB chunk of {size} bytes")
    if size < CQDB_DATA:
        raise ValueError(f"{what} CQDB chunk of {size} bytes, shorter than its {CQDB_DATA}-byte header")
    end = start + size

    zeros = np.zeros(size + 1, np.int32)  # zeros[i]: the NUL bytes before chunk offset i
    np.cumsum(np.frombuffer(data, dtype=np.uint8, count=size, offset=start) == 0, out=zeros[1:])

    def records(offsets: np.ndarray) -> np.ndarray:
        """(n,) the ids of the records at chunk ``offsets`` (n,), each checked: inside the chunk,
        one NUL-terminated string, an id below ``count``."""
        ids = _u32_at(data, start + offsets, end, f"{what} string record")
        lengths = _u32_at(data, start + offsets + 4, end, f"{what} string record")
        ends = offsets + 8 + lengths  # (chunk offsets)
        if (lengths < 1).any() or (ends > size).any():
            raise ValueError(f"{what} string record runs past its CQDB chunk")
        if (zeros[ends] - zeros[offsets + 8] != 1).any() or (zeros[ends] == zeros[ends - 1]).any():
            raise ValueError(f"{what} string record is not one NUL-terminated string")
        if (ids >= count).any():
            raise ValueError(f"{what} string record has an id of {int(ids.max())}, expected below {count}")
        return ids

    tables = np.frombuffer(data, dtype="<u4", count=2 * CQDB_TABLES, offset=start + CQDB_HEADER.size).reshape(-1, 2)
    entries = _hash_tables(data, start, end, tables, what, records)
    if entries != count:
        raise ValueError(f"{what} CQDB chunk holds {entries} strings in its hash tables, expected {count}")
    if backward_at == 0 or backward_size < count:
        raise ValueError(f"{what} CQDB chunk has a backward array of {backward_size} ids, expected {count}")
    _within(start + backward_at, 4 * count, end, f"{what} CQDB backward array")
    backward = np.frombuffer(data, dtype="<u4", count=count, offset=start + backward_at).astype(np.int64)
    if (backward == 0).any():
        raise ValueError(f"{what} id with no string in its CQDB chunk")
    if (records(backward) != np.arange(count)).any():
        raise ValueError(f"{what}'s string record names another {what}")
    lengths = _u32_at(data, start + backward + 4, end, "")
    # every string with its NUL, in id order, decoded at once (no string holds a NUL: checked above)
    joined = np.frombuffer(data, dtype=np.uint8)[_spans(start + backward + 8, lengths, 1)].tobytes()
    strings = joined.decode("utf-8").split("\0")[:-1]
    if len(set(strings)) != len(strings):
        raise ValueError(f"{what} CQDB chunk holds a string twice")
    missed = _first_missed_lookup(np.frombuffer(data, dtype=np.uint8), start, tables.astype(np.int64),
                                  backward, lengths)
    if missed >= 0:  # crfsuite finds labels (a marginal) and attributes (every token) by their hash
        raise ValueError(f"{what} {strings[missed]!r}: crfsuite's hash lookup does not find it as {what} {missed}")
    return strings


@numba.njit(cache=True, nogil=True)
def _u32_le(raw: np.ndarray, at: int) -> int:
    return int(raw[at]) | int(raw[at + 1]) << 8 | int(raw[at + 2]) << 16 | int(raw[at + 3]) << 24


@numba.njit(cache=True, nogil=True)
def _rot(x: int, k: int) -> int:
    return ((x << k) | (x >> (32 - k))) & 0xFFFFFFFF


@numba.njit(cache=True, nogil=True)
def hashlittle(raw: np.ndarray, at: int, length: int) -> int:
    """Bob Jenkins' lookup3 ``hashlittle`` (initial value 0) of ``raw[at:at + length]``: how CQDB
    hashes a key (its string with the NUL)."""
    mask = 0xFFFFFFFF
    a = b = c = (0xDEADBEEF + length) & mask
    while length > 12:
        a = (a + _u32_le(raw, at)) & mask
        b = (b + _u32_le(raw, at + 4)) & mask
        c = (c + _u32_le(raw, at + 8)) & mask
        a = (a - c) & mask
        a ^= _rot(c, 4)
        c = (c + b) & mask
        b = (b - a) & mask
        b ^= _rot(a, 6)
        a = (a + c) & mask
        c = (c - b) & mask
        c ^= _rot(b, 8)
        b = (b + a) & mask
        a = (a - c) & mask
        a ^= _rot(c, 16)
        c = (c + b) & mask
        b = (b - a) & mask
        b ^= _rot(a, 19)
        a = (a + c) & mask
        c = (c - b) & mask
        c ^= _rot(b, 4)
        b = (b + a) & mask
        length -= 12
        at += 12
    if length == 0:
        return c
    words = np.zeros(3, dtype=np.int64)  # the last 1..12 bytes, zero-padded, as three little-endian words
    for i in range(length):
        words[i // 4] |= int(raw[at + i]) << (8 * (i % 4))
    a = (a + words[0]) & mask
    b = (b + words[1]) & mask
    c = (c + words[2]) & mask
    c ^= b
    c = (c - _rot(b, 14)) & mask
    a ^= c
    a = (a - _rot(c, 11)) & mask
    b ^= a
    b = (b - _rot(a, 25)) & mask
    c ^= b
    c = (c - _rot(b, 16)) & mask
    a ^= c
    a = (a - _rot(c, 4)) & mask
    b ^= a
    b = (b - _rot(a, 14)) & mask
    c ^= b
    c = (c - _rot(b, 24)) & mask
    return c


@numba.njit(cache=True, nogil=True)
def _first_missed_lookup(raw: np.ndarray, start: int, tables: np.ndarray, backward: np.ndarray,
                         lengths: np.ndarray) -> int:
    """Replay crfsuite's ``cqdb_to_id`` for each string of a checked CQDB chunk at ``start`` of
    the file ``raw`` (bytes as uint8): the string of id ``i`` is the record at chunk offset
    ``backward[i]``, ``lengths[i]`` bytes with its NUL; ``tables`` (256, 2) the hash tables' chunk
    offsets and bucket counts. The first id the lookup does not find as itself, or -1."""
    for identifier in range(len(backward)):
        key, length = start + backward[identifier] + 8, lengths[identifier]
        value = hashlittle(raw, key, length)
        offset, n = tables[value % 256, 0], tables[value % 256, 1]
        found = -1
        if n > 0:
            k = (value >> 8) % n
            for _ in range(n):  # (every table has an empty bucket: checked before)
                at = start + offset + 8 * k
                record = _u32_le(raw, at + 4)
                if record == 0:
                    break
                if _u32_le(raw, at) == value and _u32_le(raw, start + record + 4) == length:
                    same = True  # (records are checked: one NUL, at their end; strcmp is this comparison)
                    for i in range(length):
                        if raw[start + record + 8 + i] != raw[key + i]:
                            same = False
                            break
                    if same:
                        found = _u32_le(raw, start + record)
                        break
                k = (k + 1) % n
        if found != identifier:
            return identifier
    return -1
