"""The spaCy component for spaCy users (issues 61 and 62): a scorer for nlp.evaluate, spaCy's label
names, displaCy colours, nlp.update refused, settings checked by name (add_pipe and a hand-edited
cfg), preset missing entities, nlp.to_disk into a model folder refused, and worker processes that
load one at a time."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time

import pytest
import spacy
from spacy import displacy
from spacy.tokens import Span
from spacy.training import Example
from tag_support import SENTENCE, subprocess_env, tag_model  # noqa: F401  (fixture)

import hgner.spacy_component as component
from hgner.core.errors import HgnerError
from hgner.core.integrity import SEAL_FILE


def pipeline(model, **config):
    nlp = spacy.blank("en")
    nlp.add_pipe("hgner", config={"model": str(model), **config})
    return nlp


def reference(nlp, spans):
    doc = nlp.make_doc(SENTENCE)
    doc.ents = [doc.char_span(SENTENCE.index(text), SENTENCE.index(text) + len(text), label=label) for text, label in spans]
    return doc


def test_nlp_evaluate_scores_the_entities(tag_model):
    nlp = pipeline(tag_model, decoder="viterbi")
    gold = reference(nlp, [("Angela Merkel", "PER"), ("United Nations", "ORG"), ("Tokyo", "GPE")])
    scores = nlp.evaluate([Example(nlp.make_doc(SENTENCE), gold)])
    assert scores["ents_p"] == pytest.approx(2 / 3) and scores["ents_r"] == pytest.approx(2 / 3)
    assert scores["ents_f"] == pytest.approx(2 / 3)
    assert scores["ents_per_type"]["PER"] == {"p": 1.0, "r": 1.0, "f": 1.0}
    assert scores["ents_per_type"]["LOC"]["p"] == 0.0


def test_nlp_evaluate_scores_a_span_group(tag_model):
    nlp = pipeline(tag_model, decoder="viterbi", target="people")
    gold = nlp.make_doc(SENTENCE)
    gold.spans["people"] = [Span(gold, 0, 2, "PER")]
    scores = nlp.evaluate([Example(nlp.make_doc(SENTENCE), gold)])
    assert scores["spans_people_r"] == 1.0 and scores["spans_people_p"] == pytest.approx(1 / 3)


def test_spacy_label_names(tag_model):
    doc = pipeline(tag_model, decoder="viterbi", label_names="spacy")(SENTENCE)
    assert [(e.text, e.label_) for e in doc.ents] == [("Angela Merkel", "PERSON"), ("United Nations", "ORG"),
                                                      ("Tokyo", "GPE")]
    assert component.LABEL_NAMES["spacy"] == {"PER": "PERSON", "LOC": "GPE", "ORG": "ORG", "MISC": "NORP"}
    with pytest.raises(HgnerError, match="label_names: expected one of hgner, spacy, got 'ontonotes'"):
        pipeline(tag_model, label_names="ontonotes")


def test_displacy_colours_hgners_labels(tag_model):
    doc = pipeline(tag_model, decoder="viterbi")(SENTENCE)
    html = displacy.render(doc, style="ent", options={"colors": component.DISPLACY_COLORS})
    assert component.DISPLACY_COLORS["PER"] in html and component.DISPLACY_COLORS["LOC"] in html
    from spacy.util import registry

    if "hgner" in registry.displacy_colors.get_all():  # (installed: the entry point colours them by default)
        assert component.DISPLACY_COLORS["PER"] in displacy.render(doc, style="ent")


def test_nlp_update_is_refused_with_the_way_to_train(tag_model):
    nlp = pipeline(tag_model)
    gold = reference(nlp, [("Tokyo", "LOC")])
    with pytest.raises(HgnerError, match="does not learn in nlp.update: .*hgner train"):
        nlp.update([Example(nlp.make_doc(SENTENCE), gold)])
    nlp.update([Example(nlp.make_doc(SENTENCE), gold)], exclude=["hgner"])  # the way out it names


def test_add_pipe_names_the_settings_there_are(tag_model):
    with pytest.raises(HgnerError, match=r"unknown setting 'calibration' .*; its settings: model, decoder, .*overwrite"):
        pipeline(tag_model, calibration=2.0)


def test_a_misspelt_setting_in_a_saved_cfg_is_refused(tag_model, tmp_path):
    nlp = pipeline(tag_model, decoder="viterbi")
    nlp.to_disk(tmp_path / "pipeline")
    cfg_file = tmp_path / "pipeline" / "hgner" / "cfg"
    cfg = json.loads(cfg_file.read_text())
    cfg["min_confidance"] = 0.9
    cfg_file.write_text(json.dumps(cfg))
    with pytest.raises(HgnerError, match=r"cfg: unknown setting 'min_confidance' .*did you mean 'min_confidence'"):
        spacy.load(tmp_path / "pipeline")


def test_a_cfg_saved_before_label_names_loads(tag_model, tmp_path):
    nlp = pipeline(tag_model, decoder="viterbi")
    nlp.to_disk(tmp_path / "pipeline")
    cfg_file = tmp_path / "pipeline" / "hgner" / "cfg"
    cfg = json.loads(cfg_file.read_text())
    del cfg["label_names"]
    cfg_file.write_text(json.dumps(cfg))
    assert [e.label_ for e in spacy.load(tmp_path / "pipeline")(SENTENCE).ents] == ["PER", "ORG", "LOC"]


@pytest.mark.parametrize("overwrite", [False, True])
@pytest.mark.parametrize("preset", ["missing", "missing_and_entity", "blocked"])
def test_a_doc_with_preset_missing_entities_is_tagged(tag_model, overwrite, preset):
    nlp = pipeline(tag_model, decoder="viterbi", overwrite=overwrite)
    doc = nlp.make_doc(SENTENCE)
    tokyo = len(doc) - 2  # "Tokyo ."
    if preset == "missing":
        doc.set_ents([], missing=[doc[0:2]], default="missing")
    elif preset == "missing_and_entity":
        doc.set_ents([Span(doc, tokyo, tokyo + 1, "CITY")], missing=[doc[0:2]], default="outside")
    else:
        doc.set_ents([], blocked=[doc[0:2]], default="missing")
    doc = nlp.get_pipe("hgner")(doc)
    found = {e.text: e.label_ for e in doc.ents}
    assert found.get("Tokyo") == ("CITY" if preset == "missing_and_entity" and not overwrite else "LOC")
    assert "United Nations" in found


def test_to_disk_into_the_components_model_folder_is_refused(tag_model, tmp_path):
    model = shutil.copytree(tag_model, tmp_path / "model")
    before = {p.name: p.read_bytes() for p in model.iterdir()}
    nlp = pipeline(model)
    for target in (model, model / "pipeline"):
        with pytest.raises(HgnerError, match="the model folder of the hgner component"):
            nlp.to_disk(target)
    assert {p.name: p.read_bytes() for p in model.iterdir()} == before


def test_to_disk_into_any_model_folder_is_refused(tag_model, tmp_path):
    other = shutil.copytree(tag_model, tmp_path / "other")
    meta = (other / "meta.json").read_bytes()
    with pytest.raises(HgnerError, match="an hgner model folder"):
        pipeline(tag_model).to_disk(other)
    assert (other / "meta.json").read_bytes() == meta and (other / SEAL_FILE).is_file()


def test_workers_load_one_at_a_time(tmp_path):
    """Two processes loading at once (nlp.pipe's workers): the second waits for the first."""
    code = ("import sys, time\nfrom hgner.spacy_component import _one_at_a_time\n"
            "with _one_at_a_time():\n    start = time.time(); time.sleep(1.5); print(start, time.time())\n")
    children = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=subprocess_env())
                for _ in range(2)]
    (a0, a1), (b0, b1) = sorted(tuple(map(float, child.communicate(timeout=120)[0].split())) for child in children)
    assert a1 <= b0  # never both inside


