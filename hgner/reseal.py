"""``python -m hgner.reseal MODEL_DIR...``: seal model folders (after building or editing one by
hand), each only once it loads with every check; see :mod:`hgner.core.integrity`.

The model is sealed and loaded as a copy first (its files linked, or copied, into a temporary
folder): only a model that loads there, its sentence starts and skip potential included, has its
``meta.json`` and ``seal.json`` replaced, both together with signals held back. A model that does
not load, an error or Ctrl-C leaves the folder as it was (its old seal too): one line, exit
status 2, or 130 after a signal.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

from .core import integrity, process
from .core.errors import HgnerError, ModelError
from .core.fileio import atomic_write, signals_deferred
from .crf import skip
from .crf.model import CrfModel
from .crf.modelfiles import META_FILE, MODEL_FILES, SKIP_FILES, raw_metadata, write_metadata

PROGRAM = "hgner.reseal"


def reseal(directory: Path) -> None:
    """Seal the model in ``directory`` as it is now: its ``files`` map and seal recomputed and
    the model loaded with every check in a temporary copy; then, only if it loads, the folder's
    ``meta.json`` and seal replaced by the copy's. A :class:`ModelError` otherwise, the folder
    left as it was."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ModelError(f"{directory}: not a model folder ({'not a directory' if directory.exists() else 'no such directory'})")
    metadata = raw_metadata(directory)
    with tempfile.TemporaryDirectory(prefix="hgner-reseal-") as scratch:
        trial = Path(scratch) / directory.name
        trial.mkdir()
        for name in MODEL_FILES:
            if os.path.lexists(directory / name):
                _place(directory / name, trial / name)
        try:
            write_metadata(trial, metadata)
            load_fully(trial)
        except ModelError as error:  # named by the folder given, not the trial copy's
            raise ModelError(str(error).replace(str(trial), str(directory))) from None
        with signals_deferred():  # the two files replaced together, never one without the other
            for name in (META_FILE, integrity.SEAL_FILE):
                with atomic_write(directory / name, binary=True) as out:
                    out.write((trial / name).read_bytes())


def _place(source: Path, target: Path) -> None:
    """``source`` in the trial folder: a hard link (a symbolic link stays one, for the seal to
    refuse), else a copy of a regular file; anything else is a :class:`ModelError`."""
    try:
        os.link(source, target, follow_symlinks=False)
        return
    except OSError:
        pass
    try:
        shutil.copyfile(source, target, follow_symlinks=False)
    except (OSError, shutil.SpecialFileError) as error:
        raise ModelError(f"{source}: cannot read to seal ({getattr(error, 'strerror', None) or error})") from None


def load_fully(directory: Path) -> CrfModel:
    """The model in ``directory`` loaded as tagging loads it: weights, tables, the learned sentence
    starts and, when it has one, the skip potential; a :class:`ModelError` when any does not load."""
    model = CrfModel.load(directory)
    _ = model.sentence_starts
    if any(name in model.metadata["files"] for name in SKIP_FILES):
        skip.load(model)
    return model


def main(argv: list[str] | None = None) -> int:
    """Seal each folder named; exit status 0, 2 on an error, 130/143/129 after a signal."""
    directories = sys.argv[1:] if argv is None else argv
    if not directories:
        print(f"usage: python -m {PROGRAM} MODEL_DIR...", file=sys.stderr)
        return 2
    previous = process.install(PROGRAM)
    try:
        for directory in directories:
            reseal(Path(directory))
            print(f"sealed {directory}")
    except HgnerError as error:
        print(f"{PROGRAM}: error: {error}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, process.Terminated) as error:
        what, status = process.describe(process.signal_of(error) or signal.SIGINT)
        print(f"{PROGRAM}: {what}; {directory} left as it was", file=sys.stderr)
        return status
    finally:
        process.restore(previous)
    return 0


if __name__ == "__main__":
    sys.exit(process.run(lambda: main))
