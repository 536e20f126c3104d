"""Model directories are never trusted: schemas, checksums, atomic retraining, validated training."""

import json
import math
import shutil
import stat

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hgner.core.errors import ModelError
from hgner.core.integrity import seal
from hgner.core.validation import check, check_string_table
from hgner.crf import skip
from hgner.crf.model import CrfModel
from hgner.crf.modelfiles import META_FILE, MODEL_FILE, SEALED_FILES, STARTS_FILE, refresh_files
from hgner.data.corpus import Corpus, Document, Sentence
from hgner.features import RECOMMENDED
from hgner.features.typecache import TYPES_FILE
from hgner.training import TrainOptions, WordTables
from hgner.training import skip as skip_training
from hgner.training.crf import train


@pytest.fixture(scope="module")
def full_model(tmp_path_factory, tiny_corpus):
    """A tiny model with every kind of file: truecase table, gazetteer, skip potential."""
    from dataclasses import replace

    directory = tmp_path_factory.mktemp("full") / "model"
    model = train(tiny_corpus, directory, TrainOptions(config=replace(RECOMMENDED, gazetteer=True), max_iterations=20), WordTables(gazetteer={"LOC": ["paris", "new york"]}))
    skip.save(skip_training.estimate(tiny_corpus, model), directory)
    return directory


@pytest.fixture()
def copy(full_model, tmp_path):
    target = tmp_path / "copy"
    shutil.copytree(full_model, target)
    return target


def rewrite_meta(directory, change):
    meta = json.loads((directory / META_FILE).read_text())
    change(meta)
    (directory / META_FILE).write_text(json.dumps(meta))
    seal(directory, SEALED_FILES)  # resealed: the schema checks stand behind the seal


def test_meta_records_every_model_file(full_model):
    meta = json.loads((full_model / META_FILE).read_text())
    assert sorted(meta["files"]) == sorted(["model.crfsuite", "truecase.json", "gazetteer.json", "skip.npz", "skip.json", "types.npz",
                                           "sentence_starts.crfsuite"])
    model = CrfModel.load(full_model)
    assert skip.load(model).labels == model.labels


@pytest.mark.parametrize("name", ["model.crfsuite", "truecase.json", "gazetteer.json", "skip.npz", "skip.json"])
@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_a_damaged_file_is_an_error_before_crfsuite_sees_it(copy, name, damage):
    data = bytearray((copy / name).read_bytes())
    if damage == "truncate":
        data = data[:len(data) // 2]
    else:
        data[len(data) // 3] ^= 0x10
    (copy / name).write_bytes(bytes(data))
    with pytest.raises(ModelError, match=f"{name}: damaged"):
        CrfModel.load(copy)


@pytest.mark.parametrize("name", ["model.crfsuite", "truecase.json", "gazetteer.json", "skip.npz"])
def test_a_missing_recorded_file_is_an_error(copy, name):
    (copy / name).unlink()
    with pytest.raises(ModelError, match=f"{name}: missing .seal.json records it"):
        CrfModel.load(copy)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda m: m["features"].update(window=1e12), "features.window: expected an integer 0..10, got 1e12"),
        (lambda m: m["features"].update(window=10**12), "features.window: expected an integer 0..10, got 1000000000000"),
        (lambda m: m["features"].update(window="2"), "features.window: expected an integer 0..10, got '2'"),
        (lambda m: m.update(features=None), "features: expected an object of feature settings, got null"),
        (lambda m: m["features"].update(colour=1), "features: Additional properties are not allowed"),
        (lambda m: m.update(labels=["O", "I-<img src=x onerror=alert(1)>"]), "labels[1]: expected O, or B-/I-/E-/S-"),
        (lambda m: m.update(scheme="FOO"), "scheme: expected one of IO, IOB1, IOB2, BIOES, got 'FOO'"),
        (lambda m: m.pop("files"), "top level: missing required field 'files'"),
        (lambda m: m["files"]["model.crfsuite"].update(size=-1), "files.model.crfsuite.size: expected a byte count"),
        (lambda m: m.update(tokenizer={"name": 3}), "tokenizer: expected a string, or an object"),
        (lambda m: m.update(training="x"), "training: expected an object describing the training run"),
        (lambda m: m["resources"].remove("gazetteer.json"), "features.gazetteer is true but resources lack gazetteer"),
        (lambda m: m.update(scheme="IOB2"), "labels do not fit scheme IOB2: no B- label for type "),
        (lambda m: m["training"].update(sentences="many"), "training.sentences: expected a sentence count, got 'many'"),
        (lambda m: m["sentence_starts"].update(ended_penalty=-1), "sentence_starts.ended_penalty: expected a number from 0 "
                                                                  "to 100 (a start's score must beat it inside a sentence"),
        (lambda m: m["training"].update(corpus="a\x1b[31m"), "training.corpus: expected a corpus name (one line, no"),
        (lambda m: m["features"].update(gazetteer=False), "features.gazetteer is false but resources list gazetteer"),
        (lambda m: m["features"].update(truecase=False), "resources list truecase.json but features.truecase is false"),
    ],
)
def test_meta_json_schema_errors_name_the_field(copy, change, message):
    rewrite_meta(copy, change)
    with pytest.raises(ModelError) as error:
        CrfModel.load(copy)
    assert str(error.value).startswith(f"{copy / META_FILE}: ") and message in str(error.value)


