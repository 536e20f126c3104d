"""The one place that talks to crfsuite: its model file (checked by :mod:`hgner.crf.crfsuite_format`)
read into numpy arrays, its own tagger (the reference decoder), and its L-BFGS trainer."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pycrfsuite

from ..core.errors import ModelError
from ..core.integrity import read_regular
from . import crfsuite_format


def read_crfsuite_weights(path: str | Path) -> tuple[list[str], list[str], np.ndarray, np.ndarray]:
    """Labels, attributes, state weights (A, K) and transitions (K, K) of a crfsuite CRF1d model,
    read from crfsuite's binary file after checking every structure crfsuite itself reads
    (:func:`hgner.crf.crfsuite_format.parse`), because crfsuite's text dump, which ``Tagger.info()``
    parses, prints weights with only six decimals and so shifts scores by up to 5e-7 per feature."""
    model = crfsuite_format.parse(read_regular(Path(path)))
    features, labels, attributes = model.features, model.labels, model.attributes
    state = features[features["type"] == 0]
    transition = features[features["type"] == 1]
    state_weights = np.zeros((len(attributes), len(labels)))
    state_weights[state["source"], state["target"]] = state["weight"]
    transitions = np.zeros((len(labels), len(labels)))
    transitions[transition["source"], transition["target"]] = transition["weight"]
    return labels, attributes, state_weights, transitions


@contextmanager
def checked_copy(path: Path) -> Iterator[str]:
    """A path crfsuite can open holding exactly the bytes of ``path`` that passed
    :func:`hgner.crf.crfsuite_format.parse` (an anonymous in-memory file on Linux, so the file cannot
    change between the check and crfsuite's read); a :class:`ModelError` when they do not pass."""
    data = read_regular(path)
    try:
        crfsuite_format.parse(data)
    except ValueError as error:
        raise ModelError(f"{path}: {error}") from None
    if not hasattr(os, "memfd_create") or not os.path.isdir("/proc/self/fd"):
        yield str(path)  # (checked already by the seal and on loading)
        return
    fd = os.memfd_create("model.crfsuite", getattr(os, "MFD_CLOEXEC", 1))
    try:
        view = memoryview(data)
        written = 0
        while written < len(data):
            written += os.write(fd, view[written:])
        yield f"/proc/self/fd/{fd}"
    finally:
        os.close(fd)


def open_tagger(path: Path) -> pycrfsuite.Tagger:
    """crfsuite's own tagger on the model file ``path``."""
    tagger = pycrfsuite.Tagger()
    try:
        with checked_copy(path) as copy:
            tagger.open(copy)
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
