"""hgner.text.sentence_starts: the sentence starts a model learns from its corpus, decoded by Viterbi
(checked against enumeration), applied only to the runs the rules leave without an end, and
written by training into the model folder."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hgner.crf.model import CrfModel
from hgner.crf.modelfiles import STARTS_FILE
from hgner.tagging.settings import TagSettings
from hgner.tagging.tagger import Tagger
from hgner.text.sentence_starts import (
    ENDED_PENALTY,
    INSIDE,
    START,
    WINDOW,
    SentenceStarts,
    boundary_attributes,
    token_shape,
    training_sequences,
)
from hgner.text.sentences import TokenizedSentence
from hgner.text.tokenizer import TextTokenizer


@pytest.mark.parametrize("word, shape", [
    ("2", "d"), ("6-2", "d"), ("1996-08-30", "d"), ("12.71", "d"), ("SOCCER", "X"), ("U.S.", "X"), ("A", "X1"),
    ("Plymouth", "Xx"), ("McNeil", "Xx"), ("iPhone", "x"), ("results", "x"), (":", ":"), ("--", "--"), ("...", ".."),
])
def test_token_shapes(word, shape):
    assert token_shape(word) == shape


def test_attributes_name_each_position_and_its_neighbours():
    rows = boundary_attributes(["Plymouth", "2", "Preston"])
    assert len(rows) == 3
    assert {"w=preston", "p=2", "n=#", "s=Xx", "sp=d", "spp=Xx", "sp|s=d|Xx", "sp|s|sn=d|Xx|#"} <= set(rows[2])
    assert "spp|sp|s=#|#|Xx" in rows[0]


def test_training_windows_label_each_sentence_start_and_leave_out_caseless_copies():
    cased = [["Results", "on", "Friday", ":"], ["Plymouth", "2", "Preston", "1"]] * WINDOW  # 2 x WINDOW sentences
    lower = [[t.lower() for t in s] for s in cased]
    upper = [[t.upper() for t in s] for s in cased]
    xs, ys = training_sequences([cased, lower, upper, cased[:3]])
    assert [len(x) for x in xs] == [4 * WINDOW, 4 * WINDOW, 12]
    assert ys[2] == [START, INSIDE, INSIDE, INSIDE] * 3
    assert all(len(x) == len(y) for x, y in zip(xs, ys))


def _labelling_scores(attributes: list[str], weights: np.ndarray, transitions: np.ndarray, tokens: list[str],
                      penalty: float) -> dict[tuple[int, ...], float]:
    """The score of every labelling (label 1 = B, ``penalty`` off each), by enumeration."""
    index = {a: i for i, a in enumerate(attributes)}
    unary = [sum((weights[index[a]] for a in row if a in index), np.array([0.0, -penalty]))
             for row in boundary_attributes(tokens)]
    return {labels: sum(unary[i][k] for i, k in enumerate(labels)) + sum(transitions[a, b] for a, b in zip(labels, labels[1:]))
            for labels in itertools.product(range(2), repeat=len(tokens))}


WORDS = ["Plymouth", "2", "Preston", "1", "Division", "two", ":", "SOCCER", "results"]
ATTRIBUTES = sorted({a for word in WORDS for a in boundary_attributes([word, word])[1]} | {"b", "sp|s=d|Xx"})


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=7), st.integers(0, 2**32 - 1), st.sampled_from([0.0, 1.0, 3.0]))
def test_viterbi_starts_are_those_of_the_best_labelling(tokens, seed, penalty):
    rng = np.random.default_rng(seed)
    weights, transitions = rng.normal(size=(len(ATTRIBUTES), 2)), rng.normal(size=(2, 2))
    starts = SentenceStarts([INSIDE, START], ATTRIBUTES, weights, transitions)
    scores = _labelling_scores(ATTRIBUTES, weights, transitions, tokens, penalty)
    found = starts.starts(tokens, penalty)
    labelled = max(scores[(first, *(int(i in found) for i in range(1, len(tokens))))] for first in (0, 1))
    assert labelled == pytest.approx(max(scores.values()), abs=1e-9)  # the best labelling (or one tied with it)
    flipped = SentenceStarts([START, INSIDE], ATTRIBUTES, weights[:, ::-1], transitions[::-1, ::-1])  # crfsuite's order varies
    assert flipped.starts(tokens, penalty) == starts.starts(tokens, penalty)


def table_starts(ended_penalty: float = ENDED_PENALTY) -> SentenceStarts:
    """Hand-made weights: a capitalised word after a number starts a sentence."""
    weights = np.array([[1.0, 0.0], [0.0, 5.0]])  # "b": inside; "sp|s=d|Xx": start
    return SentenceStarts([INSIDE, START], ["b", "sp|s=d|Xx"], weights, np.zeros((2, 2)), ended_penalty)


def test_a_results_table_run_into_a_paragraph_is_cut_into_its_rows():
    text = "Results of English league matches on Friday. Plymouth 2 Preston 1 Swansea 1 Lincoln 2 Bury 0 Hull 0"
    found = TextTokenizer("en", starts=table_starts())(text)
    assert [" ".join(s.tokens) for s in found] == [
        "Results of English league matches on Friday .", "Plymouth 2", "Preston 1", "Swansea 1", "Lincoln 2", "Bury 0",
        "Hull 0"]
    assert all(text[start:end] == token for s in found for token, (start, end) in zip(s.tokens, s.offsets))
    rules_alone = TextTokenizer("en")(text)
    assert [" ".join(s.tokens) for s in rules_alone][1] == "Plymouth 2 Preston 1 Swansea 1 Lincoln 2 Bury 0 Hull 0"


@pytest.mark.parametrize("text, penalty", [
    ("Plymouth 2 Preston 1", None),  # a short line of its own: one sentence per line
    ("Scores:\nPlymouth 2 Preston 1\n", None),
    ("Plymouth 2 Preston 1 Swansea 1 Lincoln 2 Bury 0 Hull 0 Leeds 3 Derby 1 Wigan 2", 0.0),  # a line of 60 or more
    ("Scores . Plymouth 2 Preston 1", 0.0),  # not alone on its line, no end mark
    ("Plymouth 2 Preston 1 .", None),  # alone on its line, with an end mark
    ("Scores . Plymouth 2 Preston 1 .", ENDED_PENALTY),  # not alone, with an end mark: only where they are sure
    ("Scores . Plymouth", None),  # a single token
])
def test_where_the_learned_starts_look_and_how_sure_they_must_be(text, penalty):
    last = TextTokenizer("en")(text)[-1]
    assert table_starts().penalty(text, last) == penalty, last.tokens


def test_a_model_may_record_its_own_penalty_inside_ended_sentences():
    text = "Scores 2 . Plymouth 2 Preston 1 Swansea 1 ."  # (each start scores 4 over inside)
    last = TextTokenizer("en")(text)[-1]
    assert table_starts(0.0).penalty(text, last) == 0.0 and table_starts(5.0).penalty(text, last) == 5.0
    assert [" ".join(s.tokens) for s in TextTokenizer("en", starts=table_starts(0.0))(text)][1:] == [
        "Plymouth 2", "Preston 1", "Swansea 1 ."]
    assert [" ".join(s.tokens) for s in TextTokenizer("en", starts=table_starts(5.0))(text)][1:] == [
        "Plymouth 2 Preston 1 Swansea 1 ."]


def test_a_penalty_keeps_the_starts_that_beat_it():
    starts = table_starts()  # a start after a number scores 5 - 1 = 4 over inside
    tokens = ["Plymouth", "2", "Preston", "1", "Swansea"]
    assert starts.starts(tokens) == starts.starts(tokens, 3.9) == [2, 4]
    assert starts.starts(tokens, 4.1) == []


def test_sentences_the_learned_starts_do_not_apply_to_are_left_as_they_are():
    text = "Plymouth 2 Preston 1\nSwansea 1 Lincoln 2\n"
    assert TextTokenizer("en", starts=table_starts())(text) == TextTokenizer("en")(text)
    sentence = TokenizedSentence(["Plymouth", "2", "Preston", "1", "."], [(0, 8), (9, 10), (11, 18), (19, 20), (20, 21)])
    assert table_starts().split("Plymouth 2 Preston 1.", [sentence]) == [sentence]


def test_training_writes_the_starts_and_tagging_uses_them(tiny_model):
    assert STARTS_FILE in tiny_model.metadata["files"]
    record = tiny_model.metadata["sentence_starts"]
    assert record["sequences"] >= 1 and record["tokens"] > 0 and record["iterations"] >= 1
    assert record["ended_penalty"] == ENDED_PENALTY  # (TrainOptions' default)
    starts = CrfModel.load(tiny_model.directory).sentence_starts
    assert isinstance(starts, SentenceStarts) and starts.start in (0, 1) and starts.ended_penalty == ENDED_PENALTY
    recorded = {**tiny_model.metadata, "sentence_starts": {**record, "ended_penalty": 0.5}}
    assert CrfModel(tiny_model.directory, recorded).sentence_starts.ended_penalty == 0.5
    older = {**tiny_model.metadata, "sentence_starts": {k: v for k, v in record.items() if k != "ended_penalty"}}
    assert CrfModel(tiny_model.directory, older).sentence_starts.ended_penalty == ENDED_PENALTY  # (before it was recorded)
    tagger = Tagger(TagSettings(model=str(tiny_model.directory)))
    assert isinstance(tagger.tokenizer.starts, SentenceStarts)


def test_a_model_without_learned_starts_splits_by_the_rules_alone(tiny_model):
    metadata = {**tiny_model.metadata, "files": {k: v for k, v in tiny_model.metadata["files"].items() if k != STARTS_FILE}}
    assert CrfModel(tiny_model.directory, metadata).sentence_starts is None


def test_a_starts_file_with_other_labels_is_a_model_error(tiny_model, tmp_path):
    import shutil

    from hgner.core.errors import ModelError

    model = CrfModel.load(tiny_model.directory)
    shutil.copy(model.directory / "model.crfsuite", tmp_path / STARTS_FILE)  # the CRF's labels, not B and I
    model.directory = tmp_path
    with pytest.raises(ModelError, match="expected the labels B, I"):
        _ = model.sentence_starts


def test_the_shipped_models_cut_a_results_table_into_rows_and_a_byline_from_the_next_sentence():
    english = TextTokenizer("en", starts=CrfModel.load("en-conll03").sentence_starts)
    table = ("SOCCER - ENGLISH LEAGUE RESULTS. LONDON 1996-08-30 Results of English league matches on Friday: "
             "Division two Plymouth 2 Preston 1 Division three Swansea 1 Lincoln 2")
    assert [" ".join(s.tokens) for s in english(table)][2:] == [
        "Results of English league matches on Friday :", "Division two", "Plymouth 2 Preston 1", "Division three",
        "Swansea 1 Lincoln 2"]
    prose = "Maria Lopez joined Siemens last year. She works in Munich, where Siemens has its head office."
    assert english(prose) == TextTokenizer("en")(prose)
    dutch = TextTokenizer("nl", starts=CrfModel.load("nl-conll02").sentence_starts)
    byline = "De regering valt. auteur Jan Peeters editie sectie Binnenland De premier bood zijn ontslag aan."
    assert [" ".join(s.tokens) for s in dutch(byline)][1:3] == ["auteur", "Jan Peeters"]
