"""``hgner.select`` (issue 59): the command's selection from Python, its settings checked at the
boundary (expected, got), the chosen sentences with their rank, tags and score, and ``write``
giving the file ``hgner select --out`` writes. (The guide's example runs in tests/test_readme.py.)"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tag_support import FIXTURE, tag_model  # noqa: F401  (fixture)
from test_api import test_readme_gives_each_functions_parameters as guide_gives_parameters

import hgner
from hgner.adaptation import signals
from hgner.adaptation.select import Selected, load_pool
from hgner.adaptation.settings import SelectSettings
from hgner.cli import main
from hgner.core.errors import HgnerError, UnknownNameError
from hgner.crf.model import CrfModel
from hgner.data.corpus import load_corpus


def test_select_is_public():
    assert {"select", "Selection"} <= set(hgner.__all__)
    assert hgner.select.__module__ == "hgner.api" and hgner.Selection.__name__ == "Selection"


def test_sentences_carry_rank_tokens_gold_tags_score_and_source(tag_model):
    selection = hgner.select(FIXTURE, 5, tag_model, strategy="entropy")
    gold = {tuple(s.tokens): (tuple(s.tags), s.line) for s in load_corpus(str(FIXTURE)).sentences}
    sentences = selection.sentences
    assert [s.rank for s in sentences] == [1, 2, 3, 4, 5] and selection.labelled
    assert all(isinstance(s, Selected) and s.tags == gold[s.tokens][0] for s in sentences)
    assert all(s.source.startswith(str(FIXTURE) + ":") for s in sentences)
    model = CrfModel.load(tag_model)
    pool = load_pool(SelectSettings(model=tag_model), [str(FIXTURE)], model)
    entropy = signals.compute(model, pool, seed=0, rivals=False).entropy
    by_tokens = {c.tokens: float(e) for c, e in zip(pool.candidates, entropy)}
    assert [s.score for s in sentences] == pytest.approx([by_tokens[s.tokens] for s in sentences])
    assert sentences[0].score == pytest.approx(float(np.max(entropy)))


def test_raw_text_gets_the_models_tags_to_correct(tag_model, tmp_path):
    text = tmp_path / "posts.txt"
    text.write_text("Angela Merkel works for United Nations in Tokyo .\nThe weather was cold .\n", encoding="utf-8")
    selection = hgner.select([text], 2, tag_model, lines=True)
    assert not selection.labelled
    merkel = next(s for s in selection.sentences if s.tokens[0] == "Angela")
    assert merkel.tags[:2] == ("B-PER", "I-PER") and merkel.source == f"{text}:1"


def test_write_gives_the_file_the_command_writes(tag_model, tmp_path):
    first = tmp_path / "round1.conll"
    assert main(["select", "--model", str(tag_model), "--n", "6", "--out", str(first), str(FIXTURE)]) == 0
    again = tmp_path / "again.conll"
    hgner.select(str(FIXTURE), 6, tag_model).write(again)
    assert again.read_bytes() == first.read_bytes()
    second = tmp_path / "round2.conll"
    assert main(["select", "--model", str(tag_model), "--n", "6", "--strategy", "diverse", "--seed", "2",
                 "--out", str(second), "--exclude", str(first), str(FIXTURE)]) == 0
    ours = hgner.select(FIXTURE, 6, tag_model, strategy="diverse", seed=2, exclude=first)  # one file, not a list
    ours.write(again)
    assert again.read_bytes() == second.read_bytes()
    assert ours.pool.excluded == 6 and not {s.tokens for s in ours.sentences} & _tokens(first)


def _tokens(path: Path) -> set[tuple[str, ...]]:
    return {tuple(s.tokens) for s in load_corpus(str(path)).sentences}


def test_write_never_overwrites_an_input_or_an_excluded_file(tag_model, tmp_path):
    labelled = tmp_path / "labelled.conll"
    labelled.write_text("Tokyo B-LOC\n\n", encoding="utf-8")
    selection = hgner.select(FIXTURE, 2, tag_model, exclude=[labelled])
    for target in (labelled, FIXTURE):
        with pytest.raises(HgnerError, match="is also an input"):
            selection.write(target)
    with pytest.raises(HgnerError, match="out -: give a file name"):
        selection.write("-")
    assert labelled.read_text(encoding="utf-8") == "Tokyo B-LOC\n\n"


@pytest.mark.parametrize(("misuse", "error", "message"), [
    ({"n": 0}, HgnerError, "n: expected a whole number 1..1000000, got 0"),
    ({"strategi": "margin"}, UnknownNameError,
     "unknown select setting 'strategi'; expected one of: exclude, lines, offline, seed, strategy, sweeps"),
    ({"strategy": "best"}, UnknownNameError, "unknown selection strategy 'best'"),
    ({"seed": -1}, HgnerError, "seed: expected a whole number >= 0, got -1"),
    ({"inputs": 3}, HgnerError, "inputs: expected a file, folder or corpus name, or a list of them, got 3"),
    ({"inputs": []}, HgnerError, "inputs: expected a file, folder or corpus name, or a list of them, got an empty list"),
    ({"inputs": [FIXTURE, 3]}, HgnerError, "inputs: expected a file, folder or corpus name, got 3"),
    ({"exclude": [3]}, HgnerError, "exclude: expected a file name, got 3"),
    ({"exclude": "missing.conll"}, HgnerError, "exclude missing.conll: no such file"),
    ({"lines": "yes"}, HgnerError, "lines: expected True or False, got 'yes'"),
])
def test_misuse_is_an_hgner_error_saying_what_was_expected(tag_model, misuse, error, message):
    arguments = {"inputs": FIXTURE, "n": 3, "model": tag_model, **misuse}
    with pytest.raises(error) as raised:
        hgner.select(**arguments)
    assert message in str(raised.value)


def test_a_pool_smaller_than_n_is_a_warning_and_every_sentence_is_chosen(tag_model, tmp_path):
    text = tmp_path / "two.txt"
    text.write_text("Tokyo is big .\nAnna Berg met him .\n", encoding="utf-8")
    with pytest.warns(UserWarning, match=r"the pool holds 2 sentences \(0 duplicates left out\), fewer than the 5 "
                                         r"asked for: every one is chosen"):
        selection = hgner.select(text, 5, tag_model, lines=True)
    assert len(selection.sentences) == 2


def test_the_guide_lists_selects_parameters():
    guide_gives_parameters("select", "hgner.adaptation.settings:SelectSettings")


def test_first_keeps_the_first_sentences_with_their_tags_and_scores(tag_model):
    selection = hgner.select(FIXTURE, 5, tag_model, strategy="entropy")
    first = selection.first(2)
    assert first.sentences == selection.sentences[:2]
    assert len(first.tags) == len(first.scores) == 2 and first.pool is selection.pool
