"""``hgner tag``: raw text in, entities out, through the same :class:`~hgner.pipeline.Pipeline`
that ``hgner evaluate`` scores, so tagging and evaluation never disagree.

A document is one input (a file, the argument text, standard input, or one spaCy ``Doc``).
Text is cut into blocks of at most :data:`BLOCK_CHARS` characters at line breaks, tokenized by
:class:`~hgner.tokenizer.TextTokenizer`, and decoded in groups of whole sentences:

* chain graph: groups of about :data:`CHAIN_GROUP_TOKENS` tokens. Sentences are independent on
  the chain, so grouping changes nothing in the result and memory stays bounded for any size.
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
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from . import schemes
from .errors import HgnerError
from .tokenizer import DEFAULT_LANGUAGE, TextTokenizer, TokenizedSentence, describe

if TYPE_CHECKING:
    from .model import CrfModel
    from .pipeline import DocumentResult, Pipeline

DEFAULT_MODEL = "en-conll03"  # the best measured configuration with confidences (README): update both together
DEFAULT_DECODER = "viterbi"
FORMATS = ("inline", "conll", "jsonl", "html")
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
    """Consecutive sentences of one document decoded together: their tags (model scheme) and entities."""

    sentences: list[TokenizedSentence]
    tags: list[list[str]]
    entities: list[Entity]

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
        decoder: str = DEFAULT_DECODER,
        graph: str = "chain",
        sweeps: int | None = None,
        seed: int | None = None,
        warn: Callable[[str], None] = warnings.warn,
    ) -> None:
        from .decoders import make_decoder
        from .model import CrfModel
        from .pipeline import Pipeline

        crf = model if isinstance(model, CrfModel) else CrfModel.load(model)
        # make_decoder passes each decoder only the settings it accepts: viterbi takes marginals
        self.pipeline: Pipeline = Pipeline(crf, make_decoder(decoder, sweeps=sweeps, seed=seed, marginals=True), graph)
        self.group_tokens = CHAIN_GROUP_TOKENS if graph == "chain" else SKIP_MAX_TOKENS
        self.warn = warn
        self.tokenizer = TextTokenizer(crf.metadata.get("language", DEFAULT_LANGUAGE))
        trained_with = crf.metadata.get("tokenizer")
        if trained_with != describe():
            warn(f"model {crf.name!r} was trained on text tokenized by {trained_with!r}, "
                 f"but tagging tokenizes with {describe()!r}; expect lower accuracy")

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

    def tag_text(self, text: str) -> Iterator[TaggedGroup]:
        """Tokenize and tag one document, yielding groups of sentences as they are decoded."""
        return self.tag_sentences(text, self.sentences(text))

    def _decode(self, text: str, group: list[TokenizedSentence]) -> TaggedGroup:
        result = self.pipeline.decode([s.tokens for s in group])
        return TaggedGroup(group, result.tags, entities(text, group, result))


class Writer:
    """An output format: called once per document start, per decoded group, per document end."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.documents = 0

    def start(self, source: str, text: str) -> None:
        self.text = text
        self.documents += 1

    def group(self, group: TaggedGroup) -> None:
        """Write (or keep) one decoded group."""

    def finish(self) -> None:
        """End the current document."""
        self.out.flush()

    def close(self) -> None:
        """End the output."""
        self.out.flush()


class InlineWriter(Writer):
    """The original text with ``[Jim Smith](PER)`` markup, a newline after every document."""

    def start(self, source: str, text: str) -> None:
        super().start(source, text)
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
        rest = self.text[self.cursor:]
        self.out.write(rest if rest.endswith("\n") else rest + "\n")
        super().finish()


class ConllWriter(Writer):
    """``token<TAB>tag`` lines with IOB2 (BIO) tags whatever the model's scheme, a blank line
    after every sentence, and a ``-DOCSTART-`` line between documents."""

    def start(self, source: str, text: str) -> None:
        super().start(source, text)
        if self.documents > 1:
            self.out.write("-DOCSTART-\tO\n\n")

    def group(self, group: TaggedGroup) -> None:
        lines = []
        for sentence, tags in zip(group.sentences, group.tags):
            lines += [f"{token}\t{tag}\n" for token, tag in zip(sentence.tokens, schemes.convert(tags, "IOB2"))]
            lines.append("\n")
        self.out.write("".join(lines))
        self.out.flush()


class JsonlWriter(Writer):
    """One JSON object per document: ``{"text": ..., "entities": [{start, end, text, label, confidence}]}``."""

    def start(self, source: str, text: str) -> None:
        super().start(source, text)
        self.entities: list[Entity] = []

    def group(self, group: TaggedGroup) -> None:
        self.entities += group.entities

    def finish(self) -> None:
        record = {"text": self.text, "entities": [e.to_json() for e in self.entities]}
        self.out.write(json.dumps(record, ensure_ascii=False) + "\n")
        super().finish()


