"""Record files, one document per record: JSONL (one JSON object a line) and CSV (a header row),
the text in a field (``text_field``: ``text`` by default) and an ``id`` kept when the record has
one. ``hgner tag`` reads them as documents; ``hgner tag --cluster`` reads JSONL the same way."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..core.errors import HgnerError, named
from ..core.fileio import read_input
from ..core.validation import parse_json
from .encoding import check_not_utf16, decode_input

JSONL_SUFFIXES = (".jsonl", ".ndjson")
CSV_SUFFIXES = (".csv",)
DEFAULT_TEXT_FIELD = "text"
ID_FIELD = "id"


@dataclass(frozen=True)
class Record:
    """One record's document: where it is (``FILE:LINE``), its text and its id (None: none)."""

    source: str
    text: str
    id: str | int | None = None


def jsonl_record(raw: bytes, text_field: str, path: str, number: int) -> Record:
    """The record of JSON line ``number`` of ``path`` (its bytes ``raw``): an object with a text
    field; an :class:`HgnerError` ``FILE:LINE: ...`` otherwise (a key given twice included)."""
    from .tagger import check_text  # (the tagger's module loads no model)

    try:
        record = parse_json(raw.decode("utf-8"))  # (strict: a key given twice is refused)
    except (ValueError, UnicodeDecodeError, RecursionError) as error:
        raise HgnerError(f"{path}:{number}: not a JSON line ({error})") from None
    text = record.get(text_field) if isinstance(record, dict) else None
    if not isinstance(text, str):
        got = type(record).__name__ if not isinstance(record, dict) else \
            f"keys {', '.join(map(repr, record))}" if text_field not in record else type(text).__name__
        raise HgnerError(f"{path}:{number}: expected an object with a text field {text_field!r}, got {got}; "
                         f"see {named('text_field')}")
    check_text(text, f"{path}:{number}: {text_field!r}")  # a \ud800 escape: JSON carries it, no text holds it
    identity = record.get(ID_FIELD)
    return Record(f"{path}:{number}", text, identity if isinstance(identity, (str, int)) and
                  not isinstance(identity, bool) else None)


def jsonl_lines(raw: bytes, first: int = 1) -> Iterator[tuple[int, bytes]]:
    """The non-blank lines of JSONL bytes with their numbers (from ``first``): lines end at ``\\n``
    only (a ``\\r`` alone is JSON white space)."""
    for number, line in enumerate(raw.split(b"\n"), first):
        if line.strip():
            yield number, line


def read_jsonl(path: str, text_field: str = DEFAULT_TEXT_FIELD) -> Iterator[Record]:
    """The records of a JSONL file."""
    for number, line in jsonl_lines(_read(path)):
        yield jsonl_record(line, text_field, path, number)


def read_csv(path: str, text_field: str = DEFAULT_TEXT_FIELD) -> Iterator[Record]:
    """The records of a CSV file whose first row names the columns, each named ``FILE:LINE`` by
    the line its row starts on."""
    text = decode_input(_read(path), path)
    try:
        reader = csv.reader(io.StringIO(text, newline=""))
        header = next(reader, None)
        if header is None or text_field not in header:
            raise HgnerError(f"{path}:1: expected a header row with a column {text_field!r}, got "
                             f"{', '.join(map(repr, header or [])) or 'nothing'}; see {named('text_field')}")
        if len(set(header)) < len(header):
            repeated = next(name for name in header if header.count(name) > 1)
            raise HgnerError(f"{path}:1: column {repeated!r} repeated in the header row")
        column, identity = header.index(text_field), header.index(ID_FIELD) if ID_FIELD in header else None
        start = reader.line_num + 1
        for row in reader:
            if any(row):
                if len(row) != len(header):
                    raise HgnerError(f"{path}:{start}: {len(row)} fields, but the header row names {len(header)}")
                yield Record(f"{path}:{start}", row[column], row[identity] or None if identity is not None else None)
            start = reader.line_num + 1
    except csv.Error as error:
        raise HgnerError(f"{path}:{reader.line_num}: not CSV ({error})") from None


def _read(path: str) -> bytes:
    try:
        raw = read_input(path)
    except OSError as error:
        raise HgnerError(f"{path}: cannot read ({error.strerror or error})") from None
    check_not_utf16(raw, path)
    return raw


RECORD_READERS: dict[tuple[str, ...], Callable[[str, str], Iterator[Record]]] = {
    JSONL_SUFFIXES: read_jsonl, CSV_SUFFIXES: read_csv}
"""Each record file kind's reader, by its file name endings."""


def record_reader(path: str) -> Callable[[str, str], Iterator[Record]] | None:
    """The reader of a record file by its name's ending, or None for a text file."""
    lower = path.lower()
    return next((reader for suffixes, reader in RECORD_READERS.items() if lower.endswith(suffixes)), None)
