"""Skip-chain edges between repeated names, and their learned potential.

**Which tokens are joined.** Inside one document (across sentence boundaries too, unless
``cross_sentence`` is off) a token is a *name candidate* when its first character is an
upper-case letter, it has at least ``min_length`` characters, and its lower-case form is not a
function word (``function_words``: words capitalised only sentence-initially or in all-caps
headlines, e.g. "The", "IN", "El", "Het"; see :func:`function_words`, which learns them from the
training corpus of the model's language). Name candidates with identical
word forms are joined: each occurrence gets a skip edge ``(earlier, later)`` to each of its
``previous`` most recent earlier occurrences. With the default ``previous = 1`` the occurrences
of a word form are linked in a path, so a name repeated 20 times adds 19 edges, not 190; the
same rule (``str.isupper`` on the first character) picks the pairs that the
``consistency_disagreement`` figure counts.

**The potential.** One (K, K) table over the model's labels, estimated piecewise from a tagged
corpus: gold tags are put in the model's scheme (with its label map), the label pairs
``(y_earlier, y_later)`` of every skip edge are counted, and the table is the smoothed log-ratio

    log_ratio[a, b] = log p(a, b) - log p_first(a) - log p_second(b),

with ``p(a, b) = (counts[a, b] + s) / (N + s K^2)`` (add-``s`` smoothing, ``s = 0.5``, the
Krichevsky-Trofimov estimate) and ``p_first``, ``p_second`` its margins. It is positive for label
pairs seen together more often than chance (the same entity type twice), negative otherwise.
The graph uses ``weight * log_ratio`` (times the model's calibration factor, like every
potential: :mod:`hgner.calibration`), where ``weight`` is the grid point whose skip-chain
decoding (by ``exact``) scores the best entity F1 on a development corpus, 0 (the chain itself)
included, ties to the smaller weight (:func:`tune`), so the skip-chain graph is never worse than
the chain on that corpus; and 0 when that choice does not carry over between random halves of
the corpus's documents (chosen on one half, no gain on the other on average). At weight 0 the
skip graph is the chain. :func:`build` does all of it; ``hgner train --dev`` calls it. Both are
stored in the model directory: ``skip.npz`` (``counts``, ``log_ratio``, ``labels``; read with ``allow_pickle=False``)
and ``skip.json`` (the :class:`SkipConfig`, the weight and how both were obtained).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from .corpus import Corpus
from .errors import ModelError
from .fileio import write_text
from .graph import FactorGraph
from .model import SKIP_FILES, CrfModel
from .validation import check, check_fields, read_json

SKIP_ARRAYS, SKIP_META = SKIP_FILES  # skip.npz, skip.json
SMOOTHING = 0.5

# The English closed-class words of the first models (kept in their skip.json); new models learn
# their list with function_words().
FUNCTION_WORDS = (
    "a", "about", "after", "all", "also", "an", "and", "any", "as", "at", "be", "because", "been",
    "before", "but", "by", "can", "could", "did", "do", "does", "during", "each", "for", "from",
    "had", "has", "have", "he", "her", "here", "his", "how", "i", "if", "in", "into", "is", "it",
    "its", "may", "more", "most", "no", "not", "of", "on", "one", "or", "other", "our", "out",
    "over", "she", "should", "so", "some", "such", "than", "that", "the", "their", "them", "then",
    "there", "these", "they", "this", "those", "to", "under", "up", "was", "we", "were", "what",
    "when", "where", "which", "while", "who", "why", "will", "with", "would", "you", "your",
)


@dataclass(frozen=True)
class SkipConfig:
    """Which repeated tokens get skip edges (see the module docstring for the rule).

    previous: join each occurrence to this many most recent earlier occurrences (>= 1).
    min_length: shortest token (in characters) that can be a name.
    cross_sentence: also join occurrences in different sentences of the document.
    function_words: lower-case forms never joined.
    """

    previous: int = 1
    min_length: int = 2
    cross_sentence: bool = True
    function_words: tuple[str, ...] = FUNCTION_WORDS

    def __post_init__(self) -> None:
        if self.previous < 1 or self.min_length < 1:
            raise ModelError(f"skip config needs previous >= 1 and min_length >= 1, got {self.previous} and {self.min_length}")

    def is_name(self, token: str) -> bool:
        """True when ``token`` is a name candidate."""
        return (len(token) >= self.min_length and token[0].isupper()
                and token.lower() not in _word_set(self.function_words))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SkipConfig:
        check_fields(data, cls, "skip settings")
        return cls(**{k: tuple(v) if k == "function_words" else v for k, v in data.items()})


@lru_cache(maxsize=16)
def _word_set(words: tuple[str, ...]) -> frozenset[str]:
    return frozenset(words)


# The function-word rule, chosen on eng.testa, esp.testa and ned.testa (scripts/TUNING.md).
MIN_COUNT = 3
O_FRACTION = 0.95


def function_words(corpus: Corpus, language: str | None, *, min_count: int = MIN_COUNT, o_fraction: float = O_FRACTION,
                   min_length: int = SkipConfig.min_length) -> tuple[str, ...]:
    """The lower-case forms never joined by skip edges: the words learned from a tagged ``corpus``
    plus spaCy's stop words for ``language`` (none when ``language`` is None), sorted. A word is
    learned when it was seen capitalised (first character upper case, at least ``min_length``
    characters) at least ``min_count`` times with gold tag ``O`` in at least ``o_fraction`` of
    them; the stop words cover the function words too rare in ``corpus`` to learn, and the ones
    that also start names, which the learned rule lets through (capitalised Dutch "De" is O in
    only 68% of its occurrences in ned.train)."""
    seen: dict[str, list[int]] = {}  # lower-case form -> [capitalised occurrences, of them tagged O]
    for sentence in corpus.sentences:
        for token, tag in zip(sentence.tokens, sentence.tags or ()):
            if len(token) >= min_length and token[0].isupper():
                counts = seen.setdefault(token.lower(), [0, 0])
                counts[0] += 1
                counts[1] += tag == "O"
    learned = {word for word, (n, n_o) in seen.items() if n >= min_count and n_o >= o_fraction * n}
    return tuple(sorted(learned | (stop_words(language) if language else frozenset())))


def stop_words(language: str) -> frozenset[str]:
    """spaCy's stop words for ``language`` (an ISO code spaCy knows), lower case."""
    from .tokenizer import language_defaults

    return frozenset(word.lower() for word in language_defaults(language).stop_words)


