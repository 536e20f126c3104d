"""A job's inputs: text files (one document each), folders and globs of them, and JSONL or Parquet
files with one document per record; cut into *pieces* (a whole text file, a byte range of a JSONL
file, a Parquet row group) that parts group, and read back piece by piece."""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import HgnerError, named
from ..tagging.encoding import SNIFF_BYTES, check_not_utf16
from ..tagging.inputs import DEFAULT_GLOB, Input, folder_files
from ..tagging.records import ID_FIELD, JSONL_SUFFIXES, Record, jsonl_lines, jsonl_record

PART_BYTES = 256_000  # input text per part (one task, one output file): about 48,000 tokens of news, a few
# seconds of one core, so that parts share out evenly among the workers (a 1M-token job is 22 parts)
PART_MAX_FILES = 2_000  # text files per part at most
MIN_PARTS = 32  # parts a job is cut into at least, as its files allow (every worker of a small cluster gets work)
MANIFEST = "manifest.json"
PARQUET_SUFFIXES = (".parquet", ".pq")
RECORD_GLOBS = tuple(f"*{suffix}" for suffix in JSONL_SUFFIXES + PARQUET_SUFFIXES)  # what a folder gives besides --glob
_PART_NAME = re.compile(r"part-\d{5}\.(?:jsonl|parquet)")


def _is_output_part(path: Path) -> bool:
    """A part file of an hgner job's output folder: a folder input leaves these out (an earlier
    job's output is not input)."""
    return _PART_NAME.fullmatch(path.name) is not None and (path.parent / MANIFEST).is_file()


@dataclass(frozen=True)
class Piece:
    """A slice of one input file: a whole text file (``kind="text"``), the lines of a JSONL file in
    bytes ``[start, stop)`` whose first is line ``first`` (1-based), or row group ``start`` of a
    Parquet file whose first row is row ``first`` (0-based)."""

    kind: str
    path: str
    start: int = 0
    stop: int = 0
    first: int = 0


def input_kind(path: str) -> str:
    lower = path.lower()
    return "jsonl" if lower.endswith(JSONL_SUFFIXES) else "parquet" if lower.endswith(PARQUET_SUFFIXES) else "text"


def find_inputs(arguments: Iterable[str], exclude: str | Path | None = None, pattern: str = DEFAULT_GLOB) -> list[str]:
    """Input files, in order, from files, folders (the files matching ``pattern`` that
    :func:`hgner.tag.folder_files` gives plain ``hgner tag`` too, their JSONL and Parquet files,
    ``exclude``'s tree left out) and glob patterns; each file once."""
    found: dict[str, None] = {}
    skip = Path(exclude).resolve() if exclude is not None else None
    for argument in arguments:
        if os.path.isdir(argument):
            if skip is not None and (skip == Path(argument).resolve() or skip in Path(argument).resolve().parents):
                raise HgnerError(f"{argument}: an input folder that is, or is inside, the {named('out')} folder; "
                                 f"choose another {named('out')}")
            files = [p for p in folder_files(argument, (pattern, *RECORD_GLOBS), exclude) if not _is_output_part(p)]
        elif os.path.isfile(argument):
            files = [Path(argument)]
        elif glob.has_magic(argument):
            files = [Path(p) for p in sorted(glob.glob(argument, recursive=True)) if os.path.isfile(p)]
            if not files:
                raise HgnerError(f"{argument}: no file matches")
        else:
            raise HgnerError(f"{argument}: no such file or folder")
        for path in files:
            found[str(path)] = None
    if not found:
        raise HgnerError("no input files (expected files, folders or glob patterns)")
    return list(found)


