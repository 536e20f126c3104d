"""Augmentation of a training corpus with copies of its documents:

* case augmentation (:func:`case_augmented`): every token lowercased or uppercased, so that a
  model also learns from text whose casing carries no information (user text typed in lower case,
  all-caps headlines);
* prose augmentation (:func:`prose_augmented`): each document as ``hgner tag`` splits it when it
  is written as one paragraph, so that a model also learns from the sentences a splitter finds in
  running prose (table rows run together, a headline or dateline run into the next sentence), of
  every document or of the table documents only (:func:`is_table`)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from ..core import schemes
from ..text.rawtext import CharSpan, rebuild
from ..text.sentences import TokenizedSentence
from ..text.tokenizer import DEFAULT_LANGUAGE, TextTokenizer
from .corpus import Corpus, Document, Sentence

CASINGS = ("lower", "upper")  # the copies case augmentation can add
PROSE = "prose"  # the name of the prose copy (its documents' and the corpus's suffix)
PROSE_COPIES = ("all", "tables")  # the documents a prose copy is made of: every one, or the table documents
SENTENCE_ENDS = (".", "!", "?", '"', "'", "\u201d", "\u2019", "\u00bb")  # how a sentence's last token ends
PROSE_SHARE = 0.7  # a document whose body ends fewer of its sentences like a sentence is a table document


def recased(corpus: Corpus, how: str) -> Corpus:
    """The corpus with every token lowercased (``how="lower"``) or uppercased (``"upper"``); tags,
    documents and sentence lines unchanged."""
    if how not in CASINGS:
        raise ValueError(f"casing: expected one of {', '.join(CASINGS)}, got {how!r}")
    change = str.lower if how == "lower" else str.upper
    documents = [
        Document(f"{d.name}:{how}" if d.name else how,
                 [Sentence([change(t) for t in s.tokens], s.tags, s.line) for s in d.sentences])
        for d in corpus.documents
    ]
    return Corpus(f"{corpus.name}:{how}", corpus.scheme, documents, list(corpus.notes), marked=corpus.marked)


def case_augmented(corpus: Corpus, casings: Sequence[str]) -> Corpus:
    """``corpus`` followed by one recased copy of every document per entry of ``casings`` (e.g.
    ``("lower", "upper")`` triples it): (1 + len(casings)) times its documents, sentences and
    tokens. Each copy is a whole document, so the document-level features of a copy see a
    document cased throughout as the copy is. Keeps ``corpus.file`` (what training records)."""
    copies = [recased(corpus, how) for how in casings]
    documents = list(corpus.documents) + [d for copy in copies for d in copy.documents]
    name = corpus.name + "".join(f"+{how}" for how in casings)
    return Corpus(name, corpus.scheme, documents, list(corpus.notes), file=corpus.file, marked=corpus.marked)


def as_prose(document: Document, scheme: str, tokenizer: TextTokenizer) -> tuple[Document, int]:
    """``document`` as ``tokenizer`` splits it when written as one paragraph
    (:func:`hgner.text.rawtext.rebuild`, ``layout="paragraph"``), with its gold entities, and the
    number of its new sentences left out.

    A new token whose characters all lie inside one gold entity belongs to that entity (a token
    with the character span of a corpus token gets that token's entity), one with no character in
    any entity is outside (O); the tags of each new sentence are the entities' tokens rendered in
    ``scheme`` (:func:`hgner.core.schemes.render`), so an entity cut by a new sentence end becomes one
    entity in each sentence. A sentence with a token that straddles an entity's edge (the
    tokenizer joined an entity's token to a token outside it, or to another entity's) has no
    gold tags and is left out (rare: corpus tokens almost always keep their spans)."""
    if any(s.tags is None for s in document.sentences):
        raise ValueError(f"document {document.name!r}: prose augmentation needs gold tags")
    raw = rebuild([s.tokens for s in document.sentences], [s.tags or [] for s in document.sentences], "paragraph")
    entity_starts = [start for start, _, _ in raw.entities]
    sentence_starts = [offsets[0][0] if offsets else 0 for offsets in raw.sentences]
    sentences, dropped = [], 0
    for sentence in tokenizer(raw.text):
        owners = _owners(raw.entities, entity_starts, sentence)
        if owners is None:
            dropped += 1
            continue
        spans, start = [], 0
        for i in range(1, len(owners) + 1):
            if i == len(owners) or owners[i] != owners[start]:
                if owners[start] >= 0:
                    spans.append((start, i, raw.entities[owners[start]][2]))
                start = i
        line = document.sentences[max(bisect_right(sentence_starts, sentence.offsets[0][0]) - 1, 0)].line
        sentences.append(Sentence(sentence.tokens, schemes.render(spans, len(owners), scheme), line))
    return Document(f"{document.name}:{PROSE}" if document.name else PROSE, sentences), dropped


def _owners(entities: Sequence[CharSpan], starts: Sequence[int], sentence: TokenizedSentence) -> list[int] | None:
    """The index into ``entities`` (sorted, not overlapping; ``starts`` their start offsets) of the
    gold entity each token of ``sentence`` lies in (-1: none), or None when a token straddles an
    entity's edge."""
    owners = []
    for start, end in sentence.offsets:
        k = bisect_right(starts, start) - 1  # the last entity starting at or before the token
        inside = k >= 0 and start < entities[k][1]
        if inside and end <= entities[k][1]:
            owners.append(k)
        elif not inside and (k + 1 == len(starts) or end <= starts[k + 1]):
            owners.append(-1)
        else:
            return None
    return owners


