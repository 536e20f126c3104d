"""``hgner tag``: raw text in, entities out, through the same :class:`~hgner.crf.pipeline.Pipeline`
that ``hgner evaluate`` scores, so tagging and evaluation never disagree.

A document is one input (a file, the argument text, standard input, or one spaCy ``Doc``).
Text is cut into blocks of at most :data:`BLOCK_CHARS` characters at line breaks, tokenized by
:class:`~hgner.text.tokenizer.TextTokenizer`, and decoded in groups of whole sentences:

* chain graph: groups of about :data:`CHAIN_GROUP_TOKENS` tokens, so memory stays bounded for any
  size. Sentences are independent on the chain, but document-level attributes (and truecasing)
  look at the sentences of the group only: a document longer than a group is featurised group by
  group (eng.testb's raw text as one file: 388 of about 5,700 entities differ from featurising it
  whole).
* skip graph: the whole document is one group up to :data:`SKIP_MAX_TOKENS` tokens. A longer
  document is tagged in chunks of that size, as a note on the ``hgner`` logger (documented
  behaviour, not a problem): skip edges then only join tokens of the same chunk.

Entity confidence: the minimum, over the entity's tokens, of the marginal probability of the
predicted tag at that token. This is an upper bound on the probability that the model tags the
whole span exactly so. Marginals are exact (forward-backward) for ``viterbi``, sample frequencies
for the samplers; a decoder without marginals gives ``None`` (``null`` in JSON), never 1.0. A model
with a confidence map (``meta.json``'s ``entity_confidence``, fitted on its development corpus)
reports that number mapped, so that an entity of confidence 0.8 is right about 80% of the time.

Importing this module is cheap: numpy, numba, scipy and crfsuite load with the first model.
"""

from __future__ import annotations

import logging
import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from itertools import chain, groupby, islice
from operator import itemgetter
from typing import Any

from ..core import schemes
from ..core.errors import HgnerError, ModelError, named, warn
from ..core.validation import check_argument
from ..crf.model import CrfModel
from ..crf.modelfiles import model_advice, model_language, shipped_languages
from ..crf.pipeline import DocumentResult, Pipeline
from ..decoders import decoder_class
from ..text.languages import language_defaults, likelier_language
from ..text.tokenizer import VERSION, VOCABULARY_WORDS, TextTokenizer, TokenizedSentence, describe, recorded_version
from . import splitting
from .defaults import CHAIN_GROUP_TOKENS, DEFAULT_SPLIT, SKIP_MAX_TOKENS
from .settings import TagSettings

log = logging.getLogger("hgner")
LANGUAGE_SAMPLE_WORDS = 2_000  # hgner tag checks the language of the first words it tags (Tagger.check_language)
LANGUAGE_SAMPLE_CHARS = 20 * LANGUAGE_SAMPLE_WORDS  # read from the start of each document until then
BLOCK_CHARS = 100_000  # text tokenized at once (spaCy refuses texts over 1,000,000 characters)
_SURROGATE = re.compile("[\ud800-\udfff]")  # the code points UTF-8 cannot encode


@dataclass(frozen=True)
class Entity:
    """An entity with ``[start, end)`` character offsets into the document text."""

    start: int
    end: int
    text: str
    label: str
    confidence: float | None

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "text": self.text, "label": self.label, "confidence": self.confidence}


@dataclass
class TaggedGroup:
    """Consecutive sentences of one document decoded together: their tags (model scheme), entities
    and the decoder's marginals (for ``hgner serve``'s tokens)."""

    sentences: list[TokenizedSentence]
    tags: list[list[str]]
    entities: list[Entity]
    marginals: Any = None  # (n, K) the decoder's marginals of the group's tokens (model labels), or None

    @property
    def end(self) -> int:
        """Character offset just after the group's last token."""
        return self.sentences[-1].offsets[-1][1]


