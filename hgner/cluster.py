"""Tagging and evaluating beyond one process, on a Dask cluster: the one module that talks to Dask.

Install with ``pip install 'hgner[dask]'``. Three ways in:

* ``hgner tag --cluster local[:N] | tcp://HOST:PORT INPUTS... --out DIR`` (:func:`tag_to_folder`):
  inputs are text files (one document each), folders and globs of them, and JSONL (``.jsonl``,
  ``.ndjson``) or Parquet (``.parquet``, needs pyarrow) files with one document per record in
  their ``--text-column``. A folder gives the text files plain ``hgner tag`` reads from it
  (:func:`hgner.tag.folder_files`: those matching ``--glob``, ``*.txt`` by default, recursively,
  hidden ones left out) and its JSONL and Parquet files, less the ``--out`` folder and the part
  files of earlier jobs' output folders (an input folder inside ``--out`` is refused). The work is
  cut into *parts* of about :data:`PART_BYTES` of input, in
  input order; each part is one task and one output file ``part-NNNNN.jsonl``, written atomically
  and then committed by a ``part-NNNNN.done.json`` marker holding its counts, size and sha256
  (a part file deleted or changed since is tagged again). ``manifest.json``
  describes the job (the inputs: arguments, files, bytes and a checksum of the file listing;
  model, decoder, parts, counts). Rerunning the same
  command skips the committed parts, so a crashed or interrupted job resumes and no part is
  written twice; a folder holding another job's output is refused. A worker that dies mid-task
  loses nothing: the scheduler runs its task again elsewhere, and the part file only appears
  complete.
* ``hgner evaluate --cluster ...`` (:func:`score_documents`): documents are featurised and
  decoded on the workers in batches, every decoder run on each batch; the report's scores equal
  the local run's exactly (every decoder reseeds per document, so batching changes nothing).
* The Python API for code already on Dask: :func:`tag_bag` (texts -> records) and
  :func:`tag_dataframe` (adds an ``entities`` column).

One record per input document, in input order: ``{"source", "text", "entities"}``, the entities
as ``hgner tag --format jsonl`` writes them (:meth:`hgner.tag.Entity.to_json`). ``source`` is the
file, or ``FILE:LINE`` (JSONL, 1-based) / ``FILE:ROW`` (Parquet, 0-based).

Each worker process loads a model once (:func:`worker_tagger`, a cache keyed by the tagging
settings), not once per document or task. Memory per worker is bounded by one part's text plus
the model: records stream to the part file one document at a time.
"""

from __future__ import annotations

import functools
import glob
import hashlib
import json
import logging
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import __version__
from .errors import HgnerError
from .fileio import atomic_write, file_sha256, write_text
from .report import counted
from .tag import (DEFAULT_DECODER, DEFAULT_GLOB, DEFAULT_MODEL, Input, Tagger, add_to_language_sample,
                  check_tag_settings, folder_files, jsonl_record, language_warning)
from .validation import check, read_json

if TYPE_CHECKING:
    from distributed import Client

    from .corpus import Document
    from .evaluation import DocumentOutcome, DocumentScorer, EvaluationPlan
    from .model import CrfModel

PART_BYTES = 256_000  # input text per part (one task, one output file): about 48,000 tokens of news, a few
# seconds of one core, so that parts share out evenly among the workers (a 1M-token job is 22 parts)
PART_MAX_FILES = 2_000  # text files per part at most
MANIFEST = "manifest.json"
_PART_NAME = re.compile(r"part-\d{5}\.(?:jsonl|parquet)")
JSONL_SUFFIXES = (".jsonl", ".ndjson")
PARQUET_SUFFIXES = (".parquet", ".pq")
RECORD_GLOBS = tuple(f"*{suffix}" for suffix in JSONL_SUFFIXES + PARQUET_SUFFIXES)  # what a folder gives besides --glob
EVALUATE_BATCHES_PER_WORKER = 4
_CLUSTER_SPEC = re.compile(r"local(?::(\d{1,9}))?|tcp://(?:[^\s/:\[\]]+|\[[0-9A-Fa-f:.]+\]):(\d{1,5})")
WORKERS_PER_CORE = 4  # local:N takes at most this many worker processes per core (each loads the model)
# How a local cluster starts its worker processes. Forked from this process, a worker starts with the
# interpreter and the modules already imported (numba, distributed) instead of starting them again
# (Dask's default, spawn): on the 1M-token benchmark, local:2 took 7.7 s wall against 9.0. Forking is
# Linux's own default; elsewhere (macOS, where system libraries are not fork-safe) Dask's default stays.
LOCAL_START_METHOD = "fork" if sys.platform.startswith("linux") else "spawn"


