"""``hgner models``: the shipped models and those saved in the data home's ``models/`` folder, a
row per model and scored corpus (``-v``: a wide row per model, with its folder); ``hgner models
info NAME``: one model in full."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from .. import commands
from ..api import ModelInfo, available_models, model_info
from ..core.errors import HgnerError
from ..core.wording import aligned, printable
from ..crf.model import CrfModel
from ..crf.modelfiles import META_FILE, SKIP_FILES, STARTS_FILE
from ..text.sentence_starts import recorded_penalty

NAME = "models"
log = logging.getLogger("hgner")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(NAME, help=commands.COMMANDS[NAME])
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="one line per model, with its folder (wider than a terminal)")
    actions = parser.add_subparsers(dest="models_command", metavar="info")
    info = actions.add_parser("info", help="everything meta.json says about one model")
    info.add_argument("name", metavar="NAME", help="a model name or a model directory")
    return parser


def run(args: argparse.Namespace) -> int:
    """``hgner models``: one row per model; ``hgner models info NAME``: one model in full, after
    loading it as every command does (files against the sizes and sha256 sums ``meta.json``
    records, and the checks of :class:`~hgner.crf.model.CrfModel`)."""
    if args.models_command == "info":
        info = model_info(args.name)
        CrfModel.load(info.path)  # a damaged or inconsistent model is the one-line error loading it gives
        sys.stdout.write(format_model_info(info))
        return 0
    rows: list[tuple[str, ...]] = [WIDE_HEADER if args.verbose else HEADER]
    for name in available_models():
        try:
            info = model_info(name)
        except HgnerError as error:  # one damaged model in the data home hides none of the others
            log.warning("%s: left out of the list: %s", name, error)
            continue
        rows.extend(_wide_rows(info) if args.verbose else _rows(info))
    sys.stdout.writelines(printable(line) + "\n" for line in aligned(rows))
    return 0


HEADER = ("name", "language", "labels", "scheme", "size", "F1 (corpus)")
WIDE_HEADER = ("name", "language", "labels", "scheme", "dev F1", "test F1", "size", "path")


def _rows(info: ModelInfo) -> list[tuple[str, ...]]:
    """A model's rows in ``hgner models``: the first with its F1 on its first corpus, then a row per other corpus."""
    scores = [f"{f1:.2f} {corpus} ({kind})" for kind, scored in (("dev", info.dev), ("test", info.test))
              for corpus, f1 in scored.items()] or ["-"]
    first = (info.name, info.language, ",".join(info.labels), info.scheme, f"{info.size / 1e6:.1f} MB", scores[0])
    return [first, *(("",) * 5 + (score,) for score in scores[1:])]


def _wide_rows(info: ModelInfo) -> list[tuple[str, ...]]:
    """A model's row in ``hgner models -v``."""
    return [(info.name, info.language, ",".join(info.labels), info.scheme, _scores(info.dev), _scores(info.test),
             f"{info.size / 1e6:.1f} MB", str(info.path))]


def _scores(scores: dict[str, float]) -> str:
    return ", ".join(f"{f1:.2f} ({corpus})" for corpus, f1 in scores.items()) or "-"


def _calibration(record: dict | None) -> str:
    """``meta.json``'s calibration record."""
    if record is None:
        return "none (every potential as trained)"
    fitted = f", fitted on {record['corpus']}" if "corpus" in record else ""
    return f"every potential times {record['factor']}{fitted}"


def _adaptation(record: dict | None) -> str:
    """``meta.json``'s adaptation record (``hgner train --base``)."""
    if not isinstance(record, dict):
        return "-"
    return f"{record.get('base', '?')} by {record.get('method', '?')}"


def _cross_validation(record: dict | None) -> str:
    """``meta.json``'s cross-validation record (``hgner train --folds``)."""
    if not isinstance(record, dict):
        return "-"
    low, high = record.get("interval", ("?", "?"))
    return (f"F1 {record.get('f1')} [{low}, {high}] over {record.get('folds')} folds of "
            f"{record.get('units')} {record.get('by', 'document')}s (Viterbi)")


def _skip_potential(meta: dict) -> str:
    """Whether the model has a skip potential (as :func:`hgner.crf.skip.load` decides) and its weight
    (as ``meta.json``'s dev record gives it)."""
    if not all(f in meta.get("files", {}) for f in SKIP_FILES):
        return "no (--graph skip needs one)"
    weight = meta.get("dev", {}).get("skip", {}).get("weight")
    if weight is None:
        return "yes"
    return f"yes, weight {weight:g}" + (" (skip edges left out: the skip graph is the chain)" if weight == 0 else "")


def _sentence_starts(meta: dict) -> str:
    """Whether the model learned sentence starts, and the penalty they must beat inside a sentence
    the rules ended (:mod:`hgner.text.sentence_starts`; the default for a model that records none)."""
    if STARTS_FILE not in meta.get("files", {}):
        return "no (sentences by the rules alone)"
    return f"learned from the training corpus, penalty {recorded_penalty(meta):g} inside sentences the rules ended"


def format_model_info(info: ModelInfo) -> str:
    """The summary, then the training record and the features (for a model whose files were verified)."""
    meta = info.metadata
    training = meta.get("training", {})
    lines = [
        ("name", info.name), ("path", str(info.path)), ("language", info.language), ("labels", ", ".join(info.labels)),
        ("scheme", info.scheme), ("dev F1", _scores(info.dev)), ("test F1", _scores(info.test)),
        ("size", f"{info.size:,} bytes"),
        ("files", f"{', '.join(sorted(meta['files']))} (sizes and sha256 as {META_FILE} records)"),
        ("tokenizer", meta.get("tokenizer", "-")),
        ("label map", ", ".join(f"{a} -> {b}" for a, b in meta.get("label_map", {}).items()) or "-"),
        ("training corpus", f"{training.get('corpus', '-')} (sha256 {training.get('sha256', '-')})"),
        ("training", ", ".join(f"{k} {training[k]}" for k in ("sentences", "tokens", "algorithm", "c1", "c2",
                                                              "max_iterations", "iterations", "loss", "seconds")
                               if k in training) or "-"),
        ("features", ", ".join(f"{k}={v}" for k, v in meta.get("features", {}).items()) or "-"),
        ("gazetteer", meta.get("gazetteer_sources", "lists not described") if meta["features"].get("gazetteer")
         else "-"),
        ("word clusters", meta.get("word_clusters_sources", "not described")
         if meta["features"].get("word_clusters") else "-"),
        ("vector clusters", meta.get("vector_clusters_sources", "not described")
         if meta["features"].get("vector_clusters") else "-"),
        ("sentence starts", _sentence_starts(meta)),
        ("skip potential", _skip_potential(meta)),
        ("calibration", _calibration(meta.get("calibration"))),
        ("adapted from", _adaptation(meta.get("adaptation"))),
        ("cross-validated", _cross_validation(meta.get("cross_validation"))),
        ("hgner version", meta.get("hgner_version", "-")),
    ]
    width = max(len(key) for key, _ in lines)
    return "".join(f"{key + ':':<{width + 1}} {printable(value)}\n" for key, value in lines)
