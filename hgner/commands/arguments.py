"""What the command parsers share: argparse value types, ``--set NAME=VALUE``, and the one table
that names the settings objects' fields as flags (:data:`FLAGS`), so that library errors, which
name fields (:func:`hgner.core.errors.field`), read as the command line's own."""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

from ..core.errors import HgnerError
from ..core.schemes import normalize_scheme

FLAGS = {
    "c1": "--c1", "c2": "--c2", "corpus": "--corpus", "text": "--text", "calibration": "--calibration",
    "cluster": "--cluster", "decoder": "--decoder",
    "decoder_settings": "--set", "decoders": "--decoders", "dev": "--dev", "documents": "--documents",
    "drop_types": "--drop-type", "format": "--format", "gazetteer": "--gazetteer", "glob": "--glob", "graph": "--graph",
    "input": "--input", "jobs": "-j", "json": "--json", "language": "--lang", "layout": "--layout",
    "lowercase_clusters": "--lowercase-clusters", "max_iterations": "--max-iterations",
    "min_confidence": "--min-confidence", "mode": "--mode", "model": "--model", "model_scheme": "--model-scheme",
    "offline": "--offline", "out": "--out", "output": "-o", "part_format": "--part-format", "plot": "--plot",
    "predictions": "--predictions", "scheme": "--scheme", "seed": "--seed", "seeds": "--seeds", "settings": "--set",
    "sweeps": "--sweeps", "text_column": "--text-column", "train": "--train", "word_clusters": "--word-clusters",
}
"""Settings field -> the flag that gives it, where it is not ``--`` and the field with ``-`` for ``_``
(every command's; a field means the same everywhere)."""


class _Flags(dict):
    """:data:`FLAGS`, and ``--name-with-dashes`` for a field it does not list (a new settings field
    is a flag of that name)."""

    def get(self, key: str, default: Any = None) -> Any:
        return super().get(key) or f"--{key.replace('_', '-')}"


@cache
def flag_names() -> dict[str, str]:
    """Every settings field name -> the flag that gives it."""
    return _Flags(FLAGS)

OFFLINE_HELP = ("never download a missing corpus (as HGNER_OFFLINE=1): use the data home, or copy from HGNER_MIRROR "
                "when it is a local folder")


def checked_by(check: Callable[[str], Any]) -> Callable[[str], Any]:
    """An argparse type from a library check: its :class:`HgnerError` becomes the parser's error."""

    def parse(text: str) -> Any:
        try:
            return check(text)
        except (HgnerError, ValueError) as error:
            message = error.render(flag_names()) if isinstance(error, HgnerError) else str(error)
            # argparse names the flag itself ("argument --dev-documents: "); the check's own name goes
            raise argparse.ArgumentTypeError(re.sub(r"^--[\w-]+: ", "", message)) from None

    parse.__name__ = getattr(check, "__name__", "value")
    return parse


def cluster_spec(text: str) -> str:
    """``--cluster``: checked as it is parsed (the Dask side loads only when the flag is given)."""
    from ..distributed.connect import local_workers  # (startup: see hgner.commands)

    try:
        local_workers(text)
    except HgnerError as error:
        raise argparse.ArgumentTypeError(error.render(flag_names()).removeprefix("--cluster: ")) from None
    return text


def scheme(text: str) -> str:
    try:
        return normalize_scheme(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _finite(text: str, zero: bool) -> float:
    """A finite number > 0, or >= 0 when ``zero``."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and (value >= 0 if zero else value > 0)):
        raise argparse.ArgumentTypeError(f"expected a finite number {'>=' if zero else '>'} 0, got {text!r}")
    return value


def nonnegative(text: str) -> float:
    return _finite(text, zero=True)


def positive(text: str) -> float:
    return _finite(text, zero=False)


def positive_int(text: str, maximum: int = 10**9) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= maximum:
        raise argparse.ArgumentTypeError(f"expected a whole number 1..{maximum}, got {text!r}")
    return value


def int_list(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers, got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive whole numbers, got {text!r}")
    return values


def probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}")
    return value


def names(text: str) -> list[str]:
    values = [v.strip() for v in text.split(",")]
    if not all(values):
        raise argparse.ArgumentTypeError(f"expected comma-separated names, got {text!r}")
    return values


def name(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a name, got {text!r}")
    return text.strip()


def file_name(text: str) -> str:
    """A file (or folder) to write: any text but an empty one."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a file name, got {text!r}")
    return text


def assignments(given: Iterable[str]) -> dict[str, str]:
    """``--set NAME=VALUE`` strings as ``{NAME: VALUE}``; the values stay strings (the decoder's
    settings turn them into its constructor's types). A malformed assignment, or a name given
    twice, is a one-line :class:`HgnerError`."""
    settings: dict[str, str] = {}
    for assignment in given:
        key, equals, value = assignment.partition("=")
        key = key.strip()
        if not equals or not key.isidentifier():
            raise HgnerError(f"--set {assignment!r}: expected NAME=VALUE, e.g. --set damping=0.5")
        if key in settings:
            raise HgnerError(f"--set {assignment!r}: {key} is already set to {settings[key]!r}")
        settings[key] = value
    return settings
