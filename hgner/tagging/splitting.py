"""How a text is cut into documents before tagging (:attr:`TagSettings.split
<hgner.tagging.settings.TagSettings.split>`, ``hgner tag --split``), and the hint that a text
tagged whole looks like one short text per line.

Document-level features (and truecasing) read a whole document: unrelated texts in one document
lend each other their labels. ``lines`` makes each non-blank line its own document, as if each
were in a file of its own; entities keep their offsets into the whole text."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from .defaults import DEFAULT_SPLIT

Span = tuple[int, int]  # [start, end) character offsets of one document in a text

_LINE = re.compile(r"[^\n]+")
HINT_SAMPLE_CHARS = 100_000  # the start of a text that the hint reads
HINT_MIN_LINES = 20  # fewer lines than this: no hint
HINT_LONGEST_LINE = 300  # lines longer than this are prose, not a short text each
HINT_SHORT_SHARE = 0.9  # share of the lines at most HINT_LONGEST_LINE characters
HINT_CAPITAL_SHARE = 0.8  # share of the lines that start as a text does (not in lower case: wrapped prose does)


def whole(text: str) -> Iterator[Span]:
    """The text as one document."""
    yield 0, len(text)


def lines(text: str) -> Iterator[Span]:
    """Each line holding more than white space (its ``\\r\\n`` or ``\\n`` left out) as a document."""
    for match in _LINE.finditer(text):
        start, end = match.span()
        if text[end - 1] == "\r":
            end -= 1
        if end > start and not text[start:end].isspace():
            yield start, end


SPLITS: dict[str, Callable[[str], Iterator[Span]]] = {DEFAULT_SPLIT: whole, "lines": lines}
"""Each way to cut a text into documents, by name: its spans, in text order (blank text: none need be given)."""


def documents(text: str, split: str) -> Iterator[Span]:
    """The spans of ``text``'s documents by :data:`SPLITS` ``split``; at least one (the whole text
    when the split finds none, so that a blank text is still one, empty, document)."""
    found = False
    for span in SPLITS[split](text):
        found = True
        yield span
    if not found:
        yield 0, len(text)


def looks_like_lines(text: str) -> bool:
    """Whether ``text`` (its first :data:`HINT_SAMPLE_CHARS`) looks like one short text per line:
    at least :data:`HINT_MIN_LINES` lines, no blank line between them, nearly all short, and most
    starting as a text does (not in lower case, which wrapped prose does)."""
    sample = text[:HINT_SAMPLE_CHARS]
    if len(sample) < len(text):  # the last line may be cut: leave it out
        sample = sample[:sample.rfind("\n") + 1]
    rows = sample.strip().split("\n")
    if len(rows) < HINT_MIN_LINES or any(not row.strip() for row in rows):
        return False
    short = sum(len(row) <= HINT_LONGEST_LINE for row in rows)
    capital = sum(not row.lstrip()[:1].islower() for row in rows)
    return short >= HINT_SHORT_SHARE * len(rows) and capital >= HINT_CAPITAL_SHARE * len(rows)
