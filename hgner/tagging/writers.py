"""``hgner tag``'s output formats, registered by name in :data:`hgner.core.registry.output_formats`:
one :class:`Writer` class per format (``--format``)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, ClassVar

from ..core import registry, schemes
from ..core.errors import HgnerError, named
from ..core.fileio import STANDARD_OUTPUT, file_identity, stdin_identity, write_text
from ..core.wording import counted
from .inputs import Input

if TYPE_CHECKING:
    from .tagger import Entity, TaggedGroup

DEFAULT_FORMAT = "inline"
TEXT_CHUNK_CHARS = 1 << 20  # characters of a long text escaped at once (JsonlWriter, HtmlWriter)


class Writer:
    """An output format, registered by name in :data:`hgner.core.registry.output_formats`: one class per
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
        self.out: IO = out  # type: ignore[assignment]  # (None only for the "files" formats, which never write to it)
        self.options = options
        self.documents = 0

    @classmethod
    def check(cls, inputs: list[Input], options: OutputOptions) -> None:
        """Refuse, before anything is tagged, inputs or options this format cannot write."""
        if options.scheme is not None and options.scheme not in cls.tag_schemes:
            accepted = (f"one of {', '.join(cls.tag_schemes)}" if cls.tag_schemes
                        else f"no {named('scheme')} (it writes no tags)")
            raise HgnerError(f"{named('scheme')} {options.scheme}: the {cls.name} format takes {accepted}")
        if cls.stream == "bytes" and options.standard_output:
            raise HgnerError(f"the {cls.name} format is binary: give {named('output')} FILE")

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

    def written(self) -> str | None:
        """What a ``files`` format wrote, for the front end to say (a stream's output speaks for itself)."""
        return None


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
        if self.text and not self.text.isspace():  # (not strip(), which copies a long text)
            rest = self.text[self.cursor:]
            self.out.write(rest if rest.endswith("\n") else rest + "\n")
        super().finish()


@register_format("conll")
class ConllWriter(Writer):
    """``token<TAB>tag`` lines in ``--scheme`` (IOB2 by default) whatever the model's scheme, a
    blank line after every sentence, and a ``-DOCSTART-`` line before every document but the first
    (so N inputs give N - 1 of them, blank inputs included)."""

    summary = "token<TAB>tag lines, tags in the scheme asked for (IOB2, BIOES or IO; default IOB2)"
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
    ``{"source": ..., "text": ..., "entities": [{start, end, text, label, confidence}]}``
    (:func:`jsonl_record`), written as it is tagged: the text at the start, the entities group
    by group, so memory does not grow with the input."""

    summary = "one JSON object per input (blank ones too) with its source, character offsets and confidences"

    def start(self, document: Input, text: str) -> None:
        super().start(document, text)
        self.count = 0  # entities written
        head = jsonl_record(document.source, None, [], document.id)
        del head["entities"]  # (the record's last field, written as the groups come)
        self.out.write(json.dumps(head, ensure_ascii=False)[:-1] + ', "text": ')
        write_json_string(self.out, text)
        self.out.write(', "entities": [')

    def group(self, group: TaggedGroup) -> None:
        for entity in group.entities:
            self.out.write((", " if self.count else "") + json.dumps(entity.to_json(), ensure_ascii=False))
            self.count += 1

    def finish(self) -> None:
        self.out.write("]}\n")
        super().finish()


def write_json_string(out: IO, text: str) -> None:
    """Write ``json.dumps(text, ensure_ascii=False)`` to ``out`` :data:`TEXT_CHUNK_CHARS` characters
    at a time (each character is escaped alone: the same output without a copy of a long text)."""
    out.write('"')
    for start in range(0, len(text), TEXT_CHUNK_CHARS):
        out.write(json.dumps(text[start:start + TEXT_CHUNK_CHARS], ensure_ascii=False)[1:-1])
    out.write('"')


def jsonl_record(source: str, text: str | None, entities: list[dict[str, Any]],
                 identity: str | int | None = None) -> dict[str, Any]:
    """The JSONL record of one document, as ``--format jsonl`` and ``tag --cluster``'s parts write
    it: ``{"source", "text", "entities"}``, without ``"text"`` when ``text`` is None, and with the
    input record's ``"id"`` first when it has one."""
    record: dict[str, Any] = {} if identity is None else {"id": identity}
    record["source"] = source
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

    def start(self, document: Input, text: str) -> None:
        if self.documents == 0:
            title = document.name if self.options.documents == 1 else f"{self.options.documents} documents"
            self.out.write(html_head(title, self.options.language))
        super().start(document, text)
        self.cursor = 0
        self.out.write(html_section_head(document.name))

    def group(self, group: TaggedGroup) -> None:
        self.out.write(html_marked(self.text, self.cursor, group.end, group.entities, self.colours))
        self.cursor = group.end

    def finish(self) -> None:
        for start in range(self.cursor, len(self.text), TEXT_CHUNK_CHARS):
            self.out.write(escape(self.text[start:start + TEXT_CHUNK_CHARS]))
        self.out.write(HTML_SECTION_END)
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


