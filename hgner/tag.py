"""``hgner tag``: raw text in, entities out, through the same :class:`~hgner.pipeline.Pipeline`
that ``hgner evaluate`` scores, so tagging and evaluation never disagree.

A document is one input (a file, the argument text, standard input, or one spaCy ``Doc``).
Text is cut into blocks of at most :data:`BLOCK_CHARS` characters at line breaks, tokenized by
:class:`~hgner.tokenizer.TextTokenizer`, and decoded in groups of whole sentences:

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

import argparse
import json
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from html import escape
from pathlib import Path, PurePath
from typing import IO, TYPE_CHECKING, Any, ClassVar

from . import registry, schemes
from .errors import HgnerError, ModelError
from .fileio import (STANDARD_OUTPUT, decode_utf8, file_identity, not_a_file, output_stream, read_input, refuse_inputs,
                     write_text)
from .graphkinds import check_graph_kind
from .tokenizer import (VERSION, TextTokenizer, TokenizedSentence, describe, language_defaults, likelier_language,
                        recorded_version)
from .validation import check_argument

if TYPE_CHECKING:
    from .model import CrfModel
    from .pipeline import DocumentResult

LANGUAGE_SAMPLE_WORDS = 2_000  # hgner tag checks the language of the first words it tags (Tagger.check_language)
LANGUAGE_SAMPLE_CHARS = 20 * LANGUAGE_SAMPLE_WORDS  # read from the start of each document until then
DEFAULT_MODEL = "en-conll03"  # the best measured configuration with confidences (README): update both together
DEFAULT_DECODER = "viterbi"
SKIP_DEFAULT_DECODER = "exact"  # what `hgner tag --graph skip` uses without --decoder (certified MAP; README)
DEFAULT_GLOB = "*.txt"  # files read from a directory input
MAX_GLOB_PARTS = 32  # folder levels a --glob pattern may name (pathlib's matching recurses per part)
DEFAULT_FORMAT = "inline"
BLOCK_CHARS = 100_000  # text tokenized at once (spaCy refuses texts over 1,000,000 characters)
CHAIN_GROUP_TOKENS = 20_000  # tokens decoded at once on the chain graph
SKIP_MAX_TOKENS = 200_000  # longest document the skip graph decodes whole
PROGRESS_BYTES = 1_000_000  # show a progress bar (on a terminal) for more input than this, or several inputs
_PATH_SUFFIXES = (".txt", ".text", ".md", ".rst", ".conll")


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
    """A model, a decoder and a graph kind, applied to raw text or to tokenized sentences.

    ``warn`` receives one-line warnings (tokenizer mismatch, a skip document cut into chunks).
    ``model`` is a model name, a model directory or a loaded :class:`~hgner.model.CrfModel`; the
    text is tokenized for the model's ``"language"`` (``meta.json``; English when it has none).
    """

    def __init__(
        self,
        model: str | Path | CrfModel = DEFAULT_MODEL,
        decoder: str | None = DEFAULT_DECODER,
        graph: str = "chain",
        sweeps: int | None = None,
        seed: int | None = None,
        warn: Callable[[str], None] = warnings.warn,
        settings: Mapping[str, Any] | None = None,
        min_confidence: float | None = None,
    ) -> None:
        from .decoders import make_decoder
        from .model import CrfModel, model_language
        from .pipeline import Pipeline

        decoder = check_tag_settings(decoder, graph, sweeps, seed, settings, min_confidence, warn)
        crf = model if isinstance(model, CrfModel) else CrfModel.load(model)
        # settings are strict; the shared options go only to the decoders that take them (viterbi takes marginals)
        shared = {"sweeps": sweeps, "seed": seed, "marginals": True}
        self.pipeline: Pipeline = Pipeline(crf, make_decoder(decoder, settings or {}, shared=shared), graph)
        self.decoder_name = decoder
        self.min_confidence = min_confidence
        self._unknown_confidence_noted = False
        self.group_tokens = CHAIN_GROUP_TOKENS if graph == "chain" else SKIP_MAX_TOKENS
        self.warn = warn
        trained_with = crf.metadata.get("tokenizer")
        version = recorded_version(trained_with)  # a model is tagged with the rules it records
        if version is None:
            version = VERSION
            warn(f"model {crf.name!r} was trained on text tokenized by {trained_with!r}, "
                 f"but tagging tokenizes with {describe()!r}; expect lower accuracy")
        self.tokenizer = TextTokenizer(model_language(crf.metadata), version)
        try:
            language_defaults(self.tokenizer.language)  # before any text is read
        except ModelError as error:
            raise ModelError(f"model {crf.name!r} ({crf.directory}): {error}") from None

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
                    self.warn(f"document longer than {SKIP_MAX_TOKENS} tokens: tagged in chunks of that size, "
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
            self.warn(message)

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
        """The entities of each text, in order, as :meth:`tag` gives them. Texts are taken
        ``batch_size`` at a time and handed to the tokenizer's ``pipe``, then decoded one document each."""
        check_argument(isinstance(texts, Iterable) and not isinstance(texts, str), "texts",
                       "an iterable of texts (tag() takes one text)", texts)
        if not isinstance(batch_size, int) or batch_size < 1:
            raise HgnerError(f"batch_size must be at least 1, got {batch_size!r}")
        batch: list[str] = []
        for text in texts:
            check_text(text, "texts")
            batch.append(text)
            if len(batch) == batch_size:
                yield from self._tag_batch(batch)
                batch = []
        yield from self._tag_batch(batch)

    def _tag_batch(self, texts: list[str]) -> Iterator[list[Entity]]:
        short = [t for t in texts if len(t) <= BLOCK_CHARS]  # longer texts are tokenized block by block
        tokenized = self.tokenizer.pipe(short, batch_size=max(1, len(short)))
        for text in texts:
            sentences = next(tokenized) if len(text) <= BLOCK_CHARS else self.sentences(text)
            yield [entity for group in self.tag_sentences(text, sentences) for entity in group.entities]

    def _decode(self, text: str, group: list[TokenizedSentence]) -> TaggedGroup:
        result = self.pipeline.decode([s.tokens for s in group])
        return self._confident(TaggedGroup(group, result.tags, entities(text, group, result), result.marginals))

    def _confident(self, group: TaggedGroup) -> TaggedGroup:
        """``group`` without the entities whose confidence is below ``min_confidence`` (their tokens
        tagged O). Entities without a confidence (a decoder without marginals) are kept, with a
        note to ``warn`` the first time."""
        if self.min_confidence is None:
            return group
        if not self._unknown_confidence_noted and any(e.confidence is None for e in group.entities):
            self._unknown_confidence_noted = True
            self.warn(f"decoder {self.decoder_name!r} gives no confidences: "
                      "its entities are kept whatever the minimum confidence")
        tags = [list(t) for t in group.tags]
        chunks = [(s, first, last) for s, sentence_tags in enumerate(group.tags) for first, last, _ in schemes.chunks(sentence_tags)]
        kept = []
        for (s, first, last), entity in zip(chunks, group.entities, strict=True):
            if entity.confidence is None or entity.confidence >= self.min_confidence:
                kept.append(entity)
            else:
                tags[s][first:last] = ["O"] * (last - first)
        return replace(group, tags=tags, entities=kept)