def skip_edges(sentences: Sequence[Sequence[str]], config: SkipConfig = SkipConfig()) -> np.ndarray:
    """(m, 2) skip edges ``(earlier, later)`` of one document given as token lists, in the
    document's flat token numbering, ordered by the later token then most recent first."""
    seen: dict[tuple[str, int], list[int]] = {}
    edges: list[tuple[int, int]] = []
    position = 0
    for number, sentence in enumerate(sentences):
        for token in sentence:
            if config.is_name(token):
                earlier = seen.setdefault((token, 0 if config.cross_sentence else number), [])
                edges.extend((e, position) for e in reversed(earlier[-config.previous:]))
                earlier.append(position)
            position += 1
    return np.array(edges, dtype=np.int64).reshape(-1, 2)


@dataclass(frozen=True)
class SkipModel:
    """A model's skip potential: ``counts`` and ``log_ratio`` (K, K) over ``labels``, the tuned
    ``weight``, the edge rule, ``info`` (how it was estimated and tuned), and the model's
    ``calibration`` factor, which multiplies every potential of its graphs, this one too."""

    config: SkipConfig
    labels: tuple[str, ...]
    counts: np.ndarray
    log_ratio: np.ndarray
    weight: float = 1.0
    info: dict[str, Any] = field(default_factory=dict)
    calibration: float = 1.0

    @property
    def potential(self) -> np.ndarray:
        """(K, K) the table skip edges use: ``calibration * weight * log_ratio``."""
        return self.calibration * self.weight * self.log_ratio

    def graph(self, chain: FactorGraph, sentences: Sequence[Sequence[str]]) -> FactorGraph:
        """``chain`` (a document's chain graph) plus the document's skip edges; ``chain`` itself at
        weight 0 (edges of potential 0 change no score, but they would change what samplers do)."""
        if self.weight == 0.0:
            return chain
        return chain.with_edges(skip_edges(sentences, self.config), self.potential)


def estimate(corpus: Corpus, model: CrfModel, config: SkipConfig = SkipConfig()) -> SkipModel:
    """Count gold label pairs on the skip edges of ``corpus`` (tags put in ``model``'s scheme and
    label map, as training does) and return their smoothed log-ratio table with weight 1."""
    index = {label: k for k, label in enumerate(model.labels)}
    counts = np.zeros((len(index), len(index)))
    for document in corpus.documents:
        tags = [tag for s in document.sentences for tag in model.gold_labels(s.tags)]
        unknown = set(tags) - set(index)
        if unknown:
            raise ModelError(f"corpus {corpus.name} has tags {sorted(unknown)} that model {model.name} lacks "
                             f"(model labels: {', '.join(model.labels)})")
        y = np.array([index[t] for t in tags], dtype=np.int64)
        edges = skip_edges([s.tokens for s in document.sentences], config)
        np.add.at(counts, (y[edges[:, 0]], y[edges[:, 1]]), 1.0)
    return SkipModel(config, model.labels, counts, log_ratio(counts),
                     info={"corpus": corpus.name, "edges": int(counts.sum()), "smoothing": SMOOTHING},
                     calibration=model.calibration)


