"""Corpora as documents of tagged sentences: the CoNLL reader and writer, and the corpus readers
``conll`` (a CoNLL file) and ``nltk-conll`` (a CoNLL file inside an NLTK package).

Documents are kept (``-DOCSTART-`` ends one) because skip-chain edges live inside documents.
:func:`load_corpus` takes a file path or a name from the corpus catalogue (:mod:`hgner.data.catalog`):
``conll2003:train|testa|testb``, ``wikigold``, ``nltk:ieer``, ``nltk:conll2002/{esp,ned}.{train,testa,testb}``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TextIO

from ..core import registry, schemes
from ..core.errors import ConllFormatError, HgnerError, named
from ..core.fileio import not_a_file, read_input
from ..core.registry import corpus_readers
from . import datahome
from .catalog import CorpusSource, all_split_names, resolve

DOCSTART = "-DOCSTART-"
# Columns are separated by ASCII whitespace only, as conlleval splits them: a token may hold a
# no-break space (U+00A0) or another Unicode space, which str.split() would cut it at.
_ASCII_WHITESPACE = " \t\n\r\f\v"
_FIELD_SEPARATOR = re.compile(r"[ \t\n\r\f\v]+")


@dataclass
class Sentence:
    """Tokens with their gold tags (``tags`` is None for untagged text); ``line`` is where it starts."""

    tokens: list[str]
    tags: list[str] | None = None
    line: int | None = None


@dataclass
class Document:
    """An ordered list of sentences: the unit that skip-chain edges may span."""

    name: str
    sentences: list[Sentence] = field(default_factory=list)

    @property
    def tokens(self) -> list[str]:
        return [token for sentence in self.sentences for token in sentence.tokens]


@dataclass
class Corpus:
    name: str
    scheme: str
    documents: list[Document]
    notes: list[str] = field(default_factory=list)  # e.g. gold entities that did not align with tokens
    file: str | None = field(default=None, compare=False)  # the file read, if one: never overwritten
    marked: bool = False  # the source marks its documents (-DOCSTART- lines): a single one is one article

    @property
    def sentences(self) -> list[Sentence]:
        return [s for d in self.documents for s in d.sentences]

    @property
    def n_tokens(self) -> int:
        return sum(len(s.tokens) for s in self.sentences)

    @property
    def tokens(self) -> Iterator[str]:
        """Every token, in order."""
        return (token for sentence in self.sentences for token in sentence.tokens)


# --- CoNLL files ---------------------------------------------------------------------------


def read_conll(path: str | os.PathLike, scheme: str | None = None, lenient: bool = False) -> Corpus:
    """Read a CoNLL file: token first, tag last, blank lines between sentences.

    ``scheme`` (IOB1, IOB2/BIO, BIOES) is checked when given and detected otherwise; ``lenient``
    reads the tags without that check (see :func:`parse_conll`). Raises
    :class:`ConllFormatError` naming the line for anything malformed.
    """
    path = str(path)
    try:
        raw = read_input(path)
    except OSError as error:
        raise HgnerError(f"{path}: cannot read ({error.strerror})") from None
    return replace(parse_conll(_decode_lines(raw, path), path, scheme, lenient), file=path)


def _decode_lines(raw: bytes, path: str) -> Iterator[str]:
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    for number, line in enumerate(raw.splitlines(), start=1):
        try:
            yield line.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ConllFormatError(path, number,
                                   f"not UTF-8 (byte {line[error.start]:#04x} at column {error.start + 1})") from None


def parse_conll(lines: Iterable[str], source: str, scheme: str | None = None, lenient: bool = False) -> Corpus:
    """Parse CoNLL lines (without line ends) from ``source`` (a name used in errors and documents).
    Every sentence is checked against ``scheme`` (detected when None), unless ``lenient``: then
    tags that break it are kept as they are, for chunks to be read from them as conlleval reads
    them (:func:`convert_corpus` rewrites them in a scheme)."""
    documents: list[Document] = []
    document: Document | None = None
    tokens: list[str] = []
    tags: list[str] = []
    start_line = 0
    n_columns = 0
    columns_line = 0
    marked = False

    def end_sentence() -> None:
        nonlocal tokens, tags, document
        if tokens:
            if document is None:
                document = Document(f"{Path(source).name}#{len(documents) + 1}")
                documents.append(document)
            document.sentences.append(Sentence(tokens, tags, start_line))
        tokens, tags = [], []

    for number, line in enumerate(lines, start=1):
        if number == 1 and line.startswith("\ufeff"):
            line = line[1:]
        stripped = line.strip(_ASCII_WHITESPACE)
        fields = _FIELD_SEPARATOR.split(stripped) if stripped else []
        if not fields:
            end_sentence()
            continue
        if fields[0] == DOCSTART:
            end_sentence()
            marked = True
            document = Document(f"{Path(source).name}#{len(documents) + 1}")
            documents.append(document)
            continue
        if len(fields) < 2:
            raise ConllFormatError(source, number, f"expected a token and a tag, got 1 column ({fields[0]!r})")
        if n_columns == 0:
            n_columns, columns_line = len(fields), number
        elif len(fields) != n_columns:
            raise ConllFormatError(
                source, number, f"expected {n_columns} columns (as on line {columns_line}), got {len(fields)}"
            )
        tag = fields[-1]
        if not schemes.is_wellformed(tag):
            raise ConllFormatError(source, number, f"malformed tag {tag!r} (expected O or B-/I-/E-/S- followed by a type)")
        if not tokens:
            start_line = number
        tokens.append(fields[0])
        tags.append(tag)
    end_sentence()

    corpus_scheme = schemes.normalize_scheme(scheme) if scheme else schemes.detect(
        s.tags or [] for d in documents for s in d.sentences
    )
    if not lenient:
        _check_scheme(documents, source, corpus_scheme, detected=not scheme)
    return Corpus(source, corpus_scheme, documents, marked=marked)


def _check_scheme(documents: list[Document], source: str, scheme: str, detected: bool) -> None:
    """A :class:`ConllFormatError` at the first sentence whose tags break ``scheme`` (saying why it
    was ``detected``, when it was)."""
    for doc in documents:
        for sentence in doc.sentences:
            problem = schemes.check(sentence.tags or [], scheme)
            if problem is not None:
                position, reason = problem
                line = (sentence.line or 0) + min(position, len(sentence.tokens) - 1)
                evidence = _detected_from(documents, scheme) if detected else ""
                raise ConllFormatError(source, line, f"{reason} (scheme {scheme}){evidence}")


def _detected_from(documents: list[Document], scheme: str) -> str:
    """For an error under a detected BIOES: the first E-/S- tag, which made the file BIOES (the
    other schemes are detected so that every file reads under them)."""
    if scheme != "BIOES":
        return ""
    for sentence in (s for d in documents for s in d.sentences):
        for position, tag in enumerate(sentence.tags or []):
            if schemes.split_tag(tag)[0] in ("E", "S"):
                return (f"; BIOES was detected from {tag!r} on line {(sentence.line or 0) + position}: {named('scheme')} "
                        "IOB1 or IOB2 reads the file leniently")
    return ""


def write_conll(out: TextIO, corpus: Corpus, predictions: Sequence[Sequence[str]], *,
                document_starts: bool = True) -> None:
    """Write ``token gold predicted`` lines, one blank line after each sentence and a
    ``-DOCSTART- -X- O O``-style line before each document, as conlleval and seqeval read them
    (without ``document_starts``, none: a reader then groups the sentences itself, as it groups a
    corpus without them).

    ``predictions`` holds one tag list per sentence of ``corpus``, in corpus order; a
    ValueError says which sentence when the lists do not fit the corpus.
    """
    predictions = list(predictions)
    if len(predictions) != len(corpus.sentences):
        raise ValueError(f"{len(predictions)} predicted tag lists for {len(corpus.sentences)} sentences")
    sentences = iter(predictions)
    for document in corpus.documents:
        if document_starts:
            out.write(f"{DOCSTART} O O\n\n")
        for number, sentence in enumerate(document.sentences, start=1):
            predicted = next(sentences)
            if len(predicted) != len(sentence.tokens):
                raise ValueError(
                    f"sentence {number} of {document.name} has {len(sentence.tokens)} tokens but {len(predicted)} predicted tags"
                )
            for token, gold, guess in zip(sentence.tokens, sentence.tags or ["O"] * len(predicted), predicted):
                out.write(f"{token} {gold} {guess}\n")
            out.write("\n")


def convert_corpus(corpus: Corpus, scheme: str) -> Corpus:
    """A copy of ``corpus`` with gold tags rewritten in ``scheme``."""
    scheme = schemes.normalize_scheme(scheme)
    documents = [
        Document(d.name, [Sentence(s.tokens, schemes.convert(s.tags or [], scheme), s.line) for s in d.sentences])
        for d in corpus.documents
    ]
    return replace(corpus, scheme=scheme, documents=documents, notes=list(corpus.notes))


# --- corpus readers and names ------------------------------------------------------------------


def relabel(corpus: Corpus, label_map: Mapping[str, str]) -> Corpus:
    """``corpus`` with entity types renamed by ``label_map`` (a type mapped to ``O`` is dropped;
    types not in it stay), chunks rewritten in the corpus's scheme. ``corpus`` itself when empty."""
    if not label_map:
        return corpus
    documents = []
    for document in corpus.documents:
        sentences = []
        for sentence in document.sentences:
            tags = None if sentence.tags is None else schemes.relabel_tags(sentence.tags, label_map, corpus.scheme)
            sentences.append(Sentence(sentence.tokens, tags, sentence.line))
        documents.append(Document(document.name, sentences))
    return replace(corpus, documents=documents, notes=list(corpus.notes))


