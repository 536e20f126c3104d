"""Tag schemes: tag parsing, chunk reading, scheme checks and detection, rendering and conversion."""

from __future__ import annotations

import numpy as np
import pytest
from random_tags import random_tags
from seqeval.metrics.sequence_labeling import get_entities
from seqeval.scheme import IOB2, IOBES, Tokens

from hgner.core import schemes
from hgner.core.validation import load_schema

TYPES = ["PER", "LOC", "ORG", "MISC"]
LOSSLESS = ("IOB1", "IOB2", "BIOES")  # IO merges adjacent entities of one type
PAIRS = [(a, b) for a in LOSSLESS for b in LOSSLESS]


def random_spans(rng: np.random.Generator, length: int, types: list[str]) -> list[schemes.Span]:
    """Non-overlapping spans, often adjacent and often of one type (the hard cases for IOB1)."""
    spans = []
    i = 0
    while i < length:
        if rng.random() < 0.4:
            i += 1
            continue
        end = min(length, i + 1 + int(rng.integers(0, 4)))
        spans.append((i, end, types[int(rng.integers(len(types)))]))
        i = end
    return spans


# --- single tags -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tag, expected",
    [
        ("B-PER", ("B", "PER")),
        ("O", ("O", "")),
        ("I", ("I", "")),  # untyped: conlleval's empty type
        ("I--ORG", ("I", "-ORG")),  # everything after the first hyphen, as conlleval splits it
        ("S-GPE-ORG", ("S", "GPE-ORG")),
    ],
)
def test_split_tag(tag, expected):
    assert schemes.split_tag(tag) == expected


@pytest.mark.parametrize("tag", ["O", "B-PER", "I-LOC", "E-ORG", "S-MISC", "B-GPE-ORG", "I-NORP_2", "B-0",
                                 "B-LOCALIZACIÓN", "I-" + "X" * 64])
def test_wellformed_tags(tag):
    assert schemes.is_wellformed(tag)


@pytest.mark.parametrize("tag", ["I--ORG", "B-", "B", "I", "X-PER", "PER", "o", "b-PER", "B-_PER", "B PER", "", "O-PER",
                                 "B-U$D", "I-" + "X" * 65, "B-PER\n"])
def test_malformed_tags(tag):
    assert not schemes.is_wellformed(tag)


def test_model_labels_follow_the_corpus_tag_grammar():
    """One grammar: a tag a corpus may hold is a label a model may have (meta.json's schema)."""
    assert load_schema("meta")["properties"]["labels"]["items"]["pattern"] == schemes.TAG_PATTERN


@pytest.mark.parametrize("name, canonical", [("iob1", "IOB1"), ("IOB2", "IOB2"), ("bio", "IOB2"), ("BIOES", "BIOES"), ("iobes", "BIOES")])
def test_normalize_scheme(name, canonical):
    assert schemes.normalize_scheme(name) == canonical


def test_normalize_scheme_rejects_unknown_names():
    with pytest.raises(ValueError, match="unknown tag scheme 'BILOU'"):
        schemes.normalize_scheme("BILOU")


# --- chunks ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tags, expected",
    [
        ([], []),
        (["O", "O"], []),
        (["B-PER", "I-PER", "O", "B-LOC"], [(0, 2, "PER"), (3, 4, "LOC")]),
        # IOB1: I- after O starts a chunk; B- separates adjacent chunks of one type
        (["I-PER", "I-PER", "B-PER", "O", "I-LOC"], [(0, 2, "PER"), (2, 3, "PER"), (4, 5, "LOC")]),
        # a change of type always ends a chunk, whatever the prefix
        (["I-PER", "I-LOC"], [(0, 1, "PER"), (1, 2, "LOC")]),
        (["B-PER", "I-LOC", "I-LOC"], [(0, 1, "PER"), (1, 3, "LOC")]),
        # untyped tags are chunks of empty type
        (["B", "I", "O", "I", "B"], [(0, 2, ""), (3, 4, ""), (4, 5, "")]),
        (["B", "I-PER"], [(0, 1, ""), (1, 2, "PER")]),
        # BIOES and its violations, read as seqeval's default mode reads them
        (["B-PER", "I-PER", "E-PER", "S-PER", "S-PER"], [(0, 3, "PER"), (3, 4, "PER"), (4, 5, "PER")]),
        (["E-PER", "E-PER"], [(0, 1, "PER"), (1, 2, "PER")]),
        (["S-PER", "I-PER", "E-PER"], [(0, 1, "PER"), (1, 3, "PER")]),
        (["B-PER", "I-PER"], [(0, 2, "PER")]),
        # type with hyphens, kept whole
        (["I--ORG", "I--ORG"], [(0, 2, "-ORG")]),
    ],
)
def test_chunks(tags, expected):
    assert schemes.chunks(tags) == expected


def seqeval_default_spans(tags: list[str]) -> list[schemes.Span]:
    """seqeval's default-mode reading, as (start, end-exclusive, type) with conlleval's empty type."""
    return [(start, end + 1, "" if entity_type == "_" else entity_type) for entity_type, start, end in get_entities(list(tags))]


