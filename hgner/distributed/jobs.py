"""``hgner tag --cluster``: a job tags its inputs into part files in a folder, one Dask task per
part, each part committed by a marker file, so that rerunning the job resumes it (see the package
docstring)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from ..core.errors import HgnerError, named, warn
from ..core.fileio import atomic_write, file_sha256, write_text
from ..core.integrity import META_FILE, verify
from ..core.validation import check, read_json
from ..core.version import __version__
from ..core.wording import counted
from ..crf.modelfiles import SEALED_FILES, model_directory, model_language, model_name, read_metadata
from ..tagging.inputs import DEFAULT_GLOB
from ..tagging.settings import TagSettings
from ..tagging.tagger import Tagger, add_to_language_sample, language_warning
from ..tagging.writers import jsonl_record
from .connect import answered, close
from .inputs import MANIFEST, PART_BYTES, Piece, _pyarrow_parquet, find_inputs, plan_parts, read_piece
from .workers import for_workers, tag_texts, worker_tagger

if TYPE_CHECKING:
    from distributed import Client


LOCK_FILE = ".hgner-tag.lock"  # held by the job writing into the folder
_PART_FILE = re.compile(r"part-\d{5}\.(?:jsonl|parquet|done\.json)")


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
"""Each part format's writer: a part's records into its file, atomically (the ``part_format``)."""
PART_REQUIREMENTS: dict[str, Callable[[], Any]] = {"parquet": _pyarrow_parquet}
"""The check, run before any task, that a part format's library is installed."""


def _part_records(tagger: Tagger, job: PartJob, part: Part, counts: dict[str, int]) -> Iterator[dict[str, Any]]:
    documents = [document for piece in part.pieces for document in read_piece(piece, job.text_column)]
    for document, (entities, tokens) in zip(documents, tag_texts(tagger, (d.text for d in documents))):
        counts["documents"] += 1
        counts["tokens"] += tokens
        counts["entities"] += len(entities)
        yield jsonl_record(document.source, document.text if job.include_text else None, entities, document.id)


def tag_to_folder(client: Client, inputs: list[str], out: str | Path, settings: TagSettings, *,
                  text_column: str = "text", include_text: bool = True, part_format: str = "jsonl",
                  part_bytes: int = PART_BYTES, pattern: str = DEFAULT_GLOB, progress: bool = False) -> dict[str, Any]:
    """Tag ``inputs`` (files, folders, globs; a folder gives its files matching ``pattern``, see
    :func:`~hgner.distributed.inputs.find_inputs`) on ``client``'s cluster into parts in folder
    ``out``; returns the manifest. Parts committed by an earlier run of the same job are skipped.
    Before any task runs, text in another language than the model's is a warning, as in ``hgner
    tag`` (:func:`~hgner.tagging.tagger.language_warning`, on the first words of the inputs)."""
    if part_format not in PART_WRITERS:
        raise HgnerError(f"{named('part_format')}: expected {' or '.join(PART_WRITERS)}, got {part_format!r}")
    PART_REQUIREMENTS.get(part_format, lambda: None)()
    settings = for_workers(settings)
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise HgnerError(f"{named('out')} {out}: is a file, expected a folder")
    paths = find_inputs(inputs, exclude=out, pattern=pattern)
    parts = [Part(f"part-{i:05d}.{part_format}", tuple(pieces))
             for i, pieces in enumerate(plan_parts(paths, text_column, part_bytes))]
    message = _language_warning(settings, parts, text_column)
    if message is not None:
        warn(message)
    job = PartJob(settings, str(out.resolve()), text_column, include_text, part_format)
    if not out.exists():
        _create(out)
    description = {"hgner_version": __version__, "inputs": _describe_inputs(inputs, paths), "text_column": text_column,
                   **job_settings(settings), "model_files": _model_files(settings), "include_text": include_text,
                   "part_format": part_format, "part_bytes": part_bytes}
    with _holding(out):
        return _run_job(client, out, job, parts, description, progress)


