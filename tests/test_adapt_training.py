"""``hgner train --base``: a tiny base model adapted to a few sentences that add a type, end to end,
and what adaptation reads from the base model's ``meta.json``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hgner.cli import main
from hgner.crf.model import CrfModel
from hgner.data.corpus import read_conll
from hgner.training.adapt import ADAPTATION_METHODS, held_out, method_names, mix, split_corpus_name
from hgner.training.crf import SOURCE_MARK, source_copies

BASE_CORPUS = str(Path(__file__).parent / "fixtures" / "tag_train.conll")
PRODUCTS = ["iPhone", "Galaxy", "Pixel", "Kindle"]
NAMES = [("Angela", "Merkel"), ("Anna", "Berg"), ("John", "Smith")]


def _user_file(folder: Path, n: int = 24) -> Path:
    """``n`` sentences with a type the base corpus lacks (PROD), and no MISC or ORG."""
    sentences = []
    for i in range(n):
        first, last = NAMES[i % 3]
        tokens = [(first, "B-PER"), (last, "I-PER"), ("bought", "O"), ("a", "O"), (PRODUCTS[i % 4], "B-PROD"),
                  ("in", "O"), ("Tokyo", "B-LOC"), (".", "O")]
        sentences.append("\n".join(f"{t}\t{g}" for t, g in tokens))
    path = folder / "user.conll"
    path.write_text("\n\n".join(sentences) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def base_model(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("base") / "base"
    assert main(["train", "--train", BASE_CORPUS, "--out", str(out), "--max-iterations", "30"]) == 0
    return out


@pytest.mark.parametrize("method", ["augment-weight", "concatenate"])
def test_a_tiny_base_adapted_to_sentences_with_a_new_type(tmp_path, capsys, base_model, method):
    user = _user_file(tmp_path)
    out = tmp_path / "adapted"
    assert main(["train", "--base", str(base_model), "--train", str(user), "--out", str(out), "--adapt-method", method,
                 "--max-iterations", "30"]) == 0
    err = capsys.readouterr().err
    assert f"adapting base to {user} by {method}" in err and "MISC, ORG dropped" in err
    assert "set apart to tune the skip weight and the calibration factor (4 sentences" in err
    meta = json.loads((out / "meta.json").read_text(encoding="utf-8"))
    record = meta["adaptation"]
    assert record["base"] == "base" and record["method"] == method and record["base_corpus"] == BASE_CORPUS
    assert record["sentences"] == 20 and record["held_out"] == 4 and record["dropped_types"] == ["MISC", "ORG"]
    assert len(record["sha256"]) == 64 and record["weight"] == (10 if method == "augment-weight" else 1)
    assert "I-PROD" in meta["labels"] and "I-MISC" not in meta["labels"] and "calibration" in meta
    assert meta["features"] == json.loads((base_model / "meta.json").read_text(encoding="utf-8"))["features"]
    assert main(["tag", "--model", str(out), "--text", "Anna Berg bought a Kindle in Tokyo."]) == 0
    assert "[Kindle](PROD)" in capsys.readouterr().out
    augmented = any(a.startswith(SOURCE_MARK) for a in CrfModel.load(out).attribute_index)
    assert augmented == (method == "augment-weight")
    assert main(["train", "--base", str(out), "--train", str(user), "--out", str(tmp_path / "again")]) == 2
    assert f"--base: model adapted is itself adapted ({method} on base); adapt its base" in capsys.readouterr().err


def test_features_and_language_come_from_the_base(tmp_path, capsys, base_model):
    user = _user_file(tmp_path)
    assert main(["train", "--base", str(base_model), "--train", str(user), "--out", str(tmp_path / "m"),
                 "--word-frequency"]) == 2
    assert "--word-frequency: with --base the features and word tables are the base model's" in capsys.readouterr().err
    assert main(["train", "--train", str(user), "--out", str(tmp_path / "m"), "--adapt-method", "weight"]) == 2
    assert "--adapt-method says how a base model is adapted: give --base too" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["train", "--base", str(base_model), "--train", str(user), "--out", str(tmp_path / "m"),
              "--adapt-method", "nope"])
    assert "unknown adaptation method 'nope'; expected one of: augment, augment-weight" in capsys.readouterr().err
    assert main(["train", "--base", str(base_model), "--train", str(user), "--out", str(tmp_path / "m"),
                 "--lang", "es"]) == 2
    assert "--lang es: model base is for 'en'" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()


def test_a_base_whose_corpus_is_gone_names_it(tmp_path, capsys):
    corpus = tmp_path / "gone.conll"
    corpus.write_text(Path(BASE_CORPUS).read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["train", "--train", str(corpus), "--out", str(tmp_path / "b"), "--max-iterations", "5"]) == 0
    corpus.unlink()
    capsys.readouterr()
    assert main(["train", "--base", str(tmp_path / "b"), "--train", str(_user_file(tmp_path)),
                 "--out", str(tmp_path / "m")]) == 2
    assert f"--base b: its training corpus {str(corpus)!r} cannot be read again" in capsys.readouterr().err


def test_a_small_training_corpus_gets_a_hint_about_base(tmp_path, capsys):
    assert main(["train", "--train", str(_user_file(tmp_path)), "--out", str(tmp_path / "m"),
                 "--max-iterations", "5"]) == 0
    err = capsys.readouterr().err
    assert "24 sentences, a small training corpus" in err and "--base en-conll03 adapts a model trained on a large corpus" in err


def test_the_recorded_corpus_name_gives_the_copies():
    assert split_corpus_name("conll2003:train+lower+upper") == ("conll2003:train", ("lower", "upper"), "")
    assert split_corpus_name("a+b.conll+prose-tables") == ("a+b.conll", (), "tables")
    assert split_corpus_name("x.conll+upper+prose") == ("x.conll", ("upper",), "all")


def test_source_copies_and_the_methods(tmp_path):
    assert source_copies([[["w=a", "s=X"]]]) == [[["w=a", "s=X", SOURCE_MARK + "w=a", SOURCE_MARK + "s=X"]]]
    assert method_names() == ["augment", "augment-weight", "concatenate", "weight"]
    base, user = read_conll(BASE_CORPUS), read_conll(_user_file(tmp_path, 5))
    for name in method_names():
        mixture = ADAPTATION_METHODS.get(name)(base, user)
        weight = 10 if "weight" in name else 1
        assert len(mixture.corpus.sentences) == len(base.sentences) + weight * 5
        assert mixture.source_documents == (len(base.documents) if name.startswith("augment") else 0)


def test_held_out_sets_every_fifth_sentence_apart(tmp_path):
    user = read_conll(_user_file(tmp_path, 24))
    kept, dev = held_out(user)
    assert dev is not None and len(dev.sentences) == 4 and len(kept.sentences) == 20
    assert held_out(read_conll(_user_file(tmp_path, 10)))[1] is None  # too few to set apart


def test_mix_drops_the_base_types_the_user_never_annotates(tmp_path, base_model):
    from hgner.training.adapt import base_recipe, read_base_corpus

    recipe = base_recipe(str(base_model))
    mixture, dropped = mix(recipe, read_base_corpus(recipe), read_conll(_user_file(tmp_path)), "concatenate")
    assert dropped == ["MISC", "ORG"]
    assert not any(tag.endswith(("MISC", "ORG")) for s in mixture.corpus.sentences for tag in s.tags or [])
