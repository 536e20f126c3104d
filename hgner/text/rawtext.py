"""A tagged corpus as the raw text a person would write, and entity scoring by character span.

``hgner evaluate --input raw`` rebuilds each document's text from the corpus tokens:

* tokens are joined by one space, except no space before ``, . : ; ? ! ) ] } » % 's n't 're
  'll 've 'm 'd`` (the clitics in any case: ``'S``, ``N'T``) and none after ``( [ { « ¿ ¡ $``;
* the sentences of a document are laid out by ``layout``: ``lines`` (one sentence per line),
  ``paragraph`` (the document one paragraph: all sentences on one line, joined by a space) or
  ``wrapped`` (that paragraph hard-wrapped at 72 columns, at spaces, as a text editor fills it),
  so that sentence ends must be found inside lines, and a headline or dateline runs into the
  sentence after it.

The gold entities become ``(start, end, type)`` character spans of that text; predicted entities
count as correct only with exactly the same span and type. Where the corpus ends a sentence inside
a name (``... Billy Mayfair, Ken`` / ``Green, Jerry Kelly ...``: a line break of the source text), its
two halves are two gold entities, which a paragraph joins with one space;
:func:`entities_joined_by_layout` gives the gold with such pairs made one, to measure what they cost.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..core import schemes
from ..core.scoring import EntityCounts, Score

LAYOUTS = ("lines", "paragraph", "wrapped")
WRAP_COLUMNS = 72
NO_SPACE_BEFORE = frozenset({",", ".", ":", ";", "?", "!", ")", "]", "}", "»", "%", "'s", "n't", "'re", "'ll", "'ve",
                             "'m", "'d"})
NO_SPACE_AFTER = frozenset({"(", "[", "{", "«", "¿", "¡", "$"})

CharSpan = tuple[int, int, str]  # [start, end) character offsets and entity type


@dataclass(frozen=True)
class RawDocument:
    """A document's rebuilt text, its gold entities as character spans, and each sentence's
    token offsets into the text (``sentences[i][j] == (start, end)`` of token j of sentence i)."""

    text: str
    entities: list[CharSpan]
    sentences: list[list[tuple[int, int]]]


def join_tokens(tokens: Sequence[str]) -> tuple[str, list[tuple[int, int]]]:
    """One sentence's text by the spacing rules, and each token's ``(start, end)`` in it."""
    pieces: list[str] = []
    offsets: list[tuple[int, int]] = []
    length = 0
    previous = None
    for token in tokens:
        if previous is not None and previous not in NO_SPACE_AFTER and token.lower() not in NO_SPACE_BEFORE:
            pieces.append(" ")
            length += 1
        pieces.append(token)
        offsets.append((length, length + len(token)))
        length += len(token)
        previous = token
    return "".join(pieces), offsets


def wrap(line: str, columns: int = WRAP_COLUMNS) -> str:
    """``line`` with spaces turned into line breaks so that no line is longer than ``columns``
    characters (a word longer than that stays whole). Character offsets are unchanged."""
    characters = list(line)
    start = 0  # where the current output line starts
    last_space = -1
    for i, character in enumerate(characters):
        if character == " ":
            if i - start > columns and last_space > start:
                characters[last_space] = "\n"
                start = last_space + 1
            last_space = i
    if len(characters) - start > columns and last_space > start:
        characters[last_space] = "\n"
    return "".join(characters)


def rebuild(sentences: Sequence[Sequence[str]], tags: Sequence[Sequence[str]], layout: str = "lines") -> RawDocument:
    """A document (tokens and tags per sentence) as text in ``layout``, ending with a newline."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; expected one of {', '.join(LAYOUTS)}")
    lines: list[str] = []
    entities: list[CharSpan] = []
    offsets: list[list[tuple[int, int]]] = []
    position = 0
    for tokens, sentence_tags in zip(sentences, tags, strict=True):
        line, token_offsets = join_tokens(tokens)
        shifted = [(start + position, end + position) for start, end in token_offsets]
        entities += [(shifted[first][0], shifted[last - 1][1], label) for first, last, label in schemes.chunks(sentence_tags)]
        offsets.append(shifted)
        lines.append(line)
        position += len(line) + 1
    if layout == "lines":
        return RawDocument("\n".join(lines) + "\n", entities, offsets)
    paragraph = " ".join(lines)
    return RawDocument((wrap(paragraph) if layout == "wrapped" else paragraph) + "\n", entities, offsets)


def entities_joined_by_layout(document: RawDocument, layout: str) -> list[CharSpan]:
    """``document``'s gold entities with every pair that ``layout`` runs together made one span: an
    entity ending one corpus sentence and an entity of the same type beginning the next, which a
    ``paragraph`` or ``wrapped`` layout separates by one space or line break only (``lines`` keeps
    the sentence on its own line, so nothing is joined). Such a pair is usually one name the
    corpus broke at a line end (``Ken`` / ``Green``), sometimes two (table rows ``United States at
    Netherlands`` / ``Czech Republic at Germany``), so scores against it bound what the breaks cost."""
    if layout == "lines":
        return list(document.entities)
    ends = {sentence[-1][1] for sentence in document.sentences if sentence}
    starts = {sentence[0][0] for sentence in document.sentences if sentence}
    joined: list[CharSpan] = []
    for start, end, label in sorted(document.entities):
        if joined and joined[-1][2] == label and joined[-1][1] in ends and start in starts and start == joined[-1][1] + 1:
            joined[-1] = (joined[-1][0], end, label)
        else:
            joined.append((start, end, label))
    return joined


def score_spans(gold: Iterable[Iterable[CharSpan]], predicted: Iterable[Iterable[CharSpan]], scheme: str) -> Score:
    """Entity P/R/F1 by exact character span and type, document by document (``gold`` and
    ``predicted`` yield one collection of spans per document)."""
    counts = EntityCounts()
    for gold_spans, predicted_spans in zip(gold, predicted, strict=True):
        counts.add(gold_spans, predicted_spans)
    return counts.score(schemes.normalize_scheme(scheme), "conlleval")
