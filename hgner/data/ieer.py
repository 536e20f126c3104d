"""NLTK's ``ieer`` corpus (NIST 1999 IE-ER newswire) as a tagged corpus.

Each document's text is rebuilt from NLTK's parse (leaves joined by single spaces), tokenized
with spaCy's default English rules (:class:`~hgner.text.tokenizer.SpacyDefaultTokenizer`, the token
definition of every published IEER figure; ``hgner evaluate --input raw`` scores the same text
through the tagger's own tokenizer), and the gold ENAMEX spans are
projected onto those tokens, renamed by the label map of the catalogue's manifest
(``corpora/ieer.json``: PERSON/ORGANIZATION/LOCATION become PER/ORG/LOC); everything else
(TIMEX, NUMEX, ...) is O. An entity whose edges fall inside a token cannot be represented; it
is counted in ``Corpus.notes``, never hidden.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..core.errors import HgnerError
from ..core.registry import corpus_readers
from ..text.tokenizer import SpacyDefaultTokenizer, TextTokenizer
from .corpus import Corpus, Document, Sentence
from .datahome import NLTK_READ_ERRORS, damaged_nltk_package, nltk_pointer_file

if TYPE_CHECKING:
    from .catalog import CorpusSource


def _text_and_spans(tree, label_map: Mapping[str, str]) -> tuple[str, list[tuple[int, int, str]]]:
    """Leaves joined by spaces, and the character spans of the ENAMEX entities ``label_map`` maps."""
    pieces: list[str] = []
    spans: list[tuple[int, int, str]] = []
    length = 0
    for child in tree:
        words = child.leaves() if hasattr(child, "label") else [child]
        text = " ".join(words)
        start = length + (1 if pieces else 0)
        pieces.append(text)
        length = start + len(text)
        if hasattr(child, "label") and label_map.get(child.label(), "O") != "O":
            spans.append((start, length, label_map[child.label()]))
    return " ".join(pieces), spans


def read_ieer(tokenizer: TextTokenizer | None = None, *, label_map: Mapping[str, str]) -> Corpus:
    """All 94 IEER documents (their TEXT sections), tokenized and tagged in IOB2; ``label_map``
    gives the hgner type of each IEER label (labels not in it become O)."""
    from nltk.corpus import ieer  # (heavy: loads with the corpus)

    tokenizer = tokenizer or SpacyDefaultTokenizer()
    try:
        texts = [(parsed.docno.strip(), _text_and_spans(parsed.text, label_map))
                 for fileid in ieer.fileids() for parsed in ieer.parsed_docs(fileid)]
        location = nltk_pointer_file(ieer.root)
    except LookupError:
        raise HgnerError("corpus 'nltk:ieer': NLTK's ieer package not found; set NLTK_DATA") from None
    except NLTK_READ_ERRORS as error:
        raise damaged_nltk_package("ieer", error) from None
    documents: list[Document] = []
    misaligned = 0
    n_entities = 0
    for docno, (text, spans) in texts:
        sentences = tokenizer(text)
        starts = {start: (si, ti) for si, s in enumerate(sentences) for ti, (start, _) in enumerate(s.offsets)}
        ends = {end: (si, ti) for si, s in enumerate(sentences) for ti, (_, end) in enumerate(s.offsets)}
        tags = [["O"] * len(s.tokens) for s in sentences]
        for start, end, entity_type in spans:
            n_entities += 1
            first, last = starts.get(start), ends.get(end)
            if first is None or last is None or first[0] != last[0]:
                misaligned += 1
                continue
            sentence_tags = tags[first[0]]
            sentence_tags[first[1]] = f"B-{entity_type}"
            for i in range(first[1] + 1, last[1] + 1):
                sentence_tags[i] = f"I-{entity_type}"
        documents.append(Document(f"ieer/{docno}", [Sentence(s.tokens, t) for s, t in zip(sentences, tags)]))
    notes = [
        f"{misaligned} of {n_entities} gold entities do not align with token boundaries "
        "or cross a sentence boundary, and are left out of the gold standard"
    ]
    return Corpus("nltk:ieer", "IOB2", documents, notes, file=location)  # (no output may replace the package)


@corpus_readers.register("nltk-ieer")
def read_ieer_source(source: CorpusSource, scheme: str | None) -> Corpus:
    """The corpus reader for NLTK's ieer package with the manifest's label map (``scheme`` is
    not used: the gold tags are made here, in IOB2)."""
    return read_ieer(label_map=source.label_map)