class HtmlWriter(Writer):
    """One displaCy entity page holding every document, written when the output ends."""

    def __init__(self, out: TextIO) -> None:
        super().__init__(out)
        self.pages: list[dict[str, Any]] = []

    def start(self, source: str, text: str) -> None:
        super().start(source, text)
        self.pages.append({"text": text, "ents": [], "title": None if source.startswith("<") else escape(source)})

    def group(self, group: TaggedGroup) -> None:
        self.pages[-1]["ents"] += [{"start": e.start, "end": e.end, "label": e.label} for e in group.entities]

    def close(self) -> None:
        from spacy import displacy

        if self.pages:
            page = displacy.render(self.pages, style="ent", manual=True, page=True, jupyter=False, options=HTML_OPTIONS)
            self.out.write(page)
        super().close()


HTML_OPTIONS = {"colors": {"PER": "#aa9cfc", "MISC": "#e4e7d2"}}  # displaCy colours only spaCy's own label names

WRITERS: dict[str, type[Writer]] = {"inline": InlineWriter, "conll": ConllWriter, "jsonl": JsonlWriter, "html": HtmlWriter}


@dataclass(frozen=True)
class Input:
    """One document to tag: a file, standard input (``path == "-"``), or literal text."""

    source: str
    path: str | None = None
    text: str | None = None

    def read(self) -> str:
        if self.text is not None:
            return self.text
        if self.path == "-":
            raw = sys.stdin.buffer.read()
        else:
            try:
                raw = Path(self.path).read_bytes()
            except OSError as error:
                raise HgnerError(f"{self.path}: cannot read ({error.strerror or error})") from None
        try:
            return raw.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise HgnerError(f"{self.source}: not UTF-8 text (byte 0x{raw[error.start]:02x} at offset {error.start})") from None

    def size(self) -> int:
        """Bytes to tag, for the progress bar (0 when unknown: standard input)."""
        if self.text is not None:
            return len(self.text.encode("utf-8"))
        return 0 if self.path == "-" else os.path.getsize(self.path)


def _looks_like_path(argument: str) -> bool:
    return not any(c.isspace() for c in argument) and ("/" in argument or argument.endswith(_PATH_SUFFIXES))


def resolve_inputs(arguments: list[str], reading: str = "auto") -> list[Input]:
    """Inputs from positional arguments. ``reading`` is ``auto`` (an existing file is read as a file;
    a missing one that looks like a path, with a ``/`` or a ``.txt``-like suffix and no spaces, is an
    error; anything else is text), ``text`` or ``files``. No argument, or ``-``, is standard input."""
    if not arguments:
        return [Input("<stdin>", path="-")]
    inputs = []
    for argument in arguments:
        if argument == "-" and reading != "text":
            inputs.append(Input("<stdin>", path="-"))
        elif reading == "text" or (reading == "auto" and not os.path.isfile(argument) and not _looks_like_path(argument)):
            inputs.append(Input("<text>", text=argument))
        elif os.path.isfile(argument):
            inputs.append(Input(argument, path=argument))
        else:
            hint = "" if reading == "files" else " (use --text to tag the argument itself)"
            raise HgnerError(f"{argument}: no such file{hint}")
    return inputs


_worker_tagger: Tagger | None = None  # the parent's Tagger, inherited by forked workers (see _tagged)


def _tag_whole(document: Input) -> tuple[str, list[TaggedGroup]]:
    """In a worker: one input's text and all its decoded groups."""
    text = document.read()
    return text, list(_worker_tagger.tag_text(text)) if text.strip() else []


def _tagged(tagger: Tagger, inputs: list[Input], jobs: int) -> Iterator[tuple[Input, str, Iterable[TaggedGroup]]]:
    """Each input with its text and decoded groups, in input order. One job streams groups as they
    are decoded; several jobs tag whole inputs in forked worker processes (files only)."""
    if jobs <= 1 or len(inputs) < 2 or any(i.path == "-" for i in inputs):
        for document in inputs:
            text = document.read()
            yield document, text, tagger.tag_text(text) if text.strip() else []
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
    """Tag every input, writing each document to ``writer`` in input order; with one job the
    groups of a document stream out as they are decoded."""
    from tqdm import tqdm

    total = sum(i.size() for i in inputs)
    show = progress and (len(inputs) > 1 or total > PROGRESS_BYTES)
    documents = _tagged(tagger, inputs, jobs)
    with tqdm(total=total or None, unit="B", unit_scale=True, disable=not show, file=sys.stderr, leave=False) as bar:
        for document, text, groups in documents:
            if not text.strip():
                bar.update(document.size())
                continue
            writer.start(document.source, text)
            done = 0
            for group in groups:
                writer.group(group)
                bar.update(len(text[done:group.end].encode("utf-8")))
                done = group.end
            writer.finish()
            bar.update(len(text[done:].encode("utf-8")))
    writer.close()


def run(args: argparse.Namespace) -> int:
    """``hgner tag``: see ``hgner tag --help``."""
    from .decoders import decoder_class

    decoder_class(args.decoder)  # an unknown name fails before the model loads
    inputs = resolve_inputs(args.inputs, args.reading)
    warn = lambda message: print(f"hgner tag: warning: {message}", file=sys.stderr)  # noqa: E731
    tagger = Tagger(args.model, args.decoder, args.graph, args.sweeps, args.seed, warn=warn)
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    try:
        tag_inputs(tagger, inputs, WRITERS[args.format](out), progress=sys.stderr.isatty(), jobs=args.jobs)
    finally:
        if args.output:
            out.close()
    return 0
