"""CRF models: the one place that talks to crfsuite (training, loading, its reference tagger).

A model is a directory holding ``model.crfsuite`` (crfsuite's native file) and ``meta.json``
(labels, tag scheme, feature configuration, tokenizer, versions, training data checksum, scores).
No pickle anywhere. Loading reads crfsuite's weights into numpy arrays so a document becomes a
:class:`~hgner.graph.FactorGraph` by one sparse matrix product.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pycrfsuite
import scipy.sparse

from . import __version__, schemes
from .corpus import Corpus
from .errors import ModelError
from .features import FeatureConfig, document_features
from .graph import FactorGraph
from .tokenizer import NAME as TOKENIZER_NAME

MODEL_FILE = "model.crfsuite"
META_FILE = "meta.json"

Features = list[list[list[str]]]  # sentences -> tokens -> attribute strings


def builtin_models() -> list[str]:
    """Names of the models shipped with the package."""
    root = resources.files("hgner.models")
    return sorted(p.name for p in root.iterdir() if p.is_dir() and (p / META_FILE).is_file())


def model_directory(name_or_path: str | Path) -> Path:
    """A model directory from a path, or from the name of a shipped model."""
    path = Path(name_or_path)
    if (path / META_FILE).is_file():
        return path
    if path.name == str(name_or_path):  # a bare name: look among the shipped models
        candidate = resources.files("hgner.models") / str(name_or_path)
        if candidate.is_dir() and (candidate / META_FILE).is_file():
            return Path(str(candidate))
    known = ", ".join(builtin_models()) or "none installed"
    raise ModelError(f"model {str(name_or_path)!r}: not a model directory (no {META_FILE}) "
                     f"and not a shipped model (shipped: {known})")


class CrfModel:
    """A trained linear-chain CRF: its labels, feature configuration and weights as arrays.

    Attributes:
        labels: (K,) label names in the model's tag scheme.
        state_weights: (A, K) weight of each attribute for each label.
        transitions: (K, K) weight of label a followed by label b.
    """

    def __init__(self, directory: Path, metadata: dict[str, Any]) -> None:
        self.directory = directory
        self.metadata = metadata
        self.feature_config = FeatureConfig.from_json(metadata["features"])
        self.scheme: str = metadata["scheme"]
        self._tagger = pycrfsuite.Tagger()
        self._tagger.open(str(directory / MODEL_FILE))
        info = self._tagger.info()
        self.labels: tuple[str, ...] = tuple(self._tagger.labels())
        label_index = {label: k for k, label in enumerate(self.labels)}
        self.attribute_index: dict[str, int] = {}
        rows, cols, values = [], [], []
        for (attribute, label), weight in info.state_features.items():
            rows.append(self.attribute_index.setdefault(attribute, len(self.attribute_index)))
            cols.append(label_index[label])
            values.append(weight)
        self.state_weights = np.zeros((len(self.attribute_index), len(self.labels)))
        self.state_weights[rows, cols] = values
        self.transitions = np.zeros((len(self.labels), len(self.labels)))
        for (first, second), weight in info.transitions.items():
            self.transitions[label_index[first], label_index[second]] = weight

    @classmethod
    def load(cls, name_or_path: str | Path) -> CrfModel:
        directory = model_directory(name_or_path)
        try:
            metadata = json.loads((directory / META_FILE).read_text(encoding="utf-8"))
            return cls(directory, metadata)
        except (OSError, ValueError, KeyError) as error:
            raise ModelError(f"model {directory}: cannot load ({error})") from None

    @property
    def name(self) -> str:
        return self.metadata.get("name", self.directory.name)

    @property
    def entity_types(self) -> list[str]:
        return sorted({schemes.split_tag(label)[1] for label in self.labels} - {""})

    def features(self, sentences: Sequence[Sequence[str]]) -> Features:
        """Attributes of a document given as token lists, one list per sentence."""
        return document_features(sentences, self.feature_config)

    def unary(self, features: Features) -> np.ndarray:
        """(n, K) state scores of a document's tokens: attribute indicator matrix times weights."""
        index = self.attribute_index
        columns: list[int] = []
        row_ends = [0]
        for sentence in features:
            for attributes in sentence:
                columns.extend(index[a] for a in attributes if a in index)
                row_ends.append(len(columns))
        indicator = scipy.sparse.csr_matrix(
            (np.ones(len(columns)), np.asarray(columns, dtype=np.int64), np.asarray(row_ends, dtype=np.int64)),
            shape=(len(row_ends) - 1, len(self.attribute_index)),
        )
        return np.asarray(indicator @ self.state_weights)

    def chain_graph(self, features: Features) -> FactorGraph:
        """The document's factor graph: one chain per sentence, no edge across sentences."""
        return FactorGraph.chain(
            self.unary(features), self.transitions, [len(s) for s in features], labels=self.labels
        )

    def crfsuite_tag(self, features: Features) -> list[list[str]]:
        """crfsuite's own Viterbi, sentence by sentence: the reference our decoders must match."""
        return [self._tagger.tag(sentence) if sentence else [] for sentence in features]

    def crfsuite_marginals(self, sentence: list[list[str]]) -> np.ndarray:
        """(n, K) crfsuite's own marginals for one sentence."""
        self._tagger.set(sentence)
        return np.array([[self._tagger.marginal(label, i) for label in self.labels] for i in range(len(sentence))])