def entities(text: str, sentences: list[TokenizedSentence], result: DocumentResult, model: CrfModel) -> list[Entity]:
    """The entities of a decoded group of sentences, with confidences from its marginals (if any),
    mapped by ``model``'s confidence map (:meth:`~hgner.crf.model.CrfModel.entity_confidence`)."""
    found = []
    position = 0
    for sentence, tags in zip(sentences, result.tags):
        for first, last, label in schemes.chunks(tags):
            confidence = None
            if result.marginals is not None:
                rows = range(position + first, position + last)
                confidence = model.entity_confidence(float(min(result.marginals[i, result.labels[i]] for i in rows)),
                                                     sentence.tokens[first:last])
            start, end = sentence.offsets[first][0], sentence.offsets[last - 1][1]
            found.append(Entity(start, end, text[start:end], label, confidence))
        position += len(tags)
    return found


def text_blocks(text: str, size: int = BLOCK_CHARS, start: int = 0, end: int | None = None) -> Iterator[tuple[int, int]]:
    """``(start, end)`` pieces of ``text[start:end]`` (offsets into ``text``, which is not copied) of
    at most ``size`` characters, cut after a blank line, else after a line break, else after a
    space, else anywhere."""
    stop = len(text) if end is None else end
    while start < stop:
        cut_at = min(start + size, stop)
        if cut_at < stop:
            for separator in ("\n\n", "\n", " "):
                cut = text.rfind(separator, start, cut_at)
                if cut > start:
                    cut_at = cut + len(separator)
                    break
        yield start, cut_at
        start = cut_at


