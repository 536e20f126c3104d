"""``hgner select --exclude`` (issue 59): sentences already labelled never take a place again, a
second round still gets N new sentences, near-copies of labelled sentences wait while others
remain, annotation exports are read as training reads them, and an unreadable file is one line
(exit 2) naming it."""

from __future__ import annotations

import numpy as np
import pytest
from tag_support import FIXTURE, tag_model  # noqa: F401  (fixture)

from hgner.adaptation import diversity
from hgner.adaptation.select import select
from hgner.adaptation.settings import SelectSettings
from hgner.cli import main
from hgner.core.errors import HgnerError
from hgner.data.corpus import load_corpus

STRATEGIES = ["random", "entropy", "margin", "disagreement", "diverse"]
EXPORT = FIXTURE.parent / "annotations" / "prodigy.jsonl"
LONG = "Shares in Fiat rose 3 percent on Monday after the company said sales in Italy and Spain grew in May ."


def tokens_of(path) -> set[tuple[str, ...]]:
    return {tuple(s.tokens) for s in load_corpus(str(path)).sentences}


def pool_size() -> int:
    return len({" ".join(s.tokens).lower() for s in load_corpus(str(FIXTURE)).sentences})


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_second_round_gets_n_new_sentences(tag_model, tmp_path, strategy):
    first, second = tmp_path / "round1.conll", tmp_path / "round2.conll"
    common = ["select", "--model", str(tag_model), "--n", "10", "--strategy", strategy]
    assert main([*common, "--out", str(first), str(FIXTURE)]) == 0
    assert main([*common, "--out", str(second), "--exclude", str(first), str(FIXTURE)]) == 0
    chosen, again = tokens_of(first), tokens_of(second)
    assert len(chosen) == 10 and len(again) == 10 and not chosen & again


def test_excluded_sentences_never_appear_even_when_the_pool_runs_short(tag_model, tmp_path, capsys):
    """Rounds of 12 over a pool of 29: the third gets the 5 left and says so; a fourth has none."""
    rounds = [tmp_path / f"round{k}.conll" for k in range(1, 5)]
    labelled: set[tuple[str, ...]] = set()
    for number, out in enumerate(rounds[:3]):
        exclude = [a for done in rounds[:number] for a in ("--exclude", str(done))]
        assert main(["select", "--model", str(tag_model), "--n", "12", "--out", str(out), *exclude, str(FIXTURE)]) == 0
        chosen = tokens_of(out)
        assert not chosen & labelled
        labelled |= chosen
    assert len(tokens_of(rounds[2])) == pool_size() - 24 == 5
    err = capsys.readouterr().err
    assert "the pool holds 5 sentences (1 duplicate and 24 already labelled left out), fewer than the 12 asked for: " \
           "every one is chosen" in err
    exclude = [a for done in rounds[:3] for a in ("--exclude", str(done))]
    assert main(["select", "--model", str(tag_model), "--n", "2", "--out", str(rounds[3]), *exclude, str(FIXTURE)]) == 2
    assert "every sentence of the inputs is already labelled (all 29 are in the --exclude files): none is left to " \
           "select" in capsys.readouterr().err
    assert not rounds[3].exists()


def test_sentences_match_whatever_their_case(tag_model, tmp_path):
    sentence = load_corpus(str(FIXTURE)).sentences[0]
    labelled = tmp_path / "mine.conll"
    labelled.write_text("".join(f"{t.upper()} O\n" for t in sentence.tokens) + "\n", encoding="utf-8")
    selection = select(SelectSettings(model=tag_model, n=100, exclude=(str(labelled),)), [str(FIXTURE)])
    assert selection.pool.excluded == 1 and tuple(sentence.tokens) not in {c.tokens for c in selection.candidates}