def file_checksum(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def corpus_checksum(corpus: Corpus) -> str:
    """sha256 of the corpus file when it is one, else of its tokens and tags."""
    if Path(corpus.name).is_file():
        return file_checksum(corpus.name)
    digest = hashlib.sha256()
    for sentence in corpus.sentences:
        digest.update("\n".join(f"{t} {g}" for t, g in zip(sentence.tokens, sentence.tags)).encode())
        digest.update(b"\n\n")
    return digest.hexdigest()


def train(
    corpus: Corpus,
    out: str | Path,
    *,
    config: FeatureConfig = FeatureConfig(),
    scheme: str = "IOB2",
    c1: float = 0.05,
    c2: float = 0.01,
    max_iterations: int = 200,
    label_map: dict[str, str] | None = None,
    name: str | None = None,
    verbose: bool = True,
) -> CrfModel:
    """Train a linear-chain CRF with sklearn-crfsuite (L-BFGS, L1 ``c1`` + L2 ``c2``) and write
    the model directory ``out``. Gold tags are converted to ``scheme`` first; ``label_map``
    renames entity types (a type mapped to ``"O"`` is dropped, e.g. MISC for a 3-class model)."""
    import sklearn_crfsuite

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    scheme = schemes.normalize_scheme(scheme)
    xs, ys = [], []
    for document in corpus.documents:
        for sentence, features in zip(document.sentences, document_features([s.tokens for s in document.sentences], config)):
            xs.append(features)
            ys.append(schemes.render(map_types(schemes.chunks(sentence.tags), label_map), len(sentence.tokens), scheme))
    started = time.perf_counter()
    crf = sklearn_crfsuite.CRF(
        algorithm="lbfgs",
        c1=c1,
        c2=c2,
        max_iterations=max_iterations,
        all_possible_transitions=True,
        model_filename=str(out / MODEL_FILE),
        verbose=verbose,
    )
    crf.fit(xs, ys)
    seconds = time.perf_counter() - started
    metadata = {
        "name": name or out.name,
        "scheme": scheme,
        "labels": sorted({tag for tags in ys for tag in tags}),
        "features": config.to_json(),
        "tokenizer": TOKENIZER_NAME,
        "hgner_version": __version__,
        "crfsuite_version": pycrfsuite.__version__ if hasattr(pycrfsuite, "__version__") else "unknown",
        "label_map": label_map or {},
        "training": {
            "corpus": corpus.name,
            "sha256": corpus_checksum(corpus),
            "sentences": len(xs),
            "tokens": sum(len(x) for x in xs),
            "algorithm": "lbfgs",
            "c1": c1,
            "c2": c2,
            "max_iterations": max_iterations,
            "seconds": round(seconds, 1),
        },
    }
    write_metadata(out, metadata)
    return CrfModel(out, metadata)


def map_types(spans: list[schemes.Span], label_map: dict[str, str] | None) -> list[schemes.Span]:
    """Rename span types by ``label_map``; types mapped to ``"O"`` disappear."""
    if not label_map:
        return spans
    renamed = [(s, e, label_map.get(t, t)) for s, e, t in spans]
    return [span for span in renamed if span[2] != "O"]


def write_metadata(directory: Path, metadata: dict[str, Any]) -> None:
    (directory / META_FILE).write_text(json.dumps(metadata, indent=2, sort_keys=False) + "\n", encoding="utf-8")