class Writer:
    """An output format, registered by name in :data:`hgner.registry.output_formats`: one class per
    format. ``start`` is called once per input (empty ones included), ``group`` per decoded group,
    ``finish`` at the document's end and ``close`` once at the end of the output.

    ``stream`` says what ``out`` is: ``"text"`` (standard output or the ``-o`` file), ``"bytes"``
    (the ``-o`` file, which is then required) or ``"files"`` (no stream: the writer writes its own
    files, beside the inputs or into the ``-o`` directory). ``tag_schemes`` lists the tag schemes the
    format can write (``--scheme``), the first being its default; empty when it writes no tags.
    """

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""  # one line for ``hgner tag --help``
    stream: ClassVar[str] = "text"
    tag_schemes: ClassVar[tuple[str, ...]] = ()

    def __init__(self, out: IO | None, options: OutputOptions) -> None:
        self.out = out
        self.options = options
        self.documents = 0

    @classmethod
    def check(cls, inputs: list[Input], options: OutputOptions) -> None:
        """Refuse, before anything is tagged, inputs or options this format cannot write."""
        if options.scheme is not None and options.scheme not in cls.tag_schemes:
            accepted = f"one of {', '.join(cls.tag_schemes)}" if cls.tag_schemes else "no --scheme (it writes no tags)"
            raise HgnerError(f"--scheme {options.scheme}: the {cls.name} format takes {accepted}")
        if cls.stream == "bytes" and options.standard_output:
            raise HgnerError(f"the {cls.name} format is binary: give -o FILE")

    def start(self, document: Input, text: str) -> None:
        self.document = document
        self.text = text
        self.documents += 1

    def group(self, group: TaggedGroup) -> None:
        """Write (or keep) one decoded group."""

    def finish(self) -> None:
        """End the current document."""
        if self.out is not None:
            self.out.flush()

    def close(self) -> None:
        """End the output."""
        if self.out is not None:
            self.out.flush()


@dataclass(frozen=True)
class OutputOptions:
    """What ``hgner tag`` says about the output: the ``-o`` path and the ``--scheme`` (None: the
    format's default)."""

    output: str | None = None
    scheme: str | None = None
    documents: int = 1  # how many inputs (the HTML page's title names the only one)
    language: str = "en"  # the text's: the model's (the HTML page's lang)

    @property
    def standard_output(self) -> bool:
        """Whether the output goes to standard output: no ``-o``, or ``-o -``."""
        return self.output in (None, STANDARD_OUTPUT)


