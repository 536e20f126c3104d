"""Entity-level precision, recall and F1, as the NER community scores them.

``conlleval`` mode (the default) reads chunks with conlleval.pl's rules, so on B-/I-/O tags
(IOB1 or IOB2, valid or not, typed or untyped) it gives exactly conlleval's counts and figures,
and the same as seqeval's default mode. E-/S- tags are read as seqeval's default mode reads them.
``strict`` mode counts a chunk only when its tags are exactly the scheme's rendering of it
(``B- I-...`` in IOB2, ``B- I-... E-`` or ``S-`` in BIOES), as seqeval's strict mode does; in
IOB1 every B/I/O sequence has one reading, so strict equals conlleval there. Figures are
percentages. tests/test_scoring.py checks all of this against a transcription of conlleval.pl
and against seqeval.

Where the reference scorers differ (and what hgner does):

* E-/S- tags. conlleval.pl (2004-01-26) knows E- only as IOE's end-of-chunk marker and S- not
  at all: it ends a chunk at E- only before E-, I- or O, and never at S-. So adjacent chunks of
  one type in valid BIOES (``S-PER S-PER``, ``E-PER B-PER``, ``B-PER I-PER S-PER``) are merged
  into one chunk, and an untyped ``S`` is never a chunk. seqeval's default mode and hgner read
  them as BIOES means; hgner's chunk counts on any tags equal conlleval.pl's on the tags
  converted to IOB2 (:func:`hgner.core.schemes.convert`).
* Untyped tags (``B``, ``I``): conlleval.pl and hgner count chunks of empty type ``""``;
  seqeval calls the type ``_`` (and so cannot tell it from a type really named ``_``).
* A type spelt ``0`` (``B-0``) is no type to conlleval.pl (Perl truthiness); hgner keeps ``0``.
* Macro F1 over no types at all is NaN in seqeval, 0 here; conlleval.pl has no macro average.
* seqeval's strict mode refuses E-/S- tags under IOB2 (ValueError); hgner's strict IOB2 finds no
  chunk there. seqeval's strict IOB1 is not followed (it does not start a chunk at a B- after O).
* Token accuracy compares tag strings; conlleval.pl compares (prefix, type), which only differs
  for spellings such as ``B-`` against ``B``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from . import schemes

MODES = ("conlleval", "strict")


@dataclass(frozen=True)
class Counts:
    """Chunks found correctly, predicted, and in the gold standard (the support)."""

    correct: int = 0
    predicted: int = 0
    gold: int = 0

    @property
    def precision(self) -> float:
        return 100.0 * self.correct / self.predicted if self.predicted else 0.0

    @property
    def recall(self) -> float:
        return 100.0 * self.correct / self.gold if self.gold else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def as_dict(self) -> dict[str, float]:
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1, "support": self.gold}


@dataclass(frozen=True)
class Score:
    """Micro-averaged counts, per-type counts, token accuracy, and how they were computed."""

    scheme: str
    mode: str
    micro: Counts
    per_type: dict[str, Counts] = field(default_factory=dict)
    token_accuracy: float = 0.0

    @property
    def macro_f1(self) -> float:
        """Unweighted mean of the per-type F1 (types seen in gold or predictions)."""
        return sum(c.f1 for c in self.per_type.values()) / len(self.per_type) if self.per_type else 0.0

    def report(self) -> str:
        """A conlleval-style text report that states the scheme and mode."""
        lines = [
            f"scheme {self.scheme}, mode {self.mode}; token accuracy {self.token_accuracy:.2f}%",
            f"{'type':<8} {'precision':>9} {'recall':>9} {'F1':>9} {'support':>8} {'predicted':>9}",
        ]
        rows = [*sorted(self.per_type.items()), ("micro", self.micro)]
        for name, c in rows:
            lines.append(f"{name:<8} {c.precision:9.2f} {c.recall:9.2f} {c.f1:9.2f} {c.gold:8d} {c.predicted:9d}")
        lines.append(f"{'macro':<8} {'':>9} {'':>9} {self.macro_f1:9.2f}")
        return "\n".join(lines)


@dataclass
class EntityCounts:
    """Running entity counts by type (chunks found correctly, predicted, in the gold standard), added
    up sentence by sentence or document by document; :meth:`score` gives the figures."""

    correct: Counter[str] = field(default_factory=Counter)
    predicted: Counter[str] = field(default_factory=Counter)
    gold: Counter[str] = field(default_factory=Counter)

    def add(self, gold: Iterable[tuple[int, int, str]], predicted: Iterable[tuple[int, int, str]]) -> None:
        """Count one sentence's (or document's) entities: ``(start, end, type)`` spans, in token or
        character offsets; an entity is found correctly when both have its span."""
        gold_set, predicted_set = set(gold), set(predicted)
        self.gold.update(entity_type for _, _, entity_type in gold_set)
        self.predicted.update(entity_type for _, _, entity_type in predicted_set)
        self.correct.update(entity_type for _, _, entity_type in gold_set & predicted_set)

    def update(self, other: EntityCounts) -> None:
        """Add ``other``'s counts to these."""
        self.correct.update(other.correct)
        self.predicted.update(other.predicted)
        self.gold.update(other.gold)

    def score(self, scheme: str, mode: str, token_accuracy: float = 0.0) -> Score:
        """The figures these counts give, per type (those seen in gold or predictions) and micro-averaged."""
        types = sorted(set(self.gold) | set(self.predicted))
        per_type = {t: Counts(self.correct[t], self.predicted[t], self.gold[t]) for t in types}
        micro = Counts(sum(self.correct.values()), sum(self.predicted.values()), sum(self.gold.values()))
        return Score(scheme, mode, micro, per_type, token_accuracy)


