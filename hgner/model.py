"""CRF models: the one place that talks to crfsuite (training, loading, its reference tagger).

A model is a directory holding ``model.crfsuite`` (crfsuite's native file) and ``meta.json``
(labels, tag scheme, feature configuration, tokenizer, versions, training data checksum, scores).
No pickle anywhere. Loading reads crfsuite's weights into numpy arrays so a document becomes a
:class:`~hgner.graph.FactorGraph` by one sparse matrix product.
"""

from __future__ import annotations

import hashlib
import json
import struct
import time
from itertools import repeat
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
from .features import GAZETTEER_FILE, TRUECASE_FILE, FeatureConfig, FeatureResources, document_features, learn_truecase
from .graph import FactorGraph
from .tokenizer import NAME as TOKENIZER_NAME

MODEL_FILE = "model.crfsuite"
META_FILE = "meta.json"

Features = list[list[list[str]]]  # sentences -> tokens -> attribute strings


def shipped_models_dir() -> Path:
    """Where the shipped models are: the installed ``hgner.models`` package data, or the
    top-level ``models/`` folder when running from a source checkout."""
    try:
        return Path(str(resources.files("hgner.models")))
    except ModuleNotFoundError:
        return Path(__file__).resolve().parent.parent / "models"


def builtin_models() -> list[str]:
    """Names of the models shipped with the package."""
    root = shipped_models_dir()
    return sorted(p.name for p in root.iterdir() if (p / META_FILE).is_file()) if root.is_dir() else []