def output_format(name: str) -> type[Writer]:
    """The writer class registered as ``name``; :class:`UnknownNameError` lists the others."""
    return registry.lookup(registry.output_formats, name)


def register_format(name: str) -> Callable[[type[Writer]], type[Writer]]:
    """Class decorator: make a :class:`Writer` the output format ``name`` (``hgner tag --format``)."""

    def add(cls: type[Writer]) -> type[Writer]:
        cls.name = name
        return registry.output_formats.register(name, func=cls)

    return add


@register_format("inline")
class InlineWriter(Writer):
    """The original text with ``[Jim Smith](PER)`` markup, a newline after every document; a blank
    input prints nothing."""

    summary = "the text with [Jim Smith](PER) markup"

    def start(self, document: Input, text: str) -> None:
        super().start(document, text)
        self.cursor = 0

    def group(self, group: TaggedGroup) -> None:
        pieces = []
        for entity in group.entities:
            pieces += [self.text[self.cursor:entity.start], f"[{entity.text}]({entity.label})"]
            self.cursor = entity.end
        pieces.append(self.text[self.cursor:group.end])
        self.cursor = group.end
        self.out.write("".join(pieces))
        self.out.flush()

    def finish(self) -> None:
        if self.text.strip():
            rest = self.text[self.cursor:]
            self.out.write(rest if rest.endswith("\n") else rest + "\n")
        super().finish()


@register_format("conll")
class ConllWriter(Writer):
    """``token<TAB>tag`` lines in ``--scheme`` (IOB2 by default) whatever the model's scheme, a
    blank line after every sentence, and a ``-DOCSTART-`` line before every document but the first
    (so N inputs give N - 1 of them, blank inputs included)."""

    summary = "token<TAB>tag lines, tags in --scheme (IOB2, BIOES or IO; default IOB2)"
    tag_schemes = ("IOB2", "BIOES", "IO")

    def start(self, document: Input, text: str) -> None:
        super().start(document, text)
        if self.documents > 1:
            self.out.write("-DOCSTART-\tO\n\n")

    def group(self, group: TaggedGroup) -> None:
        scheme = self.options.scheme or self.tag_schemes[0]
        lines = []
        for sentence, tags in zip(group.sentences, group.tags):
            lines += [f"{token}\t{tag}\n" for token, tag in zip(sentence.tokens, schemes.convert(tags, scheme))]
            lines.append("\n")
        self.out.write("".join(lines))
        self.out.flush()


@register_format("jsonl")
class JsonlWriter(Writer):
    """One JSON object per input, blank ones included:
    ``{"source": ..., "text": ..., "entities": [{start, end, text, label, confidence}]}``."""

    summary = "one JSON object per input (blank ones too) with its source, character offsets and confidences"

    def start(self, document: Input, text: str) -> None:
        super().start(document, text)
        self.entities: list[Entity] = []

    def group(self, group: TaggedGroup) -> None:
        self.entities += group.entities

    def finish(self) -> None:
        record = jsonl_record(self.document.source, self.text, [e.to_json() for e in self.entities])
        self.out.write(json.dumps(record, ensure_ascii=False) + "\n")
        super().finish()


