"""``hgner select``: rank the sentences of a pool by how much labelling them would teach the model,
and write the top N as IOB2 CoNLL, ready to label (or, from a labelled corpus, labelled: a
simulated annotation).

Steps: read the pool (:mod:`.pool`: duplicates left out), decode it (:mod:`.signals`: Viterbi's
marginals, herded and annealed Gibbs's labels), score it by the strategy (:mod:`.strategies`),
pick N greedily (:mod:`.diversity`). From raw text the output carries the model's entities
(Viterbi, as ``hgner tag`` finds them) for the annotator to correct; from a labelled corpus, the
gold tags."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from ..core.errors import warn
from ..core.fileio import atomic_write
from ..core.wording import counted
from ..crf.model import CrfModel
from ..tagging.settings import TagSettings
from ..tagging.tagger import Tagger
from . import diversity, signals
from .pool import Candidate, Pool, iob2, read_pool
from .settings import SelectSettings
from .strategies import ranks, strategy

log = logging.getLogger("hgner")


@dataclass
class Selection:
    """The chosen sentences in the order taken, their IOB2 tags (gold from a labelled pool, the
    model's otherwise), and the pool they came from."""

    candidates: list[Candidate]
    tags: list[list[str]]
    pool: Pool
    strategy: str

    @property
    def tokens(self) -> int:
        return sum(len(c.tokens) for c in self.candidates)


def load_pool(settings: SelectSettings, inputs: Sequence[str], model: CrfModel) -> Pool:
    """The pool of ``inputs``, raw text tokenized as ``hgner tag`` tokenizes it for ``model``."""
    taggers: list[Tagger] = []  # built at the first text (a labelled pool needs no tokenizer)

    def tokenize(text: str) -> list[list[str]]:
        if not taggers:
            taggers.append(Tagger(TagSettings(model.directory, "viterbi"), model))
        return [list(s.tokens) for s in taggers[0].sentences(text)] if text.strip() else []

    return read_pool(inputs, tokenize, offline=settings.offline, lines=settings.lines)


def select(settings: SelectSettings, inputs: Sequence[str], *, model: CrfModel | None = None,
           progress: bool = False) -> Selection:
    """The :class:`Selection` ``settings`` ask for from ``inputs`` (see :func:`~.pool.read_pool`)."""
    crf = model if model is not None else CrfModel.load(settings.model)
    pool = load_pool(settings, inputs, crf)
    chosen = strategy(settings.strategy)
    rng = np.random.default_rng(settings.seed)
    gibbs_seed = int(rng.integers(2**31))
    size = len(pool.candidates)
    log.info("pool: %s from %s (%s left out)", counted(size, "sentence"), counted(pool.documents, "document"),
             counted(pool.duplicates, "duplicate"))
    if settings.n > size:
        warn(f"the pool holds {counted(size, 'sentence')}, fewer than the {settings.n} asked for: all are written")
    found = None
    with tqdm(total=size, desc="decoding", unit="sentence", disable=not progress, leave=False) as bar:
        if chosen.uses_signals or not pool.labelled:
            found = signals.compute(crf, pool, gibbs_seed, settings.sweeps, bar.update, rivals=chosen.uses_rivals)
    scores = np.asarray(chosen.score(found, size, rng), dtype=float)
    if chosen.diversity:  # traded against likeness in [0, 1]: the scores as ranks
        scores = ranks(scores)
    rows = diversity.vectors([c.tokens for c in pool.candidates]) if chosen.diversity or chosen.skip_near_copies else None
    with tqdm(total=min(settings.n, size), desc="choosing", unit="sentence", disable=not progress, leave=False) as bar:
        order = diversity.pick(scores, rows, settings.n, chosen.diversity, chosen.skip_near_copies, bar.update)
    picked = [pool.candidates[i] for i in order]
    if pool.labelled:
        tags = [list(c.tags or ()) for c in picked]
    else:
        assert found is not None
        tags = [iob2(found.tags[i]) for i in order]
    return Selection(picked, tags, pool, settings.strategy)


def write_selection(selection: Selection, out: str | Path) -> None:
    """The chosen sentences as ``token<TAB>tag`` lines (IOB2), a blank line after each and each its
    own document (a ``-DOCSTART-`` line before every one but the first), written atomically."""
    with atomic_write(out) as stream:
        for number, (candidate, tags) in enumerate(zip(selection.candidates, selection.tags)):
            if number:
                stream.write("-DOCSTART-\tO\n\n")
            stream.write("".join(f"{token}\t{tag}\n" for token, tag in zip(candidate.tokens, tags)) + "\n")
