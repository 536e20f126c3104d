"""The pool ``hgner select`` chooses from: sentences of unlabelled text, or of a labelled corpus
(simulated annotation: the chosen sentences keep their gold tags).

A pool is labelled when every input is a catalogue corpus name or a CoNLL file (``.conll``);
otherwise every input is raw text read as ``hgner tag --cluster`` reads it (text files, one
document each; folders of them; JSONL files, one document per record with a ``text`` field) and
tokenized into sentences as ``hgner tag`` tokenizes it; with ``lines``, every line of a text file is
a document of its own and one candidate (its tokens one sentence: a post of a file of posts). A
sentence whose tokens repeat an earlier one's (case and spacing aside) is left out: the output
never holds the same sentence twice. So is one whose tokens are those of a sentence already
labelled (:func:`read_excluded`: the files of ``exclude``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..core import schemes
from ..core.errors import HgnerError, named
from ..core.fileio import not_a_file
from ..data.annotations import detect
from ..data.catalog import resolve
from ..data.corpus import convert_corpus, load_corpus
from ..data.reading import read_tagged
from ..distributed.inputs import find_inputs, plan_parts, read_piece

LABELLED_SUFFIXES = (".conll", ".iob", ".bio")
TEXT_COLUMN = "text"  # the field of a JSONL record that holds its text


@dataclass(frozen=True)
class Candidate:
    """One sentence of the pool: its tokens, gold tags (IOB2) when the pool is labelled, the
    number of its document in the pool and where it came from (for messages)."""

    tokens: tuple[str, ...]
    tags: tuple[str, ...] | None
    document: int
    source: str

    @property
    def key(self) -> str:
        return token_key(self.tokens)


def token_key(tokens: Sequence[str]) -> str:
    """What two copies of a sentence share: its tokens, lowercased, one space apart."""
    return " ".join(tokens).lower()


@dataclass
class Pool:
    """The candidates in document order (duplicates and excluded sentences left out), how many
    documents they came from, and how many sentences were left out as copies of earlier ones
    (``duplicates``) or of excluded ones (``excluded``)."""

    candidates: list[Candidate]
    documents: int
    labelled: bool
    duplicates: int = 0
    excluded: int = 0

    def by_document(self) -> list[list[Candidate]]:
        """The candidates grouped by document, in order: (D,) lists."""
        grouped: dict[int, list[Candidate]] = {}
        for candidate in self.candidates:
            grouped.setdefault(candidate.document, []).append(candidate)
        return list(grouped.values())


def is_labelled(argument: str) -> bool:
    """Whether input ``argument`` names a labelled corpus: a catalogue name or a CoNLL file."""
    return resolve(argument) is not None or (Path(argument).suffix.lower() in LABELLED_SUFFIXES
                                             and not Path(argument).is_dir())


def read_pool(inputs: Sequence[str], tokenize: Callable[[str], Iterable[Sequence[str]]], *,
              offline: bool = False, lines: bool = False, exclude: Iterable[Sequence[str]] = ()) -> Pool:
    """The pool of ``inputs``: all labelled corpora or all raw text (an :class:`HgnerError` for a
    mix or for none); raw text is cut into sentences of tokens by ``tokenize``. A sentence with the
    tokens of one of ``exclude`` (token sequences) is left out."""
    if not inputs:
        raise HgnerError("no input: give text files, folders, JSONL files, or a labelled CoNLL corpus")
    labelled = [is_labelled(argument) for argument in inputs]
    if any(labelled) and not all(labelled):
        mixed = next(a for a, flag in zip(inputs, labelled) if flag)
        raise HgnerError(f"{mixed}: a labelled corpus among raw-text inputs; select from one kind at a time")
    documents = _labelled_documents(inputs, offline) if all(labelled) else _raw_documents(inputs, tokenize, lines)
    return _unique(documents, all(labelled), {token_key(tokens) for tokens in exclude})


def _labelled_documents(inputs: Sequence[str], offline: bool) -> Iterable[list[Candidate]]:
    for argument in inputs:
        corpus = convert_corpus(load_corpus(argument, offline=offline, lenient=True), "IOB2")
        for document in corpus.documents:
            yield [Candidate(tuple(s.tokens), tuple(s.tags or ["O"] * len(s.tokens)), -1,
                             f"{argument}:{s.line}" if s.line else argument) for s in document.sentences]


def _raw_documents(inputs: Sequence[str], tokenize: Callable[[str], Iterable[Sequence[str]]],
                   lines: bool) -> Iterable[list[Candidate]]:
    for part in plan_parts(find_inputs(inputs), TEXT_COLUMN):
        for piece in part:
            for record in read_piece(piece, TEXT_COLUMN):
                texts = [(f"{record.source}:{number}", line) for number, line in enumerate(record.text.split("\n"), 1)] \
                    if lines and piece.kind == "text" else [(record.source, record.text)]
                for where, each in texts:
                    sentences = [tuple(tokens) for tokens in tokenize(each) if tokens]
                    if lines and sentences:  # a line is one candidate, whatever sentences the tokenizer finds
                        sentences = [tuple(token for sentence in sentences for token in sentence)]
                    yield [Candidate(tokens, None, -1, where) for tokens in sentences]


def _unique(documents: Iterable[list[Candidate]], labelled: bool, excluded: set[str]) -> Pool:
    """The pool of ``documents``, each sentence once (its first copy) unless its key is
    ``excluded``, documents numbered from 0."""
    seen: set[str] = set()
    kept: list[Candidate] = []
    duplicates = left_out = number = 0
    for document in documents:
        added = False
        for candidate in document:
            if candidate.key in seen:
                duplicates += 1
                continue
            seen.add(candidate.key)
            if candidate.key in excluded:
                left_out += 1
                continue
            kept.append(Candidate(candidate.tokens, candidate.tags, number, candidate.source))
            added = True
        number += added
    if not kept:
        raise HgnerError(f"every sentence of the inputs is already labelled (all {left_out} are in the "
                         f"{named('exclude')} files): none is left to select" if left_out
                         else "the inputs hold no sentence to select")
    return Pool(kept, number, labelled, duplicates, left_out)


def read_excluded(names: Sequence[str], language: str, offline: bool = False) -> list[tuple[str, ...]]:
    """The sentences (token sequences, each once) of the files ``names``: CoNLL files, annotation
    tools' exports (tokenized in ``language``) or catalogue names, read as ``hgner train --train``
    reads them, their tags ignored; one :class:`HgnerError` naming the file for one that cannot be read."""
    found: dict[str, tuple[str, ...]] = {}
    for name in names:
        export = detect(name)
        path = export[1] if export else name.removeprefix("conll:")
        if resolve(name) is None and not (os.path.exists(path) if export else os.path.isfile(path)):
            raise HgnerError(f"{named('exclude')} {name}: {not_a_file(path)}; expected a CoNLL file or an annotation "
                             "tool's export of sentences already labelled")
        try:
            corpus, _ = read_tagged(name, "IOB2", "corpus", announce=False, language=language, offline=offline)
        except HgnerError as error:  # (named once: a format error starts with the file's name)
            where = "" if str(error).startswith(path) else f" {name}"
            raise HgnerError(f"{named('exclude')}{where}: {error}") from None
        for sentence in corpus.sentences:
            found.setdefault(token_key(sentence.tokens), tuple(sentence.tokens))
    return list(found.values())


def iob2(tags: Sequence[str]) -> list[str]:
    """``tags`` (any scheme) as IOB2, the output's scheme."""
    return schemes.convert(tags, "IOB2")
