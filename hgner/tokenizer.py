"""Raw text to sentences of tokens with character offsets, tokenized and split as the CoNLL
training data is: the one place that talks to spaCy's tokenizer.

The tokenizer is spaCy's rule-based one for the model's language (``spacy.blank(lang)``, no model
download) with its rules adjusted (:func:`make_tokenizer`): hyphens and slashes inside words and
numbers never split a token (``AL-AIN``, ``Jean-Luc``, ``1996-12-06``, ``2-1``), and the
abbreviations of :data:`ABBREVIATIONS` keep their final period. Sentences end

* after a sentence-final punctuation token (``. ! ?`` and spaCy's sentencizer's other
  terminators), with any closing quotes and brackets that follow it; an opening mark (``¿ ¡ ( «``
  or a quote mark, with a space before it and none after: :func:`opens_sentence`) starts the next;
* after a date written ``1996-12-06`` when a capitalised word follows (the end of a dateline),
  and before the dateline's place when a byline or headline runs into it on the same line
  (``Larisa Sayenko MINSK 1996-08-30``; :func:`dateline_start`);
* before a capitalised word that follows a run of :data:`HEADLINE_WORDS` or more all-caps words
  (an all-caps headline run into the next sentence, ``... TRAINS IN U.S. Maggie McNeil``);
* at a blank line, always;
* at a single line break after a line that is not a full line of hard-wrapped prose: see
  :func:`line_ends_sentence`.

:data:`NAME` and :data:`VERSION` identify the token rules (:func:`make_tokenizer`, what spaCy's
registered ``hgner.conll.vN`` tokenizers do); a model records them in ``meta.json``
(``"tokenizer": {"name": ..., "version": ...}``) together with its ``"language"``, and is tagged
with the version it records. Version 2 keeps words such as Dutch ``'s-Hertogenbosch`` whole
(:data:`KEPT_PREFIXED`); otherwise it splits as version 1 does. The sentence rules above are not
versioned: a model learns from its corpus's own sentences, never from these rules, so a change to
them applies to every model.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any

from .languages import language_defaults

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokenizer import Tokenizer
    from spacy.tokens import Doc

NAME = "hgner.conll"
VERSION = 2  # the newest rules; a model's tokenizer record may name any version from 1
DEFAULT_LANGUAGE = "en"
CACHED_CHUNKS = 100_000  # whitespace-separated chunks whose tokens a ChunkCachingTokenizer has spaCy cache

# The language-specific adjustments, one entry per language (every language spaCy has gets the
# common rules of make_tokenizer): abbreviations that keep their final period, beyond spaCy's own.
ABBREVIATIONS: dict[str, tuple[str, ...]] = {
    "en": ("Lt.", "vol.", "m.p.h."),
}

# From version 2: words that begin with a prefix character (an apostrophe) but are never split
# there, one pattern per language: Dutch 's-Hertogenbosch, 's-Gravenhage ('s avonds and 't still split).
KEPT_PREFIXED: dict[str, str] = {
    "nl": r"['\u2019][sS]-\w",
}

# Words the CoNLL corpora keep whole: an infix or suffix rule that splits one of them is dropped.
_KEPT_WHOLE = ("AL-AIN", "Jean-Luc", "al-Boushi", "1996-12-06", "2-1", "km/h", "1/2", "237km", "665M")


def describe() -> dict[str, Any]:
    """The ``meta.json`` record of these rules."""
    return {"name": NAME, "version": VERSION}


def recorded_version(record: Any) -> int | None:
    """The version of these rules that a model's ``meta.json`` ``"tokenizer"`` record names, or
    None when it names other rules or a version this release does not have."""
    if isinstance(record, dict) and record.get("name") == NAME and record.get("version") in range(1, VERSION + 1):
        return int(record["version"])
    return None


def make_tokenizer(nlp: Language, version: int = VERSION) -> ChunkCachingTokenizer:
    """A tokenizer for ``nlp``'s language that splits as the CoNLL corpora do, by the rules of
    ``version``: ``nlp = spacy.blank("en"); nlp.tokenizer = make_tokenizer(nlp)``. It is spaCy's
    ``Tokenizer`` with adjusted rules, wrapped in a :class:`ChunkCachingTokenizer`."""
    from spacy.tokenizer import Tokenizer
    from spacy.util import compile_infix_regex, compile_prefix_regex, compile_suffix_regex

    defaults = nlp.Defaults
    prefixes = list(defaults.prefixes or ())
    kept = KEPT_PREFIXED.get(nlp.lang) if version >= 2 else None
    if kept:
        prefixes = [f"(?!{kept})(?:{p})" for p in prefixes]
    infixes = [p for p in (defaults.infixes or ()) if not any(_splits_inside(p, word) for word in _KEPT_WHOLE)]
    suffixes = [p for p in (defaults.suffixes or ()) if not any(_splits_inside(p, word) for word in _KEPT_WHOLE)]
    suffixes.append(r"(?<=[0-9])%")  # the units rule went with 237km; a percent sign still splits
    rules = {k: v for k, v in (defaults.tokenizer_exceptions or {}).items()
             if not _is_emoticon(k) and not (len(v) > 1 and k.isalpha())}  # cannot, dont, Wed stay whole
    for key in [k for k in rules if not k.isspace() and any(c.isspace() for c in k)]:
        del rules[key]  # a token never holds whitespace: es "EE. UU." becomes the abbreviations EE. and UU.
        for part in key.split():
            rules.setdefault(part, [{"ORTH": part}])
    for abbreviation, analysis in list(rules.items()):  # headlines: ST. LOUIS, MICH.
        if len(analysis) == 1 and abbreviation[-1:] == "." and abbreviation.upper() not in rules:
            rules[abbreviation.upper()] = [{"ORTH": abbreviation.upper()}]
    for abbreviation in ABBREVIATIONS.get(nlp.lang, ()):
        rules[abbreviation] = [{"ORTH": abbreviation}]
    tokenizer = Tokenizer(
        nlp.vocab,
        rules=rules,
        prefix_search=compile_prefix_regex(prefixes).search if prefixes else None,
        suffix_search=compile_suffix_regex(suffixes).search if suffixes else None,
        infix_finditer=compile_infix_regex(infixes).finditer if infixes else None,
        token_match=defaults.token_match,
        url_match=defaults.url_match,
    )
    tokenizer.max_cache_size = CACHED_CHUNKS
    return ChunkCachingTokenizer(tokenizer)


class ChunkCachingTokenizer:
    """A spaCy ``Tokenizer`` that has each whitespace-separated chunk not seen before tokenized
    alone first, in text order, then the whole text: the tokens are the same, but faster.

    spaCy caches how it splits each chunk, but caches nothing more of a text after the text's
    first special case, such as ``'s`` or ``Mr.`` (spaCy issue 13950), so most chunks of news text
    would be split by its regular expressions every time; tokenized alone, any chunk without a
    special case is cached. After :data:`CACHED_CHUNKS` chunks (spaCy's cache size here) it stops.
    Everything else (``vocab``, ``rules``, ``explain``, serialization, setting ``token_match``...)
    is the wrapped tokenizer's."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        object.__setattr__(self, "tokenizer", tokenizer)
        object.__setattr__(self, "_seen_chunks", set())

    def __call__(self, text: str) -> Doc:
        seen = self._seen_chunks
        if len(seen) < CACHED_CHUNKS:
            tokenizer = self.tokenizer
            for chunk in [c for c in dict.fromkeys(text.split()) if c not in seen]:  # in text order
                tokenizer(chunk)
                seen.add(chunk)
        return self.tokenizer(text)

    def pipe(self, texts: Iterable[str], batch_size: int = 1000) -> Iterator[Doc]:
        return map(self, texts)

    def __getattr__(self, name: str) -> Any:  # only for names the wrapper does not have
        return getattr(self.tokenizer, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.tokenizer, name, value)

    def __reduce__(self) -> tuple[type, tuple[Tokenizer]]:
        return ChunkCachingTokenizer, (self.tokenizer,)

    def from_disk(self, path: Any, **kwargs: Any) -> ChunkCachingTokenizer:
        self.tokenizer.from_disk(path, **kwargs)
        return self

    def from_bytes(self, data: bytes, **kwargs: Any) -> ChunkCachingTokenizer:
        self.tokenizer.from_bytes(data, **kwargs)
        return self


def _is_emoticon(text: str) -> bool:
    """Emoticons such as ``):`` and ``=/``, which spaCy keeps whole but are ordinary punctuation in news text."""
    return len(text) > 1 and not any(c.isalnum() or c.isspace() for c in text) and any(c in _EMOTICON_CHARS for c in text)


_EMOTICON_CHARS = frozenset("()[]{}:;=<>^_*-|/\\@")


def _splits_inside(pattern: str, word: str) -> bool:
    """Whether the regular expression ``pattern`` matches strictly inside ``word``."""
    return any(0 < m.start() < len(word) for m in re.finditer(pattern, word))


def create_tokenizer() -> Callable[[Language], ChunkCachingTokenizer]:
    """spaCy's registered tokenizer ``hgner.conll.v2`` (entry point ``spacy_tokenizers``), for a
    pipeline config: ``[nlp.tokenizer]`` / ``@tokenizers = "hgner.conll.v2"``."""
    return make_tokenizer


def create_tokenizer_v1() -> Callable[[Language], ChunkCachingTokenizer]:
    """``hgner.conll.v1``: version 1 of the rules, for pipelines saved with it."""
    return partial(make_tokenizer, version=1)


SPACY_TOKENIZERS = {f"{NAME}.v1": create_tokenizer_v1, f"{NAME}.v2": create_tokenizer}  # as the entry points register them


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


def line_ends_sentence(line: str, last: str, ended: bool, following: str) -> bool:
    """Whether a single line break ends the sentence. ``line`` is the line's text up to its last
    token ``last``; ``ended`` says whether the sentence already has its final punctuation;
    ``following`` is the first token of the next line.

    A line break before a date written ``1996-08-29`` never ends an unfinished sentence (a
    dateline's place wrapped away from its date). Otherwise it ends a sentence unless the line
    looks like a full line of hard-wrapped prose:
    at least :data:`WRAPPED_LINE_CHARS` characters long, with lowercase letters (not a headline),
    without final punctuation, not ending in a colon (a list follows), and neither an
    abbreviation (``Lear Corp.``, but not an initial: ``S.`` ``Watkin``) nor a number or bracket
    (a results table: ``6-2 6-2``, ``(U.S.)``) before a word that starts with a capital letter or
    a digit. Chosen on eng.train and eng.testa
    rendered one sentence per line and hard-wrapped at 72 columns (scripts/tokenizer_agreement.py).
    """
    if not ended and _ISO_DATE.fullmatch(following):
        return False
    if ended or len(line) < WRAPPED_LINE_CHARS or last == ":" or not any(c.islower() for c in line):
        return True
    first = following[:1]
    if last[-1:] == ".":
        return first.isupper() and not _INITIAL.fullmatch(last)
    return (last[-1:].isdigit() or last == ")") and (first.isupper() or first.isdigit())


class TextTokenizer:
    """Splits text into sentences of non-whitespace tokens, keeping character offsets."""

    name = NAME

    def __init__(self, language: str = DEFAULT_LANGUAGE, version: int = VERSION) -> None:
        self.language = language
        self.version = version

    @cached_property
    def nlp(self) -> Language:
        import spacy
        from spacy.attrs import IS_PUNCT, IS_SPACE
        from spacy.util import registry

        language_defaults(self.language)  # an unknown code is a one-line error, not spaCy's ImportError
        # built from the config, so spaCy's default tokenizer is never built only to be replaced
        for spacy_name, create in SPACY_TOKENIZERS.items():  # as the entry points do, if not installed
            registry.tokenizers.register(spacy_name, func=create)
        config = {"nlp": {"tokenizer": {"@tokenizers": f"{NAME}.v{self.version}"}}}
        nlp = spacy.blank(self.language, config=config)
        # spaCy computes every lexical attribute of each new word; split_sentences reads these two
        getters = nlp.vocab.lex_attr_getters
        nlp.vocab.lex_attr_getters = {attribute: getters[attribute] for attribute in (IS_SPACE, IS_PUNCT)}
        return nlp

    def __call__(self, text: str) -> list[TokenizedSentence]:
        return split_sentences(self.nlp.make_doc(text), text)

    def pipe(self, texts: Iterable[str], batch_size: int = 64) -> Iterator[list[TokenizedSentence]]:
        """The sentences of each text (spaCy's tokenizer takes one text at a time: ``batch_size``
        is for the interface's other tokenizers)."""
        return map(self, texts)

    @staticmethod
    def from_doc(doc: Doc, text: str | None = None) -> list[TokenizedSentence]:
        """Sentences of a spaCy ``Doc`` that has sentence boundaries, whitespace tokens left out.
        ``text`` is the Doc's text when the caller has it. Token attributes are read in bulk, so no
        Token object is built."""
        from spacy.attrs import IDX, IS_SPACE, LENGTH, SENT_START

        if text is None:
            text = doc.text
        sentences = []
        tokens: list[str] = []
        offsets: list[tuple[int, int]] = []
        for i, (start, length, is_space, sent_start) in enumerate(doc.to_array([IDX, LENGTH, IS_SPACE, SENT_START]).tolist()):
            if sent_start == 1 and i > 0 and tokens:
                sentences.append(TokenizedSentence(tokens, offsets))
                tokens, offsets = [], []
            if not is_space:
                tokens.append(text[start:start + length])
                offsets.append((start, start + length))
        if tokens:
            sentences.append(TokenizedSentence(tokens, offsets))
        return sentences


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


class SpacyDefaultTokenizer(TextTokenizer):
    """spaCy's own rules: ``spacy.blank(lang)`` with its default tokenizer and the sentencizer
    (line breaks never end a sentence). hgner tagged with these before version 1 of
    :data:`NAME`; the IEER corpus keeps them as its token definition, so its figures stay
    comparable across releases."""

    name = "spacy.blank+sentencizer"

    def __init__(self, language: str = DEFAULT_LANGUAGE) -> None:
        super().__init__(language, version=0)

    @cached_property
    def nlp(self) -> Language:
        import spacy

        nlp = spacy.blank(self.language)
        nlp.add_pipe("sentencizer")
        return nlp

    def __call__(self, text: str) -> list[TokenizedSentence]:
        return self.from_doc(self.nlp(text))

    def pipe(self, texts: Iterable[str], batch_size: int = 64) -> Iterator[list[TokenizedSentence]]:
        for doc in self.nlp.pipe(texts, batch_size=batch_size):
            yield self.from_doc(doc)


def _line_breaks(space: str) -> int:
    """Line breaks in a whitespace token (``\\r\\n`` counts once)."""
    return len(_LINE_BREAK.findall(space))


def split_sentences(doc: Doc, text: str | None = None) -> list[TokenizedSentence]:
    """A tokenized ``Doc``'s sentences by the module's rules, whitespace tokens left out. ``text``
    is the text the Doc was made from, when the caller has it (``doc.text`` joins every token again)."""
    if text is None:
        text = doc.text
    sentences: list[TokenizedSentence] = []
    tokens: list[str] = []
    offsets: list[tuple[int, int]] = []
    ended = False  # a sentence-final punctuation token was seen, and only punctuation since
    line_break = False  # a single line break since the last token

    def close(at_line_end: bool) -> None:
        nonlocal tokens, offsets, ended
        if tokens:
            if at_line_end:
                _split_final_period(tokens, offsets)
            sentences.append(TokenizedSentence(tokens, offsets))
        tokens, offsets, ended = [], [], False

    from spacy.attrs import IDX, IS_PUNCT, IS_SPACE, LENGTH

    for start, length, is_space, is_punct in doc.to_array([IDX, LENGTH, IS_SPACE, IS_PUNCT]).tolist():
        word = text[start:start + length]  # token attributes read in bulk: no Token objects
        if is_space:
            breaks = _line_breaks(word)
            if breaks >= 2:
                close(True)
            elif breaks == 1 and tokens:
                line_break = True
            continue
        if line_break:
            line_break = False
            end = offsets[-1][1]
            line_start = max(text.rfind("\n", 0, end), text.rfind("\r", 0, end)) + 1
            if line_ends_sentence(text[line_start:end], tokens[-1], ended, word):
                close(True)
        if word == "." and len(tokens) == 1 and _is_list_number(text, offsets[0], start):
            tokens[0] += "."
            offsets[0] = (offsets[0][0], start + 1)
            continue
        if ((ended and (not is_punct or opens_sentence(text, start, word)))
                or (word[:1].isupper() and _ISO_DATE.fullmatch(tokens[-1]) if tokens else False)
                or ends_headline(tokens, word)):
            close(False)
        tokens.append(word)
        offsets.append((start, start + length))
        if _ISO_DATE.fullmatch(word):
            split = dateline_start(tokens)
            if split:
                sentences.append(TokenizedSentence(tokens[:split], offsets[:split]))
                tokens, offsets = tokens[split:], offsets[split:]
        if word in SENTENCE_END:
            ended = True
    close(True)
    return sentences


def _is_list_number(text: str, number: tuple[int, int], period: int) -> bool:
    """Whether the period at ``period`` ends a list number (``1. Michelle Freeman``): a number
    of at most two digits at the start of a line, the period right after it, then a space."""
    start, end = number
    return (end == period and end - start <= 2 and text[start:end].isdigit() and text[period + 1:period + 2] == " "
            and (start == 0 or text[start - 1] in "\n\r"))


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
