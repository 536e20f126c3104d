"""The ``hgner`` spaCy component: entry-point registration, serialization, multiprocessing,
existing entities, span groups, sentence boundaries, displaCy."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from importlib.metadata import entry_points

import pytest
import spacy
from spacy import displacy
from tag_support import SENTENCE, subprocess_env, tag_model  # noqa: F401  (fixture)

import hgner.spacy_component  # noqa: F401  (registers the factory when running from a source tree)
from hgner.core.errors import HgnerError
from hgner.tagging.settings import TagSettings
from hgner.tagging.tagger import Tagger

TEXTS = [SENTENCE, "Jim Smith flew from Paris to London on Monday .\n\nThe French minister met Maria Lopez of Reuters .",
         "  Shares of Siemens rose 3 percent in Berlin trading .  ", "", "Reuters said on Tuesday that John would visit Madrid ."]


def pipeline(model, **config):
    nlp = spacy.blank("en")
    nlp.add_pipe("hgner", config={"model": str(model), **config})
    return nlp


def ents(doc, spans=None):
    return [(s.start_char, s.end_char, s.label_, s._.hgner_confidence) for s in (doc.ents if spans is None else spans)]


def test_registered_through_entry_point_in_fresh_interpreter(tag_model):
    if not any(e.name == "hgner" for e in entry_points(group="spacy_factories")):
        pytest.skip("hgner is not installed (pip install .): no spacy_factories entry point")
    code = (
        "import json, sys, spacy\n"
        "nlp = spacy.blank('en')\n"
        f"nlp.add_pipe('hgner', config={{'model': {str(tag_model)!r}}})\n"
        f"doc = nlp({SENTENCE!r})\n"
        "print(json.dumps([(e.text, e.label_, e._.hgner_confidence) for e in doc.ents]))\n"
        "print(sorted(m for m in ('numba', 'pycrfsuite') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd="/",
                            env=subprocess_env())
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.splitlines()[0])
    assert [(t, label) for t, label, _ in found] == [("Angela Merkel", "PER"), ("United Nations", "ORG"), ("Tokyo", "LOC")]
    assert all(0 < c <= 1 for _, _, c in found)


def test_import_is_cheap():
    code = "import sys, hgner.spacy_component; print(sorted(m for m in ('numba', 'pycrfsuite', 'scipy') if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=subprocess_env())
    assert result.stdout.strip() == "[]", result.stderr


def test_same_entities_as_hgner_tag(tag_model):
    nlp = pipeline(tag_model)
    tagger = Tagger(TagSettings(tag_model))
    for text in TEXTS:
        doc = nlp(text)
        expected = [(e.start, e.end, e.label, e.confidence) for g in tagger.tag_text(text) for e in g.entities]
        assert ents(doc) == expected
        assert len(doc) < 2 or not doc.has_annotation("SENT_START")  # the sentencizer ran on a copy


def test_entity_ending_inside_a_doc_token_covers_the_token():
    """At a line end hgner's sentence rules split the full stop off "Corp." (Lear Corp / .), but the
    Doc keeps "Corp." whole: the entity's span is widened to the Doc's token."""
    from hgner.text.tokenizer import make_tokenizer

    nlp = spacy.blank("en")
    nlp.tokenizer = make_tokenizer(nlp)
    nlp.add_pipe("hgner", config={"model": "en-conll03"})
    text = "He joined Lear Corp.\nThe company said nothing ."
    assert [(e.end, e.label) for e in Tagger(TagSettings("en-conll03")).tag(text)] == [(19, "ORG")]
    assert [(e.text, e.label_) for e in nlp(text).ents] == [("Lear Corp.", "ORG")]


def test_doc_sentence_boundaries_are_used(tag_model):
    nlp = pipeline(tag_model)
    doc = nlp.make_doc("Angela Merkel works for United Nations in Tokyo")
    for token in doc:
        token.is_sent_start = token.i in (0, 2)  # "Angela Merkel" | "works for ..."
    tagged = nlp.get_pipe("hgner")(doc)
    assert tagged.ents[0].text == "Angela Merkel"
    assert sentence_tokens(tagged) == [["Angela", "Merkel"], ["works", "for", "United", "Nations", "in", "Tokyo"]]


def sentence_tokens(doc):
    from hgner.text.tokenizer import TextTokenizer

    return [s.tokens for s in TextTokenizer.from_doc(doc)]


def test_round_trip_without_original_model(tag_model, tmp_path):
    model = shutil.copytree(tag_model, tmp_path / "original")
    nlp = pipeline(model, decoder="viterbi", overwrite=True)
    before = [ents(d) for d in nlp.pipe(TEXTS)]
    nlp.to_disk(tmp_path / "pipeline")
    assert sorted(p.name for p in (tmp_path / "pipeline" / "hgner").iterdir()) == ["cfg", "model"]
    shutil.rmtree(model)
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.get_pipe("hgner").cfg["overwrite"] is True
    assert [ents(d) for d in loaded.pipe(TEXTS)] == before


@pytest.mark.parametrize(("config", "message"), [
    ({"sweeps": 0}, r"\[components.hgner\]: sweeps: expected a positive integer or null, got 0"),
    ({"seed": -1}, r"seed: expected a non-negative integer or null, got -1"),
    ({"target": ""}, r"target: expected ents or a doc.spans key, got ''"),
    ({"min_confidence": 2}, r"min_confidence: expected a number 0..1 or null, got 2"),
    ({"graph": "x"}, r"unknown graph kind 'x'"),
    ({"decoder": "nope"}, r"unknown decoder 'nope'"),
    ({"decoder": "gibbs", "decoder_settings": {"sweep": 5}}, r"unknown gibbs setting 'sweep'"),
])
def test_settings_are_checked_when_the_component_is_added(tag_model, config, message):
    """As spacy.load checks a saved pipeline's settings: no pipeline tags that could not be loaded again."""
    with pytest.raises(HgnerError, match=message):
        pipeline(tag_model, **config)


