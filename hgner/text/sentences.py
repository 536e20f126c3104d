"""Sentence ends in tokenized text: where ``hgner tag`` (:class:`hgner.text.tokenizer.TextTokenizer`)
and the spaCy component split a text's tokens into sentences, as the CoNLL corpora split theirs.

A sentence ends

* after a sentence-final punctuation token (``. ! ?`` and spaCy's sentencizer's other
  terminators), with any closing quotes and brackets that follow it. An opening mark starts the
  next (:func:`opens_sentence`): ``¿ ¡ ( «`` or a quote mark with a space before it and none
  after, a straight double quote spaced on both sides when the quotes before it in the paragraph
  are balanced (``said. " We``: quote parity), or a dash spaced on both sides (``said. -- Reuters``);
* after an abbreviation's period (``Corp.``, ``U.S.``, ``Fla.``; not an initial) when a
  capitalised stop word of the language (``The``, ``It``) or an opening quote follows, the period
  then being the full stop (``Fla .``): :func:`abbreviation_ends`;
* before an item of a numbered list run into a paragraph (``... 12.71 seconds 2. Ludmila
  Engquist``): ``N.`` (one token) with a capitalised word after it, in a run of at least
  :data:`LIST_ITEMS` items numbered one after another (:func:`list_markers`); a list number at
  the start of a line keeps its period too;
* after a date written ``1996-12-06`` when a capitalised word follows (the end of a dateline),
  and before the dateline's place when a byline or headline runs into it on the same line
  (``Larisa Sayenko MINSK 1996-08-30``; :func:`dateline_start`);
* before a capitalised word that follows a run of :data:`HEADLINE_WORDS` or more all-caps words
  (an all-caps headline run into the next sentence, ``... TRAINS IN U.S. Maggie McNeil``);
* at a blank line, always;
* at a single line break after a line that is not a full line of hard-wrapped prose: see
  :func:`line_ends_sentence`;
* where the model's learned sentence starts say (:mod:`hgner.text.sentence_starts`), for a model that
  has them: inside a run of text the rules above leave with no end mark (a results table written
  as one paragraph), and, where they are sure, inside a sentence the rules ended (a byline run
  into the next sentence).

The rules are not versioned, so a change to them applies to every model. A model learns from its
corpus's own sentences, and from these rules only when it was trained with ``hgner train
--prose-augment`` (:func:`hgner.data.augment.prose_augmented`; no shipped model is): such a model
learned from the rules as they were when it was trained.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass
from functools import cache, cached_property
from typing import TYPE_CHECKING

from .languages import language_defaults

if TYPE_CHECKING:
    from spacy.tokens import Doc


@dataclass(frozen=True)
class TokenizedSentence:
    """Token strings and their ``(start, end)`` character offsets into the text."""

    tokens: list[str]
    offsets: list[tuple[int, int]]


SENTENCE_END = frozenset(
    ".!?\u0589\u061f\u06d4\u0700\u0701\u0702\u0964\u0965\u104a\u104b\u1362\u1367\u1368\u166e"
    "\u1803\u1809\u2047\u2048\u2049\u203c\u203d\u3002\ufe52\ufe57\uff01\uff0e\uff1f\uff61"
)


OPENING_MARKS = frozenset("¿¡([{«»‹›\"'“”„‘’‚")  # marks that may open a sentence (quotes: by their spacing)


def opens_sentence(text: str, start: int, word: str) -> bool:
    """Whether the punctuation token ``word`` at ``text[start]``, after a sentence end, opens the
    next sentence: one of :data:`OPENING_MARKS` with whitespace (or the start of the text) before
    it and a character other than whitespace after it (``said. "We`` and ``hará? ¿Qué`` open;
    the ``"`` of ``win." He`` and the ``)`` of ``Fin.) Ana`` close). The spacing decides, since ``"`` opens and closes alike
    and ``»``, ``“`` open in some languages and close in others."""
    after = start + len(word)
    return (word in OPENING_MARKS and (start == 0 or text[start - 1].isspace())
            and after < len(text) and not text[after].isspace())


# the shortest line read as hard-wrapped prose (filling at 72 columns leaves lines of 60 or more, but for a rare long word)
WRAPPED_LINE_CHARS = 60


def line_ends_sentence(line: str, last: str, ended: bool, following: str, width: int) -> bool:
    """Whether a single line break ends the sentence. ``line`` is the line's text up to its last
    token ``last``; ``ended`` says whether the sentence already has its final punctuation;
    ``following`` is the first token of the next line; ``width`` the length of the text's longest line.

    A line break before a date written ``1996-08-29`` never ends an unfinished sentence (a
    dateline's place wrapped away from its date). Otherwise it ends a sentence unless the line
    looks like a full line of hard-wrapped prose:
    at least :data:`WRAPPED_LINE_CHARS` characters long, with lowercase letters (not a headline),
    without final punctuation, not ending in a colon (a list follows), and neither an
    abbreviation (``Lear Corp.``, but not an initial: ``S.`` ``Watkin``) nor a number or bracket
    (a results table: ``6-2 6-2``, ``(U.S.)``) before a word that starts with a capital letter or
    a digit. An abbreviation ends it only where ``following`` would have fitted on the line within
    ``width``: a wrapper breaks a line only where the next word does not fit, so a break the word
    would not have fitted before may be the wrapper's, and then the rules for the words in a
    paragraph decide (:func:`abbreviation_ends`). Chosen on eng.train and eng.testa rendered one
    sentence per line and hard-wrapped at 72 columns (benchmarks/tokenizer_agreement.py), the width
    rule on eng.testa and Wikigold (docs/development/research-log.md).
    """
    if not ended and _ISO_DATE.fullmatch(following):
        return False
    if ended or len(line) < WRAPPED_LINE_CHARS or last == ":" or (last != "," and not any(c.islower() for c in line)):
        return True
    first = following[:1]
    if last[-1:] == ".":
        return first.isupper() and not _INITIAL.fullmatch(last) and len(line) + 1 + len(following) <= width
    return (last[-1:].isdigit() or last == ")") and (first.isupper() or first.isdigit())


_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")  # ends a dateline (AL-AIN, United Arab Emirates 1996-12-06)
_INITIAL = re.compile(r"[^\W\d_]\.")  # one letter and a period: a name's initial (S. Watkin)
HEADLINE_WORDS = 3  # all-caps words before a capitalised word that end a headline run into a sentence
DATELINE_WORDS = 8  # the most tokens a dateline's place may take before its date


def _all_caps_word(word: str) -> bool:
    return word.isupper() and sum(c.isalpha() for c in word) >= 2


def dateline_start(tokens: list[str]) -> int:
    """Where the dateline that ends with the date ``tokens[-1]`` starts, when a byline or headline
    runs into it in the same sentence (``Larisa Sayenko MINSK 1996-08-30`` -> 2, ``Nadim Ladki
    AL-AIN , United Arab Emirates 1996-12-06`` -> 2): its first all-caps word, within
    :data:`DATELINE_WORDS` tokens of the date, with only capitalised words and commas between
    them, and after a word that is not all caps. 0 (no split) otherwise."""
    k = len(tokens) - 2
    while k >= max(0, len(tokens) - 1 - DATELINE_WORDS) and not _all_caps_word(tokens[k]):
        if not (tokens[k] == "," or tokens[k][:1].isupper()):
            return 0
        k -= 1
    if k < 0 or not _all_caps_word(tokens[k]):
        return 0
    while k > 0 and (_all_caps_word(tokens[k - 1]) or tokens[k - 1] == "-"):
        k -= 1
    return k if k > 0 and tokens[k - 1][:1].isupper() and any(c.islower() for c in tokens[k - 1]) else 0


def ends_headline(tokens: list[str], word: str) -> bool:
    """Whether the capitalised ``word`` starts a sentence after a headline: the sentence so far
    ends with :data:`HEADLINE_WORDS` or more all-caps words (punctuation between them allowed) and
    has no lower-case letter, and ``word`` has one (``... TRAINS IN U.S.`` before ``Maggie``)."""
    if not (word[:1].isupper() and any(c.islower() for c in word)):
        return False
    words = 0
    for token in reversed(tokens):
        if any(c.islower() for c in token):
            return False
        words += _all_caps_word(token)
    return words >= HEADLINE_WORDS
_LINE_BREAK = re.compile("\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
DASHES = frozenset({"-", "--", "\u2013", "\u2014"})  # a dash spaced on both sides after a sentence end opens the next
_QUOTES = frozenset("\"'«»‹›“”„‘’‚")
_LIST_NUMBER = re.compile(r"(\d{1,2})\. ")  # a list number's candidates: then checked against the tokens
LIST_ITEMS = 3  # the fewest items numbered one after another (1. 2. 3.) that make a list inside a paragraph


def _line_breaks(space: str) -> int:
    """Line breaks in a whitespace token (``\\r\\n`` counts once)."""
    return len(_LINE_BREAK.findall(space))


def _spaced(text: str, start: int, word: str) -> bool:
    """Whether ``word`` at ``text[start]`` has whitespace (or the start of the text) before it and
    a space or tab after it (a mark before a line break opens nothing on its line)."""
    after = start + len(word)
    return (start == 0 or text[start - 1].isspace()) and text[after:after + 1] in (" ", "\t")


@cache
def stop_words(language: str) -> frozenset[str]:
    """spaCy's stop words of ``language`` (lower case)."""
    return frozenset(language_defaults(language).stop_words)


def abbreviation_ends(last: str, word: str, opens: bool, stops: frozenset[str]) -> bool:
    """Whether the period of ``last``, a capitalised word ending in an abbreviation's period
    (``Corp.``, ``U.S.``; not an initial such as ``S.``, nor ``e.g.``), also ends the sentence, given the next token
    ``word``: a capitalised stop word (``Fla. The reports``), or an opening quote (``opens``)."""
    if len(last) < 2 or last[-1] != "." or last[-2] == "." or not last[0].isupper() or _INITIAL.fullmatch(last):
        return False
    return (opens and word in _QUOTES) or (word[:1].isupper() and word[1:].islower() and word.lower() in stops)


def list_markers(text: str, words: list[tuple[int, int]]) -> set[int]:
    """The starts of the numbers that open list items (``words``: the ``(start, end)`` of each
    token that is not whitespace, in order). A number of at most two digits with a period right
    after it, then a space, is one at the start of a line (``1. Michelle Freeman``), or inside
    a line when it is one of a run of :data:`LIST_ITEMS` or more such numbers counting up by one
    each before a capitalised word (``... 12.71 seconds 2. Ludmila Engquist (Sweden) 12.74 3. ...``)."""
    markers: set[int] = set()
    run: list[int] = []
    previous = 0
    starts = [start for start, _ in words]
    for match in _LIST_NUMBER.finditer(text):
        start, end = match.span(1)
        i = bisect_left(starts, start)
        if not (i + 2 < len(words) and words[i] == (start, end) and words[i + 1] == (end, end + 1)):
            continue  # not a number token followed by a period token
        if start == 0 or text[start - 1] in "\n\r":
            markers.add(start)
        if not text[words[i + 2][0]].isupper():
            continue
        number = int(text[start:end])
        if number != previous + 1:
            run = []
        run.append(start)
        previous = number
        if len(run) >= LIST_ITEMS:
            markers.update(run)
    return markers


class _Splitter:
    """The state of :func:`split_sentences` as it reads a text's tokens in order."""

    def __init__(self, text: str, stops: frozenset[str], markers: set[int]) -> None:
        self.text, self.stops, self.markers = text, stops, markers
        self.sentences: list[TokenizedSentence] = []
        self.tokens: list[str] = []
        self.offsets: list[tuple[int, int]] = []
        self.ended = False  # a sentence-final punctuation token was seen, and only punctuation since
        self.line_break = False  # a single line break since the last token
        self.quoted = False  # an odd number of straight double quotes so far in the paragraph

    def close(self, at_line_end: bool) -> None:
        """End the sentence (at the end of a line: its last word's period is the full stop)."""
        if self.tokens:
            if at_line_end:
                _split_final_period(self.tokens, self.offsets)
            self.sentences.append(TokenizedSentence(self.tokens, self.offsets))
        self.tokens, self.offsets, self.ended = [], [], False

    def cut(self, split: int) -> None:
        """End a sentence before the current one's token ``split``."""
        self.sentences.append(TokenizedSentence(self.tokens[:split], self.offsets[:split]))
        self.tokens, self.offsets = self.tokens[split:], self.offsets[split:]

    def space(self, word: str) -> None:
        breaks = _line_breaks(word)
        if breaks >= 2:
            self.close(True)
            self.quoted = False
        elif breaks == 1 and self.tokens:
            self.line_break = True

    def opens(self, start: int, word: str) -> bool:
        """Whether the punctuation token ``word``, after a sentence end, opens the next sentence."""
        return (opens_sentence(self.text, start, word)
                or ((word in DASHES or (word == '"' and not self.quoted)) and _spaced(self.text, start, word)))

    @cached_property
    def width(self) -> int:
        """The text's longest line: a hard wrap's width at most (measured when a line end first asks)."""
        return max(map(len, self.text.splitlines()), default=0)

    def line_end(self, following: str) -> None:
        """At the first token after a single line break: end the sentence if the line ends one."""
        self.line_break = False
        text, end = self.text, self.offsets[-1][1]
        line_start = max(text.rfind("\n", 0, end), text.rfind("\r", 0, end)) + 1
        if line_ends_sentence(text[line_start:end], self.tokens[-1], self.ended, following, self.width):
            self.close(True)

    def word(self, start: int, word: str, is_punct: bool) -> None:
        if self.line_break:
            self.line_end(word)
        tokens = self.tokens
        if tokens:
            last = tokens[-1]
            if word == "." and self.offsets[-1][1] == start and self.offsets[-1][0] in self.markers:
                tokens[-1] += "."  # a list number keeps its period
                self.offsets[-1] = (self.offsets[-1][0], start + 1)
                return
            opens = is_punct and (self.ended or last[-1] == ".") and self.opens(start, word)
            if ((self.ended and (not is_punct or opens)) or start in self.markers
                    or (word[:1].isupper() and (_ISO_DATE.fullmatch(last) or ends_headline(tokens, word)))):
                self.close(False)
            elif last[-1] == "." and not self.ended and abbreviation_ends(last, word, opens, self.stops):
                self.close(True)
            tokens = self.tokens
        tokens.append(word)
        self.offsets.append((start, start + len(word)))
        if word == '"':
            self.quoted = not self.quoted
        elif word[:1].isdigit() and _ISO_DATE.fullmatch(word):
            split = dateline_start(tokens)
            if split:
                self.cut(split)
        elif word in SENTENCE_END:
            self.ended = True


def split_sentences(doc: Doc, text: str | None = None, language: str | None = None) -> list[TokenizedSentence]:
    """A tokenized ``Doc``'s sentences by the module's rules, whitespace tokens left out. ``text``
    is the text the Doc was made from, when the caller has it (``doc.text`` joins every token again);
    ``language`` the ISO code of its stop words (default: the Doc's language, if it has one).
    :meth:`hgner.text.tokenizer.TextTokenizer.split` adds a model's learned sentence starts."""
    from spacy.attrs import IDX, IS_PUNCT, IS_SPACE, LENGTH

    if text is None:
        text = doc.text
    rows = doc.to_array([IDX, LENGTH, IS_SPACE, IS_PUNCT]).tolist()  # read in bulk: no Token objects
    words = [(start, start + length) for start, length, is_space, _ in rows if not is_space]
    language = language or doc.lang_
    splitter = _Splitter(text, stop_words(language) if language else frozenset(), list_markers(text, words))
    for start, length, is_space, is_punct in rows:
        if is_space:
            splitter.space(text[start:start + length])
        else:
            splitter.word(start, text[start:start + length], bool(is_punct))
    splitter.close(True)
    return splitter.sentences


_CLOSING_QUOTES = frozenset({'"', "'", "''", "\u201d", "\u2019", ")"})


def _split_final_period(tokens: list[str], offsets: list[tuple[int, int]]) -> None:
    """At the end of a line that ends a sentence, a word's final period is the full stop
    (``Lear Corp.`` -> ``Corp`` ``.``, ``the U.S.`` -> ``U.S`` ``.``), before any closing quotes:
    split it off, in place."""
    last = len(tokens) - 1
    while last > 0 and tokens[last] in _CLOSING_QUOTES:
        last -= 1
    word = tokens[last]
    if len(word) > 1 and word[-1] == "." and word[-2] != "." and any(c.isalpha() for c in word):
        start, end = offsets[last]
        tokens[last:last + 1] = [word[:-1], "."]
        offsets[last:last + 1] = [(start, end - 1), (end - 1, end)]
