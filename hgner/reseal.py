"""``python -m hgner.reseal MODEL_DIR...``: seal model folders (after building or editing one by
hand), each only once it loads with every check; see :mod:`hgner.core.integrity`."""

from __future__ import annotations

import sys
from pathlib import Path

from .core import integrity
from .core.errors import HgnerError
from .crf.model import CrfModel
from .crf.modelfiles import refresh_files


def reseal(directory: Path) -> None:
    """Seal the model in ``directory`` as it is now: its ``files`` map and seal recomputed, then
    the model loaded with every check; the seal is removed again when it does not load."""
    refresh_files(directory)
    try:
        CrfModel.load(directory)
    except BaseException:
        (directory / integrity.SEAL_FILE).unlink(missing_ok=True)
        raise


def main(argv: list[str] | None = None) -> int:
    directories = sys.argv[1:] if argv is None else argv
    if not directories:
        print("usage: python -m hgner.reseal MODEL_DIR...", file=sys.stderr)
        return 2
    for directory in directories:
        try:
            reseal(Path(directory))
        except HgnerError as error:
            print(f"hgner.reseal: error: {error}", file=sys.stderr)
            return 2
        print(f"sealed {directory}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