@pytest.mark.parametrize("old, what, now", [("outside_truecase.json", "outside truecasing table", "outside_truecase.npz"),
                                            ("word_clusters.json", "word clusters", "word_clusters.npz")])
def test_a_table_in_an_older_hgners_format_is_named(copy, old, what, now):
    (copy / old).write_text('{"paris": "Paris"}')
    with pytest.raises(ModelError, match=rf"{old}: the {what} in an older hgner's format "
                       rf"\(now {now}\): retrain the model with this file as its {what}$"):
        CrfModel.load(copy)


def test_meta_json_accepts_fields_other_helpers_add(copy):
    rewrite_meta(copy, lambda m: m.update(language="en", tokenizer={"name": "spacy-blank", "version": 2}, documents=7))
    assert CrfModel.load(copy).metadata["language"] == "en"


@pytest.mark.parametrize("text", ["[]", "null", "[" * 100_000 + "]" * 100_000, '{"scheme": NaN}', "\xff", ""])
def test_meta_json_that_is_not_an_object_is_an_error(copy, text):
    (copy / META_FILE).write_bytes(text.encode("latin-1"))
    seal(copy, SEALED_FILES)
    with pytest.raises(ModelError, match=str(copy / META_FILE)):
        CrfModel.load(copy)


def test_word_tables_and_skip_files_are_checked_even_when_resealed(copy):
    (copy / "truecase.json").write_text(json.dumps({"paris": 3}))
    refresh_files(copy)
    with pytest.raises(ModelError, match=r"truecase.json: paris: expected a string, got 3"):
        CrfModel.load(copy)
    (copy / "truecase.json").write_text(json.dumps({}))
    (copy / "gazetteer.json").write_text(json.dumps({}))
    refresh_files(copy)
    with pytest.raises(ModelError, match=r"gazetteer.json: no entries, but the model's features.gazetteer is true"):
        CrfModel.load(copy)


def test_a_key_given_twice_in_meta_json_is_an_error(copy):
    text = (copy / META_FILE).read_text()
    (copy / META_FILE).write_text(text.replace('{', '{"scheme": "BIOES", ', 1))  # json would keep the last one
    seal(copy, SEALED_FILES)
    with pytest.raises(ModelError, match=r"meta.json: not valid JSON \(key 'scheme' appears twice in one object\)"):
        CrfModel.load(copy)


def test_skip_arrays_are_checked_before_loading(copy, tmp_path):
    np.save(copy / "skip.npz", np.zeros((5, 5)))  # a .npy under the .npz name
    (copy / "skip.npz.npy").rename(copy / "skip.npz")
    refresh_files(copy)
    with pytest.raises(ModelError, match="skip.npz: cannot read"):
        skip.load(CrfModel.load(copy))


def test_skip_json_types_are_checked(copy):
    meta = json.loads((copy / "skip.json").read_text())
    meta["config"]["previous"] = "1"
    (copy / "skip.json").write_text(json.dumps(meta))
    refresh_files(copy)
    with pytest.raises(ModelError, match=r"skip.json: config.previous: expected an integer 1..100, got '1'"):
        skip.load(CrfModel.load(copy))


def test_crfsuite_reader_refuses_a_resealed_truncated_model(copy):
    data = (copy / MODEL_FILE).read_bytes()
    (copy / MODEL_FILE).write_bytes(data[:-100])
    refresh_files(copy)
    with pytest.raises(ModelError, match="truncated"):
        CrfModel.load(copy)