def test_an_annotation_export_is_excluded_from_raw_text(tag_model, tmp_path):
    """Prodigy's accepted records, tokenized by hgner's tokenizer as the raw text is: its two texts'
    three sentences are left out, the third line (rejected in the export) stays."""
    text = tmp_path / "posts.txt"
    text.write_text("Angela Merkel visited Acme Corp. in Paris on Monday. She met John Smith there.\n"
                    "The Kindle sold well in Tokyo.\nRejected text about Berlin.\n", encoding="utf-8")
    selection = select(SelectSettings(model=tag_model, n=5, exclude=(str(EXPORT),)), [str(text)])
    assert [c.tokens for c in selection.candidates] == [("Rejected", "text", "about", "Berlin", ".")]
    assert selection.pool.excluded == 3


def test_near_copies_of_labelled_sentences_wait_while_others_remain(tag_model, tmp_path):
    """A long sentence that margin takes first, once a near-copy of it is labelled, comes after the
    others; random (which keeps no watch on near-copies) may take it."""
    text = tmp_path / "posts.txt"
    text.write_text(f"{LONG}\nTokyo is big .\nAnna Berg met him .\n", encoding="utf-8")
    labelled = tmp_path / "labelled.conll"
    labelled.write_text("".join(f"{t} O\n" for t in LONG.replace("May", "June").split()) + "\n", encoding="utf-8")

    def order(**settings) -> list[str]:
        chosen = select(SelectSettings(model=tag_model, n=3, lines=True, **settings), [str(text)]).candidates
        return [" ".join(c.tokens) for c in chosen]

    assert order()[0] == LONG
    assert order(exclude=(str(labelled),))[2] == LONG


def test_pick_counts_the_taken_likeness():
    words = "Shares in Fiat rose 3 percent on Monday after the company said sales in Italy grew".split()
    rows = diversity.vectors([words[:-1] + ["fell"], ["Tom", "Hanks", "visited", "Paris", "."], words])
    likeness = diversity.likeness_to(rows[:2], rows[2:])
    assert likeness[0] >= diversity.NEAR_COPY > likeness[1]
    assert diversity.pick(np.array([2.0, 1.0]), rows[:2], 1, 0.0, True, taken=likeness) == [1]
    assert diversity.pick(np.array([2.0, 1.0]), rows[:2], 2, 0.0, True, taken=likeness) == [1, 0]
    assert list(diversity.likeness_to(rows[:2], rows[3:])) == [0.0, 0.0]  # none labelled


@pytest.mark.parametrize("make, message", [
    (lambda tmp: tmp / "missing.conll", "--exclude {path}: no such file; expected a CoNLL file or an annotation "
                                        "tool's export of sentences already labelled"),
    (lambda tmp: tmp, "--exclude {path}: is a directory"),
    (lambda tmp: (tmp / "bad.conll").write_text("Tokyo X-LOC\n", encoding="utf-8") and tmp / "bad.conll",
     "--exclude: {path}:1: malformed tag 'X-LOC'"),
    (lambda tmp: (tmp / "bytes.conll").write_bytes(b"Tokyo\xff B-LOC\n") and tmp / "bytes.conll", "--exclude: {path}:1"),
])
def test_an_unreadable_exclude_file_is_one_line_naming_it(tag_model, tmp_path, capsys, make, message):
    path = make(tmp_path)
    out = tmp_path / "out.conll"
    assert main(["select", "--model", str(tag_model), "--n", "3", "--out", str(out), "--exclude", str(path),
                 str(FIXTURE)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hgner select: error: ") and message.format(path=path) in err and err.count("\n") == 1
    assert not out.exists()


def test_the_output_may_not_be_an_excluded_file(tag_model, tmp_path, capsys):
    first = tmp_path / "round1.conll"
    first.write_text("Tokyo B-LOC\n\n", encoding="utf-8")
    assert main(["select", "--model", str(tag_model), "--n", "3", "--out", str(first), "--exclude", str(first),
                 str(FIXTURE)]) == 2
    assert "--out " + str(first) + ": is also an input" in capsys.readouterr().err
    assert first.read_text(encoding="utf-8") == "Tokyo B-LOC\n\n"


def test_the_exclude_setting_is_checked():
    with pytest.raises(HgnerError, match="exclude: expected a tuple of file names, got 'a.conll'"):
        SelectSettings(exclude="a.conll")
    with pytest.raises(HgnerError, match="exclude: expected a file name, got 3"):
        SelectSettings(exclude=("a.conll", 3))
