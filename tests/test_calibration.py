"""The calibration factor: fitted by gold likelihood, recorded in meta.json, applied to every
potential (chain and skip), leaving MAP labellings as they were."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from hgner.core.errors import HgnerError, ModelError
from hgner.core.integrity import seal
from hgner.crf import skip
from hgner.crf.model import CrfModel
from hgner.crf.modelfiles import SEALED_FILES, write_metadata
from hgner.data.corpus import Corpus, Document, Sentence
from hgner.decoders.chain import forward_backward, viterbi
from hgner.training import calibration
from hgner.training import skip as skip_training


def sample_chain(unary: np.ndarray, transitions: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(n,) labels drawn exactly from one chain's distribution (forward filtering, backward sampling)."""
    n, k = unary.shape
    log_alpha = np.empty((n, k))
    log_alpha[0] = unary[0]
    for i in range(1, n):
        scores = log_alpha[i - 1][:, None] + transitions
        log_alpha[i] = unary[i] + np.logaddexp.reduce(scores, axis=0)
    labels = np.empty(n, dtype=np.int64)

    def draw(log_weights: np.ndarray) -> int:
        weights = np.exp(log_weights - log_weights.max())
        return int(rng.choice(k, p=weights / weights.sum()))

    labels[-1] = draw(log_alpha[-1])
    for i in range(n - 2, -1, -1):
        labels[i] = draw(log_alpha[i] + transitions[:, labels[i + 1]])
    return labels


def relabelled(model: CrfModel, corpus: Corpus, factor: float, rng: np.random.Generator) -> Corpus:
    """``corpus`` with every sentence's tags drawn from ``model``'s chain with its scores times ``factor``."""
    documents = []
    for document in corpus.documents:
        unary = model.document_unary([s.tokens for s in document.sentences])
        sentences, start = [], 0
        for sentence in document.sentences:
            end = start + len(sentence.tokens)
            labels = sample_chain(factor * unary[start:end], factor * model.transitions, rng)
            sentences.append(Sentence(sentence.tokens, [model.labels[y] for y in labels]))
            start = end
        documents.append(Document(document.name, sentences))
    return Corpus("sampled", model.scheme, documents)


def calibrated_copy(model: CrfModel, directory, factor: float) -> CrfModel:
    shutil.copytree(model.directory, directory)
    metadata = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
    metadata["calibration"] = {"factor": factor}
    write_metadata(directory, metadata, changed=())
    return CrfModel.load(directory)


@pytest.mark.parametrize("factor", [0.5, 1.5])
def test_fit_recovers_the_factor_that_drew_the_labels(tiny_model, tiny_corpus, factor):
    rng = np.random.default_rng(7)
    repeated = Corpus("repeated", tiny_corpus.scheme, tiny_corpus.documents * 20)
    fitted = calibration.fit(tiny_model, relabelled(tiny_model, repeated, factor, rng))
    assert fitted["factor"] == pytest.approx(factor, rel=0.15)
    assert fitted["sentences"] == len(repeated.sentences)
    assert fitted["gold_nll_per_sentence_at_factor"] <= fitted["gold_nll_per_sentence"]


def test_fit_is_the_likelihood_minimum_and_ignores_a_recorded_factor(tiny_model, tiny_corpus, tmp_path):
    from hgner.graph.factor_graph import FactorGraph

    corpus = relabelled(tiny_model, tiny_corpus, 0.7, np.random.default_rng(3))
    fitted = calibration.fit(tiny_model, corpus)
    assert calibration.fit(calibrated_copy(tiny_model, tmp_path / "scaled", 0.3), corpus) == fitted

    def gold_nll(factor: float) -> float:
        total = 0.0
        for document in corpus.documents:
            unary = tiny_model.document_unary([s.tokens for s in document.sentences])
            graph = FactorGraph.chain(factor * unary, factor * tiny_model.transitions,
                                      [len(s.tokens) for s in document.sentences])
            gold = [tiny_model.labels.index(tag) for s in document.sentences for tag in s.tags]
            total += forward_backward(graph)[1] - graph.score(np.array(gold))
        return total

    factor = fitted["factor"]
    assert gold_nll(factor) <= min(gold_nll(factor - 0.01), gold_nll(factor + 0.01))
    assert not calibration.at_bound(factor)
    assert fitted["gold_nll_per_sentence"] == round(gold_nll(1.0) / len(corpus.sentences), 4)