@corpus_readers.register("conll")
def read_conll_source(source: CorpusSource, scheme: str | None) -> Corpus:
    """The corpus reader for a CoNLL file at ``source.location``; reading errors name the file, and
    the corpus is named ``source.name`` (a catalogue name, or the path given)."""
    return replace(relabel(read_conll(source.location, scheme, source.lenient), source.label_map), name=source.name)


@corpus_readers.register("nltk-conll")
def read_nltk_conll(source: CorpusSource, scheme: str | None) -> Corpus:
    """The corpus reader for a CoNLL file in an NLTK package, ``source.location`` being
    ``PACKAGE/FILE`` (``conll2002/esp.testa``); errors and reports use ``source.name``."""
    import nltk  # (heavy: loads with the first NLTK corpus)

    try:
        pointer = nltk.data.find(f"corpora/{source.location}")
        with pointer.open() as stream:
            raw = stream.read()
    except LookupError as error:
        message = " ".join(str(error).split())
        raise HgnerError(f"corpus {source.name!r}: NLTK cannot read corpora/{source.location} ({message})") from None
    except datahome.NLTK_READ_ERRORS as error:
        raise datahome.damaged_nltk_package(source.location.split("/")[0], error) from None
    corpus = parse_conll(_decode_lines(raw, source.name), source.name, scheme, source.lenient)
    # the package's zip (or file) is this corpus's file: no output may replace it
    return replace(relabel(corpus, source.label_map), file=datahome.nltk_pointer_file(pointer))


