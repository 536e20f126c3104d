"""Entity-level scoring against conlleval.pl's rules and seqeval (default and strict modes),
hand-computed conlleval output, and the label-consistency figure.

``conlleval_counts`` below is a line-by-line Python transcription of the counting loop of
conlleval.pl (version 2004-01-26, the CoNLL-2003 evaluation script), which is not available
here; conlleval.pl itself is Perl and reads ``token ... gold guess`` lines. The places where
seqeval's default mode and conlleval.pl disagree are tested explicitly in
``test_where_conlleval_pl_and_seqeval_part`` and described in ``hgner/core/scoring.py``.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter

import numpy as np
import pytest
from random_tags import random_tags
from seqeval.metrics import classification_report, f1_score
from seqeval.scheme import IOB1 as SEQEVAL_IOB1
from seqeval.scheme import IOB2, IOBES, Tokens

from hgner.core import schemes
from hgner.core.scoring import MODES, Counts, consistency_disagreement, entity_spans, score

# --- conlleval.pl, transcribed --------------------------------------------------------------------


def _conlleval_split(tag: str) -> tuple[str, str]:
    # /^([^-]*)-(.*)$/ and then `$type = $type ? $type : ""` -- Perl's truthiness also turns a
    # type "0" into "" (not exercised below: our generated types are never "0").
    if "-" in tag:
        prefix, _, entity_type = tag.partition("-")
    else:
        prefix, entity_type = tag, ""
    return prefix, entity_type if entity_type != "0" else ""


_END = {("B", "B"), ("B", "O"), ("I", "B"), ("I", "O"), ("E", "E"), ("E", "I"), ("E", "O")}
_START = {("B", "B"), ("I", "B"), ("O", "B"), ("O", "I"), ("E", "E"), ("E", "I"), ("O", "E")}


def _end_of_chunk(prev_tag, tag, prev_type, entity_type):
    return (
        (prev_tag, tag) in _END
        or (prev_tag not in ("O", ".") and prev_type != entity_type)
        or prev_tag in ("[", "]")
    )


def _start_of_chunk(prev_tag, tag, prev_type, entity_type):
    return (
        (prev_tag, tag) in _START
        or (tag not in ("O", ".") and prev_type != entity_type)
        or tag in ("[", "]")
    )


def conlleval_counts(gold, predicted):
    """conlleval.pl's counts for sentences of gold and guessed tags: per type
    ``(correct, found guessed, found correct)``, and ``(correct tags, tokens)``."""
    correct_chunk, found_guessed, found_correct = Counter(), Counter(), Counter()
    correct_tags = tokens = 0
    in_correct = False
    last_correct, last_correct_type, last_guessed, last_guessed_type = "O", "", "O", ""
    lines = []
    for gold_tags, guessed_tags in zip(gold, predicted):
        lines += list(zip(gold_tags, guessed_tags)) + [None]  # None: the empty line after a sentence
    for line in lines:
        if line is None:  # an empty line is read as ("-X-", "O", "O")
            (correct, correct_type), (guessed, guessed_type) = ("O", ""), ("O", "")
        else:
            (correct, correct_type), (guessed, guessed_type) = map(_conlleval_split, line)
        if in_correct:
            correct_ends = _end_of_chunk(last_correct, correct, last_correct_type, correct_type)
            guessed_ends = _end_of_chunk(last_guessed, guessed, last_guessed_type, guessed_type)
            if correct_ends and guessed_ends and last_guessed_type == last_correct_type:
                in_correct = False
                correct_chunk[last_correct_type] += 1
            elif correct_ends != guessed_ends or guessed_type != correct_type:
                in_correct = False
        correct_starts = _start_of_chunk(last_correct, correct, last_correct_type, correct_type)
        guessed_starts = _start_of_chunk(last_guessed, guessed, last_guessed_type, guessed_type)
        if correct_starts and guessed_starts and guessed_type == correct_type:
            in_correct = True
        if correct_starts:
            found_correct[correct_type] += 1
        if guessed_starts:
            found_guessed[guessed_type] += 1
        if line is not None:
            correct_tags += correct == guessed and guessed_type == correct_type
            tokens += 1
        last_correct, last_correct_type, last_guessed, last_guessed_type = correct, correct_type, guessed, guessed_type
    if in_correct:
        correct_chunk[last_correct_type] += 1
    types = set(correct_chunk) | set(found_guessed) | set(found_correct)
    per_type = {t: (correct_chunk[t], found_guessed[t], found_correct[t]) for t in types}
    return per_type, (correct_tags, tokens)


def our_counts(result):
    return {t: (c.correct, c.predicted, c.gold) for t, c in result.per_type.items()}


# --- random data ----------------------------------------------------------------------------------


def random_corpus(rng, prefixes, types, o_weight=2):
    """Gold and predicted sentences: random tags (mostly invalid), often all-O or empty, and
    predictions that are sometimes a copy of the gold tags with a few changes."""
    prefixes = "O" * o_weight + prefixes
    gold, predicted = [], []
    for _ in range(int(rng.integers(0, 6))):
        length = int(rng.integers(0, 9))
        g = random_tags(rng, length, prefixes, types)
        if rng.random() < 0.4:
            p = list(g)
            for i in rng.integers(0, max(length, 1), size=int(rng.integers(0, 3))):
                if i < length:
                    p[i] = random_tags(rng, 1, prefixes, types)[0]
        else:
            p = random_tags(rng, length, prefixes, types)
        gold.append(g)
        predicted.append(p)
    return gold, predicted


def cases(seed, n, prefixes):
    rng = np.random.default_rng(seed)
    for case in range(n):
        types = ["PER", "LOC", ""] if case % 3 == 0 else ["PER", "LOC", "ORG"][: 1 + case % 3]
        yield random_corpus(rng, prefixes, types)


# --- conlleval mode --------------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["IOB1", "IOB2"])
def test_conlleval_mode_equals_conlleval_pl_on_random_bio_sequences(scheme):
    """B-/I-/O tags, valid or not, typed or untyped: exactly conlleval.pl's counts (and so its
    precision, recall and F1), whatever scheme is declared, and its token accuracy."""
    for gold, predicted in cases(10, 1000, "BI"):
        result = score(gold, predicted, scheme)
        per_type, (right, tokens) = conlleval_counts(gold, predicted)
        assert our_counts(result) == per_type, (gold, predicted)
        assert result.micro == Counts(*(sum(c[i] for c in per_type.values()) for i in range(3)))
        assert result.token_accuracy == (100.0 * right / tokens if tokens else 0.0)


def test_conlleval_mode_on_bioes_equals_conlleval_pl_on_the_iob2_conversion():
    """With E-/S- tags hgner reads chunks as seqeval does; that is what conlleval.pl reports
    once the tags are converted to IOB2 (any sequence, valid BIOES or not)."""
    for gold, predicted in cases(11, 800, "BIES"):
        result = score(gold, predicted, "BIOES")
        gold2 = [schemes.convert(t, "IOB2") for t in gold]
        predicted2 = [schemes.convert(t, "IOB2") for t in predicted]
        assert our_counts(result) == conlleval_counts(gold2, predicted2)[0], (gold, predicted)


def test_where_conlleval_pl_and_seqeval_part():
    """conlleval.pl knows E- only as IOE's end-of-chunk marker and S- not at all: it ends a
    chunk at E- only before E-, I- or O and never at S-, so adjacent same-type chunks of valid
    BIOES are merged, and an untyped S never starts a chunk. hgner (like seqeval's default
    mode) reads them as BIOES means. On B-/I-/O tags the two agree (tests above)."""
    merged_by_conlleval_pl = [
        ["S-PER", "S-PER"],
        ["B-PER", "E-PER", "B-PER", "E-PER"],
        ["B-PER", "E-PER", "S-PER"],
        ["S-PER", "B-PER", "E-PER"],
        ["B-PER", "I-PER", "S-PER"],
        ["S-PER", "I-PER", "E-PER"],
    ]
    for tags in merged_by_conlleval_pl:
        ours = score([tags], [tags], "BIOES")
        assert ours.micro.gold == 2
        assert conlleval_counts([tags], [tags])[0] == {"PER": (1, 1, 1)}
        assert seqeval_report([tags], [tags])["PER"]["support"] == 2
    # an untyped S: one chunk for hgner and seqeval, none for conlleval.pl
    assert score([["S"]], [["S"]], "BIOES").micro == Counts(1, 1, 1)
    assert conlleval_counts([["S"]], [["S"]])[0] == {}
    # but valid BIOES without adjacent same-type chunks is read alike
    tags = ["B-PER", "I-PER", "E-PER", "S-LOC", "O", "S-PER", "B-LOC", "E-LOC"]
    assert our_counts(score([tags], [tags], "BIOES")) == conlleval_counts([tags], [tags])[0]


def seqeval_report(gold, predicted, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return classification_report(gold, predicted, output_dict=True, zero_division=0, **kwargs)


def seqeval_f1(gold, predicted, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f1_score(gold, predicted, zero_division=0, **kwargs)


def assert_same_as_seqeval(result, report, f1, context):
    """Per type (seqeval calls the empty type ``_``), micro and macro: same figures and supports."""
    types = {("_" if t == "" else t) for t in result.per_type}
    assert types == set(report) - {"micro avg", "macro avg", "weighted avg"}, context
    for name, counts in result.per_type.items():
        row = report["_" if name == "" else name]
        assert counts.gold == row["support"], context
        assert counts.precision / 100 == pytest.approx(row["precision"], abs=1e-12), context
        assert counts.recall / 100 == pytest.approx(row["recall"], abs=1e-12), context
        assert counts.f1 / 100 == pytest.approx(row["f1-score"], abs=1e-12), context
    micro = report["micro avg"]
    assert result.micro.gold == micro["support"], context
    assert result.micro.precision / 100 == pytest.approx(micro["precision"], abs=1e-12), context
    assert result.micro.recall / 100 == pytest.approx(micro["recall"], abs=1e-12), context
    assert result.micro.f1 / 100 == pytest.approx(micro["f1-score"], abs=1e-12), context
    assert result.micro.f1 / 100 == pytest.approx(f1, abs=1e-12), context
    if result.per_type:
        assert result.macro_f1 / 100 == pytest.approx(report["macro avg"]["f1-score"], abs=1e-12), context
    else:  # seqeval's macro average over no types is nan; ours is 0
        assert math.isnan(report["macro avg"]["f1-score"]) and result.macro_f1 == 0.0


@pytest.mark.parametrize("scheme", ["IOB1", "IOB2", "BIOES"])
def test_conlleval_mode_equals_seqeval_default_mode_on_random_sequences(scheme):
    """Any mix of B-/I-/E-/S-/O prefixes, typed or untyped, declared in any scheme."""
    for gold, predicted in cases(12, 300, "BIES"):
        if not any(gold):  # seqeval wants at least one tag
            continue
        result = score(gold, predicted, scheme)
        assert_same_as_seqeval(result, seqeval_report(gold, predicted), seqeval_f1(gold, predicted), (gold, predicted))


# --- strict mode -----------------------------------------------------------------------------------


@pytest.mark.parametrize("scheme, seqeval_scheme, prefixes", [("IOB2", IOB2, "BI"), ("BIOES", IOBES, "BIES")])
def test_strict_mode_equals_seqeval_strict_mode_on_random_sequences(scheme, seqeval_scheme, prefixes):
    """seqeval's strict IOB2 refuses E-/S- tags (ValueError); hgner's strict IOB2 simply finds
    no chunk there, so IOB2 is compared on B-/I-/O tags."""
    for gold, predicted in cases(13, 300, prefixes):
        if not any(gold):
            continue
        result = score(gold, predicted, scheme, mode="strict")
        kwargs = {"mode": "strict", "scheme": seqeval_scheme}
        assert_same_as_seqeval(
            result, seqeval_report(gold, predicted, **kwargs), seqeval_f1(gold, predicted, **kwargs), (gold, predicted)
        )


def test_strict_mode_on_valid_sequences_equals_conlleval_mode():
    rng = np.random.default_rng(14)
    for _ in range(300):
        gold, predicted = random_corpus(rng, "BIES", ["PER", "LOC"])
        for scheme in schemes.SCHEMES:
            gold_valid = [schemes.convert(t, scheme) for t in gold]
            predicted_valid = [schemes.convert(t, scheme) for t in predicted]
            strict = score(gold_valid, predicted_valid, scheme, "strict")
            lenient = score(gold_valid, predicted_valid, scheme)
            assert (strict.micro, strict.per_type) == (lenient.micro, lenient.per_type)


def test_strict_mode_in_iob1_is_conlleval_mode():
    """Every B/I/O sequence has one IOB1 reading. seqeval's strict IOB1 is not a reference: it
    does not start a chunk at a B- after O (which conlleval.pl and hgner do), and then starts one
    at the I- that follows it."""
    for gold, predicted in cases(15, 200, "BI"):
        assert our_counts(score(gold, predicted, "IOB1", "strict")) == our_counts(score(gold, predicted, "IOB1"))
    for tags, seqeval_reads in ((["O", "B-PER"], []), (["O", "B-PER", "I-PER"], [(2, 3, "PER")])):
        assert entity_spans(tags, "IOB1", "strict") == [(1, len(tags), "PER")]
        assert [(e.start, e.end, e.tag) for e in Tokens(tags, SEQEVAL_IOB1).entities] == seqeval_reads


def test_strict_mode_drops_chunks_the_scheme_would_not_write():
    gold = [["B-PER", "I-PER", "O", "B-LOC"]]
    predicted = [["I-PER", "I-PER", "O", "B-LOC"]]
    assert score(gold, predicted, "IOB2").micro == Counts(2, 2, 2)
    assert score(gold, predicted, "IOB2", "strict").micro == Counts(1, 1, 2)
    gold = [["B-PER", "E-PER", "S-LOC"]]
    predicted = [["B-PER", "I-PER", "S-LOC"]]
    assert score(gold, predicted, "BIOES").micro == Counts(2, 2, 2)
    assert score(gold, predicted, "BIOES", "strict").micro == Counts(1, 1, 2)
    # an S- tag is no IOB2 chunk; untyped chunks count when well-formed
    assert entity_spans(["S-PER", "B-LOC"], "IOB2", "strict") == [(1, 2, "LOC")]
    assert entity_spans(["B", "I", "O", "I"], "IOB2", "strict") == [(0, 2, "")]
    assert entity_spans(["B", "I", "E", "S"], "BIOES", "strict") == [(0, 3, ""), (3, 4, "")]


# --- edge cases ------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_empty_input(mode):
    result = score([], [], "IOB2", mode)
    assert result.micro == Counts(0, 0, 0)
    assert result.per_type == {}
    assert (result.micro.precision, result.micro.recall, result.micro.f1, result.macro_f1) == (0.0, 0.0, 0.0, 0.0)
    assert result.token_accuracy == 0.0
    assert score([[]], [[]], "IOB1", mode).micro == Counts(0, 0, 0)
    assert "micro" in result.report()


@pytest.mark.parametrize("mode", MODES)
def test_all_o_sentences(mode):
    gold = [["O", "O", "O"], ["O"]]
    result = score(gold, gold, "IOB1", mode)
    assert result.micro == Counts(0, 0, 0) and result.per_type == {}
    assert result.token_accuracy == 100.0
    assert seqeval_f1(gold, gold) == result.micro.f1 == 0.0
    # predicting entities where there are none: precision 0, recall undefined (0), support 0
    result = score(gold, [["B-PER", "O", "O"], ["O"]], "IOB2", mode)
    assert result.per_type == {"PER": Counts(0, 1, 0)}
    assert result.per_type["PER"].as_dict() == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 0}
    assert result.token_accuracy == 75.0


def test_i_after_o_in_iob1_and_untyped_tags():
    gold = [["I-PER", "I-PER", "O", "I-LOC", "B-LOC"], ["B", "I", "O", "I"]]
    predicted = [["B-PER", "I-PER", "O", "I-LOC", "I-LOC"], ["B", "I", "O", "O"]]
    result = score(gold, predicted, "IOB1")
    assert result.per_type == {"": Counts(1, 1, 2), "LOC": Counts(0, 1, 2), "PER": Counts(1, 1, 1)}
    assert our_counts(result) == conlleval_counts(gold, predicted)[0]
    report = seqeval_report(gold, predicted)
    assert report["_"]["support"] == 2 and report["LOC"]["support"] == 2


def test_e_and_s_tags():
    gold = [["B-ORG", "I-ORG", "E-ORG", "O", "S-PER", "S-PER"]]
    predicted = [["B-ORG", "I-ORG", "I-ORG", "O", "B-PER", "E-PER"]]
    result = score(gold, predicted, "BIOES")
    assert result.per_type == {"ORG": Counts(1, 1, 1), "PER": Counts(0, 1, 2)}
    strict = score(gold, predicted, "BIOES", "strict")
    assert strict.per_type == {"ORG": Counts(0, 0, 1), "PER": Counts(0, 1, 2)}


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown scoring mode 'lenient'"):
        score([["O"]], [["O"]], "IOB2", "lenient")
    with pytest.raises(ValueError, match="2 gold tags but 1 predicted"):
        score([["O", "O"]], [["O"]], "IOB2")
    with pytest.raises(ValueError):
        score([["O"], ["O"]], [["O"]], "IOB2")
    with pytest.raises(ValueError, match="unknown tag scheme"):
        score([["O"]], [["O"]], "IOX")


def test_scheme_name_is_normalised():
    assert score([["B-PER"]], [["B-PER"]], "bio").scheme == "IOB2"
    assert score([["S-PER"]], [["S-PER"]], "iobes", "strict").micro == Counts(1, 1, 1)


# --- worked by hand -------------------------------------------------------------------------------

HAND_GOLD = [
    ["I-ORG", "O", "I-PER", "O", "O", "I-LOC", "O"],  # U.N. official Ekeus heads for Baghdad .
    ["I-PER", "I-PER", "O", "I-PER", "B-PER"],  # Peter Blackburn and Smith Jones
    ["O", "O", "O"],  # It was fine
]
HAND_PREDICTED = [
    ["I-ORG", "O", "I-PER", "O", "O", "I-ORG", "O"],
    ["I-PER", "O", "O", "I-PER", "I-PER"],
    ["O", "O", "I-MISC"],
]


def test_hand_computed_conlleval_output():
    """conlleval.pl on these three IOB1 sentences prints (worked out by hand):

        processed 15 tokens with 6 phrases; found: 6 phrases; correct: 2.
        accuracy:  73.33%; precision:  33.33%; recall:  33.33%; FB1:  33.33
                      LOC: precision:   0.00%; recall:   0.00%; FB1:   0.00  0
                     MISC: precision:   0.00%; recall:   0.00%; FB1:   0.00  1
                      ORG: precision:  50.00%; recall: 100.00%; FB1:  66.67  2
                      PER: precision:  33.33%; recall:  25.00%; FB1:  28.57  3

    Gold chunks: ORG U.N., PER Ekeus, LOC Baghdad, PER Peter Blackburn, PER Smith, PER Jones (6).
    Guessed: ORG U.N., PER Ekeus, ORG Baghdad, PER Peter, PER Smith Jones, MISC fine (6).
    Correct: U.N. and Ekeus. Tags right: 6 + 3 + 2 of 15. PER F1 = 2(1/3)(1/4)/(1/3 + 1/4) = 2/7.
    Macro F1 = (0 + 0 + 200/3 + 200/7) / 4 = 500/21.
    """
    result = score(HAND_GOLD, HAND_PREDICTED, "IOB1")
    assert result.micro == Counts(2, 6, 6)
    assert result.per_type == {
        "LOC": Counts(0, 0, 1),
        "MISC": Counts(0, 1, 0),
        "ORG": Counts(1, 2, 1),
        "PER": Counts(1, 3, 4),
    }
    assert result.token_accuracy == pytest.approx(100 * 11 / 15)
    assert result.micro.f1 == pytest.approx(100 / 3)
    assert result.per_type["ORG"].f1 == pytest.approx(200 / 3)
    assert result.per_type["PER"].f1 == pytest.approx(200 / 7)
    assert result.macro_f1 == pytest.approx(500 / 21)
    assert {t: c.gold for t, c in result.per_type.items()} == {"LOC": 1, "MISC": 0, "ORG": 1, "PER": 4}
    report = result.report()
    assert "scheme IOB1, mode conlleval; token accuracy 73.33%" in report
    assert "PER          33.33     25.00     28.57        4         3" in report
    assert "macro" in report and "23.81" in report
    # the transcription of conlleval.pl agrees, and so does seqeval
    assert our_counts(result) == conlleval_counts(HAND_GOLD, HAND_PREDICTED)[0]
    assert conlleval_counts(HAND_GOLD, HAND_PREDICTED)[1] == (11, 15)
    assert_same_as_seqeval(result, seqeval_report(HAND_GOLD, HAND_PREDICTED), seqeval_f1(HAND_GOLD, HAND_PREDICTED), "hand")


# --- label consistency ----------------------------------------------------------------------------


def test_consistency_disagreement_by_hand():
    # "Paris" three times: LOC, PER, LOC -> 3 pairs, 2 disagree; "Hilton" once; "is" is not capitalised
    doc1 = (
        ["Paris", "is", "nice", ".", "Paris", "Hilton", "is", "in", "Paris"],
        ["B-LOC", "O", "O", "O", "B-PER", "I-PER", "O", "O", "I-LOC"],
    )
    assert consistency_disagreement([doc1]) == pytest.approx(100 * 2 / 3)
    # O counts as a type: two untagged "Paris" agree; pairs never cross documents
    doc2 = (["Paris", "Paris"], ["O", "O"])
    assert consistency_disagreement([doc1, doc2]) == pytest.approx(100 * 2 / 4)
    doc3 = (["Paris", "Paris", "Paris", "Paris"], ["B-LOC", "O", "S-LOC", "I-ORG"])  # 6 pairs, 1 agrees
    assert consistency_disagreement([doc3]) == pytest.approx(100 * 5 / 6)
    # prefixes do not matter, only types
    assert consistency_disagreement([(["EU", "EU", "EU"], ["B-ORG", "I-ORG", "S-ORG"])]) == 0.0


def test_consistency_disagreement_without_pairs():
    assert consistency_disagreement([]) == 0.0
    assert consistency_disagreement([(["Paris", "London", "paris"], ["B-LOC", "B-LOC", "O"])]) == 0.0
    assert consistency_disagreement([(["Paris"], ["B-LOC"]), (["Paris"], ["B-PER"])]) == 0.0