def log_ratio(counts: np.ndarray, smoothing: float = SMOOTHING) -> np.ndarray:
    """(K, K) ``log p(a, b) - log p(a) - log p(b)`` of add-``smoothing`` pair frequencies ``counts`` (K, K)."""
    joint = (counts + smoothing) / (counts.sum() + smoothing * counts.size)
    return np.log(joint) - np.log(joint.sum(axis=1, keepdims=True)) - np.log(joint.sum(axis=0, keepdims=True))


def save(skip: SkipModel, directory: str | Path) -> None:
    """Write ``skip.npz`` and ``skip.json`` into a model directory (atomically) and record them
    in its ``meta.json`` files map."""
    from .fileio import atomic_write
    from .model import refresh_files

    directory = Path(directory)
    with atomic_write(directory / SKIP_ARRAYS, binary=True) as out:
        np.savez(out, counts=skip.counts, log_ratio=skip.log_ratio, labels=np.array(skip.labels))
    meta = {"config": skip.config.to_json(), "weight": skip.weight, "info": skip.info}
    write_text(directory / SKIP_META, json.dumps(meta, indent=2) + "\n")
    refresh_files(directory, SKIP_FILES)


def _read_arrays(path: Path, k: int) -> dict[str, np.ndarray]:
    """``counts``, ``log_ratio`` (K, K) float64 and ``labels`` (K,) strings from ``skip.npz``; each
    member's header (dtype, shape) is checked before its data is read; no pickle."""
    import zipfile

    expected = {"counts": ((k, k), "f"), "log_ratio": ((k, k), "f"), "labels": ((k,), "U")}
    arrays = {}
    try:
        with zipfile.ZipFile(path) as archive:
            members = sorted(archive.namelist())
            if members != sorted(f"{name}.npy" for name in expected):
                raise ModelError(f"{path}: holds {members[:5]}, expected counts.npy, labels.npy, log_ratio.npy")
            for name, (shape, kind) in expected.items():
                with archive.open(f"{name}.npy") as member:
                    version = np.lib.format.read_magic(member)
                    header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                              else np.lib.format.read_array_header_2_0)
                    got_shape, fortran, dtype = header(member)
                if got_shape != shape or dtype.kind != kind or dtype.hasobject or (kind == "U" and dtype.itemsize > 4 * 100):
                    raise ModelError(f"{path}: {name}: expected shape {shape} of {'float' if kind == 'f' else 'str'}, "
                                     f"got shape {got_shape} of {dtype}")
        with np.load(path, allow_pickle=False) as stored:
            arrays = {name: stored[name] for name in expected}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as error:
        raise ModelError(f"{path}: cannot read ({error})") from None
    for name in ("counts", "log_ratio"):
        if not np.isfinite(arrays[name]).all():
            raise ModelError(f"{path}: {name}: expected finite numbers")
    return arrays


def load(model: CrfModel) -> SkipModel:
    """The skip potential stored with ``model`` (both files recorded in its ``meta.json``, so
    checksum-verified when the model loaded; see :mod:`hgner.model`); raises
    :class:`ModelError` when it is missing, malformed or was built for other labels."""
    arrays, meta = model.directory / SKIP_ARRAYS, model.directory / SKIP_META
    recorded = model.metadata.get("files", {})
    if SKIP_ARRAYS not in recorded or SKIP_META not in recorded:
        raise ModelError(f"model {model.name} has no skip potential ({SKIP_ARRAYS} and {SKIP_META} recorded in its "
                         "meta.json); train a model with one by: hgner train --train CORPUS --dev CORPUS --lang LANG "
                         "--out DIR (the dev corpus tunes its weight)")
    k = len(model.labels)
    stored = _read_arrays(arrays, k)
    counts, table, labels = stored["counts"], stored["log_ratio"], tuple(str(v) for v in stored["labels"])
    data = read_json(meta)
    check(data, "skip", meta)
    config, weight, info = SkipConfig.from_json(data["config"]), float(data["weight"]), data.get("info", {})
    if labels != model.labels:
        raise ModelError(f"skip potential of model {model.name} is over labels {labels}; "
                         f"expected the model's labels {model.labels}")
    return SkipModel(config, labels, counts, table, weight, info, model.calibration)


