"""``hgner select``: rank the sentences of a pool by how much labelling them would teach the model,
and write the top N as IOB2 CoNLL, ready to label (or, from a labelled corpus, labelled: a
simulated annotation).

Steps: read the pool (:mod:`.pool`: duplicates and sentences already labelled left out), decode it (:mod:`.signals`: Viterbi's
marginals, herded and annealed Gibbs's labels), score it by the strategy (:mod:`.strategies`),
pick N greedily (:mod:`.diversity`: near-copies of the chosen and the already labelled sentences
skipped while others remain). From raw text the output carries the model's entities
(Viterbi, as ``hgner tag`` finds them) for the annotator to correct; from a labelled corpus, the
gold tags."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from ..core.errors import HgnerError, named, warn
from ..core.fileio import atomic_write, check_writable, refuse_inputs
from ..core.wording import counted
from ..crf.model import CrfModel
from ..crf.modelfiles import model_directory, model_language, read_metadata
from ..tagging.settings import TagSettings
from ..tagging.tagger import Tagger
from . import diversity, signals
from .pool import Candidate, Pool, iob2, read_excluded, read_pool
from .settings import SelectSettings
from .strategies import Strategy, ranks, strategy

log = logging.getLogger("hgner")


@dataclass(frozen=True)
class Selected:
    """One chosen sentence: ``rank`` (1: chosen first, the output file's order), its tokens, IOB2
    tags, the strategy's ``score`` (higher: more worth labelling) and ``source`` (file:line or
    the file it came from)."""

    rank: int
    tokens: tuple[str, ...]
    tags: tuple[str, ...]
    score: float
    source: str


@dataclass
class Selection:
    """The chosen sentences in the order taken, their IOB2 tags (gold from a labelled pool, the
    model's otherwise), the strategy's score of each, the pool they came from, and the files read
    (``inputs``, the inputs and the excluded files: :meth:`write` never overwrites one)."""

    candidates: list[Candidate]
    tags: list[list[str]]
    pool: Pool
    strategy: str
    scores: list[float]
    inputs: tuple[str, ...]

    @property
    def tokens(self) -> int:
        return sum(len(c.tokens) for c in self.candidates)

    def first(self, count: int) -> Selection:
        """The selection of the first ``count`` sentences taken (their tags and scores with them)."""
        return replace(self, candidates=self.candidates[:count], tags=self.tags[:count], scores=self.scores[:count])

    @property
    def labelled(self) -> bool:
        """Whether the tags are gold (a labelled pool) rather than the model's, to correct."""
        return self.pool.labelled

    @property
    def sentences(self) -> list[Selected]:
        """The chosen sentences in the order taken."""
        return [Selected(rank, c.tokens, tuple(tags), score, c.source) for rank, (c, tags, score)
                in enumerate(zip(self.candidates, self.tags, self.scores), start=1)]

    def write(self, out: str | Path) -> None:
        """Write the sentences to the CoNLL file ``out`` (:func:`write_selection`), never over an input."""
        check_out(out, self.inputs)
        write_selection(self, out)


def check_out(out: str | Path, inputs: Sequence[str | Path]) -> None:
    """An :class:`HgnerError` unless ``out`` names a file that can be written and is none of ``inputs``."""
    if str(out) == "-":
        raise HgnerError(f"{named('out')} -: give a file name (the output is written atomically)")
    check_writable(out)
    refuse_inputs(out, inputs, named("out"))


def load_pool(settings: SelectSettings, inputs: Sequence[str], model: CrfModel,
              excluded: Sequence[Sequence[str]] = ()) -> Pool:
    """The pool of ``inputs`` without the ``excluded`` sentences (token sequences), raw text
    tokenized as ``hgner tag`` tokenizes it for ``model``."""
    taggers: list[Tagger] = []  # built at the first text (a labelled pool needs no tokenizer)

    def tokenize(text: str) -> list[list[str]]:
        if not taggers:
            taggers.append(Tagger(TagSettings(model.directory, "viterbi"), model))
        return [list(s.tokens) for s in taggers[0].sentences(text)] if text.strip() else []

    return read_pool(inputs, tokenize, offline=settings.offline, lines=settings.lines, exclude=excluded)


def select(settings: SelectSettings, inputs: Sequence[str | Path], *, model: CrfModel | None = None,
           progress: bool = False) -> Selection:
    """The :class:`Selection` ``settings`` ask for from ``inputs`` (see :func:`~.pool.read_pool`),
    none of the sentences of ``settings.exclude`` (:func:`~.pool.read_excluded`) among them."""
    metadata = model.metadata if model is not None else read_metadata(model_directory(settings.model), every_file=False)
    excluded = read_excluded([str(name) for name in settings.exclude], model_language(metadata), settings.offline)
    crf = model if model is not None else CrfModel.load(settings.model)  # (after the excluded files: a typo answers at once)
    names = [str(name) for name in inputs]
    pool = load_pool(settings, names, crf, excluded)
    chosen = strategy(settings.strategy)
    rng = np.random.default_rng(settings.seed)
    gibbs_seed = int(rng.integers(2**31))
    size = len(pool.candidates)
    _announce(pool, settings)
    found = None
    with tqdm(total=size, desc="decoding", unit="sentence", disable=not progress, leave=False) as bar:
        if chosen.uses_signals or not pool.labelled:
            found = signals.compute(crf, pool, gibbs_seed, settings.sweeps, bar.update, rivals=chosen.uses_rivals)
    scores = np.asarray(chosen.score(found, size, rng), dtype=float)
    if chosen.diversity:  # traded against likeness in [0, 1]: the scores as ranks
        scores = ranks(scores)
    rows, taken = _rows(pool, excluded, chosen)
    with tqdm(total=min(settings.n, size), desc="choosing", unit="sentence", disable=not progress, leave=False) as bar:
        order = diversity.pick(scores, rows, settings.n, chosen.diversity, chosen.skip_near_copies, bar.update, taken)
    picked = [pool.candidates[i] for i in order]
    if pool.labelled:
        tags = [list(c.tags or ()) for c in picked]
    else:
        assert found is not None
        tags = [iob2(found.tags[i]) for i in order]
    return Selection(picked, tags, pool, settings.strategy, [float(scores[i]) for i in order],
                     (*names, *map(str, settings.exclude)))


def _announce(pool: Pool, settings: SelectSettings) -> None:
    """The pool's size (the ``hgner`` logger) and a warning when it holds fewer sentences than asked for."""
    size = len(pool.candidates)
    left_out = counted(pool.duplicates, "duplicate")
    if settings.exclude:
        left_out += f" and {pool.excluded} already labelled"
    left_out += " left out"
    log.info("pool: %s from %s (%s)", counted(size, "sentence"), counted(pool.documents, "document"), left_out)
    if settings.n > size:
        warn(f"the pool holds {counted(size, 'sentence')} ({left_out}), fewer than the {settings.n} asked for: "
             "every one is chosen")


def _rows(pool: Pool, excluded: Sequence[Sequence[str]], chosen: Strategy) -> tuple[Any, np.ndarray | None]:
    """The pool's (C, V) TF-IDF rows when the strategy reads them (else None), and (C,) each
    candidate's likeness to the excluded sentences (None without them): they count as taken."""
    if not (chosen.diversity or chosen.skip_near_copies):
        return None, None
    size = len(pool.candidates)
    rows = diversity.vectors([*(c.tokens for c in pool.candidates), *excluded])
    return rows[:size], diversity.likeness_to(rows[:size], rows[size:]) if excluded else None


def write_selection(selection: Selection, out: str | Path) -> None:
    """The chosen sentences as ``token<TAB>tag`` lines (IOB2), a blank line after each and each its
    own document (a ``-DOCSTART-`` line before every one but the first), written atomically."""
    with atomic_write(out) as stream:
        for number, (candidate, tags) in enumerate(zip(selection.candidates, selection.tags)):
            if number:
                stream.write("-DOCSTART-\tO\n\n")
            stream.write("".join(f"{token}\t{tag}\n" for token, tag in zip(candidate.tokens, tags)) + "\n")
