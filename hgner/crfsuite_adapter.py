"""The one place that talks to crfsuite: its model file read into numpy arrays, its own tagger
(the reference decoder), and its L-BFGS trainer."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pycrfsuite

from .errors import ModelError

_FEATURE = np.dtype([("type", "<u4"), ("source", "<u4"), ("target", "<u4"), ("weight", "<f8")])


def read_crfsuite_weights(path: str | Path) -> tuple[list[str], list[str], np.ndarray, np.ndarray]:
    """Labels, attributes, state weights (A, K) and transitions (K, K) of a crfsuite CRF1d model.

    Read from crfsuite's binary file (header; a ``FEAT`` chunk of 20-byte records ``type, source,
    target, weight``, type 0 = state feature attribute -> label, 1 = transition label -> label;
    label and attribute names in CQDB chunks, looked up by id through their backward arrays),
    because crfsuite's text dump, which ``Tagger.info()`` parses, prints weights with only six
    decimals and so shifts scores by up to 5e-7 per feature."""
    data = Path(path).read_bytes()
    try:
        magic, size, model_type, _, _, n_labels, n_attributes, features_at, labels_at, attributes_at = \
            struct.unpack_from("<4sI4sIIIIIII", data, 0)
        if magic != b"lCRF" or model_type != b"FOMC":
            raise ValueError(f"not a crfsuite CRF1d model (magic {magic!r}, type {model_type!r})")
        if size != len(data):
            raise ValueError(f"truncated or padded crfsuite model: header says {size} bytes, file has {len(data)}")
        if n_labels < 1 or n_labels > 10_000 or n_attributes > len(data) // 8:
            raise ValueError(f"implausible crfsuite header ({n_labels} labels, {n_attributes} attributes)")
        chunk, _, n_features = struct.unpack_from("<4sII", data, features_at)
        if chunk != b"FEAT":
            raise ValueError(f"expected the FEAT chunk at byte {features_at}, got {chunk!r}")
        if features_at + 12 + n_features * _FEATURE.itemsize > len(data):
            raise ValueError(f"FEAT chunk of {n_features} features runs past the end of the file")
        features = np.frombuffer(data, dtype=_FEATURE, count=n_features, offset=features_at + 12)
        labels = _cqdb_strings(data, labels_at, n_labels)
        attributes = _cqdb_strings(data, attributes_at, n_attributes)
    except struct.error as error:
        raise ValueError(f"truncated crfsuite model ({error})") from None
    except UnicodeDecodeError:
        raise ValueError("crfsuite model has a label or attribute that is not UTF-8") from None
    state = features[features["type"] == 0]
    transition = features[features["type"] == 1]
    if len(state) + len(transition) != len(features) or not np.isfinite(features["weight"]).all():
        raise ValueError("crfsuite model has features of unknown type or weights that are not finite")
    if (state["source"] >= len(attributes)).any() or (features["target"] >= len(labels)).any() \
            or (transition["source"] >= len(labels)).any():
        raise ValueError("crfsuite model has features that point past its labels or attributes")
    state_weights = np.zeros((len(attributes), len(labels)))
    state_weights[state["source"], state["target"]] = state["weight"]
    transitions = np.zeros((len(labels), len(labels)))
    transitions[transition["source"], transition["target"]] = transition["weight"]
    return labels, attributes, state_weights, transitions


def _cqdb_strings(data: bytes, start: int, count: int) -> list[str]:
    """Strings 0..count-1 of the CQDB chunk at ``start``: each backward-array entry is the offset
    (from the chunk start) of a record ``id (u32), size (u32, with the NUL), bytes``."""
    chunk, _, _, _, backward_size, backward_at = struct.unpack_from("<4sIIIII", data, start)
    if chunk != b"CQDB" or backward_size < count:
        raise ValueError(f"expected a CQDB chunk with {count} strings at byte {start}, got {chunk!r}")
    if start + backward_at + 4 * count > len(data):
        raise ValueError(f"CQDB chunk at byte {start} runs past the end of the file")
    offsets = np.frombuffer(data, dtype="<u4", count=count, offset=start + backward_at).tolist()
    strings = []
    for offset in offsets:
        size = struct.unpack_from("<I", data, start + offset + 4)[0]
        if size < 1 or start + offset + 7 + size > len(data):
            raise ValueError(f"CQDB string at byte {start + offset} runs past the end of the file")
        strings.append(data[start + offset + 8:start + offset + 7 + size].decode("utf-8"))
    return strings


def open_tagger(path: Path) -> pycrfsuite.Tagger:
    """crfsuite's own tagger on the model file ``path``."""
    tagger = pycrfsuite.Tagger()
    try:
        tagger.open(str(path))
    except OSError as error:
        raise ModelError(f"{path}: crfsuite cannot open it ({error})") from None
    return tagger


class _IterationTrainer(pycrfsuite.Trainer):
    """crfsuite's trainer, silent: each L-BFGS iteration advances ``bar`` (a tqdm) and shows the
    loss; the log is still parsed (``crf.training_log_``)."""

    def __init__(self, *, bar: Any, **options: Any) -> None:
        super().__init__(**options)
        self.bar = bar

    def message(self, message: str) -> None:
        if self.logparser.feed(message) == "iteration":
            self.bar.set_postfix(loss=f"{self.logparser.last_iteration['loss']:.1f}", refresh=False)
            self.bar.update(1)


def fit(xs: Sequence[Any], ys: Sequence[Sequence[str]], path: Path, *, c1: float, c2: float, max_iterations: int,
        bar: Any) -> list[dict[str, Any]]:
    """Train a linear-chain CRF (L-BFGS, L1 ``c1`` + L2 ``c2``, every transition possible) on
    attribute lists ``xs`` and tags ``ys`` into the model file ``path``; returns crfsuite's log of
    the iterations (empty when it stopped before the first). ``bar`` (a tqdm) follows the iterations."""
    import sklearn_crfsuite

    crf = sklearn_crfsuite.CRF(algorithm="lbfgs", c1=c1, c2=c2, max_iterations=max_iterations,
                               all_possible_transitions=True, model_filename=str(path),
                               trainer_cls=partial(_IterationTrainer, bar=bar))
    crf.fit(xs, ys)
    return crf.training_log_.iterations
