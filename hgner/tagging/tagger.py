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
  document is tagged in chunks of that size with a warning: skip edges then only join tokens of
  the same chunk.

Entity confidence: the minimum, over the entity's tokens, of the marginal probability of the
predicted tag at that token. This is an upper bound on the probability that the model tags the
whole span exactly so. Marginals are exact (forward-backward) for ``viterbi``, sample frequencies
for the samplers; a decoder without marginals gives ``None`` (``null`` in JSON), never 1.0.

Importing this module is cheap: numpy, numba, scipy and crfsuite load with the first model.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from ..core import schemes
from ..core.errors import HgnerError, ModelError, named, warn
from ..core.validation import check_argument
from ..crf.model import CrfModel
from ..crf.modelfiles import model_advice, model_language, shipped_languages
from ..crf.pipeline import DocumentResult, Pipeline
from ..decoders import decoder_class
from ..text.languages import language_defaults, likelier_language
from ..text.tokenizer import VERSION, TextTokenizer, TokenizedSentence, describe, recorded_version
from .defaults import CHAIN_GROUP_TOKENS, SKIP_MAX_TOKENS
from .settings import TagSettings

LANGUAGE_SAMPLE_WORDS = 2_000  # hgner tag checks the language of the first words it tags (Tagger.check_language)
LANGUAGE_SAMPLE_CHARS = 20 * LANGUAGE_SAMPLE_WORDS  # read from the start of each document until then
BLOCK_CHARS = 100_000  # text tokenized at once (spaCy refuses texts over 1,000,000 characters)


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


def entities(text: str, sentences: list[TokenizedSentence], result: DocumentResult) -> list[Entity]:
    """The entities of a decoded group of sentences, with confidences from its marginals (if any)."""
    found = []
    position = 0
    for sentence, tags in zip(sentences, result.tags):
        for first, last, label in schemes.chunks(tags):
            confidence = None
            if result.marginals is not None:
                rows = range(position + first, position + last)
                confidence = float(min(result.marginals[i, result.labels[i]] for i in rows))
            start, end = sentence.offsets[first][0], sentence.offsets[last - 1][1]
            found.append(Entity(start, end, text[start:end], label, confidence))
        position += len(tags)
    return found


def text_blocks(text: str, size: int = BLOCK_CHARS) -> Iterator[tuple[int, int]]:
    """``(start, end)`` pieces of ``text`` of at most ``size`` characters, cut after a blank line,
    else after a line break, else after a space, else anywhere."""
    start = 0
    while start < len(text):
        end = min(start + size, len(text))
        if end < len(text):
            window = text[start:end]
            for separator in ("\n\n", "\n", " "):
                cut = window.rfind(separator)
                if cut > 0:
                    end = start + cut + len(separator)
                    break
        yield start, end
        start = end


