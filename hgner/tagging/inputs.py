"""What ``hgner tag`` reads: each input one document (a file, text given as an argument, or
standard input), and the files of a folder."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath

from ..core.errors import HgnerError, named
from ..core.fileio import not_a_file, read_input
from .encoding import decode_input
from .records import DEFAULT_TEXT_FIELD, record_reader

DEFAULT_GLOB = "*.txt"  # files read from a directory input
MAX_GLOB_PARTS = 32  # folder levels a glob pattern may name (pathlib's matching recurses per part)
_PATH_SUFFIXES = (".txt", ".text", ".md", ".rst", ".conll", ".jsonl", ".ndjson", ".csv")


@dataclass(frozen=True)
class Input:
    """One document to tag: a file, standard input (``path == "-"``), or literal text. ``relative``
    is a file's path below the directory argument it was found in (its name when given directly)."""

    source: str
    path: str | None = None
    text: str | None = None
    relative: str | None = None
    id: str | int | None = None  # a record's id (JSONL, CSV: records.ID_FIELD)
    record_file: str | None = None  # the JSONL or CSV file of a record (its source: FILE:LINE)

    @property
    def name(self) -> str:
        """A short name for headings: the file name, ``FILE:LINE`` of a record, ``text`` or ``standard input``."""
        if self.path is None:
            return "text" if self.record_file is None else self.source
        return "standard input" if self.path == "-" else Path(self.path).name

    def read(self) -> str:
        if self.text is not None:
            return self.text
        if self.path == "-":
            raw = sys.stdin.buffer.read()
        else:
            try:
                raw = read_input(str(self.path))
            except OSError as error:
                raise HgnerError(f"{self.path}: cannot read ({error.strerror or error})") from None
        return decode_input(raw, self.source)

    @property
    def file(self) -> str | None:
        """The file read for this input: its own, or its record's; None for text and standard input."""
        return self.record_file if self.path in (None, "-") else self.path

    def size(self) -> int:
        """Bytes to tag, for the progress bar (0 when unknown: standard input)."""
        if self.text is not None:
            return len(self.text.encode("utf-8"))
        return 0 if self.path in (None, "-") else os.path.getsize(str(self.path))


def _looks_like_path(argument: str) -> bool:
    return not any(c.isspace() for c in argument) and ("/" in argument or argument.endswith(_PATH_SUFFIXES))


def check_glob(pattern: str) -> str:
    """``pattern`` when it is a ``--glob`` pattern inside a folder (``*.txt``, ``news/*.txt``), an
    :class:`HgnerError` when it is empty, could reach outside the folder (absolute, or with a
    ``..`` part: a file found there would have no place in the output folder) or names more than
    :data:`MAX_GLOB_PARTS` levels."""
    path = PurePath(pattern)
    if not pattern or path.is_absolute() or ".." in path.parts or len(path.parts) > MAX_GLOB_PARTS:
        raise HgnerError(f"glob pattern {pattern!r}: expected a pattern of file names inside the folder, such as "
                         f"{DEFAULT_GLOB!r} or 'news/*.txt' (not absolute, no '..', at most {MAX_GLOB_PARTS} parts)")
    if any("**" in part and part != "**" for part in path.parts):  # as pathlib's glob refuses them
        raise HgnerError(f"glob pattern {pattern!r}: '**' must be a whole part of the pattern, as in '**/*.txt'")
    return pattern


