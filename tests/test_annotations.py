"""Annotation tools' exports as training and evaluation corpora (:mod:`hgner.data.annotations`):
one sample per format written by hand to the tool's documented schema, read through hgner's
tokenizer; a span off token edges, a label that is no type and a damaged export are one error
naming the file and the record."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hgner.cli import main
from hgner.core.errors import HgnerError
from hgner.data.annotations import detect
from hgner.data.reading import read_tagged

HERE = Path(__file__).parent / "fixtures" / "annotations"
EXPECTED = [
    [("Angela", "B-PER"), ("Merkel", "I-PER"), ("visited", "O"), ("Acme", "B-ORG"), ("Corp.", "I-ORG"), ("in", "O"),
     ("Paris", "B-LOC"), ("on", "O"), ("Monday", "O"), (".", "O")],
    [("She", "O"), ("met", "O"), ("John", "B-PER"), ("Smith", "I-PER"), ("there", "O"), (".", "O")],
    [("The", "O"), ("Kindle", "B-PROD"), ("sold", "O"), ("well", "O"), ("in", "O"), ("Tokyo", "B-LOC"), (".", "O")],
]
SAMPLES = {"prodigy": "prodigy.jsonl", "doccano": "doccano.jsonl", "doccano-entities": "doccano_entities.jsonl",
           "label-studio": "label_studio.json", "brat": "brat", "brat-pair": "brat/news.txt"}


def _sentences(corpus):
    return [list(zip(s.tokens, s.tags)) for s in corpus.sentences]


@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_each_format_reads_as_iob2_sentences(sample):
    corpus, _ = read_tagged(str(HERE / SAMPLES[sample]), documents="corpus", announce=False)
    expected = EXPECTED[:2] if sample == "brat-pair" else EXPECTED
    assert _sentences(corpus) == expected and corpus.scheme == "IOB2"
    assert len(corpus.documents) == (1 if sample == "brat-pair" else 2)


def test_a_spacy_docbin(tmp_path):
    import spacy
    from spacy.tokens import DocBin

    nlp = spacy.blank("en")
    bin_ = DocBin()
    doc = nlp("The Kindle sold well in Tokyo.")
    doc.ents = [doc.char_span(4, 10, label="PROD"), doc.char_span(24, 29, label="LOC")]
    bin_.add(doc)
    path = tmp_path / "train.spacy"
    bin_.to_disk(path)
    corpus, _ = read_tagged(str(path), documents="corpus", announce=False)
    assert _sentences(corpus) == EXPECTED[2:]
    path.write_bytes(b"not a docbin")
    with pytest.raises(HgnerError, match=r"train.spacy: not a spaCy DocBin"):
        read_tagged(str(path), announce=False)


def test_formats_are_told_by_extension_content_or_name(tmp_path):
    assert detect(str(HERE / "prodigy.jsonl")) == ("prodigy", str(HERE / "prodigy.jsonl"))
    assert detect(str(HERE / "doccano_entities.jsonl"))[0] == "doccano"
    assert detect(str(HERE / "label_studio.json"))[0] == "label-studio"
    assert detect(str(HERE / "brat"))[0] == "brat" and detect(str(HERE / "brat" / "shop.ann"))[0] == "brat"
    copy = tmp_path / "export.txt"
    shutil.copy(HERE / "doccano.jsonl", copy)
    assert detect(f"doccano:{copy}") == ("doccano", str(copy))
    corpus, _ = read_tagged(f"doccano:{copy}", documents="corpus", announce=False)
    assert _sentences(corpus) == EXPECTED
    assert detect("conll2003:train") is None and detect(str(tmp_path / "x.conll")) is None
    conll = tmp_path / "named.json"
    conll.write_text("Angela B-PER\n", encoding="utf-8")
    assert detect(str(conll)) is None  # a CoNLL file whatever its name
    assert detect(f"label-studio:{conll}") == ("label-studio", str(conll))


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(("name", "content", "expected"), [
    ("a.jsonl", '{"text": "Angela Merkel", "spans": [{"start": 2, "end": 13, "label": "PER"}]}\n',
     r"a.jsonl:1: entity PER at 2-13 \('gela Merkel'\) does not fall on token edges: hgner's tokenizer reads "
     r"'Angela' at 0-6, 'Merkel' at 7-13"),
    ("b.jsonl", '{"text": "x"}\n{"text": "Angela Merkel", "label": [[0, 6, "my type"]]}\n',
     r"b.jsonl:2: label 'my type' at 0-6: not an entity type"),
    ("c.jsonl", '{"text": "Angela", "spans": []}\n{"text": "Angela", "spans": [{"start": 0, "end": 6, "label": "PER"}\n',
     r"c.jsonl:2: not a JSON record"),
    ("d.jsonl", '{"text": "Angela Merkel", "spans": [{"start": 0, "end": 13, "label": "PER"}, '
     '{"start": 7, "end": 13, "label": "PER"}]}\n', r"d.jsonl:1: entity PER at 7-13 overlaps another"),
    ("e.jsonl", '{"text": "Angela", "entities": [{"start_offset": "0", "end_offset": 6, "label": "PER"}]}\n',
     r"e.jsonl:1: entities\[0\].start_offset: expected a character offset \(a whole number\), got '0'"),
    ("f.json", '[{"data": {"text": "Angela"}, "annotations": [{"result": [{"type": "labels", "value": '
     '{"start": 0, "end": 99, "labels": ["PER"]}}]}]}]', r"f.json: task 1: entity 'PER' at 0-99: expected 0 <= start"),
    ("g.json", '[{"data": {"text": "Angela"}, "annotations": [', r"g.json: not valid JSON"),
    ("h.json", '{"data": {}}', r"h.json:1: \"text\": expected a string, got null"),
    ("i.json", '[1]', r"i.json: task 1: task: expected an object, got 1"),
])
def test_bad_exports_are_one_error_naming_the_file_and_record(tmp_path, capsys, name, content, expected):
    path = _write(tmp_path, name, content)
    with pytest.raises(HgnerError, match=expected):
        read_tagged(path, announce=False)
    assert main(["evaluate", "--model", "en-conll03", "--corpus", path]) == 2  # no traceback: exit 2
    assert "Traceback" not in capsys.readouterr().err


def test_brat_discontinuous_entity_and_missing_text(tmp_path):
    _write(tmp_path, "a.txt", "Angela Merkel\n")
    _write(tmp_path, "a.ann", "T1\tPER 0 6;7 13\tAngela Merkel\n")
    with pytest.raises(HgnerError, match=r"a.ann:1: a discontinuous entity \(';'\) cannot be tagged"):
        read_tagged(str(tmp_path / "a.ann"), announce=False)
    _write(tmp_path, "b.ann", "T1\tPER 0 6\tAngela\n")
    with pytest.raises(HgnerError, match=r"b.ann: its text b.txt is missing"):
        read_tagged(str(tmp_path / "b.ann"), announce=False)


def test_a_sentence_cut_inside_an_entity_is_joined(tmp_path):
    text = "He works at Yahoo! Inc. in Tokyo."
    path = _write(tmp_path, "j.jsonl", json.dumps({"text": text, "spans": [
        {"start": 12, "end": 23, "label": "ORG"}]}) + "\n")
    corpus, _ = read_tagged(path, documents="corpus", announce=False)
    assert len(corpus.sentences) == 1 and ("Inc.", "I-ORG") in _sentences(corpus)[0]


def test_train_and_evaluate_read_an_export(tmp_path, capsys):
    out = tmp_path / "m"
    assert main(["train", "--train", str(HERE / "prodigy.jsonl"), "--out", str(out), "--max-iterations", "10"]) == 0
    assert "I-PROD" in json.loads((out / "meta.json").read_text(encoding="utf-8"))["labels"]
    assert main(["evaluate", "--model", str(out), "--corpus", str(HERE / "label_studio.json")]) == 0
    assert "rejected or ignored" not in capsys.readouterr().err