def _run_job(client: Client, out: Path, job: PartJob, parts: list[Part], description: dict[str, Any],
             progress: bool) -> dict[str, Any]:
    """:func:`tag_to_folder` once its folder is held: claim it, run the parts not committed yet, and
    write the manifest (with each part's counts, which a resumed run checks the markers against)."""
    recorded = _claim_folder(out, description, parts)
    counts = {p.name: _checked_counts(out, p, recorded) for p in parts}
    manifest: dict[str, Any] = {"job": description, "parts": [p.name for p in parts], "complete": False,
                                "counts": None, "part_counts": recorded}
    write_text(out / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    pending = [p for p in parts if counts[p.name] is None]
    counts.update(_run_parts(client, job, pending, progress))
    for stale in out.glob(".part-*.part"):  # temporary files of workers that died mid-write
        stale.unlink(missing_ok=True)
    totals = {key: sum(c[key] for c in counts.values() if c is not None) for key in ("documents", "tokens", "entities")}
    manifest.update(complete=True, counts={"parts": len(parts), "parts_this_run": len(pending), **totals},
                    part_counts=counts)
    write_text(out / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    return manifest


_RECORDED = ("model", "decoder", "graph", "sweeps", "seed", "decoder_settings")  # always in the manifest


def job_settings(settings: TagSettings) -> dict[str, Any]:
    """The tagging settings as the manifest records them: the model, decoder, graph, sweeps, seed
    and decoder settings (as ``settings``), and any other field given another value than its default."""
    recorded = {}
    for item in fields(settings):
        value = getattr(settings, item.name)
        if item.name in _RECORDED or value != TagSettings.__dataclass_fields__[item.name].default:
            recorded["settings" if item.name == "decoder_settings" else item.name] = (
                dict(value) if item.name == "decoder_settings" else str(value) if item.name == "model" else value)
    return recorded


def _language_warning(settings: TagSettings, parts: list[Part], text_column: str) -> str | None:
    """:func:`~hgner.tag.language_warning` for the first words of ``parts``, read as ``hgner tag``
    reads them (the start of each document in turn), with the model's ``meta.json`` only."""
    words: list[str] = []
    documents = (record.text for part in parts for piece in part.pieces for record in read_piece(piece, text_column))
    for text in documents:
        if add_to_language_sample(words, text):
            break
    directory = model_directory(settings.model)
    metadata = read_metadata(directory)
    return language_warning(words, model_language(metadata), model_name(directory, metadata))


def _model_files(settings: TagSettings) -> dict[str, str]:
    """The sha256 of each of the model's files, as its seal records them (its ``meta.json``
    checked against it): a model folder replaced between two runs is another job."""
    sealed = verify(model_directory(settings.model), SEALED_FILES, [META_FILE])
    return {name: entry["sha256"] for name, entry in sorted(sealed.items())}


def _describe_inputs(arguments: list[str], paths: list[str]) -> dict[str, Any]:
    """The inputs as given, and how many files and bytes they named, with a sha256 of the listing
    (path, size and sha256 of every file's content), so a changed input is a different job, even
    with its size and modification time kept (``cp -p``)."""
    digest = hashlib.sha256()
    total = 0
    for path in paths:
        size = os.path.getsize(path)
        total += size
        digest.update(f"{path}\t{size}\t{file_sha256(path)}\n".encode("utf-8", "surrogateescape"))
    return {"arguments": list(arguments), "files": len(paths), "bytes": total, "sha256": digest.hexdigest()}


def _claim_folder(out: Path, description: dict[str, Any], parts: list[Part]) -> dict[str, Any]:
    """Check that ``out`` holds this job's output (a resumed run), not another's, nor part files
    that the job would not write; returns the part counts an earlier run recorded (none: {})."""
    manifest = out / MANIFEST
    if not manifest.is_file():
        if any(p.name != LOCK_FILE for p in out.iterdir()):
            raise HgnerError(f"{named('out')} {out}: folder is not empty and has no {MANIFEST}; choose another folder")
        return {}
    recorded = read_json(manifest, raises=HgnerError)
    check(recorded, "tag-manifest", manifest, raises=HgnerError)
    earlier = recorded["job"]
    if earlier != description:
        changed = sorted(k for k in {*description, *earlier} if earlier.get(k) != description.get(k))
        raise HgnerError(f"{named('out')} {out}: holds the output of another job (different {', '.join(changed)}); "
                         "choose another folder, or delete it to start again")
    expected = {name for p in parts for name in (p.name, marker_path(out, p).name)}
    stray = sorted(p.name for p in out.iterdir() if _PART_FILE.fullmatch(p.name) and p.name not in expected)
    if stray:
        raise HgnerError(f"{out / stray[0]}: a part file that this job does not write ({counted(len(stray), 'such file')} "
                         f"in {named('out')} {out}); remove it to resume the job")
    counts = recorded.get("part_counts")
    return counts if isinstance(counts, dict) else {}


def _create(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise HgnerError(f"{named('out')} {out}: cannot create ({error.strerror or error})") from None


def _checked_counts(out: Path, part: Part, recorded: dict[str, Any]) -> dict[str, int] | None:
    """A committed part's counts (:func:`committed_counts`), refused when they are not counts,
    do not match the documents its file holds, or differ from those the manifest recorded."""
    counts = committed_counts(out, part)
    if counts is None:
        return None
    target = Path(out) / part.name
    problem = None
    if any(value < 0 for value in counts.values()):
        problem = "negative counts"
    elif counts["documents"] != _documents_in(target):
        problem = f"{counts['documents']} documents, but {part.name} holds {_documents_in(target)}"
    elif recorded.get(part.name) not in (None, counts):
        problem = f"counts other than the ones {MANIFEST} recorded"
    if problem is not None:
        raise HgnerError(f"{marker_path(out, part)}: {problem}; delete it and {part.name} to tag the part again")
    return counts


def _documents_in(target: Path) -> int:
    """The records of a part file."""
    if target.suffix == ".parquet":
        return int(_pyarrow_parquet().ParquetFile(target).metadata.num_rows)
    with open(target, "rb") as stream:
        return sum(1 for line in stream if line.strip())


@contextmanager
def _holding(out: Path) -> Iterator[None]:
    """Hold ``out`` for this job (an exclusive lock on its :data:`LOCK_FILE`, released when the
    process ends however it ends): another job on the same folder is refused."""
    try:
        stream = open(out / LOCK_FILE, "a+b")  # noqa: SIM115  (held open for the job)
    except OSError as error:
        raise HgnerError(f"{named('out')} {out}: cannot write ({error.strerror or error})") from None
    with stream:
        try:
            fcntl.flock(stream.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise HgnerError(f"{named('out')} {out}: another job is tagging into this folder (it holds "
                             f"{out / LOCK_FILE}); wait for it to end, or choose another folder") from None
        yield


def _run_parts(client: Client, job: PartJob, parts: list[Part], progress: bool) -> dict[str, dict[str, int]]:
    """Run the part tasks and wait for all; returns each part's counts by name. The first failing
    task's error stops the job."""
    from distributed import as_completed  # (Dask loads with the first job)

    if not parts:
        return {}
    token = abs(hash((job, parts[0].name, len(parts))))
    futures = {client.submit(tag_part, job, part, key=f"hgner-tag-{part.name}-{token:x}", pure=False): part.name
               for part in parts}
    counts = {}
    try:
        with tqdm(total=len(parts), unit="part", disable=not progress, file=sys.stderr, leave=False) as bar:
            for future in answered(client, as_completed(futures)):
                counts[futures[future]] = future.result()  # re-raises the task's error here
                bar.update(1)
    finally:
        close(client, cancel=list(futures))
    return counts
