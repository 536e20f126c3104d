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
included, ties to the smaller weight (:func:`hgner.training.skip.tune`), so the skip-chain graph is never worse than
the chain on that corpus; and 0 when that choice does not carry over between random halves of
the corpus's documents (chosen on one half, no gain on the other on average). At weight 0 the
skip graph is the chain. :func:`hgner.training.skip.build` does all of it; ``hgner train --dev`` calls it. Both are
stored in the model directory: ``skip.npz`` (``counts``, ``log_ratio``, ``labels``; read with ``allow_pickle=False``)
and ``skip.json`` (the :class:`SkipConfig`, the weight and how both were obtained).
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ..core.errors import ModelError, named
from ..core.fileio import write_text
from ..core.validation import check, check_fields, read_json
from ..features.packed import write_arrays
from ..graph.factor_graph import FactorGraph
from ..text.languages import language_defaults
from .model import CrfModel
from .modelfiles import SKIP_FILES, refresh_files

SKIP_ARRAYS, SKIP_META = SKIP_FILES  # skip.npz, skip.json

# The English closed-class words of the first models (kept in their skip.json); new models learn
# their list with hgner.training.skip.function_words().
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
        return cls(**{k: tuple(v) if k == "function_words" else v for k, v in data.items()})  # type: ignore[arg-type]


@lru_cache(maxsize=16)
def _word_set(words: tuple[str, ...]) -> frozenset[str]:
    return frozenset(words)


def stop_words(language: str) -> frozenset[str]:
    """spaCy's stop words for ``language`` (an ISO code spaCy knows), lower case."""
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

    def describe(self) -> dict[str, Any]:
        """What a skip graph of this potential uses, as reports give it: the weight, the edge rule
        (``previous``, ``min_length``, ``cross_sentence``) and how many function words are never joined."""
        return {"weight": self.weight, "previous": self.config.previous, "min_length": self.config.min_length,
                "cross_sentence": self.config.cross_sentence, "function_words": len(self.config.function_words)}

    def graph(self, chain: FactorGraph, sentences: Sequence[Sequence[str]]) -> FactorGraph:
        """``chain`` (a document's chain graph) plus the document's skip edges; ``chain`` itself at
        weight 0 (edges of potential 0 change no score, but they would change what samplers do)."""
        if self.weight == 0.0:
            return chain
        return chain.with_edges(skip_edges(sentences, self.config), self.potential)


def save(skip: SkipModel, directory: str | Path) -> None:
    """Write ``skip.npz`` and ``skip.json`` into a model directory (atomically) and record them
    in its ``meta.json`` files map."""
    directory = Path(directory)
    write_arrays(directory / SKIP_ARRAYS, {"counts": skip.counts, "log_ratio": skip.log_ratio,
                                           "labels": np.array(skip.labels)})
    meta = {"config": skip.config.to_json(), "weight": skip.weight, "info": skip.info}
    write_text(directory / SKIP_META, json.dumps(meta, indent=2) + "\n")
    refresh_files(directory, SKIP_FILES)


def _read_arrays(path: Path, k: int) -> dict[str, np.ndarray]:
    """``counts``, ``log_ratio`` (K, K) float64 and ``labels`` (K,) strings from ``skip.npz``; each
    member's header (dtype, shape) is checked before its data is read; no pickle."""
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
    checksum-verified when the model loaded; see :mod:`hgner.crf.model`); raises
    :class:`ModelError` when it is missing, malformed or was built for other labels."""
    arrays, meta = model.directory / SKIP_ARRAYS, model.directory / SKIP_META
    recorded = model.metadata.get("files", {})
    if SKIP_ARRAYS not in recorded or SKIP_META not in recorded:
        raise ModelError(f"model {model.name} has no skip potential ({SKIP_ARRAYS} and {SKIP_META} recorded in its "
                         f"meta.json); a model trained with a development corpus ({named('dev')}, which tunes its "
                         "weight) has one")
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