# ----------------------------------------------------------------------------- connecting


def local_workers(spec: str) -> int | None:
    """The worker processes ``spec`` asks for on this machine (``None`` for a scheduler address);
    an :class:`HgnerError` for anything but ``local``, ``local:N`` (1 <= N <= :data:`WORKERS_PER_CORE`
    per core) or ``tcp://HOST:PORT`` (a port 1..65535)."""
    cores = os.cpu_count() or 1
    most = WORKERS_PER_CORE * cores
    match = _CLUSTER_SPEC.fullmatch(spec) if isinstance(spec, str) else None
    if match is not None:
        workers, port = match.group(1), match.group(2)
        if port is not None and 1 <= int(port) <= 65535:
            return None
        if port is None and (workers is None or 1 <= int(workers) <= most):
            return int(workers or cores)
    raise HgnerError(f"--cluster: expected local, local:N (N from 1 to {most}: {WORKERS_PER_CORE} per core) or "
                     f"tcp://HOST:PORT (port 1..65535), got {spec!r}")


@contextmanager
def connect(spec: str) -> Iterator[Client]:
    """A Dask client for ``local`` (one worker process per core), ``local:N`` (N worker processes,
    one thread each, bound to 127.0.0.1) or ``tcp://HOST:PORT`` (a running scheduler); a local
    cluster is shut down when the block ends."""
    workers = local_workers(spec)
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError:
        raise HgnerError("--cluster needs Dask: pip install 'hgner[dask]'") from None
    if workers is None:
        from .deadline import CONNECT_SECONDS, call_within

        try:  # a peer that accepts and never answers: an error after CONNECT_SECONDS, not a hang
            client = call_within(CONNECT_SECONDS, f"--cluster {spec}: no answer from a Dask scheduler within "
                                 f"{CONNECT_SECONDS:g} s", Client, spec, timeout="10s")
        except (OSError, ValueError, TypeError, MemoryError) as error:  # unreachable, garbage, or a bad address
            raise HgnerError(f"--cluster {spec}: cannot reach a Dask scheduler ({type(error).__name__}: "
                             f"{' '.join(str(error).split())[:120]})") from None
        try:
            yield client
        finally:
            _close(client)
        return
    # no dashboard; the scheduler's HTTP endpoints on a free port of 127.0.0.1, not on *:8787. Task
    # errors reach the client as exceptions; Dask's own log lines (heartbeats failing while a loaded
    # machine shuts the cluster down) are not the user's business
    http = {"dashboard": False, "dashboard_address": "127.0.0.1:0"}
    from .process import quiet_forks

    with quiet_forks(), dask.config.set({"distributed.worker.multiprocessing-method": LOCAL_START_METHOD}), \
            LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                         scheduler_kwargs=http, silence_logs=logging.CRITICAL) as cluster, Client(cluster) as client:
        yield client


# ----------------------------------------------------------------------------- the worker side


@dataclass(frozen=True)
class TagSettings:
    """What a worker needs to build a :class:`~hgner.tag.Tagger`: a shipped model's name or a model
    directory (absolute, so workers started elsewhere find it on a shared file system), the decoder
    and its settings."""

    model: str = DEFAULT_MODEL
    decoder: str = DEFAULT_DECODER
    graph: str = "chain"
    sweeps: int | None = None
    seed: int | None = None
    settings: tuple[tuple[str, Any], ...] = ()  # the decoder's own settings (--set NAME=VALUE)

    @classmethod
    def make(cls, model: str | Path = DEFAULT_MODEL, decoder: str | None = DEFAULT_DECODER, graph: str = "chain",
             sweeps: int | None = None, seed: int | None = None, settings: dict[str, Any] | None = None,
             warn: Callable[[str], None] = lambda message: None) -> TagSettings:
        """Settings checked here, before any task runs: the graph, the decoder and its settings (a
        ``decoder`` of None is the graph's default, with :func:`~hgner.tag.decoder_for_graph`'s note
        to ``warn``), the model directory."""
        from .model import model_directory

        decoder = check_tag_settings(decoder, graph, sweeps, seed, settings, None, warn)
        reference = model_reference(model_directory(model))
        return cls(reference, decoder, graph, sweeps, seed, tuple(sorted((settings or {}).items())))

    @classmethod
    def from_keywords(cls, model: str | Path, decoder: str, keywords: dict[str, Any]) -> TagSettings:
        """As :func:`hgner.load` takes them: ``graph``, ``sweeps``, ``seed`` and the decoder's own settings."""
        own = dict(keywords)
        graph, sweeps, seed = own.pop("graph", "chain"), own.pop("sweeps", None), own.pop("seed", None)
        return cls.make(model, decoder, graph, sweeps, seed, own)