def jsonl_record(source: str, text: str | None, entities: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSONL record of one document, as ``--format jsonl`` and ``tag --cluster``'s parts write
    it: ``{"source", "text", "entities"}``, without ``"text"`` when ``text`` is None."""
    record: dict[str, Any] = {"source": source}
    if text is not None:
        record["text"] = text
    record["entities"] = entities
    return record


@register_format("html")
class HtmlWriter(Writer):
    """One self-contained HTML page holding every input: per document a heading (the file name),
    the text with entities marked in their label's colour and their confidence in a tooltip
    (``title``), and at the end a legend of the labels on the page. Each document's section is
    written when it is tagged, so memory does not grow with the input. Everything from the input,
    the model or the file system is escaped."""

    summary = "an HTML page: entities coloured by label, confidences on hover, a legend"

    def __init__(self, out: IO | None, options: OutputOptions) -> None:
        super().__init__(out, options)
        self.colours: dict[str, str] = {}  # label -> colour, in order of first appearance
        self.entities: list[Entity] = []
        self.heading = ""

    def start(self, document: Input, text: str) -> None:
        if self.documents == 0:
            title = document.name if self.options.documents == 1 else f"{self.options.documents} documents"
            self.out.write(html_head(title, self.options.language))
        super().start(document, text)
        self.heading, self.entities = document.name, []

    def group(self, group: TaggedGroup) -> None:
        self.entities.extend(group.entities)

    def finish(self) -> None:
        self.out.write(html_section(self.heading, self.text, self.entities, self.colours))
        super().finish()

    def close(self) -> None:
        if self.documents:
            self.out.write(html_tail(self.colours))
        super().close()


HTML_COLOURS = {"PER": "#aa9cfc", "LOC": "#ff9561", "ORG": "#7aecec", "MISC": "#e4e7d2"}
HTML_PALETTE = ("#bfe1d9", "#feca74", "#c887fb", "#9cc9cc", "#ffeb80", "#ff8197", "#f0d0ff", "#e4e7d2")


def html_head(title: str, language: str = "en") -> str:
    """The page up to its first document, in ``language`` (an ISO code)."""
    return (f"<!DOCTYPE html>\n<html lang=\"{escape(language)}\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>hgner: {escape(title)}</title>\n<style>{HTML_STYLE}</style>\n</head>\n<body>\n")


def html_section(heading: str, text: str, entities: list[Entity], colours: dict[str, str]) -> str:
    """One document's section; labels seen for the first time get a colour in ``colours``."""
    pieces, cursor = [], 0
    for e in entities:
        if e.label not in colours:
            others = [c for c in HTML_PALETTE if c not in colours.values()] or list(HTML_PALETTE)
            colours[e.label] = HTML_COLOURS.get(e.label) or others[0]
        confidence = "confidence unknown" if e.confidence is None else f"confidence {e.confidence:.3f}"
        pieces += [escape(text[cursor:e.start]),
                   f'<mark style="background: {colours[e.label]}" title="{escape(e.label)}, {confidence}">'
                   f'{escape(e.text)} <span class="label">{escape(e.label)}</span></mark>']
        cursor = e.end
    pieces.append(escape(text[cursor:]))
    return f'<section>\n<h2>{escape(heading)}</h2>\n<div class="text">{"".join(pieces)}</div>\n</section>\n'


def html_tail(colours: dict[str, str]) -> str:
    """The legend of the labels on the page, and the page's end."""
    legend = "".join(f'<mark style="background: {colour}">{escape(label)}</mark> ' for label, colour in sorted(colours.items()))
    return (f'<p class="legend">labels: {legend or "none found"} (hover over an entity for its confidence)</p>\n'
            "</body>\n</html>\n")


HTML_STYLE = (
    "body { font-family: sans-serif; max-width: 60em; margin: 2em auto; line-height: 2.4; }"
    " .text { white-space: pre-wrap; }"
    " mark { padding: 0.2em 0.35em; border-radius: 0.3em; }"
    " .label { font-size: 0.7em; font-weight: bold; margin-left: 0.4em; vertical-align: middle; }"
)


@register_format("brat")
class BratWriter(Writer):
    """BRAT standoff: for each input ``NAME.txt`` a ``NAME.ann`` with ``T1<TAB>LABEL START END<TAB>text``
    lines (character offsets into the text as read, so a byte-order mark is not counted; an entity
    spanning a line break becomes fragments ``START END;START END``) and an ``AnnotatorNotes`` line
    with each confidence. Without ``-o`` the ``.ann`` goes beside each input file; with ``-o DIR``
    the text is copied into DIR as ``NAME.txt`` beside ``NAME.ann`` (a text argument or standard
    input is named ``text-N``, N its place among the inputs; files keep their path below a directory input)."""

    summary = "BRAT standoff: NAME.ann beside each input file, or NAME.txt + NAME.ann in the -o DIR"
    stream = "files"

    @classmethod
    def check(cls, inputs: list[Input], options: OutputOptions) -> None:
        super().check(inputs, options)
        if options.output == STANDARD_OUTPUT:
            raise HgnerError("-o -: the brat format writes files, not standard output; give -o DIR, or no -o to "
                             "write NAME.ann beside each input file")
        if options.output is None:
            unnamed = next((i.source for i in inputs if i.path is None or i.path == "-"), None)
            if unnamed is not None:
                raise HgnerError(f"the brat format writes NAME.ann beside each input file; {unnamed} is not a file: "
                                 "give -o DIR")
        elif os.path.exists(options.output) and not os.path.isdir(options.output):
            raise HgnerError(f"-o {options.output}: the brat format writes into a directory, and this is a file")
        read = {file_identity(i.path): i.source for i in inputs if i.path not in (None, "-")}
        targets: dict[Path, str] = {}
        for number, document in enumerate(inputs, 1):
            target = cls.annotation_path(document, options, number)
            if target in targets:
                raise HgnerError(f"{document.source} and {targets[target]} would both be written to {target}")
            targets[target] = document.source
            for written in [target] + ([target.with_suffix(".txt")] if options.output is not None else []):
                if written.exists() and file_identity(written) in read:
                    raise HgnerError(f"{written} is also an input ({read[file_identity(written)]}); refusing to overwrite it")

    @staticmethod
    def annotation_path(document: Input, options: OutputOptions, number: int) -> Path:
        """Where ``document``'s ``.ann`` goes (its ``.txt`` copy too, with ``-o DIR``)."""
        if options.output is None:
            return Path(document.path).with_suffix(".ann")
        relative = Path(document.relative) if document.path not in (None, "-") else Path(f"text-{number}")
        return Path(options.output, relative).with_suffix(".ann")

    def group(self, group: TaggedGroup) -> None:
        self.entities += group.entities

    def start(self, document: Input, text: str) -> None:
        super().start(document, text)
        self.entities: list[Entity] = []

    def finish(self) -> None:
        lines = []
        for number, entity in enumerate(self.entities, 1):
            fragments, start = [], entity.start
            for line in entity.text.split("\n"):
                if line.strip():
                    fragments.append((start, start + len(line)))
                start += len(line) + 1
            where = ";".join(f"{a} {b}" for a, b in fragments)
            shown = " ".join(self.text[a:b] for a, b in fragments)
            lines.append(f"T{number}\t{entity.label} {where}\t{shown}\n")
            if entity.confidence is not None:
                lines.append(f"#{number}\tAnnotatorNotes T{number}\tconfidence {entity.confidence:.6f}\n")
        target = self.annotation_path(self.document, self.options, self.documents)
        if self.options.output is not None:  # paths hgner chose inside DIR: links there are replaced, never followed
            target.parent.mkdir(parents=True, exist_ok=True)
            root = Path(self.options.output).resolve()
            if target.parent.resolve() != root and root not in target.parent.resolve().parents:
                raise HgnerError(f"{target.parent}: a link inside -o {self.options.output} to a folder outside it; "
                                 "refusing to write there")
            write_text(target.with_suffix(".txt"), self.text, follow_links=False)
            write_text(target, "".join(lines), follow_links=False)
        else:
            write_text(target, "".join(lines))


@register_format("docbin")
class DocBinWriter(Writer):
    """A spaCy ``DocBin`` (binary, needs ``-o FILE``): one ``Doc`` per input, blank ones included,
    built from hgner's own tokens (whitespace between them kept as spaCy keeps it, so
    ``doc.text`` is the input text), with sentence starts, ``doc.ents``, and
    ``doc.user_data["hgner"] = {"source": ..., "confidences": [one per entity]}``. Read it with
    ``DocBin().from_disk(path).get_docs(nlp.vocab)``."""

    summary = "a spaCy DocBin file (binary: needs -o FILE) with doc.ents and sentence starts"
    stream = "bytes"

    def __init__(self, out: IO | None, options: OutputOptions) -> None:
        from spacy.tokens import DocBin
        from spacy.vocab import Vocab

        super().__init__(out, options)
        self.vocab = Vocab()
        self.bin = DocBin(store_user_data=True)

    def start(self, document: Input, text: str) -> None:
        super().start(document, text)
        self.groups: list[TaggedGroup] = []

    def group(self, group: TaggedGroup) -> None:
        self.groups.append(group)

    def finish(self) -> None:
        self.bin.add(spacy_doc(self.vocab, self.text, self.groups, self.document.source))

    def close(self) -> None:
        self.out.write(self.bin.to_bytes())
        super().close()


def spacy_doc(vocab: Any, text: str, groups: list[TaggedGroup], source: str) -> Any:
    """A spaCy ``Doc`` whose ``text`` is ``text``: hgner's tokens, the whitespace between them as
    spaCy keeps it (one trailing space on the token, anything else a whitespace token), sentence
    starts, and the groups' entities in ``doc.ents``."""
    from spacy.tokens import Doc, Span

    words: list[str] = []
    spaces: list[bool] = []
    starts: list[bool] = []
    first_token: dict[int, int] = {}  # character offset -> token index
    last_token: dict[int, int] = {}

    def whitespace(gap: str) -> None:
        if gap.startswith(" ") and words:
            spaces[-1] = True
            gap = gap[1:]
        if gap:
            words.append(gap)
            spaces.append(False)
            starts.append(False)

    cursor = 0
    for group in groups:
        for sentence in group.sentences:
            for position, (start, end) in enumerate(sentence.offsets):
                whitespace(text[cursor:start])
                first_token[start], last_token[end] = len(words), len(words) + 1
                words.append(text[start:end])
                spaces.append(False)
                starts.append(position == 0)
                cursor = end
    whitespace(text[cursor:])
    doc = Doc(vocab, words=words, spaces=spaces, sent_starts=starts or None)
    entities = [e for group in groups for e in group.entities]
    doc.ents = [Span(doc, first_token[e.start], last_token[e.end], label=e.label) for e in entities]
    doc.user_data["hgner"] = {"source": source, "confidences": [e.confidence for e in entities]}
    return doc


@dataclass(frozen=True)
class Input:
    """One document to tag: a file, standard input (``path == "-"``), or literal text. ``relative``
    is a file's path below the directory argument it was found in (its name when given directly)."""

    source: str
    path: str | None = None
    text: str | None = None
    relative: str | None = None

    @property
    def name(self) -> str:
        """A short name for headings: the file name, ``text`` or ``standard input``."""
        if self.path is None:
            return "text"
        return "standard input" if self.path == "-" else Path(self.path).name

    def read(self) -> str:
        if self.text is not None:
            return self.text
        if self.path == "-":
            raw = sys.stdin.buffer.read()
        else:
            try:
                raw = read_input(self.path)
            except OSError as error:
                raise HgnerError(f"{self.path}: cannot read ({error.strerror or error})") from None
        return decode_utf8(raw, self.source)

    def size(self) -> int:
        """Bytes to tag, for the progress bar (0 when unknown: standard input)."""
        if self.text is not None:
            return len(self.text.encode("utf-8"))
        return 0 if self.path == "-" else os.path.getsize(self.path)


def _looks_like_path(argument: str) -> bool:
    return not any(c.isspace() for c in argument) and ("/" in argument or argument.endswith(_PATH_SUFFIXES))


def check_text(text: str, name: str) -> None:
    """An :class:`HgnerError` naming the argument ``name`` unless ``text`` is a str that UTF-8 can
    encode (a lone surrogate, which no file or terminal gives, would fail inside spaCy)."""
    check_argument(isinstance(text, str), name, "a str", text)
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as error:
            raise HgnerError(f"{name}: not valid Unicode ({error.reason} at character {error.start})") from None


def check_glob(pattern: str) -> str:
    """``pattern`` when it is a ``--glob`` pattern inside a folder (``*.txt``, ``news/*.txt``), an
    :class:`HgnerError` when it is empty, could reach outside the folder (absolute, or with a
    ``..`` part: a file found there would have no place in the output folder) or names more than
    :data:`MAX_GLOB_PARTS` levels."""
    path = PurePath(pattern)
    if not pattern or path.is_absolute() or ".." in path.parts or len(path.parts) > MAX_GLOB_PARTS:
        raise HgnerError(f"glob pattern {pattern!r}: expected a pattern of file names inside the folder, such as "
                         f"{DEFAULT_GLOB!r} or 'news/*.txt' (not absolute, no '..', at most {MAX_GLOB_PARTS} parts)")
    if any("**" in part and part != "**" for part in path.parts):  # as pathlib's glob refuses them
        raise HgnerError(f"glob pattern {pattern!r}: '**' must be a whole part of the pattern, as in '**/*.txt'")
    return pattern


def folder_files(directory: str | Path, patterns: str | Sequence[str] = DEFAULT_GLOB,
                 exclude: str | Path | None = None) -> list[Path]:
    """The files a folder input gives, for ``hgner tag`` and ``hgner tag --cluster`` alike: those
    below ``directory``, recursively, that match a pattern (``--glob``; ``--cluster`` adds the
    JSONL and Parquet patterns), sorted by path. Hidden ones (a name starting with ``.``, or below
    such a folder inside ``directory``) and ``exclude``'s tree are left out. An
    :class:`HgnerError` when there is none."""
    root = Path(directory)
    patterns = tuple(map(check_glob, (patterns,) if isinstance(patterns, str) else patterns))
    skip = Path(exclude).resolve() if exclude is not None else None
    for problem in _unlistable_folders(root):  # rglob skips them without a word
        where = Path(problem.filename or root)
        if not any(part.startswith(".") for part in where.relative_to(root).parts if where != root) \
                and (skip is None or skip != where.resolve() and skip not in where.resolve().parents):
            raise HgnerError(f"{where}: cannot list the folder ({problem.strerror or problem}); its files would be "
                             "left out")
    found = sorted({p for pattern in patterns for p in root.rglob(pattern) if p.is_file()
                    and not any(part.startswith(".") for part in p.relative_to(root).parts)
                    and (skip is None or skip not in p.resolve().parents)})
    if not found:
        raise HgnerError(f"{directory}: a directory with no files matching {' or '.join(map(repr, patterns))} "
                         "(see --glob)")
    return found


def _unlistable_folders(root: Path) -> list[OSError]:
    """The errors listing ``root``'s folders gave (unreadable ones), walking as ``rglob`` does."""
    problems: list[OSError] = []
    for _ in os.walk(root, onerror=problems.append):
        pass
    return problems


def directory_inputs(directory: str, pattern: str = DEFAULT_GLOB) -> list[Input]:
    """The inputs of a folder: its :func:`folder_files`."""
    root = Path(directory)
    return [Input(str(p), path=str(p), relative=str(p.relative_to(root))) for p in folder_files(root, pattern)]


def resolve_inputs(arguments: list[str], reading: str = "auto", pattern: str = DEFAULT_GLOB) -> list[Input]:
    """Inputs from positional arguments. ``reading`` is ``auto`` (an existing file is read as a file,
    an existing directory gives its files matching ``pattern``, as :func:`folder_files` finds them; a missing path that
    looks like one, with a ``/`` or a ``.txt``-like suffix and no spaces, is an error; anything else
    is text), ``text`` or ``files``. No argument, or ``-``, is standard input."""
    if not arguments:
        return [Input("<stdin>", path="-")]
    inputs = []
    for argument in arguments:
        if argument == "-" and reading != "text":
            inputs.append(Input("<stdin>", path="-"))
        elif reading == "text" or (reading == "auto" and not os.path.exists(argument) and not _looks_like_path(argument)):
            inputs.append(Input("<text>", text=argument))
        elif os.path.isdir(argument):
            inputs += directory_inputs(argument, pattern)
        elif os.path.isfile(argument):
            inputs.append(Input(argument, path=argument, relative=Path(argument).name))
        else:
            hint = "" if reading == "files" else " (use --text to tag the argument itself)"
            raise HgnerError(f"{argument}: {not_a_file(argument)}{hint}")
    return inputs


_worker_tagger: Tagger | None = None  # the parent's Tagger, inherited by forked workers (see _tagged)


def _tag_whole(document: Input) -> tuple[str, list[TaggedGroup]]:
    """In a worker: one input's text and all its decoded groups."""
    text = document.read()
    return text, list(_worker_tagger.tag_text(text))


def _tagged(tagger: Tagger, inputs: list[Input], jobs: int) -> Iterator[tuple[Input, str, Iterable[TaggedGroup]]]:
    """Each input with its text and decoded groups, in input order. One job streams groups as they
    are decoded; several jobs tag whole inputs in forked worker processes (files only)."""
    if jobs <= 1 or len(inputs) < 2 or any(i.path == "-" for i in inputs):
        for document in inputs:
            text = document.read()
            yield document, text, tagger.tag_text(text)
        return
    import multiprocessing

    global _worker_tagger
    tagger.pipeline.decode([["Warm", "up", "."]])  # load the kernels once, before forking
    _worker_tagger = tagger
    workers = min(jobs, len(inputs))
    batch = max(1, len(inputs) // (8 * workers))  # a few batches per worker: balance against messaging
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        for document, (text, groups) in zip(inputs, pool.imap(_tag_whole, inputs, chunksize=batch)):
            yield document, text, groups


def tag_inputs(tagger: Tagger, inputs: list[Input], writer: Writer, progress: bool, jobs: int = 1) -> None:
    """Tag every input, writing each document to ``writer`` in input order (blank ones too, with no
    groups); with one job the groups of a document stream out as they are decoded."""
    from tqdm import tqdm

    total = sum(i.size() for i in inputs)
    show = progress and (len(inputs) > 1 or total > PROGRESS_BYTES)
    documents = _tagged(tagger, inputs, jobs)
    sample: list[str] | None = []  # the first words tagged, until the language check has read them
    with tqdm(total=total or None, unit="B", unit_scale=True, disable=not show, file=sys.stderr, leave=False) as bar:
        for document, text, groups in documents:
            if sample is not None and add_to_language_sample(sample, text):
                tagger.check_language(sample)
                sample = None
            writer.start(document, text)
            done = 0
            for group in groups:
                writer.group(group)
                bar.update(len(text[done:group.end].encode("utf-8")))
                done = group.end
            writer.finish()
            bar.update(len(text[done:].encode("utf-8")))
    writer.close()
    if sample:
        tagger.check_language(sample)


def add_to_language_sample(sample: list[str], text: str) -> bool:
    """Add the words at the start of one document's ``text`` to ``sample`` (the first words tagged,
    document after document, that the language check reads); True when it has enough."""
    sample.extend(text[:LANGUAGE_SAMPLE_CHARS].split())
    return len(sample) >= LANGUAGE_SAMPLE_WORDS


def language_warning(words: Iterable[str], language: str, model_name: str) -> str | None:
    """The warning for ``words`` (the first :data:`LANGUAGE_SAMPLE_WORDS` of the text tagged) that
    look more like the language of another shipped model than like ``language``, model
    ``model_name``'s (:func:`~hgner.tokenizer.likelier_language`, among the shipped models'
    languages only: those are the ones it can point to), or None."""
    from .model import model_advice, shipped_languages

    other = likelier_language(words, language, candidates=shipped_languages)
    if other is None:
        return None
    return (f"the text looks like {other.language!r} ({other.evidence}), but model {model_name!r} is for "
            f"{language!r}: {model_advice(other.language)}")


def check_tag_settings(decoder: str | None, graph: str, sweeps: int | None, seed: int | None,
                       settings: Mapping[str, Any] | None, min_confidence: float | None,
                       warn: Callable[[str], None]) -> str:
    """The decoder to tag with (:func:`decoder_for_graph`), once the settings of a :class:`Tagger`
    are checked without loading a model (as ``hgner tag``, the spaCy component and ``tag
    --cluster`` take them): an :class:`HgnerError` for a bad graph, decoder, decoder setting,
    ``sweeps`` or ``seed`` given twice, or ``min_confidence`` outside 0..1."""
    from .decoders import make_decoder

    check_argument(settings is None or isinstance(settings, Mapping), "settings", "a mapping of decoder settings",
                   settings)
    check_argument(min_confidence is None or (isinstance(min_confidence, (int, float))
                                              and not isinstance(min_confidence, bool) and 0 <= min_confidence <= 1),
                   "min_confidence", "a number from 0 to 1 or None", min_confidence)
    name = decoder_for_graph(decoder, graph, warn)  # None: the default for the graph
    refuse_given_twice(sweeps, seed, settings)
    make_decoder(name, settings or {}, shared={"sweeps": sweeps, "seed": seed})
    return name


def refuse_given_twice(sweeps: int | None, seed: int | None, settings: Mapping[str, Any] | None) -> None:
    """An :class:`HgnerError` when ``--sweeps`` or ``--seed`` is given and the decoder settings
    (``--set``) give it too: :func:`~hgner.decoders.make_decoder` would quietly take the setting."""
    for name, value in (("sweeps", sweeps), ("seed", seed)):
        if value is not None and name in (settings or {}):
            raise HgnerError(f"--{name} {value} and --set {name}={settings[name]}: give {name} once")


def decoder_for_graph(name: str | None, graph: str, warn: Callable[[str], None]) -> str:
    """The decoder to tag with: ``name``, or the default when it is None. On a graph with skip
    edges a chain-only decoder is an error naming the decoders that take them, except the default,
    which gives way to :data:`SKIP_DEFAULT_DECODER` with a note to ``warn``."""
    from .decoders import available_decoders, decoder_class

    if check_graph_kind(graph) == "chain":
        return name or DEFAULT_DECODER
    if name is None and decoder_class(DEFAULT_DECODER).chain_only:
        warn(f"--graph {graph}: the default decoder {DEFAULT_DECODER} decodes chains only; "
             f"tagging with {SKIP_DEFAULT_DECODER} instead")
        return SKIP_DEFAULT_DECODER
    name = name or DEFAULT_DECODER
    if decoder_class(name).chain_only:
        others = [d for d in available_decoders() if not decoder_class(d).chain_only]
        raise HgnerError(f"decoder {name!r} decodes chains only, not a {graph} graph; use --decoder "
                         f"{SKIP_DEFAULT_DECODER} (certified MAP) or another of: {', '.join(others)}")
    return name


@contextmanager
def _opened(writer: type[Writer], output: str | None) -> Iterator[IO | None]:
    """The stream ``writer`` writes to: standard output (no ``-o``, or ``-o -``), or the ``-o``
    file written atomically."""
    if writer.stream == "files":
        yield None
    else:
        with output_stream(STANDARD_OUTPUT if output is None else output, binary=writer.stream == "bytes") as out:
            yield out


def run(args: argparse.Namespace) -> int:
    """``hgner tag``: see ``hgner tag --help``."""
    from .decoders.settings import parse_assignments

    cluster_only = {"--out": args.out, "--text-column": args.text_column, "--part-format": args.part_format}
    if not args.cluster:
        for option, value in cluster_only.items():
            if value is not None:
                raise HgnerError(f"{option} needs --cluster (e.g. --cluster local:1)")
    else:
        local_only = {"-o": args.output, "--format": args.format, "--scheme": args.scheme,
                      "--min-confidence": args.min_confidence, "-j": args.jobs}
        for option, value in local_only.items():
            if value is not None:
                raise HgnerError(f"{option} is not used with --cluster, which writes part files in --out "
                                 "(one JSONL or Parquet record per document, with every entity)")
        from .cluster import run_tag

        return run_tag(args)
    warn = lambda message: print(f"hgner tag: warning: {message}", file=sys.stderr)  # noqa: E731
    writer = output_format(args.format or DEFAULT_FORMAT)
    settings = parse_assignments(args.set)
    inputs = resolve_inputs(args.inputs, args.reading, args.glob)
    options = OutputOptions(args.output, args.scheme, len(inputs))
    writer.check(inputs, options)
    tagger = Tagger(args.model, args.decoder, args.graph, args.sweeps, args.seed, warn=warn, settings=settings,
                    min_confidence=args.min_confidence)
    options = replace(options, language=tagger.tokenizer.language)
    if writer.stream != "files":
        read = [i.path for i in inputs if i.path not in (None, "-")]
        refuse_inputs(args.output, [*read, *tagger.pipeline.model.files()], "-o",
                      read_stdin=any(i.path == "-" for i in inputs))
    with _opened(writer, args.output) as out:
        tag_inputs(tagger, inputs, writer(out, options), progress=sys.stderr.isatty(), jobs=args.jobs or 1)
    return 0