HTML_SECTION_END = "</div>\n</section>\n"


def html_section_head(heading: str) -> str:
    """A section's start, up to its text."""
    return f'<section>\n<h2>{escape(heading)}</h2>\n<div class="text">'


def html_marked(text: str, start: int, end: int, entities: list[Entity], colours: dict[str, str]) -> str:
    """``text[start:end]`` escaped, ``entities`` (within it, in order) marked; labels seen for the
    first time get a colour in ``colours``."""
    pieces, cursor = [], start
    for e in entities:
        if e.label not in colours:
            others = [c for c in HTML_PALETTE if c not in colours.values()] or list(HTML_PALETTE)
            colours[e.label] = HTML_COLOURS.get(e.label) or others[0]
        confidence = "confidence unknown" if e.confidence is None else f"confidence {e.confidence:.3f}"
        pieces += [escape(text[cursor:e.start]),
                   f'<mark style="background: {colours[e.label]}" title="{escape(e.label)}, {confidence}">'
                   f'{escape(e.text)} <span class="label">{escape(e.label)}</span></mark>']
        cursor = e.end
    pieces.append(escape(text[cursor:end]))
    return "".join(pieces)


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
            raise HgnerError(f"{named('output')} -: the brat format writes files, not standard output; give "
                             f"{named('output')} DIR, or none to write NAME.ann beside each input file")
        if options.output is None:
            unnamed = next((i.source for i in inputs if i.path is None or i.path == "-"), None)
            if unnamed is not None:
                raise HgnerError(f"the brat format writes NAME.ann beside each input file; {unnamed} is not a file: "
                                 f"give {named('output')} DIR")
        elif os.path.exists(options.output) and not os.path.isdir(options.output):
            raise HgnerError(f"{named('output')} {options.output}: the brat format writes into a directory, and "
                             "this is a file")
        read = {file_identity(i.path): i.source for i in inputs if i.path not in (None, "-")}
        if any(i.path == "-" for i in inputs) and stdin_identity() is not None:
            read[stdin_identity()] = "standard input"
        targets: dict[Path, str] = {}
        for number, document in enumerate(inputs, 1):
            target = cls.annotation_path(document, options, number)
            if target in targets:
                raise HgnerError(f"{document.source} and {targets[target]} would both be written to {target}")
            targets[target] = document.source
            for written in [target] + ([target.with_suffix(".txt")] if options.output is not None else []):
                if written.exists() and file_identity(written) in read:
                    raise HgnerError(f"{written} is also an input ({read[file_identity(written)]}); refusing to overwrite it")

    def written(self) -> str:
        if self.options.output is None:
            return f"wrote {counted(self.documents, '.ann file')} beside the input files"
        return f"wrote {counted(self.documents, '.ann file')} and the text they annotate (NAME.txt) in {self.options.output}"

    @staticmethod
    def annotation_path(document: Input, options: OutputOptions, number: int) -> Path:
        """Where ``document``'s ``.ann`` goes (its ``.txt`` copy too, with ``-o DIR``)."""
        if options.output is None:
            return Path(str(document.path)).with_suffix(".ann")
        relative = Path(str(document.relative)) if document.path not in (None, "-") else Path(f"text-{number}")
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
                raise HgnerError(f"{target.parent}: a link inside {named('output')} {self.options.output} to a folder "
                                 "outside it; refusing to write there")
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
    starts: list[bool | int | None] = []
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