def test_retraining_swaps_the_model_in_and_keeps_other_files(copy, tiny_corpus):
    (copy / "NOTES.md").write_text("mine")
    (copy / "word_clusters.json").write_text('{"0": ["Paris"]}')  # a table in an older hgner's format
    assert (copy / "skip.npz").is_file()
    model = train(tiny_corpus, copy, TrainOptions(max_iterations=5))
    assert (copy / "NOTES.md").read_text() == "mine"
    assert not (copy / "skip.npz").exists() and not (copy / "gazetteer.json").exists()  # the old model's files
    assert not (copy / "word_clusters.json").exists()
    assert sorted(model.metadata["files"]) == [MODEL_FILE, STARTS_FILE, TYPES_FILE]
    assert sorted(p.name for p in copy.parent.iterdir()) == ["copy"]  # no temporary folder left behind


def test_a_failed_retrain_leaves_the_previous_model(copy, tiny_corpus, monkeypatch):
    before = {p.name: p.read_bytes() for p in copy.iterdir()}
    import sklearn_crfsuite

    def fail(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(sklearn_crfsuite.CRF, "fit", fail)
    with pytest.raises(KeyboardInterrupt):
        train(tiny_corpus, copy, TrainOptions(max_iterations=5))
    assert {p.name: p.read_bytes() for p in copy.iterdir()} == before
    assert sorted(p.name for p in copy.parent.iterdir()) == ["copy"]
    CrfModel.load(copy)


def test_training_refuses_bad_targets(tmp_path, tiny_corpus):
    (tmp_path / "file").write_text("x")
    with pytest.raises(ModelError, match="exists and is not a directory"):
        train(tiny_corpus, tmp_path / "file", TrainOptions(max_iterations=5))
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "data.txt").write_text("x")
    with pytest.raises(ModelError, match="is not an hgner model folder"):
        train(tiny_corpus, tmp_path / "folder", TrainOptions(max_iterations=5))
    assert (tmp_path / "folder" / "data.txt").read_text() == "x"


def test_a_read_only_model_directory_is_left_alone(copy, tiny_corpus):
    before = {p.name: p.read_bytes() for p in copy.iterdir()}
    copy.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        with pytest.raises(ModelError, match="read-only"):
            train(tiny_corpus, copy, TrainOptions(max_iterations=5))
    finally:
        copy.chmod(stat.S_IRWXU)
    assert {p.name: p.read_bytes() for p in copy.iterdir()} == before


def corpus_of(tags_per_sentence):
    sentences = [Sentence([f"w{i}" for i in range(len(tags))], list(tags)) for tags in tags_per_sentence]
    return Corpus("c", "IOB2", [Document("d", sentences)] if sentences else [])


@pytest.mark.parametrize(
    ("tags", "label_map", "message"),
    [
        ([], None, "is empty"),
        ([[]], None, "is empty"),
        ([["O", "O"]], None, "has no entity types: every tag is O"),
        ([["B-PER", "O"]], {"PER": "O"}, "no entity types left after dropping PER \\(drop_types: it removes every type\\)"),
        ([["B-PER", "I-PER"]], None, "has a single label"),
        ([["B-<b>", "O"]], None, "label 'I-<b>' is not O or"),
    ],
)
def test_training_data_is_validated(tmp_path, tags, label_map, message):
    with pytest.raises(ModelError, match=message):
        train(corpus_of(tags), tmp_path / "m", TrainOptions(max_iterations=5, label_map=label_map))
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize(("c1", "c2", "iterations"), [(math.nan, 0, 5), (-1, 0, 5), (0, math.inf, 5), (0, 0, 0)])
def test_training_settings_are_validated(tmp_path, tiny_corpus, c1, c2, iterations):
    with pytest.raises(ModelError):
        train(tiny_corpus, tmp_path / "m", TrainOptions(c1=c1, c2=c2, max_iterations=iterations))


def test_training_that_stops_before_its_first_iteration_is_an_error(tmp_path, tiny_corpus):
    with pytest.raises(ModelError, match="stopped before its first iteration"):
        train(tiny_corpus, tmp_path / "m", TrainOptions(c1=1e9, max_iterations=5))
    assert not (tmp_path / "m").exists()


TABLE_VALUES = st.one_of(st.text(max_size=5), st.integers(), st.none(), st.lists(st.one_of(st.text(max_size=3), st.integers()), max_size=3))


