import json
import os
import tempfile

import numpy as np
import pytest

from hgner.core.errors import ModelError
from hgner.core.integrity import SEAL_FILE
from hgner.crf.model import CrfModel
from hgner.crf.modelfiles import META_FILE, MODEL_FILE, STARTS_FILE
from hgner.features.typecache import TYPES_FILE
from hgner.training import TrainOptions, WordTables
from hgner.training.crf import train


def test_model_directory_is_crfsuite_plus_json_and_numpy_arrays(tiny_model):
    files = sorted(p.name for p in tiny_model.directory.iterdir())
    assert files == sorted([MODEL_FILE, META_FILE, SEAL_FILE, TYPES_FILE, STARTS_FILE])
    meta = json.loads((tiny_model.directory / META_FILE).read_text())
    for key in ("labels", "scheme", "features", "tokenizer", "hgner_version", "training"):
        assert key in meta
    assert len(meta["training"]["sha256"]) == 64
    assert set(meta["labels"]) == set(tiny_model.labels)


def test_training_leaves_no_temp_files(tmp_path, tiny_corpus):
    before = set(os.listdir(tempfile.gettempdir()))
    train(tiny_corpus, tmp_path / "m", TrainOptions(max_iterations=5))
    assert set(os.listdir(tempfile.gettempdir())) - before == set()


def test_load_round_trip(tiny_model):
    again = CrfModel.load(tiny_model.directory)
    assert again.labels == tiny_model.labels
    np.testing.assert_array_equal(again.state_weights, tiny_model.state_weights)
    np.testing.assert_array_equal(again.transitions, tiny_model.transitions)


def test_unary_is_the_sum_of_state_weights(tiny_model):
    features = tiny_model.features([["John", "Smith", "visited", "Paris", "."]])
    unary = tiny_model.unary(features)
    for i, attributes in enumerate(features[0]):
        rows = [tiny_model.attribute_index[a] for a in attributes if a in tiny_model.attribute_index]
        np.testing.assert_allclose(unary[i], tiny_model.state_weights[rows].sum(axis=0))


def test_label_map_drops_a_type(tmp_path, tiny_corpus):
    model = train(tiny_corpus, tmp_path / "m", TrainOptions(max_iterations=5, label_map={"ORG": "O"}))
    assert model.entity_types == ["LOC", "PER"]


def test_unknown_model_lists_the_shipped_ones(tmp_path):
    with pytest.raises(ModelError, match="not a model directory"):
        CrfModel.load(tmp_path / "nothing")
    with pytest.raises(ModelError, match="shipped"):
        CrfModel.load("no-such-model")


def test_binary_weights_agree_with_crfsuite_dump(tiny_model):
    """The dump rounds to six decimals; the binary file holds the exact weights."""
    info = tiny_model._crfsuite.info()
    for (attribute, label), weight in info.state_features.items():
        exact = tiny_model.state_weights[tiny_model.attribute_index[attribute], tiny_model.labels.index(label)]
        assert abs(exact - weight) <= 5.1e-7
    for (first, second), weight in info.transitions.items():
        assert abs(tiny_model.transitions[tiny_model.labels.index(first), tiny_model.labels.index(second)] - weight) <= 5.1e-7


def test_binary_reader_refuses_other_files(tmp_path):
    from hgner.crf.crfsuite_adapter import read_crfsuite_weights

    (tmp_path / "x").write_bytes(b"not a model at all, just some bytes" * 3)
    with pytest.raises(ValueError, match="not a crfsuite CRF1d model"):
        read_crfsuite_weights(tmp_path / "x")
    (tmp_path / "y").write_bytes(b"lCRF")
    with pytest.raises(ValueError, match="truncated"):
        read_crfsuite_weights(tmp_path / "y")


def test_shipped_languages_leave_out_a_model_whose_meta_does_not_read(tmp_path, monkeypatch):
    import shutil

    from hgner.commands.arguments import flag_names
    from hgner.core.errors import render
    from hgner.crf import modelfiles

    for name in ("es-conll02", "nl-conll02"):
        shutil.copytree(modelfiles.shipped_models_dir() / name, tmp_path / name)
    (tmp_path / "nl-conll02" / "meta.json").write_text("{", encoding="utf-8")
    monkeypatch.setattr(modelfiles, "shipped_models_dir", lambda: tmp_path)
    assert modelfiles.shipped_languages() == {"es": ["es-conll02"]}
    assert render(modelfiles.model_advice("es")) == "for 'es' text use model es-conll02"
    assert render(modelfiles.model_advice("es"), flag_names()) == "for 'es' text use --model es-conll02"
    assert (render(modelfiles.model_advice("nl"), flag_names())
            == "no shipped model is for 'nl': hgner train with --lang nl builds one")