_TAGGERS: dict[TagSettings, Tagger] = {}  # per worker process: one Tagger per settings


def worker_tagger(settings: TagSettings) -> Tagger:
    """This process's Tagger for ``settings``, built on first use."""
    tagger = _TAGGERS.get(settings)
    if tagger is None:
        tagger = _TAGGERS[settings] = Tagger(settings.model, settings.decoder, settings.graph, settings.sweeps,
                                             settings.seed, warn=lambda message: None, settings=dict(settings.settings))
    return tagger


def tag_text(tagger: Tagger, text: str) -> tuple[list[dict[str, Any]], int]:
    """The entities of one document as JSON objects, and its number of tokens."""
    entities, tokens = [], 0
    for group in tagger.tag_text(text):
        entities += [e.to_json() for e in group.entities]
        tokens += sum(len(s.tokens) for s in group.sentences)
    return entities, tokens


# ----------------------------------------------------------------------------- inputs and parts


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
                raise HgnerError(f"{argument}: an input folder that is, or is inside, the --out folder; "
                                 "choose another --out")
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


def _is_output_part(path: Path) -> bool:
    """A part file of an hgner job's output folder: a folder input leaves these out (an earlier
    job's output is not input)."""
    return _PART_NAME.fullmatch(path.name) is not None and (path.parent / MANIFEST).is_file()


def plan_parts(paths: list[str], text_column: str, part_bytes: int = PART_BYTES) -> list[list[Piece]]:
    """The job's parts, in input order: consecutive text files up to ``part_bytes`` (and
    :data:`PART_MAX_FILES`) together, JSONL files cut at line ends every ``part_bytes``, Parquet
    files one row group per part."""
    parts: list[list[Piece]] = []
    group: list[Piece] = []
    size = 0
    for path in paths:
        kind = input_kind(path)
        if kind == "text":
            length = os.path.getsize(path)
            if group and (size + length > part_bytes or len(group) >= PART_MAX_FILES):
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
        raise HgnerError(f"{path}: no column {text_column!r} (columns: {', '.join(names)}); see --text-column")
    pieces, first = [], 0
    for group in range(metadata.num_row_groups):
        pieces.append(Piece("parquet", path, group, 0, first))
        first += metadata.row_group(group).num_rows
    return pieces


PIECE_SPLITTERS: dict[str, Callable[[str, int, str], list[Piece]]] = {
    "jsonl": _jsonl_pieces, "parquet": _parquet_pieces}
"""Each record-file input kind's splitter into pieces of one part each, given the part size in
bytes and the text column (text files are not split: consecutive ones share a part)."""


def _read_text(piece: Piece, text_column: str) -> Iterator[tuple[str, str]]:
    yield piece.path, Input(piece.path, path=piece.path).read()


def _read_jsonl(piece: Piece, text_column: str) -> Iterator[tuple[str, str]]:
    with open(piece.path, "rb") as stream:
        stream.seek(piece.start)
        for number, raw in enumerate(stream.read(piece.stop - piece.start).splitlines(), piece.first):
            if raw.strip():
                yield f"{piece.path}:{number}", _jsonl_text(raw, text_column, piece.path, number)


def _read_parquet(piece: Piece, text_column: str) -> Iterator[tuple[str, str]]:
    table = _pyarrow_parquet().ParquetFile(piece.path).read_row_group(piece.start, columns=[text_column])
    for row, text in enumerate(table.column(text_column).to_pylist(), piece.first):
        if text is not None and not isinstance(text, str):
            raise HgnerError(f"{piece.path}: row {row}: column {text_column!r} holds {type(text).__name__}, "
                             "expected text")
        yield f"{piece.path}:{row}", text or ""


PIECE_READERS: dict[str, Callable[[Piece, str], Iterator[tuple[str, str]]]] = {
    "text": _read_text, "jsonl": _read_jsonl, "parquet": _read_parquet}