class Tagger:
    """A model and a decoder on a graph kind (:class:`TagSettings`), applied to raw text or to
    tokenized sentences. The model is loaded here (``model``: one already loaded instead), and the
    decoder built once; the text is tokenized for the model's ``"language"`` (``meta.json``;
    English when it has none), its spaCy vocabulary bounded by ``max_words``
    (:meth:`~hgner.text.tokenizer.TextTokenizer.bound_vocabulary`). Warnings (tokenizer mismatch, a
    decoder without confidences) are :class:`~hgner.core.errors.HgnerWarning`."""

    def __init__(self, settings: TagSettings | None = None, model: CrfModel | None = None,
                 max_words: int | None = VOCABULARY_WORDS) -> None:
        settings = TagSettings() if settings is None else settings
        check_argument(isinstance(settings, TagSettings), "settings", "a TagSettings", settings)
        crf = model if model is not None else CrfModel.load(settings.model)
        decoder = decoder_class(str(settings.decoder))(**settings.decoder_arguments)
        self.settings = settings
        self.pipeline: Pipeline = Pipeline(crf, decoder, settings.graph)
        unknown = sorted(set(settings.labels or ()) - set(crf.entity_types))
        if unknown:
            raise HgnerError(f"{named('labels')}: model {crf.name!r} has no entity type {', '.join(unknown)} "
                             f"(its types: {', '.join(crf.entity_types)})")
        self._unknown_confidence_noted = False
        self.group_tokens = CHAIN_GROUP_TOKENS if settings.graph == "chain" else SKIP_MAX_TOKENS
        trained_with = crf.metadata.get("tokenizer")
        version = recorded_version(trained_with)  # a model is tagged with the rules it records
        if version is None:
            version = VERSION
            warn(f"model {crf.name!r} was trained on text tokenized by {trained_with!r}, "
                 f"but tagging tokenizes with {describe()!r}; expect lower accuracy")
        self.tokenizer = TextTokenizer(model_language(crf.metadata), version, crf.sentence_starts, max_words)
        try:
            language_defaults(self.tokenizer.language)  # before any text is read
        except ModelError as error:
            raise ModelError(f"model {crf.name!r} ({crf.directory}): {error}") from None

    @property
    def decoder_name(self) -> str:
        return self.pipeline.decoder.name

    @property
    def min_confidence(self) -> float | None:
        return self.settings.min_confidence

    def sentences(self, text: str, start: int = 0, end: int | None = None) -> Iterator[TokenizedSentence]:
        """Sentences of ``text[start:end]`` with offsets into ``text``, tokenized block by block."""
        for first, last in text_blocks(text, BLOCK_CHARS, start, end):
            yield from _shifted(self.tokenizer(text[first:last]), first)

    def tag_sentences(self, text: str, sentences: Iterable[TokenizedSentence]) -> Iterator[TaggedGroup]:
        """Decode ``sentences`` (offsets into ``text``) in groups of whole sentences, yielding each group."""
        group: list[TokenizedSentence] = []
        size = 0
        chunked = False
        for sentence in sentences:
            if group and size + len(sentence.tokens) > self.group_tokens:
                if self.pipeline.graph_kind != "chain" and not chunked:
                    chunked = True
                    log.info("hgner: note: a document longer than %s tokens is tagged in chunks of that size; "
                             "skip edges join tokens of the same chunk only", f"{SKIP_MAX_TOKENS:,}")
                yield self._decode(text, group)
                group, size = [], 0
            group.append(sentence)
            size += len(sentence.tokens)
        if group:
            yield self._decode(text, group)

    def check_language(self, words: Iterable[str]) -> None:
        """Warn when ``words`` (a sample of the text tagged) look like another language than the
        model's (:func:`language_warning`)."""
        message = language_warning(words, self.tokenizer.language, self.pipeline.model.name)
        if message is not None:
            warn(message)

    def tag_text(self, text: str) -> Iterator[TaggedGroup]:
        """Tokenize and tag one document, yielding groups of sentences as they are decoded. Blank
        text (whitespace only: no tokens) yields none without being tokenized."""
        check_text(text, "text")
        if not text or text.isspace():  # (not text.strip(), which copies a document of any size)
            return iter(())
        if self.settings.split != DEFAULT_SPLIT:
            return chain.from_iterable(self.tag_texts([text]))
        return self.tag_sentences(text, self.sentences(text))

    def tag(self, text: str) -> list[Entity]:
        """The entities of one document, in text order."""
        return [entity for group in self.tag_text(text) for entity in group.entities]

    def pipe(self, texts: Iterable[str], batch_size: int = 64) -> Iterator[list[Entity]]:
        """The entities of each text, in order, as :meth:`tag` gives them, tagged ``batch_size``
        texts at a time (:meth:`tag_texts`)."""
        check_argument(isinstance(texts, Iterable) and not isinstance(texts, str), "texts",
                       "an iterable of texts (tag() takes one text)", texts)
        for groups in self.tag_texts(texts, batch_size):
            yield [entity for group in groups for entity in group.entities]

    def tag_texts(self, texts: Iterable[str], batch_size: int = 64) -> Iterator[Iterable[TaggedGroup]]:
        """The decoded groups of each text, in order, as :meth:`tag_text` gives them. The texts'
        documents (the texts themselves, or their lines: ``split``) are taken ``batch_size`` at a
        time; those of one group each are decoded together
        (:meth:`~hgner.crf.pipeline.Pipeline.decode_documents`: one graph and one decoder call for up
        to a group's tokens), so short documents cost little more than their tokens. A longer
        document's groups come lazily, as :meth:`tag_text`'s do."""
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise HgnerError(f"{named('batch_size')} must be at least 1, got {batch_size!r}")
        return _per_text(self._tag_batches(self._documents(texts), batch_size))

    def _documents(self, texts: Iterable[str]) -> Iterator[_Document]:
        """Each text's documents (:func:`~hgner.tagging.splitting.documents`), the text checked."""
        for index, text in enumerate(texts):
            check_text(text, "texts")
            for start, end in splitting.documents(text, self.settings.split):
                yield _Document(index, text, start, end)

    def _tag_batches(self, documents: Iterator[_Document], batch_size: int) -> Iterator[tuple[int, Iterable[TaggedGroup]]]:
        """Each document's text index and groups, ``batch_size`` documents at a time, the short
        ones tokenized together."""
        while batch := list(islice(documents, batch_size)):
            short = [d.end - d.start <= BLOCK_CHARS and not d.blank for d in batch]
            tokenized = self.tokenizer.pipe([d.text[d.start:d.end] for d, small in zip(batch, short) if small],
                                            batch_size=len(batch))
            found = [_shifted(next(tokenized), d.start) if small else None for d, small in zip(batch, short)]
            yield from zip((d.index for d in batch), self._tag_documents(batch, found))

    def tag_tokenized(self, texts: list[str], sentences: list[list[TokenizedSentence] | None]) -> Iterator[Iterable[TaggedGroup]]:
        """The decoded groups of each text, as :meth:`tag_texts` gives them, from its sentences
        (offsets into the text; None: tokenized here, block by block). Split into lines
        (``split``), a text's sentences are cut at line breaks, each line's its own document."""
        documents: list[_Document] = []
        found: list[list[TokenizedSentence] | None] = []
        for index, (text, given) in enumerate(zip(texts, sentences)):
            check_text(text, "texts")
            spans = list(splitting.documents(text, self.settings.split))
            documents += [_Document(index, text, start, end) for start, end in spans]
            if spans == [(0, len(text))]:
                found.append(given)
            else:
                found += [None] * len(spans) if given is None else _by_span(given, spans)
        return _per_text(zip((d.index for d in documents), self._tag_documents(documents, found)))

    def _tag_documents(self, documents: list[_Document],
                       sentences: list[list[TokenizedSentence] | None]) -> Iterator[Iterable[TaggedGroup]]:
        """The decoded groups of each document from its sentences (offsets into its text; None:
        tokenized here, block by block), those of one group each decoded together."""
        decoded: dict[int, TaggedGroup] = {}
        together: list[int] = []
        size = 0
        for i, found in enumerate(sentences):
            tokens = sum(len(s.tokens) for s in found) if found else self.group_tokens + 1
            if tokens > self.group_tokens:
                continue
            if together and size + tokens > self.group_tokens:
                decoded.update(self._decode_together(documents, sentences, together))
                together, size = [], 0
            together.append(i)
            size += tokens
        decoded.update(self._decode_together(documents, sentences, together))
        for i, (document, found) in enumerate(zip(documents, sentences)):
            if i in decoded:
                yield [decoded[i]]
            elif found is not None:
                yield self.tag_sentences(document.text, found)
            elif document.blank:
                yield ()
            else:
                yield self.tag_sentences(document.text, self.sentences(document.text, document.start, document.end))

    def _decode_together(self, documents: list[_Document], sentences: list[list[TokenizedSentence] | None],
                         indices: list[int]) -> dict[int, TaggedGroup]:
        """The group of each of the documents ``indices`` (each tokenized into ``sentences[i]``, at
        least one token), decoded together."""
        groups = [sentences[i] or [] for i in indices]
        results = self.pipeline.decode_documents([[s.tokens for s in group] for group in groups])
        return {i: self._tagged(documents[i].text, group, result) for i, group, result in zip(indices, groups, results)}

    def _decode(self, text: str, group: list[TokenizedSentence]) -> TaggedGroup:
        return self._tagged(text, group, self.pipeline.decode([s.tokens for s in group]))

    def _tagged(self, text: str, group: list[TokenizedSentence], result: DocumentResult) -> TaggedGroup:
        """The decoded ``group`` of sentences of ``text``, its entities kept as the settings say."""
        return self._kept(TaggedGroup(group, result.tags, entities(text, group, result, self.pipeline.model), result.marginals))

    def _kept(self, group: TaggedGroup) -> TaggedGroup:
        """``group`` without the entities of types not in ``labels`` (when given) and those whose
        confidence is below ``min_confidence`` (their tokens
        tagged O). Entities without a confidence (a decoder without marginals) are kept, with a
        warning the first time."""
        labels = self.settings.labels
        if self.min_confidence is None and labels is None:
            return group
        if self.min_confidence is not None and not self._unknown_confidence_noted \
                and any(e.confidence is None for e in group.entities):
            self._unknown_confidence_noted = True
            warn(f"decoder {self.decoder_name!r} gives no confidences: "
                 "its entities are kept whatever the minimum confidence")
        tags = [list(t) for t in group.tags]
        chunks = [(s, first, last) for s, sentence_tags in enumerate(group.tags)
                  for first, last, _ in schemes.chunks(sentence_tags)]
        kept = []
        for (s, first, last), entity in zip(chunks, group.entities, strict=True):
            confident = self.min_confidence is None or entity.confidence is None or entity.confidence >= self.min_confidence
            if confident and (labels is None or entity.label in labels):
                kept.append(entity)
            else:
                tags[s][first:last] = ["O"] * (last - first)
        return replace(group, tags=tags, entities=kept)