def test_pipe_under_spawn_with_empty_and_blank_texts_finishes(tag_model):
    script = (
        "import multiprocessing, sys, spacy\n"
        "if __name__ == '__main__':\n"
        "    multiprocessing.set_start_method('spawn', force=True)\n"
        "    nlp = spacy.blank('en'); nlp.add_pipe('hgner', config={'model': sys.argv[1]})\n"
        "    texts = ['', '   ', 'Angela Merkel visited Paris .', '\\n\\n', 'Jim Smith works for Reuters .', ' '] * 2\n"
        "    docs = list(nlp.pipe(texts, n_process=2, batch_size=2))\n"
        "    print(len(docs), sorted({e.text for d in docs for e in d.ents}))\n"
    )
    started = time.time()
    result = subprocess.run([sys.executable, "-c", script, str(tag_model)], capture_output=True, text=True, timeout=300,
                            env=subprocess_env())
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("12 ") and time.time() - started < 300


def test_a_process_stuck_while_loading_holds_the_others_back_for_a_bounded_time(monkeypatch):
    code = ("import time\nfrom hgner.spacy_component import _one_at_a_time\n"
            "with _one_at_a_time():\n    print('held', flush=True); time.sleep(30)\n")
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=subprocess_env())
    try:
        assert holder.stdout.readline().strip() == "held"
        monkeypatch.setattr(component, "LOAD_LOCK_WAIT", 0.5)
        started = time.monotonic()
        with component._one_at_a_time():
            waited = time.monotonic() - started
        assert 0.4 < waited < 10
    finally:
        holder.kill()
        holder.wait()
