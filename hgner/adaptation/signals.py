"""What the decoders say about each sentence of a pool: the figures selection strategies rank by.

The pool is decoded a batch of documents at a time (up to :data:`BATCH_TOKENS` tokens, featurised
together, each as if alone: the graphs :class:`~hgner.crf.pipeline.Pipeline` builds). On each
batch's chain graph:

* Viterbi with forward-backward marginals (as ``hgner tag`` gets its confidences) gives the tags
  and, per token, the entropy of the marginal and the margin between the two likeliest labels;
* herded Gibbs and annealed Gibbs (``sweeps`` each) decode the same graph: where their labels and
  Viterbi's differ, the model's distribution has rival modes;
* with a model that has a skip potential, ``exact`` decodes the skip graph (the chain plus each
  document's skip edges between repeated names): where it differs from Viterbi on the chain, the
  document's other mentions pull a token another way.

Per sentence (every figure a sum over its tokens, so a longer sentence, which costs more to label,
counts more): ``entropy``; ``margin``, the entity-confidence margins: one minus the margin of each
predicted entity (the smallest over its tokens, as an entity's confidence is its least sure token)
and of each token outside them; ``disagreement``, the vote entropy of the decoders' labels (three,
or four with the skip graph's)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..core import schemes
from ..crf import skip
from ..crf.model import CrfModel, numbered_sentences
from ..decoders import make_decoder
from ..graph.factor_graph import FactorGraph
from .pool import Candidate, Pool

BATCH_TOKENS = 20_000  # tokens decoded at once (as hgner tag's chain groups)
RIVALS = ("herded", "gibbs")  # decoders whose labels are compared with Viterbi's on the same graph


@dataclass
class Signals:
    """Per-candidate figures of a pool of C sentences: Viterbi's ``tags`` (model scheme) and (C,)
    arrays ``tokens`` (length), ``entropy``, ``margin`` and ``disagreement``."""

    tags: list[list[str]]
    tokens: np.ndarray
    entropy: np.ndarray
    margin: np.ndarray
    disagreement: np.ndarray


def _batches(documents: list[list[Candidate]]) -> list[list[list[Candidate]]]:
    """Consecutive documents of up to :data:`BATCH_TOKENS` tokens together (a longer one alone)."""
    batches: list[list[list[Candidate]]] = []
    size = 0
    for document in documents:
        tokens = sum(len(c.tokens) for c in document)
        if not batches or size + tokens > BATCH_TOKENS:
            batches.append([])
            size = 0
        batches[-1].append(document)
        size += tokens
    return batches


def token_entropy(marginals: np.ndarray) -> np.ndarray:
    """(n,) entropy in nats of each row of (n, K) marginals."""
    p = np.clip(marginals, 1e-12, 1.0)
    return -(marginals * np.log(p)).sum(axis=1)


def token_margin(marginals: np.ndarray) -> np.ndarray:
    """(n,) the likeliest label's probability minus the second's, per row of (n, K) marginals."""
    top = np.partition(marginals, -2, axis=1)[:, -2:]
    return top[:, 1] - top[:, 0]


def vote_entropy(labels: np.ndarray, n_labels: int) -> np.ndarray:
    """(n,) entropy in nats of the votes of (D, n) decoders' label indices over ``n_labels`` labels."""
    counts = np.zeros((labels.shape[1], n_labels))
    for row in labels:
        counts[np.arange(labels.shape[1]), row] += 1
    return token_entropy(counts / labels.shape[0])


def unit_margins(tags: Sequence[str], margin: np.ndarray) -> float:
    """One sentence's entity-confidence margin score: the sum of one minus the margin of each
    predicted entity (its smallest token margin) and of each token outside the entities."""
    inside = np.zeros(len(tags), dtype=bool)
    total = 0.0
    for first, last, _ in schemes.chunks(tags):
        inside[first:last] = True
        total += 1.0 - float(margin[first:last].min())
    return total + float((1.0 - margin[~inside]).sum())


def skip_potential(model: CrfModel) -> skip.SkipModel | None:
    """The model's skip potential, or None when it has none (one recorded but damaged is an error)."""
    return skip.load(model) if skip.SKIP_ARRAYS in model.metadata.get("files", {}) else None


def with_skip_edges(chain: FactorGraph, documents: Sequence[Sequence[Sequence[str]]],
                    potential: skip.SkipModel) -> FactorGraph:
    """The chain graph of several documents (their tokens numbered in order) plus each document's
    skip edges: the skip graphs of the documents side by side, decoded in one call."""
    edges, start = [], 0
    for sentences in documents:
        edges.append(skip.skip_edges(sentences, potential.config) + start)
        start += sum(map(len, sentences))
    return chain.with_edges(np.concatenate(edges) if edges else np.zeros((0, 2), np.int64), potential.potential)


def compute(model: CrfModel, pool: Pool, seed: int, sweeps: int = 50,
            advance: Callable[[int], object] | None = None, rivals: bool = True) -> Signals:
    """The :class:`Signals` of every candidate of ``pool`` (in pool order), decoded by ``model``;
    the annealed Gibbs run takes ``seed``. Without ``rivals`` only Viterbi decodes (disagreement
    0 everywhere). ``advance(n)`` is told of every n sentences done."""
    viterbi = make_decoder("viterbi", marginals=True)
    others = [make_decoder(name, shared={"sweeps": sweeps, "seed": seed}) for name in RIVALS] if rivals else []
    potential = skip_potential(model) if rivals else None
    exact = make_decoder("exact") if potential is not None and potential.weight else None
    tags: list[list[str]] = []
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # per batch: (n,) entropy, margin, vote entropy
    lengths: list[int] = []
    for batch in _batches(pool.by_document()):
        sentences = [[list(c.tokens) for c in document] for document in batch]
        graph = model.chain_graph(*numbered_sentences(sentences))
        decoded = viterbi.decode(graph)
        assert decoded.marginals is not None  # (viterbi with marginals=True)
        votes = [decoded.labels] + [rival.decode(graph).labels for rival in others]
        if exact is not None and potential is not None:
            votes.append(exact.decode(with_skip_edges(graph, sentences, potential)).labels)
        parts.append((token_entropy(decoded.marginals), token_margin(decoded.marginals),
                      vote_entropy(np.stack(votes), len(model.labels))))
        flat = [sentence for document in sentences for sentence in document]
        start = len(lengths)
        lengths += [len(s) for s in flat]
        names = [model.labels[k] for k in decoded.labels.tolist()]
        tags += [names[a:b] for a, b in _spans(lengths[start:])]
        if advance is not None:
            advance(len(flat))
    return _per_sentence(tags, np.array(lengths, dtype=np.int64), parts)


def _spans(lengths: Sequence[int]) -> list[tuple[int, int]]:
    """``(start, end)`` of consecutive pieces of the given lengths."""
    ends = np.cumsum(lengths).tolist()
    return list(zip([0, *ends[:-1]], ends))


def _per_sentence(tags: list[list[str]], lengths: np.ndarray,
                  parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> Signals:
    """Token figures summed per sentence."""
    entropy, margin, votes = (np.concatenate([p[i] for p in parts]) for i in range(3))
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    margins = np.array([unit_margins(t, margin[a:a + len(t)]) for t, a in zip(tags, starts.tolist())])
    return Signals(tags, lengths, np.add.reduceat(entropy, starts), margins, np.add.reduceat(votes, starts))