@dataclass(frozen=True)
class _Document:
    """One document to tag: ``text[start:end]`` of the ``index``-th text (a text, or one of its lines)."""

    index: int
    text: str
    start: int
    end: int

    @property
    def blank(self) -> bool:
        """Whether the document holds white space only (no tokens)."""
        if self.start == 0 and self.end == len(self.text):  # (no copy of a whole text)
            return not self.text or self.text.isspace()
        return self.start == self.end or self.text[self.start:self.end].isspace()


def _shifted(sentences: Iterable[TokenizedSentence], offset: int) -> list[TokenizedSentence]:
    """``sentences`` with their offsets moved by ``offset`` (from a piece of a text into the text)."""
    if not offset:
        return list(sentences)
    return [TokenizedSentence(s.tokens, [(a + offset, b + offset) for a, b in s.offsets]) for s in sentences]


def _by_span(sentences: list[TokenizedSentence], spans: list[tuple[int, int]]) -> list[list[TokenizedSentence]]:
    """The sentences of each span, in order: a sentence over several spans is cut between them,
    and tokens outside every span are left out."""
    found: list[list[TokenizedSentence]] = [[] for _ in spans]
    starts = [start for start, _ in spans]
    for sentence in sentences:
        pieces: dict[int, TokenizedSentence] = {}
        for token, (a, b) in zip(sentence.tokens, sentence.offsets):
            span = bisect_right(starts, a) - 1
            if span >= 0 and a < spans[span][1]:
                piece = pieces.setdefault(span, TokenizedSentence([], []))
                piece.tokens.append(token)
                piece.offsets.append((a, b))
        for span, piece in pieces.items():
            found[span].append(piece)
    return found


