"""The entity confidence map: Platt on the log-odds per novelty group, fitted on a development
corpus, recorded in meta.json (checked on load), applied to reported confidences only."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from conftest import synthetic_corpus

from hgner.core.errors import ModelError
from hgner.crf.model import CONFIDENCE_GROUPS, ConfidenceMap, CrfModel
from hgner.crf.modelfiles import write_metadata
from hgner.tagging.settings import TagSettings
from hgner.tagging.tagger import Tagger
from hgner.training import TrainOptions, build_model, confidence

TEXT = ("John Smith visited London on Monday .\nShares in Siemens rose 3 percent .\n"
        "John Kowalczyk visited Paris on Monday .")


def record(known: tuple[float, float], new: tuple[float, float]) -> dict:
    return {"method": "platt", "corpus": "toy", "groups": {
        name: {"slope": slope, "intercept": intercept} for name, (slope, intercept) in (("known", known), ("new", new))}}


def with_map(model: CrfModel, directory, entity_confidence: dict) -> CrfModel:
    """A copy of ``model`` in ``directory`` whose meta.json records ``entity_confidence``, loaded."""
    shutil.copytree(model.directory, directory)
    metadata = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
    metadata["entity_confidence"] = entity_confidence
    write_metadata(directory, metadata, changed=())
    return CrfModel.load(directory)


def tag(model: CrfModel) -> list:
    tagger = Tagger(TagSettings(str(model.directory)), model=model)
    return [entity for group in tagger.tag_text(TEXT) for entity in group.entities]


@pytest.mark.parametrize("slope, intercept", [(0.3, -2.0), (1.0, 0.0), (2.5, 1.5), (100.0, -100.0)])
def test_the_map_is_increasing_and_a_probability(slope, intercept):
    grid = np.concatenate([[0.0, 1e-9], np.linspace(0, 1, 1001), [1 - 1e-9, 1.0]])
    grid.sort()
    mapping = ConfidenceMap(record((slope, intercept), (1 / slope, -intercept)))
    for known in (True, False):
        mapped = mapping(grid, np.full(len(grid), known))
        assert np.all(np.diff(mapped) >= 0)
        assert np.all((mapped >= 0) & (mapped <= 1))
    assert mapping(np.array([0.5]), np.array([True]))[0] == pytest.approx(1 / (1 + np.exp(-intercept)))


def test_platt_recovers_the_map_that_drew_the_outcomes():
    rng = np.random.default_rng(5)
    confidences = rng.uniform(0.05, 0.999, 20_000)
    truth = ConfidenceMap(record((0.6, -0.4), (0.6, -0.4)))(confidences, np.ones(len(confidences), bool))
    fitted = confidence.platt(confidences, rng.uniform(size=len(confidences)) < truth)
    assert fitted["slope"] == pytest.approx(0.6, abs=0.05)
    assert fitted["intercept"] == pytest.approx(-0.4, abs=0.08)
    assert fitted["entities"] == len(confidences)


def test_the_map_changes_confidences_only(tiny_model, tmp_path):
    mapped = with_map(tiny_model, tmp_path / "mapped", record((0.5, -1.0), (0.3, -2.0)))
    before, after = tag(tiny_model), tag(mapped)
    assert [(e.start, e.end, e.label) for e in after] == [(e.start, e.end, e.label) for e in before]
    assert len(before) >= 3
    for old, new in zip(before, after):
        known = mapped.knows(old.text.split())
        slope, intercept = mapped.confidence_map.groups["known" if known else "new"]
        logit = np.log(old.confidence / (1 - old.confidence))
        assert new.confidence == pytest.approx(1 / (1 + np.exp(-(slope * logit + intercept))))
        assert new.confidence < old.confidence  # this map lowers every confidence
    assert mapped.knows(["John", "Smith"]) and mapped.knows(["London"]) and not mapped.knows(["London", "Kowalczyk"])
    assert {mapped.knows(e.text.split()) for e in after} == {True, False}  # both maps used


def test_a_model_without_its_training_words_has_no_map(tiny_model, tmp_path):
    mapped = with_map(tiny_model, tmp_path / "mapped", record((0.5, -1.0), (0.3, -2.0)))
    metadata = json.loads((mapped.directory / "meta.json").read_text(encoding="utf-8"))
    (mapped.directory / "types.npz").unlink()
    del metadata["files"]["types.npz"]
    write_metadata(mapped.directory, metadata, changed=())
    unmapped = CrfModel.load(mapped.directory)
    assert unmapped.training_words is None and unmapped.confidence_map is None
    assert [e.confidence for e in tag(unmapped)] == [e.confidence for e in tag(tiny_model)]


def test_another_calibration_factor_leaves_confidences_unmapped(tiny_model, tmp_path):
    with_map(tiny_model, tmp_path / "mapped", record((0.5, -1.0), (0.3, -2.0)))
    assert CrfModel.load(tmp_path / "mapped").confidence_map is not None
    assert CrfModel.load(tmp_path / "mapped", calibration=0.5).confidence_map is None


@pytest.mark.parametrize("change, message", [
    (lambda r: r["groups"]["known"].update(slope=-1.0), "entity_confidence.groups.known.slope: expected the slope on the "
                                                        "log-odds, a number > 0 (increasing) and at most 100, got -1"),
    (lambda r: r["groups"]["new"].update(slope=0), "entity_confidence.groups.new.slope: expected the slope"),
    (lambda r: r["groups"]["new"].update(intercept=1e9), "entity_confidence.groups.new.intercept: expected a number -100..100"),
    (lambda r: r["groups"]["new"].update(intercept="0.5"), "expected a number -100..100, got '0.5'"),
    (lambda r: r["groups"].pop("new"), "missing required field 'new'"),
    (lambda r: r["groups"].update(other=r["groups"]["new"]), "'other' was unexpected"),
    (lambda r: r.update(method="isotonic"), "entity_confidence.method: expected platt, got 'isotonic'"),
    (lambda r: r.update(ece=2), "entity_confidence.ece: expected an expected calibration error 0..1, got 2"),
])
def test_a_bad_map_is_refused_naming_the_field(tiny_model, tmp_path, change, message):
    bad = record((1.0, 0.0), (1.0, 0.0))
    change(bad)
    with pytest.raises(ModelError) as error:
        with_map(tiny_model, tmp_path / "bad", bad)
    assert "meta.json" in str(error.value)
    assert message in str(error.value)


def test_a_map_fitted_on_toy_dev_data_round_trips_through_meta_json(tiny_model, tmp_path):
    dev = synthetic_corpus(n_documents=8, seed=11)
    fitted = confidence.fit(tiny_model, dev)
    assert fitted is not None and fitted["corpus"] == dev.name and fitted["method"] == "platt"
    assert set(fitted["groups"]) == set(CONFIDENCE_GROUPS)
    assert all(0 < g["entities"] <= fitted["entities"] for g in fitted["groups"].values())
    assert 0 <= fitted["ece"] <= 1 and 0 <= fitted["ece_cross_fitted"] <= 1
    loaded = with_map(tiny_model, tmp_path / "fitted", json.loads(json.dumps(fitted)))
    assert loaded.metadata["entity_confidence"] == fitted
    assert loaded.confidence_map is not None
    assert loaded.confidence_map.groups == {name: (fitted["groups"][name]["slope"], fitted["groups"][name]["intercept"])
                                            for name in CONFIDENCE_GROUPS}
    sample = confidence.tagged_entities(loaded, dev)
    raw = confidence.tagged_entities(loaded, dev, raw=True)
    np.testing.assert_allclose(sample.confidences, loaded.confidence_map(raw.confidences, raw.known))
    assert np.array_equal(sample.right, raw.right) and np.array_equal(sample.types, raw.types)


@pytest.mark.filterwarnings("ignore:the calibration factor is at its bound")  # the toy dev set is fitted perfectly
def test_training_with_a_dev_corpus_fits_the_map(tiny_corpus, tmp_path):
    model = build_model(tiny_corpus, tmp_path / "trained", TrainOptions(max_iterations=20),
                        dev=synthetic_corpus(n_documents=6, seed=4))
    recorded = model.metadata["entity_confidence"]
    assert recorded["corpus"] == "synthetic" and recorded["entities"] > 0
    assert all(group["slope"] > 0 for group in recorded["groups"].values())
    assert CrfModel.load(tmp_path / "trained").confidence_map is not None
