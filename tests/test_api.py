"""The public Python API: ``hgner.load``, ``Tagger.tag``/``pipe``, ``hgner.evaluate``, the
listings, ``__all__``, a cheap ``import hgner``, and the API guide's parameter lists
(its examples run in tests/test_readme.py)."""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tag_support import SENTENCE, subprocess_env, tag_model  # noqa: F401  (fixture)

import hgner
from hgner.cli import main
from hgner.core.errors import HgnerError, UnknownNameError
from hgner.core.integrity import seal
from hgner.crf.modelfiles import SEALED_FILES
from hgner.data.corpus import write_conll
from hgner.tagging import tagger as tag

PYTHON_GUIDE = Path(__file__).parent.parent / "docs" / "guide" / "python.md"  # its examples run in test_readme.py
TEXTS = [SENTENCE, "", "Jim Smith flew from Paris to London on Monday .\n\nThe minister met Maria Lopez of Reuters .", "  "]
TIMES = {"decode_seconds", "total_seconds", "build_seconds"}


def test_import_is_cheap_and_all_is_public():
    code = ("import sys, hgner; print(sorted(m for m in ('numpy', 'numba', 'pycrfsuite', 'spacy') if m in sys.modules)); "
            "print(all(getattr(hgner, name) is not None for name in hgner.__all__))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=subprocess_env())
    assert result.stdout.split("\n")[:2] == ["[]", "True"], result.stderr
    assert {"load", "evaluate", "available_decoders", "available_models", "Tagger", "Entity"} <= set(hgner.__all__)
    with pytest.raises(AttributeError):
        hgner.nothing_here  # noqa: B018


def test_load_tag_and_pipe(tag_model, monkeypatch):
    tagger = hgner.load(tag_model)
    assert isinstance(tagger, hgner.Tagger)
    entities = tagger.tag(SENTENCE)
    assert [(e.text, e.label) for e in entities] == [("Angela Merkel", "PER"), ("United Nations", "ORG"), ("Tokyo", "LOC")]
    assert all(isinstance(e, hgner.Entity) and 0 < e.confidence <= 1 for e in entities)
    expected = [tagger.tag(text) for text in TEXTS]
    assert list(tagger.pipe(TEXTS, batch_size=3)) == expected
    monkeypatch.setattr(tag, "BLOCK_CHARS", 40)  # longer texts are tokenized block by block: the same
    # entities (a cut at a space inside a sentence ends it there, so the confidences may move)
    spans = [[(e.start, e.end, e.label) for e in found] for found in expected]
    assert [[(e.start, e.end, e.label) for e in found] for found in tagger.pipe(iter(TEXTS), batch_size=1)] == spans
    with pytest.raises(HgnerError, match="batch_size must be at least 1"):
        list(tagger.pipe(TEXTS, batch_size=0))


@pytest.mark.parametrize("group_tokens", [12, 25, 20_000])
def test_pipe_decodes_short_texts_together_as_each_alone(tag_model, group_tokens):
    """Texts of one group each are decoded together up to a group's tokens; longer ones in groups
    of their own. Entities, confidences, the label filter and the confidence threshold are each
    text's own."""
    texts = [*TEXTS, "Paris", "", " ", *TEXTS[::-1]]
    for settings in ({}, {"labels": ["PER", "LOC"], "min_confidence": 0.6}):
        tagger = hgner.load(tag_model, **settings)
        tagger.group_tokens = group_tokens
        expected = [tagger.tag(text) for text in texts]
        assert list(tagger.pipe(texts, batch_size=4)) == expected
        assert [[e for g in groups for e in g.entities] for groups in tagger.tag_texts(texts)] == expected


def test_load_takes_decoder_settings_and_refuses_unknown_ones(tag_model):
    sampled = hgner.load(tag_model, "gibbs", sweeps=30, seed=2, schedule="constant")
    assert sampled.pipeline.decoder.sweeps == 30 and sampled.pipeline.decoder.schedule == "constant"
    with pytest.raises(UnknownNameError, match="unknown herded setting 'sweep'; expected one of: start, sweeps, time_limit"):
        hgner.load(tag_model, "herded", sweep=30)
    with pytest.raises(HgnerError, match="decoder 'viterbi' decodes chains only"):
        hgner.load(tag_model, "viterbi", graph="skip")
    with pytest.warns(UserWarning, match="graph skip: the default decoder viterbi decodes chains only; tagging with "
                                         "exact instead"):
        with pytest.raises(HgnerError, match="has no skip potential"):  # (this model has none: exact was tried)
            hgner.load(tag_model, graph="skip")  # as hgner tag --graph skip does
    confident = hgner.load(tag_model, min_confidence=1.0)
    assert [e for e in confident.tag(SENTENCE) if e.confidence < 1.0] == []


@pytest.mark.parametrize(
    ("misuse", "message"),
    [
        (lambda model: hgner.load(123), "model: expected a model name or directory, got 123"),
        (lambda model: hgner.load(b"en-conll03"), "model: expected a model name or directory, got bytes"),
        (lambda model: hgner.model_info(None), "model: expected a model name or directory, got null"),
        (lambda model: hgner.load(model, graph="x"), "unknown graph kind 'x'; expected one of chain, skip"),
        (lambda model: hgner.load(model, min_confidence=2), "min_confidence: expected a number from 0 to 1 or None, got 2"),
        (lambda model: hgner.load(model, min_confidence=float("nan")), "min_confidence: expected a number from 0 to 1"),
        (lambda model: hgner.load(model).tag(123), "text: expected a str, got 123"),
        (lambda model: hgner.load(model).tag(b"Paris"), "text: expected a str, got bytes"),
        (lambda model: list(hgner.load(model).pipe("Jim Smith")), "texts: expected an iterable of texts (tag() takes one"),
        (lambda model: list(hgner.load(model).pipe(5)), "texts: expected an iterable of texts"),
        (lambda model: list(hgner.load(model).pipe(["Paris", None])), "texts: expected a str, got null"),
        (lambda model: list(hgner.load(model).pipe(["Paris"], batch_size="x")), "batch_size must be at least 1, got 'x'"),
        (lambda model: hgner.evaluate(model, 5), "corpus: expected a corpus name or a CoNLL file, got 5"),
        (lambda model: hgner.evaluate(model, decoders="viterbi"), "decoders: expected a non-empty list of decoder names"),
        (lambda model: hgner.evaluate(model, decoders=[]), "decoders: expected a non-empty list of decoder names"),
        (lambda model: hgner.evaluate(model, sweeps=100), "sweeps: expected a non-empty list of whole numbers 1.."),
        (lambda model: hgner.evaluate(model, seeds=2.5), "seeds: expected a whole number 1..10000, got 2.5"),
        (lambda model: hgner.evaluate(model, seeds=0), "seeds: expected a whole number 1..10000, got 0"),
        (lambda model: hgner.evaluate(model, seeds=10**9), "seeds: expected a whole number 1..10000, got 1000000000"),
        (lambda model: hgner.evaluate(model, sweeps=[0]), "sweeps: expected a non-empty list of whole numbers 1.."),
        (lambda model: hgner.evaluate(model, scheme=1), "scheme: expected a tag scheme name or None, got 1"),
        (lambda model: hgner.load(model, ["viterbi"]), "decoder: expected a decoder name, got list"),
        (lambda model: hgner.load(model, "viterbi", decoder_settings=[1]),
         "decoder_settings: expected a mapping of decoder settings"),
        (lambda model: hgner.load(model).tag("Jim \ud800 Smith"), "text: not valid Unicode (surrogates not allowed at "),
        (lambda model: list(hgner.load(model).pipe(["Paris", "Jim \ud800"])), "texts: not valid Unicode (surrogates"),
        (lambda model: list(hgner.load(model).pipe([1])), "texts: expected a str, got 1"),
        (lambda model: hgner.evaluate(model, settings=5), "settings: expected a mapping of decoder settings, got 5"),
        (lambda model: hgner.evaluate(model, calibration="a"), "calibration: expected a number or None, got 'a'"),
        (lambda model: hgner.evaluate(model, predictions=5), "predictions: expected a file name or None, got 5"),
        (lambda model: hgner.evaluate(model, predictions=""), "predictions: expected a file name or None, got ''"),
        (lambda model: hgner.evaluate(model, sweep=[5]), "unknown evaluate option 'sweep'; expected one of: bootstrap, bootstrap_seed, calibration"),
    ],
)
def test_api_misuse_is_an_hgner_error_saying_what_was_expected(tag_model, misuse, message):
    with pytest.raises(HgnerError) as error:
        misuse(tag_model)
    assert message in str(error.value)


def test_evaluate_returns_the_report_the_cli_writes(tiny_model, tiny_corpus, tmp_path, capsys):
    corpus = tmp_path / "gold.conll"
    with open(corpus, "w") as out:
        write_conll(out, tiny_corpus, [s.tags for s in tiny_corpus.sentences])
    report = hgner.evaluate(tiny_model.directory, str(corpus), ["viterbi", "herded"], sweeps=[20]).to_json()
    assert main(["evaluate", "--model", str(tiny_model.directory), "--corpus", str(corpus), "--decoders", "viterbi,herded",
                 "--sweeps", "20", "--json", str(tmp_path / "report.json")]) == 0
    printed = capsys.readouterr().out
    written = json.loads((tmp_path / "report.json").read_text())

    def timeless(r):
        return {k: ([timeless(x) for x in v] if k == "results" else v) for k, v in r.items() if k not in TIMES}

    assert timeless(json.loads(json.dumps(report))) == timeless(written)
    assert [r["decoder"] for r in report["results"]] == ["viterbi", "herded"] and f"{report['results'][0]['f1']:.2f}" in printed
    importlib.import_module("hgner.evaluation")  # the module that does the work does not shadow the API function
    assert hgner.evaluate is importlib.import_module("hgner.api").evaluate
    with pytest.raises(HgnerError, match="settings sweeps=...: give sweeps with sweeps"):
        hgner.evaluate(tiny_model.directory, str(corpus), ["herded"], settings={"sweeps": 5})
    with pytest.raises(UnknownNameError, match="expected one of: damping"):
        hgner.evaluate(tiny_model.directory, str(corpus), ["viterbi", "meanfield"], settings={"dampnig": 0.5})
    with pytest.raises(HgnerError, match="mode: expected one of conlleval, strict, got 'lenient'"):
        hgner.evaluate(tiny_model.directory, str(corpus), mode="lenient")
    with pytest.raises(HgnerError, match="documents: expected auto, corpus, sentence or a whole number >= 1, got 'foo'"):
        hgner.evaluate(tiny_model.directory, str(corpus), documents="foo")
    meta = tiny_model.directory / "meta.json"
    before = meta.read_bytes()
    with pytest.raises(HgnerError, match="is also an input"):  # a model file is an input too
        hgner.evaluate(tiny_model.directory, str(corpus), predictions=meta)
    assert meta.read_bytes() == before


def test_listings(tag_model):
    from hgner.crf.modelfiles import builtin_models
    from hgner.decoders import available_decoders

    assert hgner.available_decoders() == available_decoders() and "viterbi" in hgner.available_decoders()
    assert hgner.available_models() == builtin_models()
    info = hgner.model_info(tag_model)
    assert (info.labels, info.scheme, info.language, info.path) == (["LOC", "MISC", "ORG", "PER"], "IO", "en", tag_model)
    assert info.size == sum(p.stat().st_size for p in tag_model.iterdir() if p.is_file())


@pytest.mark.parametrize(("field", "value", "message"), [
    ("scores", {"dev": {"conll2003:testa": {"precision": 90}}}, r"scores\.dev\.conll2003:testa: missing required field 'f1'"),
    ("dev", {"corpus": "x", "f1": "high"}, r"dev\.f1: expected an F1 score 0\.\.100, got 'high'"),
])
def test_model_info_checks_the_figures_it_reads(tag_model, tmp_path, field, value, message):
    import shutil

    from hgner.core.errors import ModelError

    directory = tmp_path / "model"
    shutil.copytree(tag_model, directory)
    meta = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
    (directory / "meta.json").write_text(json.dumps({**meta, field: value}), encoding="utf-8")
    seal(directory, SEALED_FILES)  # resealed: the checks behind the seal are tested
    with pytest.raises(ModelError, match=message):
        hgner.model_info(directory)


def api_section() -> str:
    text = PYTHON_GUIDE.read_text(encoding="utf-8")
    return text[text.index("<!-- api:start -->"):text.index("<!-- api:end -->")]


@pytest.mark.parametrize(("name", "options"), [("load", "hgner.tagging.settings:TagSettings"),
                                             ("evaluate", "hgner.evaluation.options:EvaluateOptions")])
def test_readme_gives_each_functions_parameters(name, options):
    """Every parameter the README lists is one the function takes: its own, or a field of the
    settings object it builds (its ``**`` keywords)."""
    import dataclasses
    import inspect

    module, _, cls = options.partition(":")
    listed = re.search(rf"`hgner\.{name}\(([^`]*)\)(?: -> \w+)?`", api_section()).group(1)
    names = re.findall(r"(?<![\w\"'])([a-z_]\w*)\s*(?==|,|$)", " ".join(listed.split()))  # not quoted defaults
    accepted = set(inspect.signature(getattr(hgner, name)).parameters)
    accepted |= {f.name for f in dataclasses.fields(getattr(importlib.import_module(module), cls))}
    assert names and set(names) <= accepted

