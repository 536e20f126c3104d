"""Skip edges, the learned skip potential, its storage, and skip graphs in the pipeline and evaluate."""

import shutil
from dataclasses import replace

import numpy as np
import pytest

from hgner.core import schemes
from hgner.core.errors import GraphError, ModelError
from hgner.crf import skip
from hgner.crf.model import CrfModel
from hgner.crf.pipeline import Pipeline
from hgner.data.corpus import Corpus, Document, Sentence
from hgner.decoders import make_decoder
from hgner.evaluation import EvaluateOptions, evaluate
from hgner.training import skip as skip_training


def edges(sentences, **settings):
    return skip.skip_edges([s.split() for s in sentences], skip.SkipConfig(**settings)).tolist()


def test_names_are_joined_across_sentences_to_the_previous_occurrence():
    # positions: The0 Smith1 said2 | Smith3 met4 the5 Smith6 in7 Paris8 | In9 Paris10 I11 saw12 A13 A14
    document = ["The Smith said", "Smith met the Smith in Paris", "In Paris I saw A A"]
    assert edges(document) == [[1, 3], [3, 6], [8, 10]]


def test_rule_excludes_function_words_short_and_lowercase_tokens():
    assert edges(["The cat", "The dog", "IN THE NEWS", "IN THE NEWS"]) == [[6, 9]]  # only NEWS
    assert edges(["I saw A", "I saw A"]) == []
    assert edges(["smith Smith", "smith"]) == []
    assert edges(["The Smith", "The Smith"], function_words=()) == [[0, 2], [1, 3]]
    assert edges(["X X"], min_length=1) == [[0, 1]]


def test_within_sentence_only():
    assert edges(["Smith met Smith", "Smith"], cross_sentence=False) == [[0, 2]]


def test_degree_cap():
    twenty = ["Smith ."] * 20
    path = edges(twenty)
    assert len(path) == 19 and path[:2] == [[0, 2], [2, 4]]
    capped = edges(twenty, previous=2)
    assert len(capped) == 19 + 18
    assert capped[:3] == [[0, 2], [2, 4], [0, 4]]  # most recent first
    assert max(np.bincount(np.array(capped).ravel())) <= 4


def test_config_round_trip_and_checks():
    config = skip.SkipConfig(previous=3, function_words=("the",))
    assert skip.SkipConfig.from_json(config.to_json()) == config
    with pytest.raises(ModelError, match="unknown skip settings"):
        skip.SkipConfig.from_json({"window": 2})
    with pytest.raises(ModelError, match="previous >= 1"):
        skip.SkipConfig(previous=0)


def hand_corpus() -> Corpus:
    """Skip pairs: Smith (B-PER, B-PER); Paris (B-LOC, B-PER); Smith (B-PER, B-PER) in doc 2."""
    doc1 = Document("d1", [Sentence(["Smith", "visited", "Paris", "."], ["B-PER", "O", "B-LOC", "O"]),
                           Sentence(["Smith", "met", "Paris", "Hilton"], ["B-PER", "O", "B-PER", "I-PER"])])
    doc2 = Document("d2", [Sentence(["Smith", "and", "Smith"], ["B-PER", "O", "B-PER"])])
    return Corpus("hand", "IOB2", [doc1, doc2])


def test_estimate_counts_label_pairs(tiny_model):
    table = skip_training.estimate(hand_corpus(), tiny_model)
    index = {label: k for k, label in enumerate(tiny_model.labels)}
    per, loc = (index[schemes.render([(0, 1, t)], 1, tiny_model.scheme)[0]] for t in ("PER", "LOC"))
    expected = np.zeros((len(index), len(index)))
    expected[per, per] = 2
    expected[loc, per] = 1
    np.testing.assert_array_equal(table.counts, expected)
    assert table.info["edges"] == 3 and table.weight == 1.0
    np.testing.assert_allclose(table.log_ratio, skip_training.log_ratio(expected))


def test_log_ratio_formula():
    counts = np.array([[3.0, 0.0], [1.0, 2.0]])
    joint = (counts + 0.5) / 8.0
    expected = np.log(joint / np.outer(joint.sum(1), joint.sum(0)))
    np.testing.assert_allclose(skip_training.log_ratio(counts), expected)
    assert skip_training.log_ratio(np.eye(2) * 50)[0, 0] > 0 > skip_training.log_ratio(np.eye(2) * 50)[0, 1]


