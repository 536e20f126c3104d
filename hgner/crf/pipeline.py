"""Documents in, tags out: features -> factor graph -> decoder -> tags. ``hgner evaluate``,
``hgner tag`` and the spaCy component all decode through :class:`Pipeline`, so they never disagree."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import accumulate

import numpy as np

from ..decoders import Decoder
from ..graph.factor_graph import FactorGraph
from ..graph.kinds import check_graph_kind
from . import skip
from .model import CrfModel, numbered_sentences


@dataclass
class DocumentGraph:
    """A document prepared for decoding: its sentences (token lists) and its chain graph."""

    sentences: Sequence[Sequence[str]]
    chain: FactorGraph
    graph: FactorGraph  # the graph decoders see: the chain, or the chain plus skip edges

    def split(self, labels: np.ndarray) -> list[np.ndarray]:
        """Per-sentence pieces of a (n,) array."""
        return by_sentence(labels, self.sentences)


def by_sentence(labels: np.ndarray, sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
    """Per-sentence pieces of a (n,) array over the tokens of ``sentences``."""
    ends = list(accumulate(map(len, sentences)))  # (not np.cumsum: most documents are short, numpy's call costs more)
    return [labels[start:end] for start, end in zip([0, *ends], ends)]


@dataclass
class DocumentResult:
    """A decoded document: tags per sentence (model scheme), label indices, optional marginals."""

    tags: list[list[str]]
    labels: np.ndarray
    marginals: np.ndarray | None = None
    stats: dict[str, float] = field(default_factory=dict)


class Pipeline:
    """A model and a decoder, applied to documents given as sentences of tokens."""

    def __init__(self, model: CrfModel, decoder: Decoder, graph: str = "chain") -> None:
        check_graph_kind(graph)
        self.model = model
        self.decoder = decoder
        self.graph_kind = graph
        self.skip = skip.load(model) if graph == "skip" else None

    def prepare(self, sentences: Sequence[Sequence[str]]) -> DocumentGraph:
        return self._with_skip(sentences, self.model.chain_graph(sentences))

    def prepare_documents(self, documents: Sequence[Sequence[Sequence[str]]]) -> list[DocumentGraph]:
        r"""Each document :meth:`prepare`\ d, their features found together (:meth:`~hgner.crf.model.CrfModel.chain_graphs`)."""
        return [self._with_skip(sentences, chain) for sentences, chain in zip(documents, self.model.chain_graphs(documents))]

    def _with_skip(self, sentences: Sequence[Sequence[str]], chain: FactorGraph) -> DocumentGraph:
        return DocumentGraph(sentences, chain, chain if self.skip is None else self.skip.graph(chain, sentences))

    def decode_prepared(self, prepared: DocumentGraph) -> DocumentResult:
        if self.decoder.decodes_features:
            labels_index = {label: k for k, label in enumerate(self.model.labels)}
            tags = self.model.crfsuite_tag(self.model.features(prepared.sentences))
            labels = np.array([labels_index[t] for sentence in tags for t in sentence], dtype=np.int64)
            return DocumentResult(tags, labels)
        decoding = self.decoder.decode(prepared.graph)
        names = self.model.labels
        tags = [list(map(names.__getitem__, piece.tolist())) for piece in prepared.split(decoding.labels)]
        return DocumentResult(tags, decoding.labels, decoding.marginals, decoding.stats)

    def decode(self, sentences: Sequence[Sequence[str]]) -> DocumentResult:
        return self.decode_prepared(self.prepare(sentences))

    def decode_documents(self, documents: Sequence[Sequence[Sequence[str]]]) -> list[DocumentResult]:
        """Each of several documents decoded as :meth:`decode` decodes it alone. On the chain
        graph, with a :attr:`~hgner.decoders.Decoder.separable` decoder, they are featurised and
        decoded together: one graph and one decoder call for all (short documents' fixed costs)."""
        if self.graph_kind != "chain" or not self.decoder.separable or len(documents) < 2:
            return [self.decode(sentences) for sentences in documents]
        graph = self.model.chain_graph(*numbered_sentences(documents))
        decoding = self.decoder.decode(graph)
        names = self.model.labels
        results, token = [], 0
        for document in documents:
            size = sum(map(len, document))
            labels = decoding.labels[token:token + size]
            marginals = None if decoding.marginals is None else decoding.marginals[token:token + size]
            tags = [list(map(names.__getitem__, piece.tolist())) for piece in by_sentence(labels, document)]
            results.append(DocumentResult(tags, labels, marginals, dict(decoding.stats)))
            token += size
        return results