"""Each input kind's reader: ``(source, text)`` of every document in a piece, given the text column."""


def read_piece(piece: Piece, text_column: str) -> Iterator[tuple[str, str]]:
    """``(source, text)`` of every document in ``piece``."""
    return PIECE_READERS[piece.kind](piece, text_column)


def _jsonl_text(raw: bytes, text_column: str, path: str, number: int) -> str:
    try:
        record = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as error:
        raise HgnerError(f"{path}:{number}: not a JSON line ({error})") from None
    text = record.get(text_column) if isinstance(record, dict) else None
    if not isinstance(text, str):
        got = type(record).__name__ if not isinstance(record, dict) else \
            f"keys {', '.join(map(repr, record))}" if text_column not in record else type(text).__name__
        raise HgnerError(f"{path}:{number}: expected an object with a text field {text_column!r}, got {got}; "
                         "see --text-column")
    return text


# ----------------------------------------------------------------------------- tagging into a folder


@dataclass(frozen=True)
class Part:
    """One task of a job: its pieces and its output file's name."""

    name: str
    pieces: tuple[Piece, ...]


@dataclass(frozen=True)
class PartJob:
    """What every part task of a job shares."""

    settings: TagSettings
    out: str
    text_column: str = "text"
    include_text: bool = True
    part_format: str = "jsonl"


def marker_path(out: str | Path, part: Part) -> Path:
    return Path(out) / f"{Path(part.name).stem}.done.json"


def _file_digest(path: Path) -> dict[str, Any]:
    """``{"bytes", "sha256"}`` of a part file."""
    return {"bytes": path.stat().st_size, "sha256": file_sha256(path)}


def committed_counts(out: str | Path, part: Part) -> dict[str, int] | None:
    """The counts of a committed part: its marker's, when the part file is there with the size and
    sha256 the marker records; None otherwise (a part deleted or changed since is tagged again)."""
    marker, target = marker_path(out, part), Path(out) / part.name
    try:
        record = json.loads(marker.read_text(encoding="utf-8"))
        if target.is_file() and _file_digest(target) == {"bytes": record["bytes"], "sha256": record["sha256"]}:
            return {key: int(record[key]) for key in ("documents", "tokens", "entities")}
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def tag_part(job: PartJob, part: Part) -> dict[str, int]:
    """In a worker: tag one part into its file, then commit it with its marker (its counts, and the
    file's size and sha256); returns its counts. A part already committed (by a worker that died
    before reporting) is not redone."""
    marker = marker_path(job.out, part)
    counts = committed_counts(job.out, part)
    if counts is not None:
        return counts
    tagger = worker_tagger(job.settings)
    counts = {"documents": 0, "tokens": 0, "entities": 0}
    records = _part_records(tagger, job, part, counts)
    target = Path(job.out) / part.name
    PART_WRITERS[job.part_format](records, target)
    write_text(marker, json.dumps({**counts, **_file_digest(target)}) + "\n")
    return counts


def _write_jsonl_part(records: Iterable[dict[str, Any]], target: Path) -> None:
    with atomic_write(target) as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


def _write_parquet_part(records: Iterable[dict[str, Any]], target: Path) -> None:
    parquet = _pyarrow_parquet()  # a worker without pyarrow: the one-line error, not an ImportError
    import pyarrow

    table = pyarrow.Table.from_pylist(list(records))
    with atomic_write(target, binary=True) as out:
        parquet.write_table(table, out)


PART_WRITERS: dict[str, Callable[[Iterable[dict[str, Any]], Path], None]] = {
    "jsonl": _write_jsonl_part, "parquet": _write_parquet_part}
"""Each part format's writer: a part's records into its file, atomically (``--part-format``)."""
PART_REQUIREMENTS: dict[str, Callable[[], Any]] = {"parquet": _pyarrow_parquet}
"""The check, run before any task, that a part format's library is installed."""


def _part_records(tagger: Tagger, job: PartJob, part: Part, counts: dict[str, int]) -> Iterator[dict[str, Any]]:
    for piece in part.pieces:
        for source, text in read_piece(piece, job.text_column):
            entities, tokens = tag_text(tagger, text)
            counts["documents"] += 1
            counts["tokens"] += tokens
            counts["entities"] += len(entities)
            yield jsonl_record(source, text if job.include_text else None, entities)