def test_chunks_equal_seqeval_default_mode_on_random_sequences():
    rng = np.random.default_rng(1)
    for case in range(3000):
        prefixes = "OBIES" if case % 2 else "OBI"
        types = ["PER", "LOC", ""] if case % 3 == 0 else ["PER", "LOC"]
        tags = random_tags(rng, int(rng.integers(0, 10)), prefixes, types)
        assert schemes.chunks(tags) == seqeval_default_spans(tags), tags


# --- check ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tags, scheme",
    [
        ([], "IOB1"),
        (["O"], "IOB2"),
        (["I-PER", "I-PER", "B-PER", "O", "I-LOC", "I-ORG"], "IOB1"),
        (["B-PER", "O", "I-PER"], "IOB1"),
        (["O", "B-PER"], "IOB1"),  # a B- after O is unambiguous; CoNLL-2003's eng.train has two
        (["B-PER", "I-PER", "B-PER", "B-LOC", "I-LOC"], "IOB2"),
        (["B", "I", "O"], "IOB2"),
        (["B-PER", "I-PER", "E-PER", "S-PER", "O", "B-LOC", "E-LOC"], "BIOES"),
        (["B", "E", "S"], "BIOES"),
    ],
)
def test_check_accepts_valid_sequences(tags, scheme):
    assert schemes.check(tags, scheme) is None


@pytest.mark.parametrize(
    "tags, scheme, position, words",
    [
        (["O", "S-PER"], "IOB1", 1, ["'S-PER'", "prefix S-", "IOB1 does not use"]),
        (["B-PER", "E-PER"], "IOB2", 1, ["'E-PER'", "prefix E-", "IOB2 does not use"]),
        (["O", "I-PER"], "IOB2", 1, ["'I-PER' after O", "IOB2 chunks start with B-"]),
        (["I-PER"], "IOB2", 0, ["'I-PER' after O", "start with B-"]),
        (["B-PER", "I-LOC"], "BIO", 1, ["'I-LOC' after 'B-PER'", "start with B-"]),
        (["B-PER", "O"], "BIOES", 1, ["'O' after 'B-PER'", "left open", "expected I-PER or E-PER"]),
        (["B-PER", "S-PER"], "BIOES", 1, ["'S-PER' after 'B-PER'", "left open"]),
        (["B-PER", "I-PER", "B-LOC", "E-LOC"], "BIOES", 2, ["'B-LOC' after 'I-PER'", "left open"]),
        (["I-PER", "E-PER"], "BIOES", 0, ["'I-PER' after O", "must continue a B- chunk"]),
        (["S-PER", "E-PER"], "BIOES", 1, ["'E-PER' after 'S-PER'", "must continue"]),
        (["B-PER", "E-LOC"], "IOBES", 1, ["'E-LOC' after 'B-PER'", "of the same type"]),
        (["O", "B-PER"], "BIOES", 2, ["sentence ends inside a chunk of type PER", "expected E-PER"]),
        (["B-PER", "I-PER"], "BIOES", 2, ["sentence ends inside"]),
    ],
)
def test_check_reports_position_and_reason(tags, scheme, position, words):
    problem = schemes.check(tags, scheme)
    assert problem is not None
    assert problem[0] == position
    for word in words:
        assert word in problem[1]
    assert "\n" not in problem[1]


# --- detect --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sequences, scheme",
    [
        ([], "IOB2"),
        ([[]], "IOB2"),
        ([["O", "O"]], "IOB2"),
        ([["B-PER", "I-PER"], ["B-LOC"]], "IOB2"),
        ([["B-PER"], ["O", "I-LOC"]], "IOB1"),
        ([["I-PER"]], "IOB1"),
        ([["B-PER", "I-LOC"]], "IOB1"),  # I- changing the type starts a chunk
        ([["I-PER"], ["O", "S-LOC"]], "BIOES"),
        ([["B-PER", "E-PER"]], "BIOES"),
    ],
)
def test_detect(sequences, scheme):
    assert schemes.detect(sequences) == scheme


def test_detect_reads_a_generator_once():
    assert schemes.detect(tags for tags in [["B-PER"], ["I-LOC"], ["E-ORG"]]) == "BIOES"


# --- render and convert ------------------------------------------------------------------------

SPANS = [(0, 2, "PER"), (2, 3, "PER"), (4, 5, "LOC"), (5, 7, "ORG")]
RENDERED = {
    "IOB1": ["I-PER", "I-PER", "B-PER", "O", "I-LOC", "I-ORG", "I-ORG", "O"],
    "IOB2": ["B-PER", "I-PER", "B-PER", "O", "B-LOC", "B-ORG", "I-ORG", "O"],
    "BIOES": ["B-PER", "E-PER", "S-PER", "O", "S-LOC", "B-ORG", "E-ORG", "O"],
    "IO": ["I-PER", "I-PER", "I-PER", "O", "I-LOC", "I-ORG", "I-ORG", "O"],
}