def test_fit_leaves_out_sentences_with_labels_the_model_lacks(tiny_model, tiny_corpus):
    odd = Document("odd", [Sentence(["Zork", "rules"], ["B-MISC", "O"])])
    corpus = Corpus("with-misc", tiny_corpus.scheme, [*tiny_corpus.documents, odd])
    assert calibration.fit(tiny_model, corpus)["sentences"] == len(tiny_corpus.sentences)
    with pytest.raises(HgnerError, match="no sentence of only-misc has only the model's labels"):
        calibration.fit(tiny_model, Corpus("only-misc", "IOB2", [odd]))


def test_the_factor_scales_every_potential_and_keeps_the_map(tiny_model, tiny_corpus, tmp_path):
    scaled = calibrated_copy(tiny_model, tmp_path / "scaled", 0.5)
    assert scaled.calibration == 0.5 and tiny_model.calibration == 1.0
    for document in tiny_corpus.documents:
        sentences = [s.tokens for s in document.sentences]
        raw, half = tiny_model.chain_graph(sentences), scaled.chain_graph(sentences)
        np.testing.assert_allclose(half.unary, 0.5 * raw.unary)
        np.testing.assert_allclose(half.potentials, 0.5 * raw.potentials)
        np.testing.assert_array_equal(viterbi(half), viterbi(raw))
        sharp, flat = forward_backward(raw)[0].max(axis=1), forward_backward(half)[0].max(axis=1)
        assert (flat <= sharp + 1e-12).all() and (flat < sharp - 1e-6).any()


def test_the_skip_potential_is_scaled_too(tiny_model, tiny_corpus, tmp_path):
    shutil.copytree(tiny_model.directory, tmp_path / "raw")
    raw = CrfModel.load(tmp_path / "raw")
    skip.save(skip_training.tune(skip_training.estimate(tiny_corpus, raw), raw, tiny_corpus), raw.directory)
    scaled = calibrated_copy(CrfModel.load(raw.directory), tmp_path / "scaled", 0.5)
    raw_table, scaled_table = skip.load(CrfModel.load(raw.directory)), skip.load(scaled)
    assert scaled_table.weight == raw_table.weight
    np.testing.assert_allclose(scaled_table.potential, 0.5 * raw_table.potential)


@pytest.mark.parametrize("factor", [0, -1, "0.5", 1e9])
def test_a_bad_recorded_factor_is_a_one_line_error(tiny_model, tmp_path, factor):
    directory = tmp_path / "bad"
    calibrated_copy(tiny_model, directory, 0.5)
    metadata = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
    metadata["calibration"]["factor"] = factor
    (directory / "meta.json").write_text(json.dumps(metadata), encoding="utf-8")
    seal(directory, SEALED_FILES)  # resealed: the checks behind the seal are tested
    with pytest.raises(ModelError, match=r"meta.json: calibration.factor: expected the factor on every potential"):
        CrfModel.load(directory)


def test_load_replaces_the_recorded_factor(tiny_model, tmp_path):
    scaled = calibrated_copy(tiny_model, tmp_path / "scaled", 0.5)
    assert [CrfModel.load(scaled.directory, factor).calibration for factor in (None, 1, 2.5)] == [0.5, 1.0, 2.5]
    for bad in (0, -1, float("nan"), float("inf"), 101):
        with pytest.raises(HgnerError, match=rf"^calibration: expected a number > 0 and at most 100, got {bad}$"):
            CrfModel.load(scaled.directory, bad)


@pytest.mark.parametrize("name", ["en-conll03", "en-3class", "es-conll02", "nl-conll02"])
def test_shipped_models_are_calibrated_on_their_dev_sets(name):
    """Every shipped model is overconfident (factor below 1), fitted on its own dev set."""
    model = CrfModel.load(name)
    record = model.metadata["calibration"]
    assert 0.5 < model.calibration == record["factor"] < 0.7
    assert record["corpus"] in model.metadata["scores"]["dev"]
    assert record["gold_nll_per_sentence_at_factor"] < record["gold_nll_per_sentence"]


def test_a_factor_within_one_percent_of_a_bound_is_at_it():
    """A corpus fitted perfectly has a flat likelihood near the upper end, where the search stops short."""
    assert calibration.at_bound(4.978) and calibration.at_bound(5.0) and calibration.at_bound(0.0505)
    assert not calibration.at_bound(4.9) and not calibration.at_bound(0.06) and not calibration.at_bound(1.0)
