"""``hgner select`` (issue 59): every strategy on the tiny tagging model, the random baseline
reproducible by its seed, gold tags kept from a labelled pool, the model's entities on raw text,
no sentence twice, near-copies skipped, and one-line errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
from tag_support import FIXTURE, tag_model  # noqa: F401  (fixture)

from hgner.adaptation import diversity, signals
from hgner.adaptation.select import select, write_selection
from hgner.adaptation.settings import SelectSettings
from hgner.adaptation.strategies import available_strategies
from hgner.cli import main
from hgner.core.errors import HgnerError
from hgner.data.corpus import load_corpus

STRATEGIES = ["random", "entropy", "margin", "disagreement", "diverse"]


def gold_by_tokens() -> dict[tuple[str, ...], tuple[str, ...]]:
    return {tuple(s.tokens): tuple(s.tags) for s in load_corpus(str(FIXTURE)).sentences}


def test_every_strategy_is_registered():
    assert set(STRATEGIES) <= set(available_strategies())


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_strategy_keeps_gold_tags_without_duplicates(tag_model, strategy):
    selection = select(SelectSettings(model=tag_model, n=8, strategy=strategy), [str(FIXTURE)])
    gold = gold_by_tokens()
    chosen = [c.tokens for c in selection.candidates]
    assert len(chosen) == 8 and len(set(chosen)) == 8
    assert all(tuple(tags) == gold[c.tokens] for c, tags in zip(selection.candidates, selection.tags))


def test_random_is_reproducible_by_its_seed(tag_model):
    def chosen(seed: int) -> list[tuple[str, ...]]:
        settings = SelectSettings(model=tag_model, n=10, strategy="random", seed=seed)
        return [c.tokens for c in select(settings, [str(FIXTURE)]).candidates]

    assert chosen(3) == chosen(3)
    assert chosen(3) != chosen(4)


def test_uncertainty_strategies_rank_by_their_signal(tag_model):
    """entropy takes the sentence of largest total entropy first (no near-copy can stand in its way)."""
    from hgner.adaptation.select import load_pool
    from hgner.crf.model import CrfModel

    model = CrfModel.load(tag_model)
    settings = SelectSettings(model=tag_model, n=1, strategy="entropy")
    pool = load_pool(settings, [str(FIXTURE)], model)
    found = signals.compute(model, pool, seed=0)
    first = select(settings, [str(FIXTURE)], model=model).candidates[0]
    assert first == pool.candidates[int(np.argmax(found.entropy))]


def test_raw_text_is_pre_annotated_with_the_models_entities(tag_model, tmp_path):
    text = tmp_path / "posts.txt"
    text.write_text("Angela Merkel works for United Nations in Tokyo .\nThe weather was cold .\n"
                    "The weather was cold .\n", encoding="utf-8")
    out = tmp_path / "chosen.conll"
    assert main(["select", "--model", str(tag_model), "--n", "5", "--lines", "--out", str(out), str(text)]) == 0
    lines = out.read_text(encoding="utf-8").split("\n\n")
    sentences = [block for block in lines if block.strip() and not block.startswith("-DOCSTART-")]
    assert len(sentences) == 2  # the repeated line once
    merkel = next(s for s in sentences if s.startswith("Angela"))
    assert merkel.splitlines()[:2] == ["Angela\tB-PER", "Merkel\tI-PER"]


def test_jsonl_records_are_documents(tag_model, tmp_path):
    records = tmp_path / "posts.jsonl"
    records.write_text("\n".join(json.dumps({"text": t}) for t in ["Tokyo is big .", "Anna Berg met him ."]) + "\n",
                       encoding="utf-8")
    selection = select(SelectSettings(model=tag_model, n=5), [str(records)])
    assert selection.pool.documents == 2 and len(selection.candidates) == 2
    assert not selection.pool.labelled


def test_written_selection_reads_back_as_its_tags(tag_model, tmp_path):
    selection = select(SelectSettings(model=tag_model, n=6), [str(FIXTURE)])
    out = tmp_path / "out.conll"
    write_selection(selection, out)
    back = load_corpus(str(out))
    assert [s.tags for s in back.sentences] == selection.tags
    assert len(back.documents) == 6


def test_near_copies_are_skipped():
    words = "Shares in Fiat rose 3 percent on Monday after the company said sales in Italy grew".split()
    sentences = [words, words[:-1] + ["fell"], ["Tom", "Hanks", "visited", "Paris", "."]]
    rows = diversity.vectors(sentences)
    assert diversity.pick(np.array([3.0, 2.0, 1.0]), rows, 2, 0.0, True) == [0, 2]
    assert diversity.pick(np.array([3.0, 2.0, 1.0]), rows, 2, 0.0, False) == [0, 1]
    assert diversity.pick(np.array([3.0, 2.0, 1.0]), rows, 3, 0.0, True) == [0, 2, 1]  # none else is left


def test_signal_arithmetic():
    marginals = np.array([[1.0, 0.0], [0.5, 0.5], [0.9, 0.1]])
    assert np.allclose(signals.token_entropy(marginals), [0.0, np.log(2), -(0.9 * np.log(0.9) + 0.1 * np.log(0.1))])
    assert np.allclose(signals.token_margin(marginals), [1.0, 0.0, 0.8])
    assert np.allclose(signals.vote_entropy(np.array([[0, 1, 1], [0, 0, 1]]), 2), [0.0, np.log(2), 0.0])
    # the entity B-PER I-PER counts once, at its least sure token; the O token by itself
    assert signals.unit_margins(["B-PER", "I-PER", "O"], np.array([0.9, 0.4, 0.7])) == pytest.approx(0.6 + 0.3)


@pytest.mark.parametrize("argv, message", [
    (["--strategy", "nope"], "unknown selection strategy 'nope'"),
    (["--out", "FIXTURE"], "is also an input"),
])
def test_command_errors(tag_model, tmp_path, capsys, argv, message):
    argv = [str(FIXTURE) if a == "FIXTURE" else a for a in argv]
    out = ["--out", str(tmp_path / "x.conll")] if "--out" not in argv else []
    assert main(["select", "--model", str(tag_model), "--n", "3", *out, *argv, str(FIXTURE)]) == 2
    assert message in capsys.readouterr().err


def test_mixed_inputs_are_refused(tag_model, tmp_path):
    text = tmp_path / "a.txt"
    text.write_text("Tokyo is big .", encoding="utf-8")
    with pytest.raises(HgnerError, match="labelled corpus among raw-text inputs"):
        select(SelectSettings(model=tag_model, n=2), [str(FIXTURE), str(text)])


def test_settings_are_checked():
    with pytest.raises(HgnerError, match="n: expected a whole number"):
        SelectSettings(n=0)


def test_gibbs_decoders_run_only_for_the_strategies_that_read_them(tag_model, monkeypatch):
    """margin and entropy read Viterbi's marginals alone: herded and annealed Gibbs never decode."""
    from hgner.adaptation import strategies

    decoded: list[str] = []
    real = signals.make_decoder
    monkeypatch.setattr(signals, "make_decoder", lambda name, *a, **k: decoded.append(name) or real(name, *a, **k))
    select(SelectSettings(model=tag_model, n=3, strategy="margin"), [str(FIXTURE)])
    assert decoded == ["viterbi"] and not strategies.strategy("entropy").uses_rivals
    select(SelectSettings(model=tag_model, n=3, strategy="disagreement"), [str(FIXTURE)])
    assert decoded[1:] == ["viterbi", *signals.RIVALS]


def test_skip_edges_of_documents_side_by_side_stay_inside_each():
    """Two documents' skip graphs in one graph: each document's edges, its tokens numbered after
    the earlier document's, none across them."""
    from hgner.crf import skip
    from hgner.graph.factor_graph import FactorGraph

    first = [["Tokyo", "is", "big", "."], ["Tokyo", "."]]
    second = [["Tokyo", "again", "."]]
    chain = FactorGraph.chain(np.zeros((9, 2)), np.zeros((2, 2)), [4, 2, 3])
    potential = skip.SkipModel(skip.SkipConfig(), ("O", "LOC"), np.ones((2, 2)), np.eye(2), 1.0)
    graph = signals.with_skip_edges(chain, [first, second], potential)
    extra = graph.edges[graph.n_chain_edges:].tolist()
    assert extra == skip.skip_edges(first, potential.config).tolist() and extra == [[0, 4]]
