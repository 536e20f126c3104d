"""Tagged corpora as annotation tools export them, read as ``hgner train --train`` and ``hgner
evaluate --corpus`` read a CoNLL file: each record's text is tokenized and split into sentences by
hgner's tokenizer (:class:`~hgner.text.tokenizer.TextTokenizer`, the one ``hgner tag`` uses, in
the model's language), and each entity's character span becomes IOB2 tags on its tokens. A span
must fall on token edges (white space at its ends is left out); one that does not, spans that
overlap, a label that is not an entity type and a damaged export are one error naming the file,
the record (or line) and the field. A sentence the rules end inside an entity is joined to the
next. One record is one document.

Formats (corpus readers of :data:`hgner.core.registry.corpus_readers`, by name):

* ``spacy``: spaCy's ``DocBin`` (``.spacy``), its ``doc.ents``;
* ``prodigy``: JSONL, ``{"text": ..., "spans": [{"start", "end", "label"}]}``; records whose
  ``answer`` is ``reject`` or ``ignore`` are left out;
* ``doccano``: JSONL, ``{"text": ..., "label": [[start, end, "TYPE"], ...]}`` or the newer
  ``"entities": [{"start_offset", "end_offset", "label"}]``;
* ``label-studio``: Label Studio's JSON export, a list of tasks ``{"data": {"text": ...},
  "annotations": [{"result": [{"value": {"start", "end", "labels": [...]}}]}]}`` (the first
  annotation not cancelled);
* ``brat``: standoff, ``NAME.txt`` with ``NAME.ann`` (``T`` lines; a folder of pairs is one
  document per pair).

:func:`detect` tells the format from a name: ``FORMAT:PATH`` names it, else the file's extension
(``.spacy``, ``.ann``, a ``.txt`` or folder with ``.ann`` files) or, for ``.json`` and
``.jsonl``, its first character and record.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core import schemes
from ..core.errors import HgnerError
from ..core.fileio import decode_utf8, not_a_file, read_input
from ..core.registry import corpus_readers
from ..core.validation import parse_json, show
from ..text.languages import language_defaults
from ..text.tokenizer import DEFAULT_LANGUAGE, TextTokenizer
from .catalog import CorpusSource
from .corpus import Corpus, Document, Sentence

Span = tuple[int, int, Any]  # (the label is checked when it is tagged)
FORMATS = ("spacy", "prodigy", "doccano", "label-studio", "brat")
_SUFFIXES = {".spacy": "spacy", ".ann": "brat"}
_SKIPPED_ANSWERS = ("reject", "ignore")


@dataclass(frozen=True)
class Record:
    """One annotated text: its entity spans ``(start, end, label)`` (character offsets), where it
    is (``FILE:LINE`` or ``FILE: task N``, for errors), its document's name and first line."""

    text: str
    spans: list[Span]
    where: str
    name: str
    line: int | None = None


# --- from records to a corpus -------------------------------------------------------------------


def to_corpus(name: str, records: list[Record], language: str = DEFAULT_LANGUAGE, file: str | None = None,
              notes: list[str] | None = None) -> Corpus:
    """The records as a corpus (IOB2), tokenized and split by hgner's tokenizer in ``language``."""
    tokenizer = TextTokenizer(language)
    documents = [_document(record, tokenizer) for record in records]
    return Corpus(name, "IOB2", documents, list(notes or []), file=file, marked=True)