@pytest.mark.parametrize("clusters, message", [
    (None, "config.word_clusters needs word clusters"),
    ({"0": ["Paris"], "1": ["Paris"]}, "word clusters: word 'Paris' is listed twice (clusters 0 and 1)"),
    ({"01x": ["Paris"]}, "word clusters: '01x': not a valid key; expected a cluster path of 1-64 binary digits"),
    ({"0101\n": ["Paris"]}, "word clusters: '0101\\n': not a valid key"),
    ({"01": [""]}, "word clusters: 01: expected a non-empty string"),
    ({"01": []}, "config.word_clusters needs word clusters: every list given is empty"),
    ([["Paris"]], "word clusters: top level: expected an object mapping cluster paths"),
    ({"01": ["\ud800"]}, "word clusters: a string holds a lone UTF-16 surrogate"),
])
def test_word_clusters_are_checked_before_training(tmp_path, tiny_corpus, clusters, message):
    from hgner.features import FeatureConfig

    with pytest.raises(ModelError) as error:
        train(tiny_corpus, tmp_path / "m", TrainOptions(config=FeatureConfig(word_clusters=True)), WordTables(word_clusters=clusters))
    assert message in str(error.value) and not (tmp_path / "m").exists()


def test_tables_given_without_their_features_are_refused(tmp_path, tiny_corpus):
    from hgner.core.errors import HgnerError
    from hgner.features import FeatureConfig

    with pytest.raises(ModelError, match="word clusters given but config.word_clusters is false"):
        train(tiny_corpus, tmp_path / "m", TrainOptions(), WordTables(word_clusters={"01": ["Paris"]}))
    with pytest.raises(ModelError, match="gazetteer given but config.gazetteer is false"):
        train(tiny_corpus, tmp_path / "m", TrainOptions(), WordTables(gazetteer={"LOC": ["paris"]}))
    with pytest.raises(HgnerError, match="word_clusters_sources: expected a string or None, got 5"):
        train(tiny_corpus, tmp_path / "m", TrainOptions(), WordTables(word_clusters_sources=5))
    with pytest.raises(ModelError, match="lowercase_clusters and neighbour_clusters add to the word-cluster features"):
        train(tiny_corpus, tmp_path / "m", TrainOptions(config=FeatureConfig(lowercase_clusters=True)))


def test_where_a_table_came_from_is_recorded_on_one_line(tmp_path, tiny_corpus):
    from hgner.features import FeatureConfig

    model = train(tiny_corpus, tmp_path / "m", TrainOptions(config=FeatureConfig(word_clusters=True), max_iterations=2), WordTables(word_clusters={"01": ["Paris"]}, word_clusters_sources="a\nb" + "c" * 3000))
    recorded = model.metadata["word_clusters_sources"]
    assert recorded.startswith("a\\nbccc") and recorded.endswith("...") and len(recorded) == 2000


def test_a_model_that_fails_its_checks_never_replaces_the_previous_one(tmp_path, tiny_corpus):
    out = tmp_path / "m"
    train(tiny_corpus, out, TrainOptions(max_iterations=2))
    before = {f.name: f.read_bytes() for f in out.iterdir()}

    def damage(model):  # a file written after meta.json recorded its checksum
        (model.directory / "model.crfsuite").write_bytes(b"damaged")

    with pytest.raises(ModelError, match="model.crfsuite"):
        train(tiny_corpus, out, TrainOptions(max_iterations=2), finish=damage)
    assert {f.name: f.read_bytes() for f in out.iterdir()} == before
    assert not [f for f in tmp_path.iterdir() if f.name != "m"]  # no workspace left behind


def test_word_clusters_too_big_to_load_again_are_refused(tmp_path, tiny_corpus, monkeypatch):
    from hgner.features import FeatureConfig
    from hgner.training import crf

    monkeypatch.setattr(crf, "MAX_JSON_BYTES", 10)
    with pytest.raises(ModelError, match=r"^word clusters \(c.txt\): 27 bytes as JSON, "
                                         "expected at most 10: keep fewer entries"):
        train(tiny_corpus, tmp_path / "m", TrainOptions(config=FeatureConfig(word_clusters=True)), WordTables(word_clusters={"0110": ["Paris", "London"]}, word_clusters_sources="c.txt"))