def folder_files(directory: str | Path, patterns: str | Sequence[str] = DEFAULT_GLOB,
                 exclude: str | Path | None = None) -> list[Path]:
    """The files a folder input gives, for ``hgner tag`` and ``hgner tag --cluster`` alike: those
    below ``directory``, recursively, that match a pattern (``--glob``; ``--cluster`` adds the
    JSONL and Parquet patterns), sorted by path. Hidden ones (a name starting with ``.``, or below
    such a folder inside ``directory``) and ``exclude``'s tree are left out. An
    :class:`HgnerError` when there is none."""
    root = Path(directory)
    patterns = tuple(map(check_glob, (patterns,) if isinstance(patterns, str) else patterns))
    skip = Path(exclude).resolve() if exclude is not None else None
    inside_skip = os.path.join(skip, "") if skip is not None else None  # the prefix of the paths in exclude's tree
    for problem in _unlistable_folders(root):  # rglob skips them without a word
        where = Path(problem.filename or root)
        if not any(part.startswith(".") for part in where.relative_to(root).parts if where != root) \
                and (skip is None or skip != where.resolve() and skip not in where.resolve().parents):
            raise HgnerError(f"{where}: cannot list the folder ({problem.strerror or problem}); its files would be "
                             "left out")
    real_folders: dict[Path, str] = {}
    found = sorted({p for pattern in patterns for p in root.rglob(pattern) if p.is_file()
                    and not any(part.startswith(".") for part in p.relative_to(root).parts)
                    and (inside_skip is None or not _real_path(p, real_folders).startswith(inside_skip))})
    if not found:
        raise HgnerError(f"{directory}: a directory with no files matching {' or '.join(map(repr, patterns))} "
                         f"(see {named('glob')})")
    return found


def _real_path(path: Path, real_folders: dict[Path, str]) -> str:
    """``os.path.realpath(path)``, with each folder's real path found once in ``real_folders`` (a
    folder of thousands of files is resolved once, not once per file)."""
    if path.is_symlink():
        return os.path.realpath(path)
    folder = real_folders.get(path.parent)
    if folder is None:
        folder = real_folders[path.parent] = os.path.realpath(path.parent)
    return os.path.join(folder, path.name)


def _unlistable_folders(root: Path) -> list[OSError]:
    """The errors listing ``root``'s folders gave (unreadable ones), walking as ``rglob`` does."""
    problems: list[OSError] = []
    for _ in os.walk(root, onerror=problems.append):
        pass
    return problems


def directory_inputs(directory: str, pattern: str = DEFAULT_GLOB, text_field: str = DEFAULT_TEXT_FIELD) -> list[Input]:
    """The inputs of a folder: those of its :func:`folder_files` (:func:`file_inputs`)."""
    root = Path(directory)
    return [i for p in folder_files(root, pattern) for i in file_inputs(str(p), str(p.relative_to(root)), text_field)]


def file_inputs(path: str, relative: str, text_field: str = DEFAULT_TEXT_FIELD) -> list[Input]:
    """The inputs of a file: itself, or one per record of a JSONL or CSV file (:mod:`~hgner.tagging.records`)."""
    reader = record_reader(path)
    if reader is None:
        return [Input(path, path=path, relative=relative)]
    return [Input(r.source, text=r.text, id=r.id, record_file=path) for r in reader(path, text_field)]


def resolve_inputs(arguments: list[str], reading: str = "auto", pattern: str = DEFAULT_GLOB,
                   text_field: str = DEFAULT_TEXT_FIELD) -> list[Input]:
    """Inputs from positional arguments. ``reading`` is ``auto`` (an existing file is read as a file,
    a JSONL or CSV file as its records, their text in ``text_field``,
    an existing directory gives its files matching ``pattern``, as :func:`folder_files` finds them; a missing path that
    looks like one, with a ``/`` or a ``.txt``-like suffix and no spaces, is an error; anything else
    is text), ``text`` or ``files``. No argument, or ``-``, is standard input."""
    if not arguments:
        return [Input("<stdin>", path="-")]
    inputs = []
    for argument in arguments:
        if argument == "-" and reading != "text":
            inputs.append(Input("<stdin>", path="-"))
        elif reading == "text" or (reading == "auto" and not os.path.exists(argument) and not _looks_like_path(argument)):
            inputs.append(Input("<text>", text=argument))
        elif os.path.isdir(argument):
            inputs += directory_inputs(argument, pattern, text_field)
        elif os.path.isfile(argument):
            inputs += file_inputs(argument, Path(argument).name, text_field)
        else:
            hint = "" if reading == "files" else f" (use {named('text')} to tag the argument itself)"
            raise HgnerError(f"{argument if argument.strip() else repr(argument)}: {not_a_file(argument)}{hint}")
    return inputs