def entity_spans(tags: Sequence[str], scheme: str, mode: str = "conlleval") -> list[schemes.Span]:
    """The chunks a scorer in ``mode`` reads from one sentence's tags."""
    found = schemes.chunks(tags)
    if mode == "conlleval" or schemes.normalize_scheme(scheme) == "IOB1":
        return found
    if mode != "strict":
        raise ValueError(f"unknown scoring mode {mode!r}; expected one of {', '.join(MODES)}")
    # Compare (prefix, type) pairs, not strings: an untyped chunk may be written "B I" or "B- I-".
    return [
        (start, end, entity_type)
        for start, end, entity_type in found
        if [schemes.split_tag(tag) for tag in tags[start:end]]
        == [schemes.split_tag(tag) for tag in schemes.render([(0, end - start, entity_type)], end - start, scheme)]
    ]


def score(
    gold: Iterable[Sequence[str]],
    predicted: Iterable[Sequence[str]],
    scheme: str,
    mode: str = "conlleval",
) -> Score:
    """Score predicted tag sequences against gold ones, sentence by sentence (chunks never
    cross a sentence boundary, as conlleval's blank lines ensure)."""
    if mode not in MODES:
        raise ValueError(f"unknown scoring mode {mode!r}; expected one of {', '.join(MODES)}")
    counts = EntityCounts()
    tokens = right = 0
    for gold_tags, predicted_tags in zip(gold, predicted, strict=True):
        if len(gold_tags) != len(predicted_tags):
            raise ValueError(f"sentence has {len(gold_tags)} gold tags but {len(predicted_tags)} predicted")
        counts.add(entity_spans(gold_tags, scheme, mode), entity_spans(predicted_tags, scheme, mode))
        tokens += len(gold_tags)
        right += sum(g == p for g, p in zip(gold_tags, predicted_tags))
    return counts.score(schemes.normalize_scheme(scheme), mode, 100.0 * right / tokens if tokens else 0.0)


def consistency_pairs(tokens: Sequence[str], tags: Sequence[str]) -> tuple[int, int]:
    """``(pairs, disagreeing)`` of one document (flattened over its sentences): pairs of occurrences
    of the same capitalised word form, and those whose entity types (``O`` counts) differ."""
    types_by_word: dict[str, Counter[str]] = {}
    for token, tag in zip(tokens, tags):
        if token[:1].isupper():
            types_by_word.setdefault(token, Counter())[schemes.split_tag(tag)[1] or "O"] += 1
    pairs = disagreeing = 0
    for counts in types_by_word.values():
        total = sum(counts.values())
        same = sum(c * (c - 1) // 2 for c in counts.values())
        pairs += total * (total - 1) // 2
        disagreeing += total * (total - 1) // 2 - same
    return pairs, disagreeing


def consistency_disagreement(documents: Iterable[tuple[Sequence[str], Sequence[str]]]) -> float:
    """Among pairs of occurrences of the same capitalised word form inside one document, the
    percentage whose entity types (``O`` counts as a type) differ.

    ``documents`` yields ``(tokens, tags)`` per document, flattened over its sentences.
    """
    pairs = disagreeing = 0
    for tokens, tags in documents:
        more, differing = consistency_pairs(tokens, tags)
        pairs += more
        disagreeing += differing
    return 100.0 * disagreeing / pairs if pairs else 0.0