# The weight grid of tune(); 0 is the chain itself.
WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0)
HALVINGS = 30  # random halvings of the development documents for tune()'s held-out check
HALVING_SEED = 0  # their generator's seed, so training stays deterministic


def tune(table: SkipModel, model: CrfModel, dev: Corpus, weights: Sequence[float] = WEIGHTS,
         decoder: str = "exact", progress: bool = False) -> SkipModel:
    """``table`` with the weight on the grid ``weights`` (the first 0: the chain, decoded by
    Viterbi) whose skip-chain decoding of ``dev`` (by ``decoder``) scores the best entity F1, ties
    to the smaller weight, so a weight above 0 is chosen only when it beats the chain on ``dev``,
    and only when the choice carries over to documents it was not made on: ``dev``'s documents
    are halved at random :data:`HALVINGS` times (seed :data:`HALVING_SEED`), the weight chosen on
    each half is scored on the other (:func:`held_out_gains`), and when its mean gain over the
    chain there is not positive the weight is 0 (a ``dev`` of one document is not checked). The grid's figures go into ``info["tuning"]``,
    the check's into ``info["held_out"]``."""
    if not weights or weights[0] != 0.0:
        raise ValueError(f"the weight grid must start with 0 (the chain), got {list(weights)}")
    counts, certified = weight_counts(table, model, dev, weights, decoder, progress)
    f1 = grid_f1(counts)
    tuning = [{"weight": float(weight), "f1": float(score), "certified": share}
              for weight, score, share in zip(weights, f1, certified)]
    best = best_weight(f1)
    gains, _ = held_out_gains(counts, np.random.default_rng(HALVING_SEED))
    held_out = None
    if len(gains):
        held_out = {"halvings": HALVINGS, "pairs": len(gains), "mean_gain": round(float(gains.mean()), 3),
                    "below_chain": int((gains < 0).sum())}
        if gains.mean() <= 0:
            best = 0
    info = {**table.info, "tuned_on": dev.name, "tuning_decoder": decoder, "tuning": tuning, "held_out": held_out}
    return replace(table, weight=float(weights[best]), info=info)


def tuned_f1(tuned: SkipModel) -> float:
    """The development F1 of the weight :func:`tune` chose (the chain's when it kept weight 0)."""
    return next(row["f1"] for row in tuned.info["tuning"] if row["weight"] == tuned.weight)


def dev_record(tuned: SkipModel) -> dict[str, Any]:
    """The ``dev.skip`` record of a model's ``meta.json``: the tuning decoder, weight and dev F1."""
    return {"decoder": tuned.info["tuning_decoder"], "weight": tuned.weight, "f1": round(tuned_f1(tuned), 2)}


def tuning_summary(tuned: SkipModel) -> str:
    """One line on the weight :func:`tune` chose and why, for logs."""
    rows, held_out, corpus = tuned.info["tuning"], tuned.info.get("held_out"), tuned.info["tuned_on"]
    best, chain = rows[best_weight(np.array([row["f1"] for row in rows]))], rows[0]["f1"]
    decoder = tuned.info["tuning_decoder"]
    if tuned.weight:
        carried = (f"; chosen on half of its documents, {held_out['mean_gain']:+.2f} F1 over the chain on the "
                   f"other half on average" if held_out
                   else "; not checked on held-out documents: it has one document, which cannot be halved")
        return f"weight {tuned.weight} (skip-chain F1 {best['f1']:.2f} with {decoder} on {corpus}{carried})"
    if best["weight"]:
        return (f"weight 0, skip edges left out: skip-chain F1 {best['f1']:.2f} with {decoder} at weight "
                f"{best['weight']} on {corpus} against the chain's {chain:.2f}, but a weight chosen on half of its "
                f"documents scores {held_out['mean_gain']:+.2f} F1 against the chain on the other half on average")
    return f"weight 0, skip edges left out: no weight beats the chain's F1 {chain:.2f} with {decoder} on {corpus}"