def tag_to_folder(
    client: Client,
    inputs: list[str],
    out: str | Path,
    settings: TagSettings,
    *,
    text_column: str = "text",
    include_text: bool = True,
    part_format: str = "jsonl",
    part_bytes: int = PART_BYTES,
    pattern: str = DEFAULT_GLOB,
    progress: bool = False,
    warn: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Tag ``inputs`` (files, folders, globs; a folder gives its files matching ``pattern``, see
    :func:`find_inputs`) on ``client``'s cluster into parts in folder ``out``; returns the
    manifest. Parts committed by an earlier run of the same job are skipped. Before any task
    runs, ``warn`` gets the warning of ``hgner tag`` for text in another language than the
    model's (:func:`~hgner.tag.language_warning`, on the first words of the inputs)."""
    if part_format not in PART_WRITERS:
        raise HgnerError(f"part format: expected {' or '.join(PART_WRITERS)}, got {part_format!r}")
    PART_REQUIREMENTS.get(part_format, lambda: None)()
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise HgnerError(f"--out {out}: is a file, expected a folder")
    paths = find_inputs(inputs, exclude=out, pattern=pattern)
    parts = [Part(f"part-{i:05d}.{part_format}", tuple(pieces))
             for i, pieces in enumerate(plan_parts(paths, text_column, part_bytes))]
    if warn is not None:
        message = _language_warning(settings, parts, text_column)
        if message is not None:
            warn(message)
    job = PartJob(settings, str(out.resolve()), text_column, include_text, part_format)
    description = {
        "hgner_version": __version__,
        "inputs": _describe_inputs(inputs, paths),
        "text_column": text_column,
        "model": settings.model,
        "decoder": settings.decoder,
        "graph": settings.graph,
        "sweeps": settings.sweeps,
        "seed": settings.seed,
        "settings": dict(settings.settings),
        "include_text": include_text,
        "part_format": part_format,
        "part_bytes": part_bytes,
    }
    _claim_folder(out, description)
    manifest = {"job": description, "parts": [p.name for p in parts], "complete": False, "counts": None}
    write_text(out / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    counts = {p.name: committed_counts(out, p) for p in parts}
    pending = [p for p in parts if counts[p.name] is None]
    counts.update(_run_parts(client, job, pending, progress))
    for stale in out.glob(".part-*.part"):  # temporary files of workers that died mid-write
        stale.unlink(missing_ok=True)
    manifest.update(complete=True, counts={
        "parts": len(parts),
        "parts_this_run": len(pending),
        **{key: sum(c[key] for c in counts.values()) for key in ("documents", "tokens", "entities")},
    })
    write_text(out / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    return manifest


def _language_warning(settings: TagSettings, parts: list[Part], text_column: str) -> str | None:
    """:func:`~hgner.tag.language_warning` for the first words of ``parts``, read as ``hgner tag``
    reads them (the start of each document in turn), with the model's ``meta.json`` only."""
    from .model import model_directory, model_language, model_name, read_metadata

    words: list[str] = []
    documents = (text for part in parts for piece in part.pieces for _, text in read_piece(piece, text_column))
    for text in documents:
        if add_to_language_sample(words, text):
            break
    directory = model_directory(settings.model)
    metadata = read_metadata(directory)
    return language_warning(words, model_language(metadata), model_name(directory, metadata))


def _describe_inputs(arguments: list[str], paths: list[str]) -> dict[str, Any]:
    """The inputs as given, and how many files and bytes they named, with a sha256 of the listing
    (path, size, modification time of every file), so a changed input is a different job."""
    digest = hashlib.sha256()
    total = 0
    for path in paths:
        info = os.stat(path)
        total += info.st_size
        digest.update(f"{path}\t{info.st_size}\t{info.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
    return {"arguments": list(arguments), "files": len(paths), "bytes": total, "sha256": digest.hexdigest()}


def _claim_folder(out: Path, description: dict[str, Any]) -> None:
    """Create ``out``, or check that it holds this job's output (a resumed run), not another's."""
    manifest = out / MANIFEST
    if manifest.is_file():
        recorded = read_json(manifest, raises=HgnerError)
        check(recorded, "tag-manifest", manifest, raises=HgnerError)
        earlier = recorded["job"]
        if earlier != description:
            changed = sorted(k for k in {*description, *earlier} if earlier.get(k) != description.get(k))
            raise HgnerError(f"--out {out}: holds the output of another job (different {', '.join(changed)}); "
                             "choose another folder, or delete it to start again")
    elif out.is_dir() and any(out.iterdir()):
        raise HgnerError(f"--out {out}: folder is not empty and has no {MANIFEST}; choose another folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise HgnerError(f"--out {out}: cannot create ({error.strerror or error})") from None


def _run_parts(client: Client, job: PartJob, parts: list[Part], progress: bool) -> dict[str, dict[str, int]]:
    """Run the part tasks and wait for all; returns each part's counts by name. The first failing
    task's error stops the job."""
    from distributed import as_completed
    from tqdm import tqdm

    if not parts:
        return {}
    token = abs(hash((job, parts[0].name, len(parts))))
    futures = {client.submit(tag_part, job, part, key=f"hgner-tag-{part.name}-{token:x}", pure=False): part.name
               for part in parts}
    counts = {}
    try:
        with tqdm(total=len(parts), unit="part", disable=not progress, file=sys.stderr, leave=False) as bar:
            for future in _answered(client, as_completed(futures)):
                counts[futures[future]] = future.result()  # re-raises the task's error here
                bar.update(1)
    finally:
        _close(client, cancel=list(futures))
    return counts


def run_tag(args: Any) -> int:
    """``hgner tag --cluster SPEC INPUTS... --out DIR``: the CLI's entry (see :func:`tag_to_folder`)."""
    if not args.out:
        raise HgnerError("--cluster needs --out DIR (the folder for the output parts)")
    if not args.inputs:
        raise HgnerError("--cluster needs input files, folders or glob patterns")
    from .decoders.settings import parse_assignments

    def warn(message: str) -> None:
        print(f"hgner tag: warning: {message}", file=sys.stderr)

    settings = TagSettings.make(args.model, args.decoder, args.graph, args.sweeps, args.seed,
                                parse_assignments(args.set), warn)
    given = {key: value for key, value in (("text_column", args.text_column), ("part_format", args.part_format))
             if value is not None}  # options not given keep tag_to_folder's defaults
    with connect(args.cluster) as client:
        manifest = tag_to_folder(client, args.inputs, args.out, settings, pattern=args.glob,
                                 progress=sys.stderr.isatty(), warn=warn, **given)
    counts = manifest["counts"]
    print(f"hgner tag: {counted(counts['documents'], 'document')}, {counted(counts['tokens'], 'token')}, "
          f"{counted(counts['entities'], 'entity')} in {counted(counts['parts'], 'part')} "
          f"({counts['parts_this_run']} tagged now) in {args.out}", file=sys.stderr)
    return 0


# ----------------------------------------------------------------------------- the Python API


def _tag_texts(texts: Iterable[str], settings: TagSettings) -> list[dict[str, Any]]:
    tagger = worker_tagger(settings)
    return [{"text": text, "entities": tag_text(tagger, text)[0]} for text in texts]


def tag_bag(bag: Any, model: str | Path = DEFAULT_MODEL, decoder: str = DEFAULT_DECODER, **settings: Any) -> Any:
    """A ``dask.bag`` of texts -> a bag of records ``{"text", "entities"}`` in the same order
    (``settings``: ``graph``, ``sweeps``, ``seed``, as for :class:`~hgner.tag.Tagger`)."""
    checked = TagSettings.from_keywords(model, decoder, settings)
    return bag.map_partitions(_tag_texts, checked)


def _tag_frame(frame: Any, text_column: str, settings: TagSettings) -> Any:
    tagger = worker_tagger(settings)
    entities = [tag_text(tagger, text)[0] if isinstance(text, str) else [] for text in frame[text_column]]
    return frame.assign(entities=entities)


def tag_dataframe(ddf: Any, text_column: str = "text", model: str | Path = DEFAULT_MODEL,
                  decoder: str = DEFAULT_DECODER, **settings: Any) -> Any:
    """A ``dask.dataframe`` with a text column -> the same frame with an ``entities`` column (a list
    of entity objects per row; missing texts get none)."""
    import pandas

    if text_column not in ddf.columns:
        raise HgnerError(f"no column {text_column!r} (columns: {', '.join(map(str, ddf.columns))})")
    checked = TagSettings.from_keywords(model, decoder, settings)
    meta = ddf._meta.assign(entities=pandas.Series([], dtype=object))
    return ddf.map_partitions(_tag_frame, text_column, checked, meta=meta)


# ----------------------------------------------------------------------------- evaluate


def model_reference(directory: Path) -> str:
    """How a worker finds the model in ``directory``: a shipped model by name, any other by its
    absolute directory."""
    from .model import shipped_models_dir

    directory = directory.resolve()
    return directory.name if directory.parent == shipped_models_dir().resolve() else str(directory)


@functools.lru_cache(maxsize=4)
def _worker_scorer(reference: str, calibration: float, plan: EvaluationPlan) -> DocumentScorer:
    """A worker's scorer for ``plan``, built (model loaded with the driver's ``calibration``,
    kernels compiled) once per worker."""
    from .evaluation import DocumentScorer
    from .model import CrfModel

    return DocumentScorer(CrfModel.load(reference, calibration), plan)


def _score_batch(reference: str, calibration: float, plan: EvaluationPlan, documents: list[Document],
                 keep: bool) -> list[DocumentOutcome]:
    scorer = _worker_scorer(reference, calibration, plan)
    return [scorer(document, keep) for document in documents]


def score_documents(client: Client, model: CrfModel, plan: EvaluationPlan, documents: list[Document],
                    keep: bool) -> Iterator[DocumentOutcome]:
    """What :class:`~hgner.evaluation.DocumentScorer` gives for each document, computed in batches on
    the cluster's workers and yielded in document order."""
    if not documents:
        return
    from .deadline import CALL_SECONDS, call_within

    info = call_within(CALL_SECONDS, f"the Dask scheduler stopped answering (no reply within {CALL_SECONDS:g} s)",
                       client.scheduler_info)
    workers = max(1, len(info["workers"]))
    count = min(len(documents), EVALUATE_BATCHES_PER_WORKER * workers)
    bounds = [round(i * len(documents) / count) for i in range(count + 1)]
    reference = model_reference(model.directory)
    futures = [client.submit(_score_batch, reference, model.calibration, plan, documents[a:b], keep, pure=False)
               for a, b in zip(bounds, bounds[1:])]
    for future in futures:
        yield from _result(client, future)


def _answered(client: Client, completed: Iterator[Any]) -> Iterator[Any]:
    """The futures ``completed`` yields, while the scheduler answers: between two of them it is
    asked who it is at least every :data:`~hgner.deadline.CALL_SECONDS`, and one that does not
    answer in that time is an :class:`HgnerError` (a silent peer, not a hang)."""
    import queue

    from .deadline import CALL_SECONDS

    results: queue.Queue = queue.Queue()

    def pump() -> None:
        try:
            for future in completed:
                results.put(("future", future))
        except BaseException as error:  # noqa: BLE001  (handed to the waiting thread)
            results.put(("error", error))
        results.put(("done", None))

    import threading

    threading.Thread(target=pump, name="hgner-completed", daemon=True).start()
    while True:
        try:
            kind, value = results.get(timeout=CALL_SECONDS)
        except queue.Empty:
            _alive(client)
            continue
        if kind == "done":
            return
        if kind == "error":
            raise value
        yield value


def _result(client: Client, future: Any) -> Any:
    """``future.result()``, the scheduler asked who it is every :data:`~hgner.deadline.CALL_SECONDS`
    while it waits (see :func:`_answered`)."""
    from distributed import TimeoutError as DaskTimeout

    from .deadline import CALL_SECONDS

    while True:
        try:
            return future.result(timeout=CALL_SECONDS)
        except (DaskTimeout, TimeoutError):
            _alive(client)


def _alive(client: Client) -> None:
    """An :class:`HgnerError` unless the scheduler answers a request within
    :data:`~hgner.deadline.CALL_SECONDS`."""
    from .deadline import CALL_SECONDS, call_within

    call_within(CALL_SECONDS, f"the Dask scheduler at {client.scheduler.address} stopped answering (no reply "
                f"within {CALL_SECONDS:g} s)", client.sync, client.scheduler.identity)


def _close(client: Client, cancel: list[Any] | None = None) -> None:
    """Cancel ``cancel`` and close ``client``, each waiting at most :data:`~hgner.deadline.CALL_SECONDS`."""
    from .deadline import CALL_SECONDS, call_within

    try:
        if cancel:
            call_within(CALL_SECONDS, "cancel", client.cancel, cancel)
        elif cancel is None:
            call_within(CALL_SECONDS, "close", client.close)
    except HgnerError:
        pass