def is_table(document: Document) -> bool:
    """Whether ``document`` is a table document: its body (the sentences after the first, a news
    story's headline) has at least one sentence and fewer than 70% of them end like a sentence
    (the last token ends in ``. ! ?`` or a closing quote). Results tables, lists and score lines,
    where rows run together when the document is written as one paragraph; a rule on the
    document's own lines, chosen before any run (docs/development/research-log.md)."""
    body = document.sentences[1:]
    ends = sum(1 for s in body if s.tokens and s.tokens[-1].endswith(SENTENCE_ENDS))
    return bool(body) and ends < PROSE_SHARE * len(body)


def prose_augmented(corpus: Corpus, language: str = DEFAULT_LANGUAGE, documents: str = "all") -> Corpus:
    """``corpus`` followed by a prose copy (:func:`as_prose`, split by the tokenizer of ``hgner
    tag`` in ``language``) of every document (``documents="all"``: twice its documents and about
    twice its tokens) or of its table documents only (``"tables"``, :func:`is_table`), less the
    rare sentences whose tokens straddle an entity's edge (counted in the corpus's notes).
    Documents are kept whole, so document-level features see the copy as a document. Keeps
    ``corpus.file`` (what training records)."""
    if documents not in PROSE_COPIES:
        raise ValueError(f"prose copy: expected one of {', '.join(PROSE_COPIES)}, got {documents!r}")
    tokenizer = TextTokenizer(language)
    copies, dropped = [], 0
    for document in corpus.documents:
        if documents == "tables" and not is_table(document):
            continue
        copy, left_out = as_prose(document, corpus.scheme, tokenizer)
        copies.append(copy)
        dropped += left_out
    notes = list(corpus.notes)
    if dropped:
        notes.append(f"prose augmentation: {dropped} sentence(s) of the prose copy left out, a token straddling a "
                     "gold entity's edge")
    return Corpus(corpus.name + _prose_suffix(documents), corpus.scheme, list(corpus.documents) + copies, notes,
                  file=corpus.file, marked=corpus.marked)


def _prose_suffix(documents: str) -> str:
    return f"+{PROSE}" if documents == "all" else f"+{PROSE}-{documents}"


def augmented(corpus: Corpus, casings: Sequence[str] = (), prose: str = "",
              language: str = DEFAULT_LANGUAGE) -> Corpus:
    """``corpus``, then its recased copies (:func:`case_augmented`), then with ``prose`` ("all"
    or "tables"; "" for none) the prose copy of its (cased) documents, every one or the table
    documents (:func:`prose_augmented`): what ``hgner train --case-augment ... --prose-augment
    [tables]`` trains on."""
    cased = case_augmented(corpus, casings)
    if not prose:
        return cased
    copy = prose_augmented(corpus, language, prose)
    return Corpus(cased.name + _prose_suffix(prose), corpus.scheme,
                  cased.documents + copy.documents[len(corpus.documents):], copy.notes, file=corpus.file,
                  marked=corpus.marked)