def _document(record: Record, tokenizer: TextTokenizer) -> Document:
    """``record`` tokenized, its spans as IOB2 tags; sentences cut inside an entity joined."""
    sentences = tokenizer(record.text)
    offsets = [offset for sentence in sentences for offset in sentence.offsets]
    tokens = [token for sentence in sentences for token in sentence.tokens]
    starts = {start: k for k, (start, _) in enumerate(offsets)}
    ends = {end: k for k, (_, end) in enumerate(offsets)}
    tags = ["O"] * len(tokens)
    for start, end, label in _checked_spans(record):
        first, last = starts.get(start), ends.get(end)
        if first is None or last is None:
            raise HgnerError(f"{record.where}: entity {label} at {start}-{end} ({record.text[start:end]!r}) does not "
                             f"fall on token edges: hgner's tokenizer reads "
                             f"{_tokens_around(tokens, offsets, start, end)}")
        if any(tag != "O" for tag in tags[first:last + 1]):
            raise HgnerError(f"{record.where}: entity {label} at {start}-{end} overlaps another entity's tokens")
        tags[first:last + 1] = [f"B-{label}"] + [f"I-{label}"] * (last - first)
    out: list[Sentence] = []
    at = 0
    for sentence in sentences:
        n = len(sentence.tokens)
        if out and tags[at].startswith("I-"):  # the rules ended a sentence inside an entity
            out[-1].tokens.extend(tokens[at:at + n])
            (out[-1].tags or []).extend(tags[at:at + n])
        else:
            out.append(Sentence(tokens[at:at + n], tags[at:at + n], record.line))
        at += n
    return Document(record.name, out)


def _checked_spans(record: Record) -> Iterator[Span]:
    """``record``'s spans with white space at their ends left out, each checked."""
    for start, end, label in record.spans:
        if not (0 <= start < end <= len(record.text)):
            raise HgnerError(f"{record.where}: entity {show(label)} at {start}-{end}: expected 0 <= start < end <= "
                             f"{len(record.text)} (the text's length)")
        if not (isinstance(label, str) and schemes.is_wellformed(f"B-{label}")):
            raise HgnerError(f"{record.where}: label {show(label)} at {start}-{end}: not an entity type (letters, digits, "
                             "'_', '.' or '-', at most 64 characters)")
        while start < end and record.text[start].isspace():
            start += 1
        while end > start and record.text[end - 1].isspace():
            end -= 1
        if start < end:
            yield start, end, label


def _tokens_around(tokens: list[str], offsets: list[tuple[int, int]], start: int, end: int) -> str:
    """The tokens an entity's span touches, with their offsets."""
    touched = [f"{token!r} at {a}-{b}" for token, (a, b) in zip(tokens, offsets) if a < end and b > start]
    return ", ".join(touched) if touched else "no token there"


# --- the formats ------------------------------------------------------------------------------


def _read_text(path: Path) -> str:
    try:
        return decode_utf8(read_input(path), str(path))
    except OSError as error:
        raise HgnerError(f"{path}: cannot read ({error.strerror or error})") from None


def _json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """The records of a JSONL file with their line numbers (blank lines skipped), each a JSON
    object with a string ``text``."""
    for number, line in enumerate(_read_text(path).split("\n"), 1):
        if not line.strip():
            continue
        try:
            record = parse_json(line)
        except (ValueError, RecursionError) as error:
            raise HgnerError(f"{path}:{number}: not a JSON record ({error})") from None
        yield number, _with_text(record, f"{path}:{number}")


def _with_text(record: Any, where: str) -> dict[str, Any]:
    if not isinstance(record, dict):
        raise HgnerError(f"{where}: expected a JSON object with a \"text\", got {show(record)}")
    if not isinstance(record.get("text"), str):
        raise HgnerError(f"{where}: \"text\": expected a string, got {show(record.get('text'))}")
    return record