def load_corpus(name: str, scheme: str | None = None, offline: bool = False, lenient: bool = False) -> Corpus:
    """The corpus ``name`` names: a catalogue corpus (:mod:`hgner.data.catalog`), fetched into the data
    home first when it is missing (unless ``offline`` or ``$HGNER_OFFLINE``), or a CoNLL file;
    ``lenient``: see :class:`~hgner.data.catalog.CorpusSource`."""
    found = resolve(name)
    if found is None:
        if not Path(name).is_file():
            raise HgnerError(f"corpus {name!r}: {not_a_file(name)}, and not a catalogue name "
                             f"(expected a CoNLL file or one of: {', '.join(all_split_names())})")
        return registry.lookup(registry.corpus_readers, "conll")(CorpusSource(name, name, {}, lenient), scheme)
    manifest, split = found
    if split is None:
        raise HgnerError(f"corpus {name!r}: which split? expected one of {', '.join(manifest.split_names())}")
    reader = registry.lookup(registry.corpus_readers, manifest.reader)
    location = datahome.ensure(manifest, split, offline=offline)
    return reader(CorpusSource(manifest.split_name(split.name), location, manifest.label_map, lenient), scheme)


def regroup_documents(corpus: Corpus, documents: str | int) -> Corpus:
    """``corpus`` with its sentences grouped into documents again: ``"corpus"`` keeps the
    corpus's own documents (``-DOCSTART-``; a file without one is a single document),
    ``"sentence"`` makes every sentence its own document, a whole number N (or its string) groups
    N consecutive sentences, without crossing the corpus's own document boundaries."""
    if documents == "corpus":
        return corpus
    size = 1 if documents == "sentence" else int(documents) if str(documents).isdigit() else 0
    if size < 1:
        raise HgnerError(f"documents: expected corpus, sentence or a whole number >= 1, got {documents!r}")
    regrouped = [
        Document(f"{document.name}.{start // size + 1}", document.sentences[start:start + size])
        for document in corpus.documents
        for start in range(0, len(document.sentences), size)
    ]
    return replace(corpus, documents=regrouped, notes=list(corpus.notes))