def model_directory(name_or_path: str | Path) -> Path:
    """A model directory from a path, or from the name of a shipped model."""
    path = Path(name_or_path)
    if (path / META_FILE).is_file():
        return path
    if path.name == str(name_or_path):  # a bare name: look among the shipped models
        candidate = shipped_models_dir() / str(name_or_path)
        if (candidate / META_FILE).is_file():
            return candidate
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
        self.resources = FeatureResources.load(directory)
        self.scheme: str = metadata["scheme"]
        self._tagger = pycrfsuite.Tagger()
        self._tagger.open(str(directory / MODEL_FILE))
        labels, attributes, self.state_weights, self.transitions = read_crfsuite_weights(directory / MODEL_FILE)
        self.labels: tuple[str, ...] = tuple(labels)
        self.attribute_index: dict[str, int] = {attribute: a for a, attribute in enumerate(attributes)}

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
        return document_features(sentences, self.feature_config, self.resources)

    def unary(self, features: Features) -> np.ndarray:
        """(n, K) state scores of a document's tokens: attribute indicator matrix times weights."""
        get = self.attribute_index.get
        flat: list[str] = []
        lengths: list[int] = []
        for sentence in features:
            for attributes in sentence:
                flat.extend(attributes)
                lengths.append(len(attributes))
        n_attributes = len(self.attribute_index)
        columns = np.fromiter(map(get, flat, repeat(-1)), dtype=np.int64, count=len(flat))
        known = columns >= 0  # attributes the model has no weight for are left out
        rows = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)[known]
        row_ends = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=len(lengths)), out=row_ends[1:])
        indicator = scipy.sparse.csr_matrix(
            (np.ones(int(known.sum())), columns[known], row_ends), shape=(len(lengths), n_attributes)
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
        magic, _, model_type, _, _, n_labels, n_attributes, features_at, labels_at, attributes_at = \
            struct.unpack_from("<4sI4sIIIIIII", data, 0)
        if magic != b"lCRF" or model_type != b"FOMC":
            raise ValueError(f"not a crfsuite CRF1d model (magic {magic!r}, type {model_type!r})")
        chunk, _, n_features = struct.unpack_from("<4sII", data, features_at)
        if chunk != b"FEAT":
            raise ValueError(f"expected the FEAT chunk at byte {features_at}, got {chunk!r}")
        features = np.frombuffer(data, dtype=_FEATURE, count=n_features, offset=features_at + 12)
        labels = _cqdb_strings(data, labels_at, n_labels)
        attributes = _cqdb_strings(data, attributes_at, n_attributes)
    except struct.error as error:
        raise ValueError(f"truncated crfsuite model ({error})") from None
    state = features[features["type"] == 0]
    transition = features[features["type"] == 1]
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
    offsets = np.frombuffer(data, dtype="<u4", count=count, offset=start + backward_at).tolist()
    strings = []
    for offset in offsets:
        size = struct.unpack_from("<I", data, start + offset + 4)[0]
        strings.append(data[start + offset + 8:start + offset + 7 + size].decode("utf-8"))
    return strings


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
    scheme: str = "IO",
    c1: float = 0.05,
    c2: float = 0.01,
    max_iterations: int = 200,
    label_map: dict[str, str] | None = None,
    name: str | None = None,
    verbose: bool = True,
    gazetteer: dict[str, list[str]] | None = None,
    language: str = "en",
    documents: str = "corpus",
) -> CrfModel:
    """Train a linear-chain CRF with sklearn-crfsuite (L-BFGS, L1 ``c1`` + L2 ``c2``) and write
    the model directory ``out``. Gold tags are converted to ``scheme`` first; ``label_map``
    renames entity types (a type mapped to ``"O"`` is dropped, e.g. MISC for a 3-class model).
    Feature resources go into ``out`` as JSON: the truecasing table, learned from ``corpus`` when
    ``config.truecase``, and ``gazetteer`` (lists of lowercase entries) when ``config.gazetteer``.
    ``language`` (ISO code) and ``documents`` (how ``corpus`` was grouped into documents, see
    :func:`hgner.corpus.regroup_documents`) are recorded in ``meta.json``."""
    import sklearn_crfsuite

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    scheme = schemes.normalize_scheme(scheme)
    resources = FeatureResources(
        truecase=learn_truecase(s.tokens for s in corpus.sentences) if config.truecase else {},
        gazetteer=(gazetteer or {}) if config.gazetteer else {},
    )
    if config.gazetteer and not resources.gazetteer:
        raise ValueError("config.gazetteer needs gazetteer lists")
    for stale in (TRUECASE_FILE, GAZETTEER_FILE):  # resources of an earlier training; other files are kept
        (out / stale).unlink(missing_ok=True)
    resource_files = resources.save(out)
    xs, ys = [], []
    for document in corpus.documents:
        sentences = [s.tokens for s in document.sentences]
        for sentence, features in zip(document.sentences, document_features(sentences, config, resources)):
            xs.append(features)
            ys.append(relabel(sentence.tags, label_map, scheme))
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
        "language": language,
        "scheme": scheme,
        "documents": documents,
        "labels": sorted({tag for tags in ys for tag in tags}),
        "features": config.to_json(),
        "tokenizer": TOKENIZER_NAME,
        "hgner_version": __version__,
        "crfsuite_version": _package_version("python-crfsuite"),
        "sklearn_crfsuite_version": _package_version("sklearn-crfsuite"),
        "label_map": label_map or {},
        "resources": resource_files,
        "training": {
            "corpus": corpus.name,
            "corpus_scheme": corpus.scheme,
            "sha256": corpus_checksum(corpus),
            "sentences": len(xs),
            "tokens": sum(len(x) for x in xs),
            "algorithm": "lbfgs",
            "c1": c1,
            "c2": c2,
            "max_iterations": max_iterations,
            "seconds": round(seconds, 1),
        },
        "model_bytes": sum(p.stat().st_size for p in [out / MODEL_FILE, *(out / f for f in resource_files)]),
    }
    write_metadata(out, metadata)
    return CrfModel(out, metadata)


def _package_version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "unknown"


def relabel(tags: Sequence[str], label_map: dict[str, str] | None, scheme: str) -> list[str]:
    """Gold ``tags`` rendered in ``scheme`` with entity types renamed by ``label_map``; types
    mapped to ``"O"`` disappear (e.g. MISC for a 3-class model)."""
    spans = schemes.chunks(tags)
    if label_map:
        spans = [(s, e, label_map.get(t, t)) for s, e, t in spans]
        spans = [span for span in spans if span[2] != "O"]
    return schemes.render(spans, len(tags), scheme)


def write_metadata(directory: Path, metadata: dict[str, Any]) -> None:
    (directory / META_FILE).write_text(json.dumps(metadata, indent=2, sort_keys=False) + "\n", encoding="utf-8")