@settings(max_examples=300, deadline=None)
@given(table=st.one_of(st.dictionaries(st.one_of(st.text(max_size=4), st.text("01", max_size=3)), TABLE_VALUES, max_size=4),
                       st.lists(st.integers(), max_size=2), st.none()),
       schema=st.sampled_from(["truecase", "gazetteer", "word_clusters"]))
def test_fast_table_check_agrees_with_jsonschema(table, schema, tmp_path_factory):
    def verdict(function):
        try:
            function(table, schema, "t.json")
        except ModelError:
            return False
        return True

    assert verdict(check_string_table) == verdict(check)


def test_retraining_through_a_symlink_replaces_the_directory_and_keeps_the_link(copy, tiny_corpus, tmp_path):
    link = tmp_path / "link"
    link.symlink_to(copy)
    train(tiny_corpus, link, TrainOptions(max_iterations=5))
    assert link.is_symlink() and not (copy / "skip.npz").exists()
    assert CrfModel.load(link).metadata["files"].keys() == {MODEL_FILE, TYPES_FILE, STARTS_FILE}


def test_models_info_refuses_what_loading_refuses(copy, capsys):
    from hgner.cli import main

    assert main(["models", "info", str(copy)]) == 0
    rewrite_meta(copy, lambda m: m["resources"].remove("gazetteer.json"))
    capsys.readouterr()
    assert main(["models", "info", str(copy)]) == 2
    assert "features.gazetteer is true but resources lack gazetteer.json" in capsys.readouterr().err


def test_a_pattern_ends_at_the_end_of_the_string(copy):
    """JSON Schema patterns are ECMA-262's: "$" does not match before a final newline, as Python's would."""
    rewrite_meta(copy, lambda m: m.update(language="en\n"))
    with pytest.raises(ModelError, match=r"language: expected a language code such as en, got 'en\\n'"):
        CrfModel.load(copy)


def test_a_json_string_that_is_not_text_is_an_error(tmp_path):
    from hgner.core.validation import read_json

    (tmp_path / "t.json").write_bytes(b'{"a": "\\ud800", "b": "\\ud83d\\ude00"}')
    with pytest.raises(ModelError, match=r"t.json: a string holds a lone UTF-16 surrogate"):
        read_json(tmp_path / "t.json")
    (tmp_path / "t.json").write_bytes(b'\xef\xbb\xbf{"b": "\\ud83d\\ude00"}')  # a byte-order mark and a pair: fine
    assert read_json(tmp_path / "t.json") == {"b": "\U0001f600"}


def test_retraining_swaps_in_one_step_and_a_signal_between_renames_waits(copy, tiny_corpus, monkeypatch):
    """Issue 40: a SIGTERM between the two renames left --out missing and the old model hidden."""
    import os
    import signal

    from hgner.core import process
    from hgner.crf import modelfiles as model_module

    (copy / "NOTES.md").write_text("mine")
    train(tiny_corpus, copy, TrainOptions(max_iterations=5))  # RENAME_EXCHANGE where the system has it
    assert (copy / "NOTES.md").read_text() == "mine" and CrfModel.load(copy)
    assert [p.name for p in copy.parent.iterdir() if p.name.startswith(".")] == []

    monkeypatch.setattr(model_module, "exchange_paths", lambda a, b: False)  # the fallback: two renames
    real_rename = os.rename
    renames = []

    def rename(source, target):
        real_rename(source, target)
        renames.append(target)
        if len(renames) == 1:
            os.kill(os.getpid(), signal.SIGTERM)  # between the two renames

    monkeypatch.setattr(model_module.os, "rename", rename)
    previous = process.install()
    try:
        with pytest.raises(process.Terminated):
            train(tiny_corpus, copy, TrainOptions(max_iterations=5))
    finally:
        process.restore(previous)
        process.received.clear()
    monkeypatch.setattr(model_module.os, "rename", real_rename)
    assert CrfModel.load(copy) and (copy / "NOTES.md").read_text() == "mine"


def test_a_signal_just_after_the_model_workspace_is_made_leaves_no_part_folder(tmp_path, monkeypatch):
    import os
    import signal
    import tempfile

    from hgner.crf import modelfiles

    real = tempfile.mkdtemp

    def then_interrupted(*args, **kwargs):
        made = real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)
        return made

    monkeypatch.setattr(modelfiles.tempfile, "mkdtemp", then_interrupted)
    with pytest.raises(KeyboardInterrupt), modelfiles.model_workspace(tmp_path / "model"):
        pass
    assert os.listdir(tmp_path) == []