@pytest.mark.parametrize(("text", "message"), [
    ("[1, 2]", r"cfg: top level: expected a JSON object of the hgner component's settings, got a list"),
    ('{"model": "x"}', r"cfg: top level: missing required field 'decoder'"),
    ("{", r"cfg: not valid JSON"),
])
def test_damaged_settings_file_is_named(tag_model, tmp_path, text, message):
    nlp = pipeline(tag_model, decoder="viterbi")
    nlp.to_disk(tmp_path / "pipeline")
    (tmp_path / "pipeline" / "hgner" / "cfg").write_text(text, encoding="utf-8")
    with pytest.raises(HgnerError, match=message):
        spacy.load(tmp_path / "pipeline")


def test_a_saved_pipelines_decoder_settings_are_checked_when_it_loads(tag_model, tmp_path):
    nlp = pipeline(tag_model, decoder="viterbi")
    nlp.to_disk(tmp_path / "pipeline")
    nlp.to_disk(tmp_path / "pipeline")  # again over the first copy of the model
    cfg_file = tmp_path / "pipeline" / "hgner" / "cfg"
    cfg_file.write_text(json.dumps({**json.loads(cfg_file.read_text()), "decoder": "nope"}), encoding="utf-8")
    with pytest.raises(HgnerError, match="unknown decoder 'nope'"):  # not only when the first Doc comes
        spacy.load(tmp_path / "pipeline")


def test_two_processes_give_the_same_entities(tag_model):
    nlp = pipeline(tag_model)
    single = [ents(d) for d in nlp.pipe(TEXTS * 3, batch_size=2)]
    double = [ents(d) for d in nlp.pipe(TEXTS * 3, batch_size=2, n_process=2)]
    assert double == single and any(single)


def test_existing_entities_kept_or_replaced(tag_model):
    for overwrite in (False, True):
        nlp = pipeline(tag_model, overwrite=overwrite)
        doc = nlp.make_doc(SENTENCE)
        doc.ents = [doc.char_span(0, 6, label="FIRST"), doc.char_span(24, 30, label="THING")]  # "Angela", "United"
        doc = nlp.get_pipe("hgner")(doc)
        found = [(e.text, e.label_) for e in doc.ents]
        if overwrite:
            assert found == [("Angela Merkel", "PER"), ("United Nations", "ORG"), ("Tokyo", "LOC")]
        else:  # existing entities stay; predictions that overlap them are dropped
            assert found == [("Angela", "FIRST"), ("United", "THING"), ("Tokyo", "LOC")]
            assert doc.ents[0]._.hgner_confidence is None and doc.ents[2]._.hgner_confidence > 0


def test_an_entity_another_component_found_keeps_no_confidence(tag_model):
    """spaCy keys a span's extension values by its place: hgner's dropped prediction at the place of
    an existing entity must not lend it a confidence."""
    nlp = pipeline(tag_model)
    doc = nlp.make_doc(SENTENCE)
    start = SENTENCE.index("Tokyo")
    doc.ents = [doc.char_span(start, start + len("Tokyo"), label="CITY")]
    doc = nlp.get_pipe("hgner")(doc)
    city = next(e for e in doc.ents if e.text == "Tokyo")
    assert city.label_ == "CITY" and city._.hgner_confidence is None
    assert all(e._.hgner_confidence for e in doc.ents if e.label_ != "CITY")


def test_a_failed_save_leaves_the_saved_pipeline_as_it_was(tag_model, tmp_path):
    good = pipeline(tag_model, decoder="viterbi")
    good.to_disk(tmp_path / "pipeline")
    saved = (tmp_path / "pipeline" / "hgner" / "cfg").read_text()
    broken = pipeline(tag_model, decoder="viterbi", overwrite=True)
    broken.get_pipe("hgner").model_path = tmp_path / "missing"
    with pytest.raises(HgnerError):
        broken.to_disk(tmp_path / "pipeline")
    assert (tmp_path / "pipeline" / "hgner" / "cfg").read_text() == saved
    with pytest.raises(HgnerError, match="nlp.to_bytes cannot hold it"):
        good.to_bytes()


