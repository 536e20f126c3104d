"""A model's folder on disk: where models are found, ``meta.json`` (read, checked, written with its
``files`` map) and the files it seals, and writing a model folder atomically.

A model is a directory holding ``model.crfsuite`` (crfsuite's native file) and ``meta.json``
(labels, tag scheme, feature configuration, tokenizer, versions, training data checksum, scores).
No pickle anywhere.

**Where.** A model is named by its directory, or by a bare name: a shipped model
(:func:`shipped_models_dir`) or one saved in the data home's ``models/`` folder
(:func:`user_models_dir`; ``hgner train --out NAME`` saves there; a misspelt name is answered
with the closest one). A new model is never written into the installed package (a shipped
model's folder, ``models/``, ``hgner/``: :func:`model_target`) nor into a folder that is not an
hgner model's (:func:`check_model_target`).

**Never trusted.** ``meta.json`` is checked against ``hgner/schemas/meta.schema.json`` (unknown
top-level fields are allowed and ignored; the fields hgner reads are checked strictly), and its
``files`` map records the size and sha256 of every model file (:data:`MODEL_FILES` present in
the folder). Loading checks the seal first (:mod:`hgner.core.integrity`: every file's size and sha256,
``meta.json`` included, each file hashed once), then that the map agrees with the seal and records
every file the model needs, before any byte reaches crfsuite's C code: a damaged, truncated or
missing file is a one-line :class:`~hgner.core.errors.ModelError`, never a crash or silently wrong weights.
:func:`write_metadata` (re)writes the map; training, ``tools/build_models.py`` and
``tools/build_skip.py`` call it after writing files.

**Written atomically.** :func:`model_workspace` builds a model in a temporary folder beside ``out``
and swaps it in only when it is complete; a failed or interrupted training leaves the previous
model as it was. Files in ``out`` that are not model files (a README, notes) are carried over;
the previous model's files (stale ``skip.npz``/``skip.json`` included) go.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from ..core import integrity, schemes
from ..core.errors import ModelError, named
from ..core.fileio import exchange_paths, file_sha256, refuse_inputs, signals_deferred, umask, write_text
from ..core.validation import check, check_argument, read_json
from ..data.home import data_home
from ..features import TABLE_FILES, TRUECASE_FILE, WORD_FREQUENCY_FILE, FeatureConfig
from ..features.typecache import TYPES_FILE
from ..text.tokenizer import DEFAULT_LANGUAGE

MODEL_FILE = "model.crfsuite"
META_FILE = integrity.META_FILE
SKIP_FILES = ("skip.npz", "skip.json")  # the skip potential (hgner.crf.skip): arrays, settings
STARTS_FILE = "sentence_starts.crfsuite"  # the learned sentence starts (hgner.text.sentence_starts)
MODEL_FILES = (MODEL_FILE, *TABLE_FILES.values(), *SKIP_FILES, TYPES_FILE, STARTS_FILE)  # the files meta.json's map covers
SEALED_FILES = (META_FILE, *MODEL_FILES)  # the files the seal covers (hgner.core.integrity)
# the tables' files before they were stored as arrays: file -> (setting, what the table is)
_OLD_TABLE_FILES = {"outside_truecase.json": ("outside_truecase", "outside truecasing table"),
                    "word_clusters.json": ("word_clusters", "word clusters")}
# the settings that need a table from outside the corpus
_OUTSIDE_TABLES = ("gazetteer", "word_clusters", "outside_truecase", "capitalised_share", "vector_clusters")
MAX_META_BYTES = 2**20


def shipped_models_dir() -> Path:
    """Where the shipped models are: the installed ``hgner.models`` package data, or the
    top-level ``models/`` folder when running from a source checkout."""
    try:
        return Path(str(resources.files("hgner.models")))
    except ModuleNotFoundError:
        return Path(__file__).resolve().parents[2] / "models"


def builtin_models() -> list[str]:
    """Names of the models shipped with the package."""
    return _models_in(shipped_models_dir())


def _models_in(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if (p / META_FILE).is_file()) if root.is_dir() else []


def model_language(metadata: dict[str, Any]) -> str:
    """The language a model's ``meta.json`` records (English for a model that records none)."""
    return metadata.get("language", DEFAULT_LANGUAGE)


def model_name(directory: Path, metadata: dict[str, Any]) -> str:
    """A model's name: the one its ``meta.json`` records, else its directory's."""
    return metadata.get("name", directory.name)