def _per_text(documents: Iterable[tuple[int, Iterable[TaggedGroup]]]) -> Iterator[Iterable[TaggedGroup]]:
    """The groups of each text, from its documents' groups (given in order, with the text's index;
    every text has at least one document)."""
    for _, own in groupby(documents, key=itemgetter(0)):
        yield chain.from_iterable(groups for _, groups in own)


def check_text(text: str, name: str) -> None:
    """An :class:`HgnerError` naming the argument ``name`` unless ``text`` is a str that UTF-8 can
    encode (a lone surrogate, which no file or terminal gives, would fail inside spaCy)."""
    check_argument(isinstance(text, str), name, "a str", text)
    if not text.isascii():  # (searched, not encoded: a copy of a long text would double its memory)
        surrogate = _SURROGATE.search(text)
        if surrogate is not None:
            raise HgnerError(f"{name}: not valid Unicode (surrogates not allowed at character {surrogate.start()})")



def add_to_language_sample(sample: list[str], text: str) -> bool:
    """Add the words at the start of one document's ``text`` to ``sample`` (the first words tagged,
    document after document, that the language check reads); True when it has enough."""
    sample.extend(text[:LANGUAGE_SAMPLE_CHARS].split())
    return len(sample) >= LANGUAGE_SAMPLE_WORDS


def language_warning(words: Iterable[str], language: str, model_name: str) -> str | None:
    """The warning for ``words`` (the first :data:`LANGUAGE_SAMPLE_WORDS` of the text tagged) that
    look more like the language of another shipped model than like ``language``, model
    ``model_name``'s (:func:`~hgner.text.languages.likelier_language`, among the shipped models'
    languages only: those are the ones it can point to), or None."""
    other = likelier_language(words, language, candidates=shipped_languages)
    if other is None:
        return None
    return (f"the text looks like {other.language!r} ({other.evidence}), but model {model_name!r} is for "
            f"{language!r}: {model_advice(other.language)}")