class Tagger:
    """A model and a decoder on a graph kind (:class:`TagSettings`), applied to raw text or to
    tokenized sentences. The model is loaded here (``model``: one already loaded instead), and the
    decoder built once; the text is tokenized for the model's ``"language"`` (``meta.json``;
    English when it has none). Warnings (tokenizer mismatch, a skip document cut into chunks, a
    decoder without confidences) are :class:`~hgner.core.errors.HgnerWarning`."""

    def __init__(self, settings: TagSettings | None = None, model: CrfModel | None = None) -> None:
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
        self.tokenizer = TextTokenizer(model_language(crf.metadata), version, crf.sentence_starts)
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

    def sentences(self, text: str) -> Iterator[TokenizedSentence]:
        """Sentences of ``text`` with offsets into ``text``, tokenized block by block."""
        for start, end in text_blocks(text):
            for sentence in self.tokenizer(text[start:end]):
                if start:
                    sentence = TokenizedSentence(sentence.tokens, [(a + start, b + start) for a, b in sentence.offsets])
                yield sentence

    def tag_sentences(self, text: str, sentences: Iterable[TokenizedSentence]) -> Iterator[TaggedGroup]:
        """Decode ``sentences`` (offsets into ``text``) in groups of whole sentences, yielding each group."""
        group: list[TokenizedSentence] = []
        size = 0
        chunked = False
        for sentence in sentences:
            if group and size + len(sentence.tokens) > self.group_tokens:
                if self.pipeline.graph_kind != "chain" and not chunked:
                    chunked = True
                    warn(f"document longer than {SKIP_MAX_TOKENS} tokens: tagged in chunks of that size, "
                         "skip edges join tokens of the same chunk only")
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
        """The decoded groups of each text, in order, as :meth:`tag_text` gives them. Texts are taken
        ``batch_size`` at a time; those of one group each are decoded together
        (:meth:`~hgner.crf.pipeline.Pipeline.decode_documents`: one graph and one decoder call for up
        to a group's tokens), so short texts cost little more than their tokens. A longer text's
        groups come lazily, as :meth:`tag_text`'s do."""
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise HgnerError(f"{named('batch_size')} must be at least 1, got {batch_size!r}")
        batch: list[str] = []
        for text in texts:
            check_text(text, "texts")
            batch.append(text)
            if len(batch) == batch_size:
                yield from self._tag_batch(batch)
                batch = []
        yield from self._tag_batch(batch)

    def _tag_batch(self, texts: list[str]) -> Iterator[Iterable[TaggedGroup]]:
        """:meth:`tag_tokenized` of ``texts``, the short ones tokenized together."""
        # each text's sentences when it is short enough to be tokenized at once, else None
        short = [len(text) <= BLOCK_CHARS and not text.isspace() for text in texts]
        tokenized = self.tokenizer.pipe([text for text, small in zip(texts, short) if small], batch_size=len(texts) or 1)
        return self.tag_tokenized(texts, [list(next(tokenized)) if small else None for small in short])

    def tag_tokenized(self, texts: list[str], sentences: list[list[TokenizedSentence] | None]) -> Iterator[Iterable[TaggedGroup]]:
        """The decoded groups of each text, as :meth:`tag_texts` gives them, from its sentences
        (offsets into the text; None: tokenized here, block by block)."""
        decoded: dict[int, TaggedGroup] = {}  # the texts of one group each, decoded together
        together: list[int] = []
        size = 0
        for i, found in enumerate(sentences):
            tokens = sum(len(s.tokens) for s in found) if found else self.group_tokens + 1
            if tokens > self.group_tokens:
                continue
            if together and size + tokens > self.group_tokens:
                decoded.update(self._decode_together(texts, sentences, together))
                together, size = [], 0
            together.append(i)
            size += tokens
        decoded.update(self._decode_together(texts, sentences, together))
        for i, (text, found) in enumerate(zip(texts, sentences)):
            if i in decoded:
                yield [decoded[i]]
            elif found is not None:
                yield self.tag_sentences(text, found)
            else:
                yield self.tag_text(text)

    def _decode_together(self, texts: list[str], sentences: list[list[TokenizedSentence] | None],
                         indices: list[int]) -> dict[int, TaggedGroup]:
        """The group of each of the texts ``indices`` (each tokenized into ``sentences[i]``, at
        least one token), decoded together."""
        groups = [sentences[i] or [] for i in indices]
        results = self.pipeline.decode_documents([[s.tokens for s in group] for group in groups])
        return {i: self._tagged(texts[i], group, result) for i, group, result in zip(indices, groups, results)}

    def _decode(self, text: str, group: list[TokenizedSentence]) -> TaggedGroup:
        return self._tagged(text, group, self.pipeline.decode([s.tokens for s in group]))

    def _tagged(self, text: str, group: list[TokenizedSentence], result: DocumentResult) -> TaggedGroup:
        """The decoded ``group`` of sentences of ``text``, its entities kept as the settings say."""
        return self._kept(TaggedGroup(group, result.tags, entities(text, group, result), result.marginals))

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



def check_text(text: str, name: str) -> None:
    """An :class:`HgnerError` naming the argument ``name`` unless ``text`` is a str that UTF-8 can
    encode (a lone surrogate, which no file or terminal gives, would fail inside spaCy)."""
    check_argument(isinstance(text, str), name, "a str", text)
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as error:
            raise HgnerError(f"{name}: not valid Unicode ({error.reason} at character {error.start})") from None



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
