"""Tagging schemes (IO, IOB1, IOB2 a.k.a. BIO, BIOES): parsing, validation, spans and conversion.

IO (only I- tags) is what Stanford NER and the herded Gibbs paper's model use: every entity
can grow, shrink or change type one token at a time, which single-site samplers need; it
cannot separate two adjacent entities of one type, so rendering in IO merges them.

A span is ``(start, end, type)`` with ``end`` exclusive. :func:`chunks` reads spans from any
tag sequence with conlleval's chunking rules (extended to E-/S- tags exactly as seqeval's
default mode does), so it is lenient: every sequence has a reading. :func:`check` says where a
sequence breaks the grammar of a declared scheme.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

SCHEMES = ("IO", "IOB1", "IOB2", "BIOES")
SCHEME_ALIASES = {"IO": "IO", "IOB1": "IOB1", "IOB2": "IOB2", "BIO": "IOB2", "BIOES": "BIOES", "IOBES": "BIOES"}
PREFIXES = {"IO": "I", "IOB1": "BI", "IOB2": "BI", "BIOES": "BIES"}

TAG_PATTERN = r"^(O|[BIES]-[^\W_][\w.\-]{0,63})$"
"""The grammar of a tag, for corpora and model labels alike (``meta.schema.json``'s labels pattern
is this one): ``O``, or a prefix and a type of 1..64 letters, digits, '_', '.' or '-' that starts
with a letter or digit."""
_TAG = re.compile(TAG_PATTERN)

Span = tuple[int, int, str]


def normalize_scheme(name: str) -> str:
    """The canonical scheme name for ``name`` (case-insensitive; ``BIO`` means IOB2)."""
    try:
        return SCHEME_ALIASES[name.upper()]
    except KeyError:
        raise ValueError(f"unknown tag scheme {name!r}; expected one of IO, IOB1, IOB2 (BIO), BIOES") from None


def is_wellformed(tag: str) -> bool:
    """True for a tag of :data:`TAG_PATTERN`: ``O``, or ``P-TYPE`` with P in B/I/E/S."""
    return _TAG.fullmatch(tag) is not None


def split_tag(tag: str) -> tuple[str, str]:
    """``"B-PER" -> ("B", "PER")``, ``"O" -> ("O", "")``; untyped tags such as ``"I"`` get type ``""``.

    Like conlleval, everything after the first hyphen is the type (``"I--ORG" -> ("I", "-ORG")``).
    """
    prefix, _, entity_type = tag.partition("-")
    return prefix, entity_type


def label_problem(labels: Sequence[str], scheme: str) -> str | None:
    """Why a model's ``labels`` cannot be tags of ``scheme`` (a prefix it does not use, or a type
    none of whose labels can start a chunk: B- in IOB2, B- or S- in BIOES), or None."""
    scheme = normalize_scheme(scheme)
    wrong = sorted(label for label in labels if label != "O" and split_tag(label)[0] not in PREFIXES[scheme])
    if wrong:
        return f"label {wrong[0]} has a prefix {scheme} does not use"
    starts = {"IOB2": "B", "BIOES": "BS"}.get(scheme)
    if starts is not None:
        starting = {split_tag(label)[1] for label in labels if split_tag(label)[0] in starts}
        unstarted = [t for t in entity_types(labels) if t not in starting]
        if unstarted:
            return f"no {' or '.join(p + '-' for p in starts)} label for type {unstarted[0]}, which {scheme} chunks start with"
    return None


def entity_types(tags: Iterable[str]) -> list[str]:
    """The entity types of ``tags``, sorted (``["B-PER", "O", "I-LOC"] -> ["LOC", "PER"]``)."""
    return sorted({split_tag(tag)[1] for tag in tags} - {""})


def _end_of_chunk(prev_prefix: str, prefix: str, prev_type: str, entity_type: str) -> bool:
    if prev_prefix in ("E", "S"):
        return True
    if prev_prefix in ("B", "I") and prefix in ("B", "S", "O"):
        return True
    return prev_prefix not in ("O", ".") and prev_type != entity_type


def _start_of_chunk(prev_prefix: str, prefix: str, prev_type: str, entity_type: str) -> bool:
    if prefix in ("B", "S"):
        return True
    if prev_prefix in ("E", "S", "O") and prefix in ("E", "I"):
        return True
    return prefix not in ("O", ".") and prev_type != entity_type


def chunks(tags: Sequence[str]) -> list[Span]:
    """Spans read with conlleval's rules (seqeval's default mode for E-/S-); any sequence is accepted."""
    spans: list[Span] = []
    # an O ends any chunk and leaves the reader as it starts, so only the runs between O tags are read
    read = [i for i, tag in enumerate(tags) if tag != "O"]
    prev_prefix, prev_type, start = "O", "", 0
    for k, i in enumerate(read):
        prefix, entity_type = split_tag(tags[i])
        if prefix == "O":
            entity_type = ""
        if _end_of_chunk(prev_prefix, prefix, prev_type, entity_type):
            spans.append((start, i, prev_type))
        if _start_of_chunk(prev_prefix, prefix, prev_type, entity_type):
            start = i
        prev_prefix, prev_type = prefix, entity_type
        if k + 1 == len(read) or read[k + 1] != i + 1:  # an O (or the end) follows
            if _end_of_chunk(prev_prefix, "O", prev_type, ""):
                spans.append((start, i + 1, prev_type))
            prev_prefix, prev_type = "O", ""
    return spans


def check(tags: Sequence[str], scheme: str) -> tuple[int, str] | None:
    """The first position whose tag breaks ``scheme``'s grammar, with the reason; None if valid.

    IOB1: only B-/I- prefixes. B- should separate two adjacent chunks of one type, but a B- after
    O or another type is unambiguous and is accepted as a chunk start, as conlleval reads it
    (the official CoNLL-2003 eng.train has two).
    IOB2: every chunk starts with B-. BIOES: B- (I-)* E- or S-.
    """
    scheme = normalize_scheme(scheme)
    allowed = PREFIXES[scheme]
    prev_prefix, prev_type = "O", ""
    for i, tag in enumerate(tags):
        prefix, entity_type = split_tag(tag)
        if prefix != "O" and prefix not in allowed:
            return i, f"tag {tag!r} has prefix {prefix}- which {scheme} does not use"
        continues = prev_prefix != "O" and prev_type == entity_type
        if scheme == "IOB2" and prefix == "I" and not continues:
            return i, f"tag {tag!r} after {_show(prev_prefix, prev_type)}: IOB2 chunks start with B-"
        if scheme == "BIOES":
            open_chunk = prev_prefix in ("B", "I")
            if prefix in ("I", "E") and not (open_chunk and prev_type == entity_type):
                return i, (f"tag {tag!r} after {_show(prev_prefix, prev_type)}: BIOES I-/E- must continue a B- chunk "
                           "of the same type")
            if prefix in ("B", "S", "O") and open_chunk:
                return i, (f"tag {tag!r} after {_show(prev_prefix, prev_type)}: BIOES chunk left open "
                           f"(expected I-{prev_type} or E-{prev_type})")
        prev_prefix, prev_type = prefix, entity_type
    if scheme == "BIOES" and prev_prefix in ("B", "I"):
        return len(tags), f"sentence ends inside a chunk of type {prev_type} (expected E-{prev_type})"
    return None


def _show(prefix: str, entity_type: str) -> str:
    return "O" if prefix == "O" else f"'{prefix}-{entity_type}'"


def detect(tag_sequences: Iterable[Sequence[str]]) -> str:
    """Guess the scheme of some tag sequences: BIOES if any E-/S- tag, IOB1 if some chunk
    starts with I-, otherwise IOB2 (which is also what sequences without entities get)."""
    seen_iob1 = False
    for tags in tag_sequences:
        if any(split_tag(tag)[0] in ("E", "S") for tag in tags):
            return "BIOES"
        if not seen_iob1:
            prev_prefix, prev_type = "O", ""
            for tag in tags:
                prefix, entity_type = split_tag(tag)
                if prefix == "I" and (prev_prefix == "O" or prev_type != entity_type):
                    seen_iob1 = True
                    break
                prev_prefix, prev_type = prefix, entity_type
    return "IOB1" if seen_iob1 else "IOB2"


def render(spans: Iterable[Span], length: int, scheme: str) -> list[str]:
    """Tags of length ``length`` in ``scheme`` for non-overlapping ``spans``; a span of type
    ``""`` (an untyped chunk, as :func:`chunks` reads ``B``/``I``) gets untyped tags. In IO,
    adjacent spans of one type become one."""
    scheme = normalize_scheme(scheme)
    tags = ["O"] * length
    prev_end, prev_type = -1, ""
    for start, end, entity_type in sorted(spans):
        if scheme == "BIOES" and end - start == 1:
            tags[start] = _join("S", entity_type)
        else:
            for i in range(start, end):
                tags[i] = _join("I", entity_type)
            if scheme in ("IOB2", "BIOES") or (scheme == "IOB1" and prev_end == start and prev_type == entity_type):
                tags[start] = _join("B", entity_type)
            if scheme == "BIOES":
                tags[end - 1] = _join("E", entity_type)
        prev_end, prev_type = end, entity_type
    return tags


def _join(prefix: str, entity_type: str) -> str:
    return f"{prefix}-{entity_type}" if entity_type else prefix


def convert(tags: Sequence[str], scheme: str) -> list[str]:
    """``tags`` (any scheme, read leniently) rewritten in ``scheme``."""
    return render(chunks(tags), len(tags), scheme)


def relabel_tags(tags: Sequence[str], label_map: Mapping[str, str] | None, scheme: str) -> list[str]:
    """Gold ``tags`` rendered in ``scheme`` with entity types renamed by ``label_map``; types
    mapped to ``"O"`` disappear (e.g. MISC for a 3-class model)."""
    spans = chunks(tags)
    if label_map:
        spans = [(s, e, label_map.get(t, t)) for s, e, t in spans]
        spans = [span for span in spans if span[2] != "O"]
    return render(spans, len(tags), scheme)