def merge_adjacent(spans: list[schemes.Span]) -> list[schemes.Span]:
    """What IO keeps of ``spans``: touching spans of one type become one."""
    merged: list[schemes.Span] = []
    for start, end, entity_type in spans:
        if merged and merged[-1][1] == start and merged[-1][2] == entity_type:
            merged[-1] = (merged[-1][0], end, entity_type)
        else:
            merged.append((start, end, entity_type))
    return merged


@pytest.mark.parametrize("scheme", schemes.SCHEMES)
def test_render(scheme):
    assert schemes.render(SPANS, 8, scheme) == RENDERED[scheme]
    assert schemes.render(reversed(SPANS), 8, scheme) == RENDERED[scheme]  # order does not matter
    assert schemes.render([], 3, scheme) == ["O", "O", "O"]
    assert schemes.render([], 0, scheme) == []


def test_render_untyped_spans_gives_untyped_tags():
    spans = [(0, 2, ""), (2, 3, ""), (4, 5, "")]
    assert schemes.render(spans, 5, "IOB1") == ["I", "I", "B", "O", "I"]
    assert schemes.render(spans, 5, "IOB2") == ["B", "I", "B", "O", "B"]
    assert schemes.render(spans, 5, "BIOES") == ["B", "E", "S", "O", "S"]


def test_render_in_iob1_uses_b_only_between_chunks_of_one_type():
    assert schemes.render([(0, 1, "PER"), (1, 2, "LOC"), (2, 3, "LOC")], 3, "IOB1") == ["I-PER", "I-LOC", "B-LOC"]
    assert schemes.render([(1, 2, "PER"), (3, 4, "PER")], 4, "IOB1") == ["O", "I-PER", "O", "I-PER"]


@pytest.mark.parametrize("source, target", PAIRS)
def test_convert_fixed_example(source, target):
    assert schemes.convert(RENDERED[source], target) == RENDERED[target]


@pytest.mark.parametrize("source", schemes.SCHEMES)
def test_convert_to_io_merges_adjacent_entities_of_one_type(source):
    assert schemes.convert(RENDERED[source], "IO") == RENDERED["IO"]
    assert schemes.chunks(RENDERED["IO"]) == merge_adjacent(SPANS)
    assert schemes.check(RENDERED["IO"], "IO") is None
    assert schemes.check(["B-PER"], "IO") == (0, "tag 'B-PER' has prefix B- which IO does not use")


def test_round_trips_on_random_span_sets():
    """render -> chunks gives the spans back; every conversion between the three schemes keeps
    them and gives the target's rendering; the rendering is valid in its scheme and is detected
    as it (a sentence with entities in IOB1 always has a chunk starting with I-)."""
    rng = np.random.default_rng(2)
    for case in range(1500):
        length = int(rng.integers(0, 14))
        types = TYPES + [""] if case % 5 == 0 else TYPES[: 1 + case % 4]
        spans = random_spans(rng, length, types)
        rendered = {scheme: schemes.render(spans, length, scheme) for scheme in LOSSLESS}
        for scheme, tags in rendered.items():
            assert len(tags) == length
            assert schemes.chunks(tags) == spans, (scheme, tags)
            assert schemes.check(tags, scheme) is None, (scheme, tags)
            if spans:
                assert schemes.detect([tags]) == scheme, (scheme, tags)
            if "" not in types:
                assert all(schemes.is_wellformed(tag) for tag in tags)
        for source, target in PAIRS:
            converted = schemes.convert(rendered[source], target)
            assert converted == rendered[target], (source, target, spans)
            assert schemes.convert(converted, source) == rendered[source]


def test_renderings_equal_seqeval_strict_entities():
    """What seqeval's strict mode reads from our IOB2 and BIOES renderings is the spans."""
    rng = np.random.default_rng(3)
    for _ in range(500):
        length = int(rng.integers(0, 12))
        spans = random_spans(rng, length, TYPES[:2])
        for scheme, token_class in (("IOB2", IOB2), ("BIOES", IOBES)):
            entities = Tokens(schemes.render(spans, length, scheme), token_class).entities
            assert [(e.start, e.end, e.tag) for e in entities] == spans


def test_convert_makes_any_sequence_valid_and_keeps_its_chunks():
    rng = np.random.default_rng(4)
    for case in range(2000):
        types = ["PER", "LOC", ""] if case % 4 == 0 else ["PER", "LOC"]
        tags = random_tags(rng, int(rng.integers(0, 10)), "OBIES", types)
        for scheme in schemes.SCHEMES:
            converted = schemes.convert(tags, scheme)
            assert len(converted) == len(tags)
            assert schemes.check(converted, scheme) is None, (tags, scheme, converted)
            expected = merge_adjacent(schemes.chunks(tags)) if scheme == "IO" else schemes.chunks(tags)
            assert schemes.chunks(converted) == expected
            if schemes.check(tags, scheme) is None and scheme != "IOB1":
                # a valid IOB2/BIOES sequence has exactly one spelling; IOB1 has several
                # (a B- after O is accepted), and convert gives the canonical one
                assert converted == list(tags)