def _offset(value: Any, where: str, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise HgnerError(f"{where}: {field}: expected a character offset (a whole number), got {show(value)}")
    return value


def _list(value: Any, where: str, field: str) -> list:
    if not isinstance(value, list):
        raise HgnerError(f"{where}: \"{field}\": expected a list, got {show(value)}")
    return value


def _object(value: Any, where: str, field: str) -> dict:
    if not isinstance(value, dict):
        raise HgnerError(f"{where}: {field}: expected an object, got {show(value)}")
    return value


def prodigy_records(path: Path) -> tuple[list[Record], list[str]]:
    """Prodigy's JSONL: ``spans`` of ``start``, ``end``, ``label``; rejected and ignored records left out."""
    records, skipped = [], 0
    for number, data in _json_lines(path):
        where = f"{path}:{number}"
        if data.get("answer") in _SKIPPED_ANSWERS:
            skipped += 1
            continue
        spans = []
        for k, span in enumerate(_list(data.get("spans", []), where, "spans")):
            span = _object(span, where, f"spans[{k}]")
            spans.append((_offset(span.get("start"), where, f"spans[{k}].start"),
                          _offset(span.get("end"), where, f"spans[{k}].end"), span.get("label")))
        records.append(Record(data["text"], spans, where, f"record {number}", number))
    return records, [f"{path}: {skipped} rejected or ignored record(s) left out"] if skipped else []


def doccano_records(path: Path) -> tuple[list[Record], list[str]]:
    """doccano's JSONL: ``label`` as ``[start, end, TYPE]`` lists, or ``entities`` as objects."""
    records = []
    for number, data in _json_lines(path):
        where = f"{path}:{number}"
        spans = []
        if "entities" in data:
            for k, entity in enumerate(_list(data["entities"], where, "entities")):
                entity = _object(entity, where, f"entities[{k}]")
                spans.append((_offset(entity.get("start_offset"), where, f"entities[{k}].start_offset"),
                               _offset(entity.get("end_offset"), where, f"entities[{k}].end_offset"),
                               entity.get("label")))
        else:
            for k, label in enumerate(_list(data.get("label", []), where, "label")):
                if not (isinstance(label, list) and len(label) == 3):
                    raise HgnerError(f"{where}: label[{k}]: expected [start, end, \"TYPE\"], got {show(label)}")
                spans.append((_offset(label[0], where, f"label[{k}][0]"), _offset(label[1], where, f"label[{k}][1]"),
                              label[2]))
        records.append(Record(data["text"], spans, where, f"record {number}", number))
    return records, []


def label_studio_records(path: Path) -> tuple[list[Record], list[str]]:
    """Label Studio's JSON export: tasks with ``data.text`` and the first annotation not
    cancelled (a task without one is left out)."""
    try:
        tasks = parse_json(_read_text(path))
    except (ValueError, RecursionError) as error:
        raise HgnerError(f"{path}: not valid JSON ({error})") from None
    records, unannotated = [], 0
    for k, task in enumerate(_list(tasks, str(path), "tasks"), 1):
        where = f"{path}: task {k}"
        data = _with_text(_object(_object(task, where, "task").get("data"), where, "data"), f"{where}: data")
        done = [a for a in _list(task.get("annotations", []), where, "annotations")
                if isinstance(a, dict) and not a.get("was_cancelled")]
        if not done:
            unannotated += 1
            continue
        spans = []
        for j, result in enumerate(_list(done[0].get("result", []), where, "result")):
            result = _object(result, where, f"result[{j}]")
            if result.get("type", "labels") != "labels":
                continue  # choices, relations, ...: not entity spans
            value = _object(result.get("value"), where, f"result[{j}].value")
            labels = _list(value.get("labels"), where, f"result[{j}].value.labels")
            if len(labels) != 1:
                raise HgnerError(f"{where}: result[{j}].value.labels: expected one label, got {show(labels)}")
            spans.append((_offset(value.get("start"), where, f"result[{j}].value.start"),
                          _offset(value.get("end"), where, f"result[{j}].value.end"), labels[0]))
        records.append(Record(data["text"], spans, where, str(task.get("id", f"task {k}")), k))
    return records, [f"{path}: {unannotated} task(s) without an annotation left out"] if unannotated else []


def brat_records(path: Path) -> tuple[list[Record], list[str]]:
    """brat standoff: a ``.txt``/``.ann`` pair (either named), or a folder of pairs."""
    if path.is_dir():
        pairs = sorted(path.glob("*.ann"))
        if not pairs:
            raise HgnerError(f"{path}: no .ann file in this folder (brat standoff: NAME.txt with NAME.ann)")
        return [_brat_record(ann) for ann in pairs], []
    return [_brat_record(path.with_suffix(".ann"))], []


def _brat_record(ann: Path) -> Record:
    text_file = ann.with_suffix(".txt")
    if not text_file.is_file():
        raise HgnerError(f"{ann}: its text {text_file.name} is missing (brat standoff: NAME.txt with NAME.ann)")
    text = _read_text(text_file)
    spans = []
    for number, line in enumerate(_read_text(ann).split("\n"), 1):
        if not line.startswith("T"):
            continue  # relations, events, attributes, notes
        fields = line.split("\t")
        what = fields[1].split(" ") if len(fields) >= 2 else []
        if len(fields) < 2 or len(what) != 3 or not all(v.isdigit() for v in what[1:]):
            problem = "a discontinuous entity (';') cannot be tagged" if ";" in line else "expected ID<TAB>TYPE START END"
            raise HgnerError(f"{ann}:{number}: {problem}, got {line[:80]!r}")
        spans.append((int(what[1]), int(what[2]), what[0]))
    return Record(text, spans, str(ann), ann.stem, 1)


def docbin_records(path: Path, language: str) -> tuple[list[Record], list[str]]:
    """spaCy's ``DocBin``: each doc's text and its ``ents``."""
    import spacy  # (heavy: loaded for a DocBin only)
    from spacy.tokens import DocBin

    language_defaults(language)  # an unknown code is a one-line error
    try:
        docs = list(DocBin().from_bytes(read_input(path)).get_docs(spacy.blank(language).vocab))
    except OSError as error:
        raise HgnerError(f"{path}: cannot read ({error.strerror or error})") from None
    except Exception as error:  # noqa: BLE001  (msgpack, zlib and spaCy's own errors: a damaged file)
        raise HgnerError(f"{path}: not a spaCy DocBin ({type(error).__name__}: {str(error)[:100]})") from None
    return [Record(doc.text, [(e.start_char, e.end_char, e.label_) for e in doc.ents], f"{path}: doc {k}",
                   f"doc {k}", k) for k, doc in enumerate(docs, 1)], []


_READERS: dict[str, Callable[[Path, str], tuple[list[Record], list[str]]]] = {
    "spacy": docbin_records,
    "prodigy": lambda path, _: prodigy_records(path),
    "doccano": lambda path, _: doccano_records(path),
    "label-studio": lambda path, _: label_studio_records(path),
    "brat": lambda path, _: brat_records(path),
}


def _register(name: str) -> None:
    def read(source: CorpusSource, scheme: str | None, language: str = DEFAULT_LANGUAGE) -> Corpus:
        path = Path(source.location)
        if not path.exists():
            raise HgnerError(f"corpus {source.name!r}: {not_a_file(path)}")
        records, notes = _READERS[name](path, language)
        return to_corpus(source.name, records, language, file=None if path.is_dir() else str(path), notes=notes)

    read.__doc__ = f"The corpus reader of the {name} format (:mod:`hgner.data.annotations`)."
    corpus_readers.register(name, func=read)


for _name in FORMATS:
    _register(_name)


def detect(name: str) -> tuple[str, str] | None:
    """``(format, path)`` of an annotation export named ``name`` (``FORMAT:PATH``, or told by the
    path and content), or None for a CoNLL file or a catalogue name (``conll:PATH`` is a CoNLL
    file). A ``.json`` or ``.jsonl`` file is one when it starts with ``[`` (Label Studio) or ``{``
    (a JSON line: Prodigy's when it has ``spans``, else doccano's)."""
    head, _, rest = name.partition(":")
    if head in (*FORMATS, "conll") and rest:
        return None if head == "conll" else (head, rest)
    path = Path(name)
    if path.is_dir():
        return ("brat", name) if any(path.glob("*.ann")) else None
    if path.suffix in _SUFFIXES:
        return _SUFFIXES[path.suffix], name
    if path.suffix == ".txt" and path.with_suffix(".ann").is_file():
        return "brat", name
    form = _json_format(path) if path.suffix in (".json", ".jsonl") and path.is_file() else None
    return (form, name) if form is not None else None


def _json_format(path: Path) -> str | None:
    """The format of a ``.json`` or ``.jsonl`` file by its first character and record, or None."""
    first = _read_text(path).lstrip()[:1]
    if first == "[":
        return "label-studio"
    if first != "{":
        return None
    for _, record in _json_lines(path):
        return "prodigy" if "spans" in record else "doccano"
    return None
