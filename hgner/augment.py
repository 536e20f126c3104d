"""Case augmentation of a training corpus: copies of its documents with every token lowercased or
uppercased, so that a model also learns from text whose casing carries no information (user
text typed in lower case, all-caps headlines)."""

from __future__ import annotations

from collections.abc import Sequence

from .corpus import Corpus, Document, Sentence

CASINGS = ("lower", "upper")  # the copies case augmentation can add


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