def shipped_languages() -> dict[str, list[str]]:
    """The languages of the shipped models, each with its models' names (a model whose ``meta.json``
    does not read is left out: loading it says what is wrong; its other files are not read)."""
    return {language: list(names) for language, names in _languages_of(shipped_models_dir())}


@cache
def _languages_of(root: Path) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """:func:`shipped_languages` of the models in ``root``, read once per process (each server
    request's language check asks for them)."""
    languages: dict[str, list[str]] = {}
    for name in _models_in(root):
        try:
            language = model_language(read_metadata(root / name, every_file=False))
        except ModelError:
            continue
        languages.setdefault(language, []).append(name)
    return tuple((language, tuple(names)) for language, names in languages.items())


def model_advice(language: str) -> str:
    """What to use for text in ``language``: the shipped models for it, or ``hgner train``."""
    shipped = shipped_languages().get(language)
    if shipped:
        return f"for {language!r} text use {named('model')} {' or '.join(shipped)}"
    return f"no shipped model is for {language!r}: hgner train with {named('language')} {language} builds one"


def user_models_dir() -> Path:
    """The data home's ``models/`` folder: where ``hgner train --out NAME`` saves a model named
    without a folder, and where a bare model name is looked up after the shipped models."""
    return data_home() / "models"


def model_target(out: str | os.PathLike) -> Path:
    """Where a new model named ``out`` is written: a directory, or for a bare name that folder in
    :func:`user_models_dir`, where ``--model NAME`` finds it. A name a shipped model has is refused
    (the shipped model would hide the new one), as is an empty one."""
    check_argument(isinstance(out, (str, os.PathLike)) and str(out).strip() != "", "out",
                   "a model directory or name", out)
    if not is_bare_name(str(out)):
        _refuse_package_folder(Path(out))
        return Path(out)
    if str(out) in builtin_models():
        raise ModelError(f"{named('out')} {out}: a shipped model has this name and would hide the new one; choose "
                         f"another name, or give a directory (./{out})")
    return user_models_dir() / out


def _refuse_package_folder(out: Path) -> None:
    """A :class:`ModelError` when ``out`` is a shipped model's folder or lies inside the installed
    package (its ``models/`` included): a new model there would replace a shipped one, or be
    deleted with the package."""
    target = out.resolve()
    for root, what in ((shipped_models_dir().resolve(), "the shipped models' folder"),
                       (Path(__file__).resolve().parents[1], "the installed hgner package")):
        if target == root or root in target.parents:
            raise ModelError(f"{named('out')} {out}: inside {what} ({root}); refusing to write a model there "
                             f"({named('out')} my-model saves one named my-model into {user_models_dir()})")


def user_models() -> list[str]:
    """Names of the models in :func:`user_models_dir` (a shipped model's name hides one)."""
    root = user_models_dir()
    shipped = set(builtin_models())
    found = sorted(p.name for p in root.iterdir() if (p / META_FILE).is_file()) if root.is_dir() else []
    return [name for name in found if name not in shipped]


def is_bare_name(name_or_path: str | Path) -> bool:
    """Whether ``name_or_path`` names a model by name (no folder part), not by its directory."""
    text = str(name_or_path)
    return Path(text).name == text and text not in (".", "..")


def model_directory(name_or_path: str | Path) -> Path:
    """A model directory from a path, or from the name of a shipped model or of one in the data
    home's ``models/`` folder."""
    check_argument(isinstance(name_or_path, (str, os.PathLike)), "model", "a model name or directory", name_or_path)
    path = Path(name_or_path)
    if (path / META_FILE).is_file():
        return path
    if is_bare_name(name_or_path):  # a bare name: look among the shipped models, then the user's
        for root in (shipped_models_dir(), user_models_dir()):
            candidate = root / str(name_or_path)
            if (candidate / META_FILE).is_file():
                return candidate
    known = ", ".join(builtin_models()) or "none installed"
    saved = ", ".join(user_models())
    raise ModelError(f"model {str(name_or_path)!r}: not a model directory (no {META_FILE}) "
                     f"and not a shipped model{_did_you_mean(str(name_or_path))} (shipped: {known})"
                     + (f" nor one in {user_models_dir()} ({saved})" if saved else ""))