@pytest.fixture
def skip_model(tmp_path, tiny_model, tiny_corpus) -> CrfModel:
    """A copy of the tiny model with a skip potential estimated from its training corpus."""
    directory = tmp_path / "tiny-skip"
    shutil.copytree(tiny_model.directory, directory)
    model = CrfModel.load(directory)
    estimated = skip_training.estimate(tiny_corpus, model)
    skip.save(skip.SkipModel(estimated.config, estimated.labels, estimated.counts, estimated.log_ratio, 0.5,
                             estimated.info), directory)
    return CrfModel.load(directory)  # meta.json now records the skip files


def test_save_load_round_trip(skip_model, tiny_corpus):
    loaded = skip.load(skip_model)
    estimated = skip_training.estimate(tiny_corpus, skip_model)
    assert loaded.labels == skip_model.labels and loaded.config == estimated.config and loaded.weight == 0.5
    np.testing.assert_array_equal(loaded.counts, estimated.counts)
    np.testing.assert_array_equal(loaded.log_ratio, estimated.log_ratio)
    np.testing.assert_allclose(loaded.potential, 0.5 * estimated.log_ratio)
    with np.load(skip_model.directory / skip.SKIP_ARRAYS, allow_pickle=False) as stored:
        assert set(stored.files) == {"counts", "log_ratio", "labels"}


def test_load_errors(tiny_model, skip_model):
    with pytest.raises(ModelError, match="no skip potential"):
        skip.load(tiny_model)
    arrays = skip_model.directory / skip.SKIP_ARRAYS
    with np.load(arrays, allow_pickle=False) as stored:
        counts, table = stored["counts"], stored["log_ratio"]
    np.savez(arrays, counts=counts, log_ratio=table, labels=np.array(list(reversed(skip_model.labels))))
    with pytest.raises(ModelError, match="expected the model's labels"):
        skip.load(skip_model)


def test_pipeline_skip_graph(skip_model):
    sentences = [["John", "Smith", "visited", "Paris", "."], ["Smith", "left", "Paris", "."]]
    prepared = Pipeline(skip_model, make_decoder("exact"), "skip").prepare(sentences)
    assert prepared.chain.is_chain and prepared.chain.n_chain_edges == 7
    assert prepared.graph.n_chain_edges == 7
    assert prepared.graph.edges[7:].tolist() == [[1, 5], [3, 7]]
    np.testing.assert_allclose(prepared.graph.potentials[-1], skip.load(skip_model).potential)
    with pytest.raises(GraphError, match="expected one of chain, skip"):
        Pipeline(skip_model, make_decoder("exact"), "tree")


def test_weight_zero_leaves_the_skip_edges_out(skip_model):
    table = replace(skip.load(skip_model), weight=0.0)
    chain = Pipeline(skip_model, make_decoder("viterbi")).prepare([["Smith", "left", "."], ["Smith", "."]]).chain
    assert table.graph(chain, [["Smith", "left", "."], ["Smith", "."]]) is chain


def test_evaluate_skip_report(skip_model, tiny_corpus):
    report = evaluate(skip_model, tiny_corpus, EvaluateOptions(decoders=("viterbi", "exact", "gibbs", "herded"),
                                                               graph="skip", sweeps=(50,))).to_json()
    rows = {r["decoder"]: r for r in report["results"]}
    assert rows["viterbi"]["graph"] == "chain" and rows["exact"]["graph"] == "skip"
    assert rows["exact"]["certified_fraction"] == 1.0
    assert rows["exact"]["optimum_fraction"] == 1.0 and rows["exact"]["mean_optimum_gap"] == 0.0
    for row in rows.values():
        assert 0.0 <= row["optimum_fraction"] <= 1.0 and row["mean_optimum_gap"] >= -1e-9
        assert "mean_score_gap" in row and "consistency_disagreement" in row
    assert rows["exact"]["stats_max"]["gap"] == 0.0


