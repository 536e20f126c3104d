"""Sentence starts learned from a corpus's own sentences, for the runs of text that the rules of
:mod:`hgner.text.sentences` cannot split: a results table or a list written as one paragraph
(``... Division two Plymouth 2 Preston 1 Division three Swansea 1 Lincoln 2``), where no
punctuation, line break or capital letter after an end mark says where a sentence starts.

``hgner train`` fits a small linear-chain CRF (labels ``B``, a token that starts a sentence, and
``I``) on windows of :data:`WINDOW` consecutive sentences of the training corpus's documents, joined
as they would run together in a paragraph, using only the shapes of the tokens around each position
and their lowercase forms (:func:`boundary_attributes`). The model folder keeps it as
``sentence_starts.crfsuite``; :class:`SentenceStarts` decodes it (Viterbi) when text is tagged.

It looks inside the sentences the rules leave (:meth:`SentenceStarts.penalty`): freely inside
one with no end mark (``. ! ?``) at its end, and inside one the rules ended only where it is sure
(its score for a start must beat a penalty, which the model records: :data:`ENDED_PENALTY` unless
``hgner train --sentence-start-penalty`` chose another), as when a newspaper's bylines and section
names run into the next sentence. It leaves alone a sentence on a line of its own that ends with
an end mark or is shorter than a line of hard-wrapped prose, so that text laid out one sentence per
line is split by the rules alone. A model trained before it, or without it, splits by the rules
alone."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache

import numpy as np

from .sentences import SENTENCE_END, WRAPPED_LINE_CHARS, TokenizedSentence

WINDOW = 20  # sentences per training sequence: a paragraph's worth
C1, C2, MAX_ITERATIONS = 0.1, 0.01, 100  # crfsuite's L-BFGS settings for the starts
START, INSIDE = "B", "I"  # the labels: a token that starts a sentence, any other token
# taken off each start's score inside a sentence the rules ended, by default (docs/development/research-log.md)
ENDED_PENALTY = 3.0
MAX_PENALTY = 100.0  # a larger one would never let a start through (meta.schema.json's sentence_starts.ended_penalty too)
MAX_CACHE = 100_000  # tokens, pairs and five shapes remembered with their weights (each)
_NUMBER = re.compile(r"[0-9][0-9.,:/\-]*")


def recorded_penalty(metadata: dict) -> float:
    """The penalty a model's ``meta.json`` records for its starts inside a sentence the rules ended
    (:data:`ENDED_PENALTY` for a model trained before it was recorded)."""
    return metadata.get("sentence_starts", {}).get("ended_penalty", ENDED_PENALTY)


@lru_cache(maxsize=1 << 16)
def token_shape(word: str) -> str:
    """A word's coarse shape: ``d`` a number (``2``, ``6-2``, ``1996-08-30``), ``X`` all capitals
    (``X1`` a single capital letter), ``Xx`` capitalised, ``x`` lower case, else the token's
    first two characters (punctuation)."""
    if _NUMBER.fullmatch(word):
        return "d"
    letters = [c for c in word if c.isalpha()]
    if not letters:
        return word[:2]
    if all(c.isupper() for c in letters):
        return "X" if len(letters) > 1 else "X1"
    return "Xx" if letters[0].isupper() else "x"


def _shape_attributes(shapes: tuple[str, str, str, str, str]) -> list[str]:
    """The attributes of a position from the shapes of the tokens two before to two after it (and
    the bias ``b``), which hold for any position with those shapes."""
    before2, before, shape, after, after2 = shapes
    return ["b", f"s={shape}", f"sp={before}", f"spp={before2}", f"sn={after}", f"snn={after2}",
            f"sp|s={before}|{shape}", f"sp|s|sn={before}|{shape}|{after}", f"spp|sp|s={before2}|{before}|{shape}"]


def _positions(tokens: Sequence[str]) -> Iterator[tuple[str, str, str, tuple[str, str, str, str, str]]]:
    """Per position: the lowercase forms of the token, the one before and the one after (``#``
    beyond the edges), and the shapes from two before to two after."""
    shapes = ["#", "#", *map(token_shape, tokens), "#", "#"]
    lower = ["#", *(t.lower() for t in tokens), "#"]
    for i in range(len(tokens)):
        yield lower[i + 1], lower[i], lower[i + 2], (shapes[i], shapes[i + 1], shapes[i + 2], shapes[i + 3], shapes[i + 4])


def boundary_attributes(tokens: Sequence[str]) -> list[list[str]]:
    """Attributes of each position of ``tokens`` (run-together sentences) for deciding whether a
    sentence starts there: the lowercase forms of the token and its neighbours, the shapes of the
    two tokens either side, and conjunctions of the shapes."""
    return [[f"w={word}", f"p={before}", f"n={after}", f"p|s={before}|{shapes[2]}", *_shape_attributes(shapes)]
            for word, before, after, shapes in _positions(tokens)]


def _cased(sentences: Sequence[Sequence[str]]) -> bool:
    """Whether a document has both lower- and upper-case letters (a case-augmented copy has not)."""
    text = "".join(token for sentence in sentences for token in sentence)
    return text != text.lower() and text != text.upper()


def training_sequences(documents: Iterable[Sequence[Sequence[str]]]) -> tuple[list[list[list[str]]], list[list[str]]]:
    """Attributes and ``B``/``I`` labels of windows of :data:`WINDOW` consecutive sentences of each
    document (token lists per sentence) that has both cases; case-augmented copies are left out."""
    xs, ys = [], []
    for document in documents:
        sentences = [s for s in document if s]
        if not _cased(sentences):
            continue
        for first in range(0, len(sentences), WINDOW):
            window = sentences[first:first + WINDOW]
            xs.append(boundary_attributes([token for sentence in window for token in sentence]))
            ys.append([label for sentence in window for label in [START] + [INSIDE] * (len(sentence) - 1)])
    return xs, ys


def _line_edge(text: str, at: int, step: int) -> bool:
    """Whether only spaces and tabs lie between ``text[at]`` (walking by ``step``) and a line break
    or the end of the text."""
    while 0 <= at < len(text) and text[at] in " \t":
        at += step
    return not 0 <= at < len(text) or text[at] in "\n\r"


class SentenceStarts:
    """The learned sentence starts of a model: crfsuite's labels, attributes, state weights (A, K)
    and transitions (K, K), as :func:`hgner.crf.crfsuite_adapter.read_crfsuite_weights` reads them;
    ``ended_penalty``: taken off a start's score inside a sentence the rules ended (:meth:`penalty`).
    Decoding needs only each attribute's weight for ``B`` less its weight for ``I``; the
    attributes of a position's shapes are summed once per distinct five shapes."""

    def __init__(self, labels: Sequence[str], attributes: Sequence[str], state_weights: np.ndarray,
                 transitions: np.ndarray, ended_penalty: float = ENDED_PENALTY) -> None:
        self.ended_penalty = ended_penalty
        self.start = list(labels).index(START)  # (labels B and I: CrfModel.sentence_starts checks them)
        inside = 1 - self.start
        difference = state_weights[:, self.start] - state_weights[:, inside]
        self.weights = {a: w for a, w in zip(attributes, difference.tolist()) if w}
        t = transitions.tolist()
        self.transitions = ((t[inside][inside], t[inside][self.start]), (t[self.start][inside], t[self.start][self.start]))
        (ii, i_s), (si, ss) = self.transitions
        # the most that B instead of I at one position gains through the transitions on either side
        # (the last position has none after it)
        self._flip_gain = max(i_s - ii, ss - si) + max(si - ii, ss - i_s, 0.0)
        # each remembered: tokens, (word before, shape) pairs and five shapes recur
        self._known_token = lru_cache(MAX_CACHE)(self._token)
        self._known_pair = lru_cache(MAX_CACHE)(self._pair_weight)
        self._known_shapes = lru_cache(MAX_CACHE)(self._shape_weight)

    def _token(self, token: str) -> tuple[str, str, float, float, float]:
        """A token's lowercase form, shape, and the weights of its form as the word, the word before
        and the word after a position."""
        weights, lower = self.weights, token.lower()
        return (lower, token_shape(token), weights.get(f"w={lower}", 0.0), weights.get(f"p={lower}", 0.0),
                weights.get(f"n={lower}", 0.0))

    def _shape_weight(self, shapes: tuple[str, str, str, str, str]) -> float:
        return sum(self.weights.get(a, 0.0) for a in _shape_attributes(shapes))

    def _pair_weight(self, before: str, shape: str) -> float:
        return self.weights.get(f"p|s={before}|{shape}", 0.0)

    def scores(self, tokens: Sequence[str]) -> list[float]:
        """(N,) each position's score for ``B`` less its score for ``I`` (the sum of the weights of
        its :func:`boundary_attributes`)."""
        edge = ("#", "#", self.weights.get("w=#", 0.0), self.weights.get("p=#", 0.0), self.weights.get("n=#", 0.0))
        lower, shapes, as_word, as_before, as_after = zip(edge, edge, *map(self._known_token, tokens), edge, edge)
        pair_weight, shape_weight = self._known_pair, self._known_shapes
        windows = zip(*(shapes[k:len(shapes) - 4 + k] for k in range(5)))  # the shapes two before to two after
        return [word + before + after + pair_weight(*pair) + shape_weight(shape5)
                for word, before, after, pair, shape5 in zip(as_word[2:-2], as_before[1:-3], as_after[3:-1],
                                                             zip(lower[1:-3], shapes[2:-2]), windows)]

    def starts(self, tokens: Sequence[str], penalty: float = 0.0) -> list[int]:
        """The positions after the first where the Viterbi labelling of ``tokens`` starts a sentence;
        ``penalty`` is taken off the score of every start (0: crfsuite's labelling)."""
        (ii, i_s), (si, ss) = self.transitions
        scores = self.scores(tokens)
        if max(scores[1:], default=-math.inf) - penalty + self._flip_gain <= 0:
            return []  # a start anywhere would score more as inside: the labelling has none
        best_inside, best_start = 0.0, scores[0] - penalty
        came = []  # per position after the first: (the label before, if this one is I; if it is B); 1 = B
        for score in scores[1:]:
            from_inside, from_start = best_inside + ii, best_start + si
            to_start_inside, to_start_start = best_inside + i_s, best_start + ss
            came.append((int(from_start > from_inside), int(to_start_start > to_start_inside)))
            best_inside = max(from_inside, from_start)
            best_start = max(to_start_inside, to_start_start) + score - penalty
        label = int(best_start > best_inside)
        found = []
        for i in range(len(scores) - 1, 0, -1):
            if label:
                found.append(i)
            label = came[i - 1][label]
        return found[::-1]

    def penalty(self, text: str, sentence: TokenizedSentence) -> float | None:
        """How the learned starts look inside ``sentence`` of ``text`` (a sentence of the rules): None,
        not at all, for a single token or a sentence on a line of its own (one sentence per line:
        the line break ended it) unless it has no end mark and is at least
        :data:`~hgner.text.sentences.WRAPPED_LINE_CHARS` long; otherwise with no penalty where it has no end
        mark (``. ! ?``) at its end, and with the model's ``ended_penalty`` where it has one, so that
        they undo a sentence the rules ended only where they are sure."""
        tokens = sentence.tokens
        if len(tokens) < 2:
            return None
        ended = tokens[-1] in SENTENCE_END
        start, end = sentence.offsets[0][0], sentence.offsets[-1][1]
        if _line_edge(text, start - 1, -1) and _line_edge(text, end, 1):
            return None if ended or end - start < WRAPPED_LINE_CHARS else 0.0
        return self.ended_penalty if ended else 0.0

    def split(self, text: str, sentences: list[TokenizedSentence]) -> list[TokenizedSentence]:
        """``sentences`` of ``text`` (the rules') each cut where the learned starts say
        (:meth:`penalty` says where they look)."""
        out = []
        for sentence in sentences:
            penalty = self.penalty(text, sentence)
            cuts = [] if penalty is None else self.starts(sentence.tokens, penalty)
            if not cuts:
                out.append(sentence)
                continue
            previous = 0
            for cut in [*cuts, len(sentence.tokens)]:
                out.append(TokenizedSentence(sentence.tokens[previous:cut], sentence.offsets[previous:cut]))
                previous = cut
        return out
