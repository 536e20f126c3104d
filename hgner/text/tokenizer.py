"""Raw text to sentences of tokens with character offsets, tokenized and split as the CoNLL
training data is: the one place that talks to spaCy's tokenizer.

The tokenizer is spaCy's rule-based one for the model's language (``spacy.blank(lang)``, no model
download) with its rules adjusted (:func:`make_tokenizer`): hyphens and slashes inside words and
numbers never split a token (``AL-AIN``, ``Jean-Luc``, ``1996-12-06``, ``2-1``), and the
abbreviations of :data:`ABBREVIATIONS` keep their final period. Sentences are found by the rules
of :mod:`hgner.text.sentences` (:func:`~hgner.text.sentences.split_sentences`).

:data:`NAME` and :data:`VERSION` identify the token rules (:func:`make_tokenizer`, what spaCy's
registered ``hgner.conll.vN`` tokenizers do); a model records them in ``meta.json``
(``"tokenizer": {"name": ..., "version": ...}``) together with its ``"language"``, and is tagged
with the version it records. Version 2 keeps words such as Dutch ``'s-Hertogenbosch`` whole
(:data:`KEPT_PREFIXED`); version 3 splits an English place before ``-based`` as spaCy does
(``Tokyo - based``, ``U.S. - based``, ``New York - based``: :data:`SPLIT_BEFORE`), so the place can
be an entity; otherwise each splits as version 1 does. The sentence rules are not
versioned: a model learns from its corpus's own sentences, never from these rules, so a change to
them applies to every model.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any

from .languages import language_defaults
from .sentences import TokenizedSentence, split_sentences

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokenizer import Tokenizer
    from spacy.tokens import Doc

    from .sentence_starts import SentenceStarts

NAME = "hgner.conll"
VERSION = 3  # the newest rules; a model's tokenizer record may name any version from 1
DEFAULT_LANGUAGE = "en"
CACHED_CHUNKS = 100_000  # whitespace-separated chunks whose tokens a ChunkCachingTokenizer has spaCy cache
# words a TextTokenizer's spaCy vocabulary holds before it starts a new one: spaCy keeps every word it has seen
# (about 500 bytes each), so a long stream of new words (one 200 MB line of them) would grow without bound
VOCABULARY_WORDS = 100_000
# the most characters without whitespace that spaCy's tokenizer is given at once: its time grows with the
# square of a run's length when the run is made of prefix or suffix characters (``((((...``, emoji)
LONGEST_RUN = 100
_LONG_RUN = re.compile(rf"(?<!\S)\S{{{LONGEST_RUN + 1},}}")  # from a run's start: one pass over the text

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

# From version 3: hyphenated words split before their last part, one tuple of last parts per language
# (any case, after a letter or a period): Tokyo-based is Tokyo - based as in spaCy's rules, U.S.-based too.
SPLIT_BEFORE: dict[str, tuple[str, ...]] = {
    "en": ("based",),
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
    kept = KEPT_PREFIXED.get(nlp.lang or "") if version >= 2 else None
    if kept:
        prefixes = [f"(?!{kept})(?:{p})" for p in prefixes]
    infixes = [p for p in (defaults.infixes or ()) if not any(_splits_inside(p, word) for word in _KEPT_WHOLE)]
    suffixes = [p for p in (defaults.suffixes or ()) if not any(_splits_inside(p, word) for word in _KEPT_WHOLE)]
    split_before = SPLIT_BEFORE.get(nlp.lang or "", ()) if version >= 3 else ()
    if split_before:
        infixes.append(rf"(?<=[^\W\d_]|\.)-(?=(?i:{'|'.join(split_before)})$)")
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
    for abbreviation in ABBREVIATIONS.get(nlp.lang or "", ()):
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

    A run of more than :data:`LONGEST_RUN` characters without whitespace is tokenized in pieces
    of that length, so a token never spans a multiple of :data:`LONGEST_RUN` characters into the
    run: spaCy's time on such a run grows with the square of its length (30,000 ``(`` took a
    minute), and in pieces it grows linearly. Text without such runs is tokenized whole.
    Everything else (``vocab``, ``rules``, ``explain``, serialization, setting ``token_match``...)
    is the wrapped tokenizer's."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        object.__setattr__(self, "tokenizer", tokenizer)
        object.__setattr__(self, "_seen_chunks", set())

    def __call__(self, text: str) -> Doc:
        seen = self._seen_chunks
        tokenizer = self.tokenizer
        if len(seen) < CACHED_CHUNKS:
            for chunk in [c for c in dict.fromkeys(text.split()) if c not in seen and len(c) <= LONGEST_RUN]:  # in text order
                tokenizer(chunk)
                seen.add(chunk)
        cuts = [cut for run in _LONG_RUN.finditer(text) for cut in range(run.start() + LONGEST_RUN, run.end(), LONGEST_RUN)]
        if not cuts:
            return tokenizer(text)
        from spacy.tokens import Doc

        bounds = [0, *cuts, len(text)]
        return Doc.from_docs([tokenizer(text[start:end]) for start, end in zip(bounds, bounds[1:])], ensure_whitespace=False)

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


def _splits_inside(pattern: str | re.Pattern[str], word: str) -> bool:
    """Whether the regular expression ``pattern`` matches strictly inside ``word``."""
    return any(0 < m.start() < len(word) for m in re.finditer(pattern, word))


def create_tokenizer() -> Callable[[Language], ChunkCachingTokenizer]:
    """spaCy's registered tokenizer ``hgner.conll.v3`` (entry point ``spacy_tokenizers``), for a
    pipeline config: ``[nlp.tokenizer]`` / ``@tokenizers = "hgner.conll.v3"``."""
    return make_tokenizer


def create_tokenizer_v1() -> Callable[[Language], ChunkCachingTokenizer]:
    """``hgner.conll.v1``: version 1 of the rules, for pipelines saved with it."""
    return partial(make_tokenizer, version=1)


def create_tokenizer_v2() -> Callable[[Language], ChunkCachingTokenizer]:
    """``hgner.conll.v2``: version 2 of the rules, for pipelines saved with it."""
    return partial(make_tokenizer, version=2)


SPACY_TOKENIZERS = {f"{NAME}.v1": create_tokenizer_v1, f"{NAME}.v2": create_tokenizer_v2,
                    f"{NAME}.v3": create_tokenizer}  # as the entry points register them


class TextTokenizer:
    """Splits text into sentences of non-whitespace tokens, keeping character offsets; spaCy's
    vocabulary is bounded by ``max_words`` (:meth:`bound_vocabulary`)."""

    name = NAME

    def __init__(self, language: str = DEFAULT_LANGUAGE, version: int = VERSION,
                 starts: SentenceStarts | None = None, max_words: int | None = VOCABULARY_WORDS) -> None:
        self.language = language
        self.version = version
        self.starts = starts  # a model's learned sentence starts (hgner.text.sentence_starts), or the rules alone
        self.max_words = max_words  # the vocabulary's bound (bound_vocabulary); None: none

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
        getters = nlp.vocab.lex_attr_getters  # type: ignore[attr-defined]  # (spaCy's stubs omit it)
        kept = {attribute: getters[attribute] for attribute in (IS_SPACE, IS_PUNCT)}
        nlp.vocab.lex_attr_getters = kept  # type: ignore[attr-defined]
        return nlp

    @property
    def words(self) -> int:
        """The words in the spaCy vocabulary (0 before it is built)."""
        nlp = vars(self).get("nlp")  # (a cached property: read without building it)
        return 0 if nlp is None else len(nlp.vocab)

    def bound_vocabulary(self) -> None:
        """Drop the spaCy pipeline once its vocabulary holds more than ``max_words`` words: the
        next text is tokenized by a new one (the same tokens: the vocabulary and the caches only
        remember what was seen), so memory stays bounded however many new words a stream holds."""
        if self.max_words is not None and self.words > self.max_words:
            del self.nlp

    def __call__(self, text: str) -> list[TokenizedSentence]:
        self.bound_vocabulary()
        return self.split(self.nlp.make_doc(text), text)

    def split(self, doc: Doc, text: str | None = None, language: str | None = None) -> list[TokenizedSentence]:
        """A tokenized ``Doc``'s sentences: :func:`~hgner.text.sentences.split_sentences` (the stop words
        of ``language``, default the tokenizer's), then cut where the model's learned sentence
        starts say (:meth:`hgner.text.sentence_starts.SentenceStarts.split`), when it has them."""
        text = doc.text if text is None else text
        sentences = split_sentences(doc, text, language or self.language)
        return sentences if self.starts is None else self.starts.split(text, sentences)

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
        self.bound_vocabulary()
        return self.from_doc(self.nlp(text))

    def pipe(self, texts: Iterable[str], batch_size: int = 64) -> Iterator[list[TokenizedSentence]]:
        for doc in self.nlp.pipe(texts, batch_size=batch_size):
            yield self.from_doc(doc)