def weight_counts(table: SkipModel, model: CrfModel, dev: Corpus, weights: Sequence[float] = WEIGHTS,
                  decoder: str = "exact", progress: bool = False) -> tuple[np.ndarray, list[float]]:
    """(W, D, 3) the entities found correctly, predicted and in the gold standard (conlleval's
    chunks in ``dev``'s scheme) in each of ``dev``'s D documents decoded with ``table`` at each
    of the W ``weights`` (weight 0, and a document without skip edges, by Viterbi; the rest by
    ``decoder``), and per weight the share of documents the decoder certified."""
    from tqdm import tqdm

    from . import schemes
    from .decoders import make_decoder
    from .decoders.chain import viterbi
    from .evaluation import gold_tags
    from .pipeline import Pipeline
    from .scoring import EntityCounts, entity_spans

    gold = gold_tags(dev, model)
    builder = Pipeline(model, make_decoder("viterbi"))
    documents = [[s.tokens for s in d.sentences] for d in dev.documents]
    prepared = [builder.prepare(sentences) for sentences in tqdm(
        documents, desc=f"skip weight: featurising {dev.name}", unit="doc", disable=not progress, leave=False)]
    edges = [skip_edges(sentences, table.config) for sentences in documents]
    firsts = np.cumsum([0, *map(len, documents)])  # each document's first sentence in gold
    skip_decoder = make_decoder(decoder)
    counts = np.zeros((len(weights), len(documents), 3), np.int64)
    certified = []
    for w, weight in enumerate(tqdm(weights, desc=f"skip weight on {dev.name} ({decoder})", unit="weight",
                                    disable=not progress, leave=False)):
        sure = 0.0
        for d, (p, e) in enumerate(zip(prepared, edges)):
            if weight == 0.0 or len(e) == 0:
                labels = viterbi(p.chain)
                sure += 1.0
            else:
                decoding = skip_decoder.decode(p.chain.with_edges(e, replace(table, weight=weight).potential))
                labels = decoding.labels
                sure += decoding.stats.get("certified", 0.0)
            found = EntityCounts()
            for sentence_gold, piece in zip(gold[firsts[d]:firsts[d + 1]], p.split(labels)):
                predicted = schemes.convert([model.labels[k] for k in piece], dev.scheme)
                found.add(entity_spans(sentence_gold, dev.scheme), entity_spans(predicted, dev.scheme))
            counts[w, d] = [sum(found.correct.values()), sum(found.predicted.values()), sum(found.gold.values())]
        certified.append(round(sure / len(prepared), 4) if prepared else 1.0)
    return counts, certified


def grid_f1(counts: np.ndarray) -> np.ndarray:
    """(W,) the entity F1 (percent, rounded to 3 decimals) of (W, D, 3) :func:`weight_counts`, all D documents together."""
    from .scoring import Counts

    return np.array([round(Counts(*map(int, row)).f1, 3) for row in counts.sum(axis=1)])


def best_weight(f1: np.ndarray) -> int:
    """The index of the best of (W,) grid F1 scores, ties to the first (the smaller weight)."""
    return int(np.flatnonzero(f1 == f1.max())[0])


def held_out_gains(counts: np.ndarray, rng: np.random.Generator, halvings: int = HALVINGS,
                   rule: Callable[[np.ndarray], int] = best_weight) -> tuple[np.ndarray, np.ndarray]:
    """For ``halvings`` random halvings of the documents of :func:`weight_counts` (W, D, 3), each
    half picking once: (2 * halvings,) how much the weight ``rule`` picks from one half's grid F1
    beats the chain (weight index 0) on the other half, and (2 * halvings,) the indices it picked;
    both empty with fewer than 2 documents."""
    documents = counts.shape[1]
    gains, picked = [], []
    for _ in range(halvings if documents >= 2 else 0):
        order = rng.permutation(documents)
        halves = (order[: documents // 2], order[documents // 2:])
        for picked_on, scored_on in (halves, halves[::-1]):
            scores = grid_f1(counts[:, scored_on])
            picked.append(rule(grid_f1(counts[:, picked_on])))
            gains.append(scores[picked[-1]] - scores[0])
    return np.array(gains), np.array(picked, np.int64)


def build(model: CrfModel, train: Corpus, dev: Corpus, language: str, *, decoder: str = "exact",
          words: tuple[str, ...] | None = None, progress: bool = False) -> SkipModel:
    """Learn ``model``'s skip potential from ``train`` (function words of ``language`` learned
    there too, unless ``words`` gives the list), tune its weight on ``dev`` and save it into the
    model directory."""
    if words is None:
        words = function_words(train, language)
        how = {"language": language, "min_count": MIN_COUNT, "o_fraction": O_FRACTION, "plus": "spacy stop words"}
    else:
        how = {"language": language, "given": True}
    config = SkipConfig(function_words=words)
    table = estimate(train, model, config)
    table = replace(table, info={**table.info, "function_words": how})
    tuned = tune(table, model, dev, decoder=decoder, progress=progress)
    save(tuned, model.directory)
    return tuned