def _did_you_mean(name: str) -> str:
    """`` (did you mean 'en-conll03'?)`` for the model name closest to a misspelt ``name``, else nothing."""
    close = difflib.get_close_matches(Path(name).name, [*builtin_models(), *user_models()], n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def write_metadata(directory: Path, metadata: dict[str, Any], changed: Sequence[str] | None = None) -> None:
    """Write ``meta.json`` (atomically) with its ``files`` map (``{name: {"size", "sha256"}}`` of the
    model files, :data:`MODEL_FILES`, present in ``directory``): call it after adding, replacing or
    removing model files, naming them in ``changed``; the map's other entries are kept as they are
    (default: every model file is hashed again)."""
    directory = Path(directory)
    kept = {} if changed is None else {k: v for k, v in metadata.get("files", {}).items() if k not in changed}
    for name in MODEL_FILES if changed is None else changed:
        if (directory / name).is_file():
            kept[name] = {"size": (directory / name).stat().st_size, "sha256": file_sha256(directory / name)}
    metadata["files"] = {name: kept[name] for name in MODEL_FILES if name in kept}
    write_text(directory / META_FILE, json.dumps(metadata, indent=2, sort_keys=False, ensure_ascii=False) + "\n")
    integrity.seal(directory, SEALED_FILES)


def refresh_files(directory: str | Path, changed: Sequence[str] | None = None) -> None:
    """Recompute the ``files`` map of an existing model's ``meta.json`` for the files ``changed``
    (default: all; after ``skip.save`` or a script that rewrote a file). Only meta.json's JSON
    syntax is checked: this is how a model written by an older hgner, without the map, is sealed."""
    directory = Path(directory)
    write_metadata(directory, raw_metadata(directory), changed)


def raw_metadata(directory: Path) -> dict[str, Any]:
    """``meta.json``'s JSON object as it is, its seal and schema not checked (to seal it again)."""
    metadata = read_json(directory / META_FILE, MAX_META_BYTES)
    if not isinstance(metadata, dict):
        raise ModelError(f"{directory / META_FILE}: top level: expected a JSON object")
    return metadata


def read_metadata(directory: Path, every_file: bool = True) -> dict[str, Any]:
    """``meta.json`` of a model directory, checked against its schema after the model's seal
    (:func:`hgner.core.integrity.verify`: no model file changed since it was sealed), its ``files`` map
    matching the seal's record (so each file is hashed once per load, by the seal). Without
    ``every_file``, only ``meta.json`` is checked against the seal (what a model's metadata says,
    without loading the model)."""
    for old_file, (setting, what) in _OLD_TABLE_FILES.items():
        if (directory / old_file).is_file():
            raise ModelError(f"{directory / old_file}: the {what} in an older hgner's format (now {TABLE_FILES[setting]}): "
                             f"retrain the model with this file as its {what}")
    sealed = integrity.verify(directory, SEALED_FILES, None if every_file else [META_FILE])
    path = directory / META_FILE
    metadata = read_json(path, MAX_META_BYTES)
    check(metadata, "meta", path)
    for name, expected in metadata["files"].items():
        if name not in sealed:
            raise ModelError(f"{directory / name}: {META_FILE} records it but {integrity.SEAL_FILE} does not "
                             "(the model folder lacks it, or it was sealed without it)")
        if sealed[name] != {"size": expected["size"], "sha256": expected["sha256"]}:
            raise ModelError(f"{directory / name}: damaged: {META_FILE} records a size or sha256 other than the "
                             f"one {integrity.SEAL_FILE} records (and the file has)")
    problem = schemes.label_problem(metadata["labels"], metadata["scheme"])
    if problem is not None:
        raise ModelError(f"{path}: labels do not fit scheme {metadata['scheme']}: {problem}")
    return metadata


def check_resources(config: FeatureConfig, resources: Sequence[str], path: Path) -> None:
    """A :class:`ModelError` naming ``path`` (meta.json) when its ``resources`` do not go with its
    features: the gazetteer features need gazetteer.json, the word-cluster features
    word_clusters.npz, the vector-cluster features vector_clusters.npz (and so on for each table
    from outside the corpus), and nothing else reads them; truecase.json is read only by the truecase
    features (which may do without: a corpus can teach no table), word_frequency.npz only by the
    frequency features (which do without it in a model from before it, asking wordfreq)."""
    for setting in _OUTSIDE_TABLES:
        used, file_name = bool(getattr(config, setting)), TABLE_FILES[setting]
        if used != (file_name in resources):
            raise ModelError(f"{path}: features.{setting} is {str(used).lower()} but resources "
                             f"{'lack' if used else 'list'} {file_name}")
    if TRUECASE_FILE in resources and not config.truecase:
        raise ModelError(f"{path}: resources list {TRUECASE_FILE} but features.truecase is false")
    if WORD_FREQUENCY_FILE in resources and not config.frequency:
        raise ModelError(f"{path}: resources list {WORD_FREQUENCY_FILE} but features.frequency is empty")


def verify_files(directory: Path, metadata: dict[str, Any]) -> None:
    """Check that the files the model needs are recorded in ``metadata["files"]`` (whose entries
    :func:`read_metadata` has matched against the seal, which checked the files themselves); a
    :class:`ModelError` otherwise."""
    for name in [MODEL_FILE, *metadata.get("resources", [])]:
        if name not in metadata["files"]:
            raise ModelError(f"{directory / META_FILE}: files: {name} is not recorded (the model needs it; "
                             "a model written by an older hgner: retrain it)")


def check_model_target(out: Path, inputs: Iterable[str | Path | None] = ()) -> None:
    """A :class:`ModelError` unless ``out`` can become a model directory: missing, an empty
    folder, or a writable hgner model folder (:func:`hgner.core.integrity.is_model_folder`; a
    folder whose ``meta.json`` is another program's is never written), which is replaced, keeping
    files that are not model files, and none of whose model files is one of ``inputs`` (the files
    training reads; see :func:`~hgner.core.fileio.refuse_inputs`)."""
    inputs = list(inputs)
    for name in (META_FILE, *MODEL_FILES):
        refuse_inputs(out / name, inputs, named("out"))
    if out.is_symlink() or out.exists():
        if not out.is_dir():
            raise ModelError(f"{out}: exists and is not a directory; expected a model directory to write")
        if not stat.S_IMODE(out.stat().st_mode) & stat.S_IWUSR:
            raise ModelError(f"{out}: the model directory is read-only; refusing to replace it")
        if any(out.iterdir()) and not integrity.is_model_folder(out):
            found = f"its {META_FILE} is not an hgner model's" if (out / META_FILE).exists() else f"no {META_FILE}"
            raise ModelError(f"{out}: exists and is not an hgner model folder ({found}); refusing to write "
                             "a model among its files (give a new or empty folder)")
    parent = out.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise ModelError(f"{out}: cannot create the model directory ({parent} is not a writable folder)")


@contextmanager
def model_workspace(out: Path) -> Iterator[Path]:
    """A temporary folder beside ``out`` to build a model in; when the block succeeds it becomes
    ``out`` (see :func:`_swap_in`), when it fails or is interrupted it is deleted."""
    work = None
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with signals_deferred():  # (a signal between creating the folder and naming it would leave it behind)
            work = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".part", dir=out.parent))
        work.chmod(0o777 & ~umask())  # mkdtemp's folder is private; a model directory is made as mkdir makes one
        yield work
        _swap_in(work, out)
    except OSError as error:
        if work is None:
            raise ModelError(f"{out}: cannot create the model directory ({error.strerror or error})") from None
        shutil.rmtree(work, ignore_errors=True)
        raise ModelError(f"{out}: cannot write the model ({error.strerror or error})") from None
    except BaseException:
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
        raise


def _swap_in(work: Path, out: Path) -> None:
    """Make the complete model in ``work`` the directory ``out``. An existing ``out`` is swapped
    with ``work`` in one step where the system can (Linux's ``RENAME_EXCHANGE``), else renamed
    aside first, with signals held back between the two renames; its files that are not model
    files are moved into the new model (unless the new model has one of that name), its model
    files are deleted with it. On failure the previous ``out`` is restored."""
    if not out.exists():
        os.rename(work, out)
        return
    check_model_target(out)
    with signals_deferred():  # SIGINT/SIGTERM/SIGHUP wait until the swap and the carrying over are done
        if exchange_paths(work, out):  # one step: out holds the old model, then the new one, never nothing
            old = work
        else:  # two renames
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
            os.rmdir(old)
            os.rename(out, old)
            try:
                os.rename(work, out)
            except BaseException:
                os.rename(old, out)
                raise
        ours = {META_FILE, *MODEL_FILES, integrity.SEAL_FILE, *_OLD_TABLE_FILES}  # an older model's tables go too
        for entry in list(old.iterdir()):
            if entry.name not in ours and not (out / entry.name).exists():
                os.rename(entry, out / entry.name)  # the user's file: carried over, never deleted
        shutil.rmtree(old)