def test_evaluate_reports_the_skip_potential_it_decoded(skip_model, tiny_corpus):
    """A skip graph's report says what non-local evidence the model gives it, in its JSON and its
    heading; a chain's report says nothing of it."""
    import io

    from hgner.evaluation import Report
    from hgner.evaluation.report import format_report

    report = evaluate(skip_model, tiny_corpus, EvaluateOptions(decoders=("exact",), graph="skip"))
    described = skip.load(skip_model).describe()
    assert report.skip == described == {"weight": 0.5, "previous": 1, "min_length": 2, "cross_sentence": True,
                                        "function_words": len(skip.FUNCTION_WORDS)}
    assert Report.from_json(report.to_json()).skip == described
    out = io.StringIO()
    format_report(report, out)
    assert out.getvalue().splitlines()[0].endswith(
        f"graph skip, calibration 1; skip weight 0.5, each name joined to its previous occurrence in its document "
        f"({len(skip.FUNCTION_WORDS)} function words never joined)")
    raw = evaluate(skip_model, tiny_corpus, EvaluateOptions(decoders=("exact",), graph="skip", input="raw"))
    assert raw.skip == described
    chain = evaluate(skip_model, tiny_corpus, EvaluateOptions(decoders=("viterbi",)))
    assert chain.skip is None and "skip" not in chain.to_json()
    off = replace(skip.load(skip_model), weight=0.0, config=replace(skip.load(skip_model).config, previous=2,
                                                                    cross_sentence=False))
    assert format_heading_of(off) == "skip weight 0 (the skip graph is the chain)"
    assert format_heading_of(replace(off, weight=1.25)) == (
        f"skip weight 1.25, each name joined to its 2 previous occurrences in its sentence "
        f"({len(skip.FUNCTION_WORDS)} function words never joined)")


def format_heading_of(table: skip.SkipModel) -> str:
    from hgner.evaluation.report import skip_heading

    return skip_heading(table.describe())


def function_word_corpus() -> Corpus:
    """``El`` capitalised 4 times, always O; ``Casa`` 3 times, once inside ORG (``Casa Blanca``);
    ``Anoche`` twice (too rare to learn; not a stop word); ``Pero`` once and ``La`` twice, once in
    ``La Caixa`` (both spaCy stop words)."""
    tagged = [
        ("El Banco dijo", ["O", "B-ORG", "O"]), ("El juez", ["O", "O"]), ("El Madrid", ["O", "B-ORG"]),
        ("Casa Blanca", ["B-ORG", "I-ORG"]), ("Casa nueva", ["O", "O"]), ("Casa vieja", ["O", "O"]),
        ("El fin", ["O", "O"]), ("Anoche Pero", ["O", "O"]), ("Anoche Madrid", ["O", "B-LOC"]),
        ("La Caixa", ["B-ORG", "I-ORG"]), ("La mesa", ["O", "O"]),
    ]
    return Corpus("fw", "IOB2", [Document("d", [Sentence(text.split(), tags) for text, tags in tagged])])


def test_function_words_are_learned_plus_stop_words():
    corpus = function_word_corpus()
    learned = skip_training.function_words(corpus, None, min_count=3, o_fraction=0.95)
    assert learned == ("el",)  # 4 of 4 capitalised occurrences are O; Casa is O in only 2 of 3
    assert skip_training.function_words(corpus, None, min_count=3, o_fraction=0.6) == ("casa", "el")
    assert skip_training.function_words(corpus, None, min_count=5) == ()  # nothing seen capitalised 5 times
    words = skip_training.function_words(corpus, "es", min_count=3, o_fraction=0.95)
    assert {"el", "pero", "la"} <= set(words)  # learned, and spaCy's Spanish stop words (La even in La Caixa)
    assert not {"anoche", "casa", "banco", "madrid"} & set(words)
    assert set(words) == {"el"} | skip.stop_words("es") and list(words) == sorted(words)
    with pytest.raises(ModelError, match="spaCy has no language"):
        skip_training.function_words(corpus, "xx-nope")


def test_tune_never_loses_to_the_chain(skip_model, tiny_corpus):
    table = skip.load(skip_model)
    tuned = skip_training.tune(table, skip_model, tiny_corpus, weights=(0.0, 0.5, 50.0))
    rows = tuned.info["tuning"]
    held_out = tuned.info["held_out"]
    assert held_out["pairs"] == 2 * skip_training.HALVINGS and (tuned.weight == 0.0 or held_out["mean_gain"] > 0)
    assert [r["weight"] for r in rows] == [0.0, 0.5, 50.0]
    best = max(r["f1"] for r in rows)
    assert next(r for r in rows if r["weight"] == tuned.weight)["f1"] == best >= rows[0]["f1"]
    assert tuned.weight == min(r["weight"] for r in rows if r["f1"] == best)  # ties go to the smaller weight
    # a table that only pushes repeated names apart loses to the chain: weight 0 is kept
    repel = skip.SkipModel(table.config, table.labels, table.counts, -20.0 * np.eye(len(table.labels)))
    assert skip_training.tune(repel, skip_model, tiny_corpus, weights=(0.0, 1.0)).weight == 0.0


