"""The annotation loop of ``hgner serve --annotate``, without the web framework: the queue (the
CoNLL file ``hgner select`` writes, or plain text named ``*.txt``, one sentence per line), the
annotations file (CoNLL IOB2 that ``hgner train --train`` reads, rewritten atomically at each
accepted sentence, so that a killed server loses none) and one session's decisions.

A sentence of the queue whose characters (without whitespace) are those of a sentence already in
the annotations file is not shown again: a restart goes on where the last session stopped.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from ..core import schemes
from ..core.errors import HgnerError, named
from ..core.fileio import atomic_write, check_writable, not_a_file, read_input, refuse_inputs
from ..data.corpus import parse_conll, read_conll

SCHEME = "IOB2"
MARK = "-DOCSTART- hgner-annotation"  # opens each saved sentence: the file is ours, each sentence its own document
TEXT_SUFFIX = ".txt"  # a queue of plain text, one sentence per line
RESERVED_KEYS = frozenset("su")  # skip and undo
TYPE_ORDER = ("PER", "LOC", "ORG", "MISC")  # CoNLL's order first, then the others alphabetically
MAX_DIGIT_KEYS = 9


class NotCurrent(HgnerError):
    """A decision about a sentence that is not the one shown (another tab decided it first)."""


class NotSaved(HgnerError):
    """The annotations file could not be written (a full disk, its folder gone): it is as it was."""


@dataclass
class Item:
    """A sentence of the queue: its tokens and IOB2 tags, or (plain text not yet tagged) None and
    its ``text``; ``key`` says whether the annotations file holds it."""

    key: str
    text: str | None = None
    tokens: list[str] | None = None
    tags: list[str] | None = None


def sentence_key(text: str) -> str:
    """What identifies a sentence: its characters without whitespace (``"".join(tokens)`` or a line)."""
    return "".join(text.split())


def read_queue(path: str) -> list[Item]:
    """The sentences of the queue ``path``, each once; one clear :class:`HgnerError` naming the
    option and the line for a file that is neither."""
    try:
        if path.endswith(TEXT_SUFFIX):
            items = [Item(sentence_key(line), text=line) for line in _text_lines(path)]
        else:
            corpus = read_conll(path)
            items = [Item(sentence_key("".join(s.tokens)), tokens=s.tokens, tags=schemes.convert(s.tags or [], SCHEME))
                     for s in corpus.sentences]
    except HgnerError as error:
        raise HgnerError(f"{named('annotate')}: {error}; expected the CoNLL file hgner select writes, or plain text "
                         f"in a file named *{TEXT_SUFFIX}, one sentence per line") from None
    unique: dict[str, Item] = {}
    for item in items:
        unique.setdefault(item.key, item)  # the first of each
    if not unique:
        raise HgnerError(f"{named('annotate')}: {path} holds no sentence to annotate")
    return list(unique.values())


def _text_lines(path: str) -> list[str]:
    """The non-blank lines of a plain-text file, stripped."""
    if not os.path.isfile(path):
        raise HgnerError(f"{path}: {not_a_file(path)}")
    try:
        raw = read_input(path)
    except OSError as error:
        raise HgnerError(f"{path}: cannot read ({error.strerror})") from None
    lines = []
    for number, line in enumerate(raw.removeprefix(b"\xef\xbb\xbf").splitlines(), start=1):
        try:
            text = line.decode("utf-8").strip()
        except UnicodeDecodeError as error:
            raise HgnerError(f"{path}:{number}: not UTF-8 (byte {line[error.start]:#04x})") from None
        if text:
            lines.append(text)
    return lines


def read_annotations(path: str, queue: str) -> list[tuple[list[str], list[str]]]:
    """The sentences saved in the annotations file ``path`` (none when it is missing or empty);
    a file this loop did not write, or ``path`` naming the queue, is an error and left as it is."""
    refuse_inputs(path, [queue], named("annotations"))
    try:
        check_writable(path)
        raw = read_input(path) if os.path.exists(path) else b""
        lines = raw.decode("utf-8").splitlines()
    except (HgnerError, OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else str(error)
        raise HgnerError(f"{named('annotations')} {path}: cannot use it ({reason})") from None
    if not any(line.strip() for line in lines):
        return []
    first = next(line for line in lines if line.strip())
    if first.strip() != MARK:
        raise HgnerError(f"{named('annotations')} {path}: not an annotations file of hgner serve (its first line is not "
                         f"{MARK!r}); name a new file, or one this page wrote (this one is left as it is)")
    try:
        corpus = parse_conll(lines, path, SCHEME)
    except HgnerError as error:
        raise HgnerError(f"{named('annotations')}: {error} (the file is left as it is)") from None
    return [(s.tokens, s.tags or []) for s in corpus.sentences]


def sentence_block(tokens: Sequence[str], tags: Sequence[str]) -> str:
    """One saved sentence as the annotations file holds it: its own document, a ``token tag`` line per token."""
    return f"{MARK}\n\n" + "".join(f"{token} {tag}\n" for token, tag in zip(tokens, tags)) + "\n"


def write_annotations(path: str, blocks: Sequence[str]) -> None:
    """Replace ``path`` atomically with the sentences ``blocks`` (:func:`sentence_block`); or
    :class:`NotSaved`, the file left as it was."""
    try:
        with atomic_write(path) as out:
            out.write("".join(blocks))
    except HgnerError as error:
        raise NotSaved(f"{error}: the decision is not saved, and {path} is as it was") from None


def ordered_types(types: set[str]) -> list[str]:
    """Entity types in :data:`TYPE_ORDER`, then the others alphabetically."""
    return [t for t in TYPE_ORDER if t in types] + sorted(types - set(TYPE_ORDER))


def type_keys(types: Sequence[str]) -> dict[str, list[str]]:
    """The keys of each type: its digit (1 to 9) and its first letter (lower case) when no other
    type takes it and it is not :data:`RESERVED_KEYS`."""
    firsts = [t[0].lower() for t in types]
    keys = {}
    for number, (entity_type, first) in enumerate(zip(types, firsts), start=1):
        own = [str(number)] if number <= MAX_DIGIT_KEYS else []
        if first.isascii() and first.isalpha() and first not in RESERVED_KEYS and firsts.count(first) == 1:
            own.append(first)
        keys[entity_type] = own
    return keys


class AnnotationSession:
    """One server's loop over the queue: the sentence shown is the first neither saved nor skipped;
    :meth:`accept` saves it (the file first, then the session), :meth:`skip` passes it for this
    session, :meth:`undo` takes back the last decision (an accepted sentence leaves the file)."""

    def __init__(self, queue: str, annotations: str, model_types: Sequence[str] = ()) -> None:
        self.items = read_queue(queue)
        self.path = annotations
        self.saved = read_annotations(annotations, queue)
        self.blocks = [sentence_block(tokens, tags) for tokens, tags in self.saved]  # the file's text, by sentence
        saved_keys = {sentence_key("".join(tokens)) for tokens, _ in self.saved}
        self.done = {index for index, item in enumerate(self.items) if item.key in saved_keys}
        self.done_before = len(self.done)
        self.skipped: set[int] = set()
        self.history: list[tuple[str, int]] = []  # ("accept" or "skip", index), the last last
        found = {schemes.split_tag(tag)[1] for item in self.items for tag in item.tags or [] if tag != "O"}
        found |= {schemes.split_tag(tag)[1] for _, tags in self.saved for tag in tags if tag != "O"}
        self.types = ordered_types(found | set(model_types))
        self.keys = type_keys(self.types)

    def pending(self, count: int = 2) -> list[int]:
        """The next ``count`` sentences to show (the current first), fewer at the queue's end."""
        out: list[int] = []
        for index in range(len(self.items)):
            if index not in self.done and index not in self.skipped:
                out.append(index)
                if len(out) == count:
                    break
        return out

    def progress(self) -> dict[str, int]:
        """How far the loop is: ``position`` (1-based, of ``total``), saved before this session,
        accepted and skipped in it, ``remaining`` and ``saved`` (every sentence in the file)."""
        decided = len(self.done) + len(self.skipped)
        return {"position": min(decided + 1, len(self.items)), "total": len(self.items),
                "before": self.done_before, "accepted": len(self.done) - self.done_before,
                "skipped": len(self.skipped), "remaining": len(self.items) - decided, "saved": len(self.saved)}

    def accept(self, index: int, tags: Sequence[str]) -> None:
        """Save sentence ``index`` with ``tags`` (IOB2, of :attr:`types`): the file is rewritten
        atomically before the session moves on, so a failure leaves both as they were."""
        tokens = self._current(index).tokens
        assert tokens is not None  # (a plain-text sentence is tagged before it is shown)
        self.check_tags(tokens, tags)
        blocks = [*self.blocks, sentence_block(tokens, tags)]
        write_annotations(self.path, blocks)
        self.blocks = blocks
        self.saved.append((list(tokens), list(tags)))
        self.done.add(index)
        self.history.append(("accept", index))

    def skip(self, index: int) -> None:
        """Pass sentence ``index`` for this session (a restart shows it again)."""
        self._current(index)
        self.skipped.add(index)
        self.history.append(("skip", index))

    def last_decision(self) -> tuple[str, int, list[str]] | None:
        """What :meth:`undo` would take back: ``("accept" or "skip", index, tags)``, the tags it
        was accepted with (a skipped sentence's own), or None."""
        if not self.history:
            return None
        decision, index = self.history[-1]
        return decision, index, list(self.saved[-1][1] if decision == "accept" else self.items[index].tags or [])

    def undo(self) -> int | None:
        """Take back the last decision of this session (its sentence is shown again, with the tags
        it was accepted with); the index, or None when there is none."""
        if not self.history:
            return None
        decision, index = self.history[-1]
        if decision == "accept":
            tags = self.saved[-1][1]
            write_annotations(self.path, self.blocks[:-1])
            self.blocks, self.saved = self.blocks[:-1], self.saved[:-1]
            self.done.discard(index)
            self.items[index].tags = tags
        else:
            self.skipped.discard(index)
        self.history.pop()
        return index

    def _current(self, index: int) -> Item:
        shown = self.pending(1)
        if shown != [index]:
            where = f"sentence {shown[0]} is" if shown else "no sentence is left"
            raise NotCurrent(f"{named('id')}: sentence {index} is not the one to annotate ({where}: reload the page)")
        return self.items[index]

    def check_tags(self, tokens: Sequence[str], tags: Sequence[str]) -> None:
        """An :class:`HgnerError` naming ``tags`` unless they are IOB2 tags of :attr:`types`, one per token."""
        if len(tags) != len(tokens):
            raise HgnerError(f"{named('tags')}: expected {len(tokens)} tags, one per token, got {len(tags)}")
        for position, tag in enumerate(tags):
            prefix, entity_type = schemes.split_tag(tag)
            if tag != "O" and (prefix not in ("B", "I") or entity_type not in self.types):
                raise HgnerError(f"{named('tags')}: tag {position} {tag!r} is not O or B-/I- followed by one of "
                                 f"{', '.join(self.types)}")
        problem = schemes.check(tags, SCHEME)
        if problem is not None:
            raise HgnerError(f"{named('tags')}: tag {problem[0]}: {problem[1]}")

    def pre_annotate(self, index: int, tokens: Sequence[str], tags: Sequence[str]) -> None:
        """The tokens of plain-text sentence ``index`` and the model's tags (any scheme) for them,
        unless it has its tokens already (tagged by a request answered first)."""
        item = self.items[index]
        if item.tokens is None:
            item.tokens, item.tags = list(tokens), schemes.convert(tags, SCHEME)