def test_span_group_target(tag_model):
    nlp = pipeline(tag_model, target="hgner")
    doc = nlp.make_doc(SENTENCE)
    doc.spans["hgner"] = [doc[0:1]]
    doc = nlp.get_pipe("hgner")(doc)
    assert not doc.ents
    assert [s.text for s in doc.spans["hgner"]] == ["Angela", "Angela Merkel", "United Nations", "Tokyo"]
    assert [s.label_ for s in doc.spans["hgner"]][1:] == ["PER", "ORG", "LOC"]
    assert all(s._.hgner_confidence for s in list(doc.spans["hgner"])[1:])


def test_displacy_shows_entities(tag_model):
    html = displacy.render(pipeline(tag_model)(SENTENCE), style="ent")
    assert "Angela Merkel" in html and ">PER<" in html and ">LOC<" in html


def test_decoder_settings_and_min_confidence(tag_model):
    from hgner.core.errors import UnknownNameError

    nlp = pipeline(tag_model, decoder="gibbs", decoder_settings={"sweeps": 30, "seed": 3, "schedule": "constant"})
    assert [e.text for e in nlp(SENTENCE).ents] == ["Angela Merkel", "United Nations", "Tokyo"]
    decoder = nlp.get_pipe("hgner").tagger.pipeline.decoder
    assert (decoder.sweeps, decoder.seed, decoder.schedule) == (30, 3, "constant")
    with pytest.raises(UnknownNameError, match="unknown viterbi setting 'sweep'; expected one of: marginals"):
        pipeline(tag_model, decoder_settings={"sweep": 3})(SENTENCE)
    everything = ents(pipeline(tag_model)(TEXTS[1]))
    threshold = sorted(c for *_, c in everything)[len(everything) // 2]
    confident = ents(pipeline(tag_model, min_confidence=threshold)(TEXTS[1]))
    assert confident == [e for e in everything if e[3] >= threshold] and len(confident) < len(everything)


def test_a_pipeline_of_another_language_than_the_model_warns_once(tag_model):
    nlp = spacy.blank("es")
    nlp.add_pipe("hgner", config={"model": str(tag_model)})
    with pytest.warns(UserWarning, match="is for language 'en', but this pipeline's language is 'es'") as caught:
        nlp(SENTENCE)
        nlp(SENTENCE)
    assert len([w for w in caught if "is for language" in str(w.message)]) == 1
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pipeline(tag_model)(SENTENCE)  # same language: no warning


def test_a_pickled_component_keeps_its_language():
    """Issue 40: a pickled or deep-copied component lost ``language`` and failed on its first Doc."""
    import copy
    import pickle

    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("hgner", config={"model": "en-conll03"})
    component = nlp.get_pipe("hgner")
    for clone in (pickle.loads(pickle.dumps(component)), copy.deepcopy(component)):
        assert clone.language == "en"
        assert [e.text for e in clone(nlp.make_doc("Angela Merkel visited Paris .")).ents]


def test_pipe_with_two_processes_under_spawn():
    import multiprocessing


    if "spawn" not in multiprocessing.get_all_start_methods():
        pytest.skip("no spawn start method here")
    script = (
        "import multiprocessing, spacy\n"
        "if __name__ == '__main__':\n"
        "    multiprocessing.set_start_method('spawn', force=True)\n"
        "    nlp = spacy.blank('en'); nlp.add_pipe('hgner', config={'model': 'en-conll03'})\n"
        "    docs = list(nlp.pipe(['Angela Merkel visited Paris .'] * 4, n_process=2, batch_size=1))\n"
        "    print(sorted({e.text for d in docs for e in d.ents}))\n"
    )
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Angela Merkel" in result.stdout


def test_to_disk_copies_only_the_sealed_files_and_refuses_links(tmp_path, tiny_model):
    import shutil

    import spacy

    from hgner.core.errors import HgnerError

    model = tmp_path / "model"
    shutil.copytree(tiny_model.directory, model)
    (model / "NOTES.md").write_text("mine")
    nlp = spacy.blank("en")
    nlp.add_pipe("hgner", config={"model": str(model)})
    nlp.to_disk(tmp_path / "pipeline")
    copied = sorted(p.name for p in (tmp_path / "pipeline" / "hgner" / "model").iterdir())
    assert "NOTES.md" not in copied and "seal.json" in copied
    (model / "skip.npz").symlink_to("/dev/zero")  # a stray link: never followed
    with pytest.raises(HgnerError, match="skip.npz"):
        nlp.to_disk(tmp_path / "pipeline2")


def test_pipe_equals_one_doc_at_a_time(tag_model):
    """nlp.pipe decodes short Docs together (the component's pipe) and gives each Doc the
    entities and confidences it gets alone."""
    nlp = pipeline(tag_model)
    alone = [ents(nlp(text)) for text in TEXTS]
    assert [ents(doc) for doc in nlp.pipe(TEXTS, batch_size=3)] == alone