def test_weight_counts_give_the_f1_evaluate_gives(skip_model, tiny_corpus):
    """Per-document counts, summed, are the corpus's: at weight 0 (the chain, Viterbi) and at a
    weight decoded by exact, on a corpus of several documents."""
    regrouped = Corpus("regrouped", tiny_corpus.scheme, [Document(f"d{i}", tiny_corpus.sentences[i:i + 7])
                                                         for i in range(0, len(tiny_corpus.sentences), 7)])
    table = replace(skip.load(skip_model), weight=0.5)
    counts, certified = skip_training.weight_counts(table, skip_model, regrouped, weights=(0.0, 0.5))
    assert counts.shape == (2, len(regrouped.documents), 3) and certified[0] == 1.0
    skip.save(table, skip_model.directory)
    report = evaluate(skip_model, regrouped, EvaluateOptions(decoders=("viterbi", "exact"), graph="skip")).to_json()
    assert list(skip_training.grid_f1(counts)) == [round(row["f1"], 3) for row in report["results"]]


def _lucky_counts() -> np.ndarray:
    """(2 weights, 10 documents, 3) counts: weight 1 finds every entity of document 0, which the
    chain misses, and one fewer in each other document; better on all ten, worse on a half without
    document 0."""
    counts = np.zeros((2, 10, 3), np.int64)
    counts[:, :, 1:] = 10  # predicted, gold
    counts[0, 1:, 0] = 10
    counts[1, 0, 0], counts[1, 1:, 0] = 10, 9
    return counts


def test_held_out_gains_score_the_weight_picked_on_the_other_half():
    counts = _lucky_counts()
    assert list(skip_training.grid_f1(counts)) == [90.0, 91.0]
    gains, picked = skip_training.held_out_gains(counts, np.random.default_rng(0), halvings=4)
    assert len(gains) == len(picked) == 8
    # the half with document 0 picks weight 1, which loses 10 F1 on the other half; the other half
    # picks the chain: no gain
    assert sorted(gains.tolist()) == [-10.0] * 4 + [0.0] * 4 and sorted(picked.tolist()) == [0] * 4 + [1] * 4
    empty = skip_training.held_out_gains(counts[:, :1], np.random.default_rng(0))
    assert empty[0].size == empty[1].size == 0  # one document cannot be halved


def test_tune_keeps_the_chain_when_the_weight_does_not_carry_over(skip_model, tiny_corpus, monkeypatch):
    monkeypatch.setattr(skip_training, "weight_counts", lambda *args: (_lucky_counts(), [1.0, 1.0]))
    tuned = skip_training.tune(skip.load(skip_model), skip_model, tiny_corpus, weights=(0.0, 1.0))
    assert [row["f1"] for row in tuned.info["tuning"]] == [90.0, 91.0]  # weight 1 is better on the whole set
    assert tuned.weight == 0.0 and skip_training.tuned_f1(tuned) == 90.0
    assert tuned.info["held_out"] == {"halvings": skip_training.HALVINGS, "pairs": 60, "mean_gain": -5.0, "below_chain": 30}
    assert skip_training.tuning_summary(tuned) == (
        "weight 0, skip edges left out: skip-chain F1 91.00 with exact at weight 1.0 on synthetic against the "
        "chain's 90.00, but a weight chosen on half of its documents scores -5.00 F1 against the chain on the "
        "other half on average")
    with pytest.raises(ValueError, match="must start with 0"):
        skip_training.tune(skip.load(skip_model), skip_model, tiny_corpus, weights=(0.5, 1.0))


def test_a_dev_corpus_of_one_document_keeps_its_weight_unchecked(skip_model, tiny_corpus, monkeypatch):
    monkeypatch.setattr(skip_training, "weight_counts", lambda *args: (_lucky_counts()[:, :1], [1.0, 1.0]))
    tuned = skip_training.tune(skip.load(skip_model), skip_model, tiny_corpus, weights=(0.0, 1.0))
    assert tuned.weight == 1.0 and tuned.info["held_out"] is None
    assert skip_training.tuning_summary(tuned).endswith("not checked on held-out documents: it has one document, "
                                               "which cannot be halved)")