def plan_parts(paths: list[str], text_column: str, part_bytes: int = PART_BYTES) -> list[list[Piece]]:
    """The job's parts, in input order: consecutive text files up to ``part_bytes`` (and
    :data:`PART_MAX_FILES`) together, JSONL files cut at line ends every ``part_bytes``, Parquet
    files one row group per part. A small job is cut finer, into about :data:`MIN_PARTS` parts
    (as its files allow), so that the workers share it: the plan depends on the inputs alone,
    and a resumed job finds the same parts on a cluster of another size."""
    sizes = {path: os.path.getsize(path) for path in paths}
    part_bytes = max(1, min(part_bytes, -(-sum(sizes.values()) // MIN_PARTS)))
    texts = sum(input_kind(path) == "text" for path in paths)
    max_files = max(1, min(PART_MAX_FILES, -(-texts // MIN_PARTS)))
    parts: list[list[Piece]] = []
    group: list[Piece] = []
    size = 0
    for path in paths:
        kind = input_kind(path)
        if kind == "text":
            length = sizes[path]
            if group and (size + length > part_bytes or len(group) >= max_files):
                parts.append(group)
                group, size = [], 0
            group.append(Piece("text", path))
            size += length
            continue
        if group:
            parts.append(group)
            group, size = [], 0
        parts += [[piece] for piece in PIECE_SPLITTERS[kind](path, part_bytes, text_column)]
    if group:
        parts.append(group)
    return parts


def _jsonl_pieces(path: str, part_bytes: int, text_column: str) -> list[Piece]:
    """Byte ranges of about ``part_bytes`` ending at line ends, with the number of their first line
    (each record's ``text_column`` is read when the piece is)."""
    pieces = []
    line = 1
    with open(path, "rb") as stream:
        check_not_utf16(stream.read(SNIFF_BYTES), path)
        start = 0
        while True:
            stream.seek(start + part_bytes)
            stream.readline()
            stop = min(stream.tell(), os.path.getsize(path))
            if stop <= start:
                break
            pieces.append(Piece("jsonl", path, start, stop, line))
            stream.seek(start)
            remaining = stop - start
            while remaining:
                block = stream.read(min(remaining, 1 << 24))
                line += block.count(b"\n")
                remaining -= len(block)
            start = stop
    return pieces


def _pyarrow_parquet():
    try:
        import pyarrow.parquet
    except ImportError:
        raise HgnerError("Parquet input or output needs pyarrow: pip install pyarrow") from None
    return pyarrow.parquet


def _parquet_pieces(path: str, part_bytes: int, text_column: str) -> list[Piece]:
    """One piece per row group (whatever ``part_bytes``), once the file is found to have ``text_column``."""
    parquet = _pyarrow_parquet()
    try:
        metadata = parquet.ParquetFile(path).metadata
        names = metadata.schema.names
    except (OSError, ValueError) as error:
        raise HgnerError(f"{path}: not a Parquet file ({error})") from None
    if text_column not in names:
        raise HgnerError(f"{path}: no column {text_column!r} (columns: {', '.join(names)}); see {named('text_field')}")
    pieces, first = [], 0
    for group in range(metadata.num_row_groups):
        pieces.append(Piece("parquet", path, group, 0, first))
        first += metadata.row_group(group).num_rows
    return pieces


PIECE_SPLITTERS: dict[str, Callable[[str, int, str], list[Piece]]] = {
    "jsonl": _jsonl_pieces, "parquet": _parquet_pieces}
"""Each record-file input kind's splitter into pieces of one part each, given the part size in
bytes and the text column (text files are not split: consecutive ones share a part)."""


def _read_text(piece: Piece, text_column: str) -> Iterator[Record]:
    yield Record(piece.path, Input(piece.path, path=piece.path).read())


def _read_jsonl(piece: Piece, text_column: str) -> Iterator[Record]:
    with open(piece.path, "rb") as stream:
        stream.seek(piece.start)
        # lines end at \n only, as _jsonl_pieces counts them
        for number, raw in jsonl_lines(stream.read(piece.stop - piece.start), piece.first):
            yield jsonl_record(raw, text_column, piece.path, number)


def _read_parquet(piece: Piece, text_column: str) -> Iterator[Record]:
    file = _pyarrow_parquet().ParquetFile(piece.path)
    ids = ID_FIELD in file.schema_arrow.names and text_column != ID_FIELD
    table = file.read_row_group(piece.start, columns=[text_column, *([ID_FIELD] if ids else [])])
    identities = table.column(ID_FIELD).to_pylist() if ids else [None] * table.num_rows
    for row, (text, identity) in enumerate(zip(table.column(text_column).to_pylist(), identities), piece.first):
        if text is not None and not isinstance(text, str):
            raise HgnerError(f"{piece.path}: row {row}: column {text_column!r} holds {type(text).__name__}, "
                             "expected text")
        yield Record(f"{piece.path}:{row}", text or "", identity if isinstance(identity, (str, int)) else None)


PIECE_READERS: dict[str, Callable[[Piece, str], Iterator[Record]]] = {
    "text": _read_text, "jsonl": _read_jsonl, "parquet": _read_parquet}
"""Each input kind's reader: the :class:`~hgner.tagging.records.Record` (source, text, id) of
every document in a piece, given the text column."""


def read_piece(piece: Piece, text_column: str) -> Iterator[Record]:
    """The record of every document in ``piece``."""
    return PIECE_READERS[piece.kind](piece, text_column)
