"""Word frequency buckets (hgner/features/frequencies.py): a model's table gives every word it
holds wordfreq's own bucket and any other word the lowest of its pieces', tagging with it never
imports wordfreq, and a table that does not fit is refused, naming the file and the array."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest
import wordfreq
from hypothesis import given, settings
from hypothesis import strategies as st

from hgner.core.errors import HgnerWarning, ModelError
from hgner.core.integrity import seal
from hgner.crf.model import CrfModel
from hgner.crf.modelfiles import META_FILE, SEALED_FILES, shipped_models_dir
from hgner.features import RECOMMENDED, WORD_FREQUENCY_FILE, FeatureResources, FrequencyTable, frequency_attribute
from hgner.features.frequencies import tabled
from hgner.features.packed import pack_strings
from hgner.training import TrainOptions
from hgner.training.crf import train

WORDS = ["the", "The", "THE", "Siemens", "siemens", "Paris", "Qxzvbnmw", "Antidisestablishmentarianism",
         "1996", "7", "07", "2030", "12345", "1,000", ",", "Zürich", "ZÜRICH", "Ñuñoa", "Straße", "STRASSE", "ĳs",
         "Ǆemal", "U.S.", "can't", "a", "I", "٣", "1996-12-06", "25.76", "well-struck", "Zwölftonstraße", "x" * 21,
         "Hamburg-Zürich", "ﬁnal"]


def wordfreqs_rule(word: str) -> str:
    """The bucket the English table should give ``word``, from wordfreq itself: its own for a word
    the table can hold, else the lowest of its runs of letters and of digits that the table can
    hold (``zf=?`` if none; ``zf=-`` for a word without a letter or digit)."""
    if tabled(word) or not any(c.isalnum() for c in word):
        return frequency_attribute(word, "en")
    pieces = [piece for piece in re.findall(r"[^\W\d_]+|\d+", word) if tabled(piece)]
    return f"zf={min(int(frequency_attribute(piece, 'en')[3:]) for piece in pieces)}" if pieces else "zf=?"


@pytest.fixture(autouse=True)
def _forget_patched_lists():
    """Tests here patch wordfreq's lists: what was looked up in them must not outlive the test
    (frequency_attribute and wordfreq each cache their answers)."""
    yield
    frequency_attribute.cache_clear()
    wordfreq._wf_cache.clear()


@pytest.fixture(scope="module")
def english() -> FrequencyTable:
    """The shipped English model's table."""
    return FrequencyTable.load(shipped_models_dir() / "en-conll03" / WORD_FREQUENCY_FILE)


def test_the_shipped_table_gives_wordfreqs_buckets(english):
    assert english.language == "en" and len(english) > 250_000 and english.latin and english.pieces
    for word in WORDS:
        assert english.attribute(word) == wordfreqs_rule(word), word
    assert english.attribute("Qxzvbnmw") == "zf=0" and english.attribute("THE") == english.attribute("the") != "zf=0"
    bucket = {word: int(frequency_attribute(word, "en")[3:]) for word in ("1996", "12", "06", "u", "s")}
    assert english.attribute("1996-12-06") == f"zf={min(bucket['1996'], bucket['12'], bucket['06'])}"
    assert english.attribute("U.S.") == f"zf={min(bucket['u'], bucket['s'])}"
    assert english.attribute("Zwölftonstraße") == english.attribute("٣") == "zf=?" and english.attribute(",") == "zf=-"


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(alphabet=st.characters(min_codepoint=48, max_codepoint=122), min_size=1, max_size=24),
                 st.text(alphabet=st.characters(min_codepoint=65, max_codepoint=0x24F), min_size=1, max_size=12),
                 st.integers(0, 99_999).map(str), st.integers(0, 300_000)))
def test_any_word_gets_the_bucket_of_wordfreqs_rule(english, word):
    if isinstance(word, int):  # a word of the table, as written, capitalised and in capitals
        word = english.words[word % len(english)].decode("utf-8")
        words = [word, word.title(), word.upper()]
    else:
        words = [word]
    for one in words:
        assert english.attribute(one) == wordfreqs_rule(one)


def test_a_table_is_made_of_the_lowercase_words_of_letters_of_wordfreqs_list(monkeypatch):
    listed = {"the": 0.05, "siemens": 1e-6, "zürich": 1e-6, "straße": 1e-6, "ĳs": 1e-7, "москва": 1e-6, "a1": 1e-7,
              "Paris": 1e-5, "x" * 21: 1e-8, "é" * 11: 1e-8}
    monkeypatch.setattr(wordfreq, "get_frequency_dict", lambda language, wordlist="best": listed)
    table = FrequencyTable.from_wordfreq("en")
    words = [word.decode("utf-8") for word in table.words.tolist()]
    # no other script, no letter that casefold or NFKC would change, no digit, capital or word over 20 bytes
    assert [w for w in words if not w.isdigit()] == ["siemens", "the", "zürich"] and table.latin and table.pieces
    assert len(words) == 3 + 10 + 100 + 1_000 + 10_000 and {"0", "7", "07", "1996", "0000", "9999"} <= set(words)
    for word in ("siemens", "the", "1996", "07"):
        assert table.attribute(word) == frequency_attribute(word, "en")


def test_where_wordfreq_rewrites_latin_letters_the_table_holds_ascii_words_only(monkeypatch):
    monkeypatch.setattr(wordfreq, "get_frequency_dict", lambda language, wordlist="best": {"și": 1e-3, "zürich": 1e-6,
                                                                                          "casa": 1e-4})
    table = FrequencyTable.from_wordfreq("ro")  # (Romanian: wordfreq turns cedillas into commas)
    assert not table.latin and [w for w in table.words.tolist() if not w.isdigit()] == [b"casa"]
    assert table.attribute("Zürich") == "zf=?" and table.attribute("Casa-Zürich") == frequency_attribute("casa", "ro")


def test_a_table_written_before_the_latin_letters_answers_for_ascii_words_only(tmp_path, monkeypatch):
    path = tmp_path / WORD_FREQUENCY_FILE
    np.savez(path, **_arrays())  # (no "latin" array: ASCII letters only; no "pieces": others ask wordfreq)
    table = FrequencyTable.load(path)
    assert not table.latin and not table.pieces and table.attribute("Cat") == "zf=4"
    monkeypatch.setattr(wordfreq, "get_frequency_dict", lambda language, wordlist="best": {"zürich": 1e-6})
    assert table.attribute("Zürich") == frequency_attribute("Zürich", "en")  # wordfreq, not a missing entry's 0
    assert FrequencyTable.load(path) == table
    assert FrequencyTable(table.language, table.words, table.buckets, True, False) != table
    assert FrequencyTable(table.language, table.words, table.buckets, False, True) != table


def test_a_table_written_before_the_pieces_asks_wordfreq_about_words_it_cannot_hold(tmp_path, monkeypatch):
    path = tmp_path / WORD_FREQUENCY_FILE
    np.savez(path, **_arrays(latin=np.array(True)))  # (no "pieces" array, as a model trained before the rule)
    table = FrequencyTable.load(path)
    assert table.latin and not table.pieces
    monkeypatch.setattr(wordfreq, "get_frequency_dict", lambda language, wordlist="best": {"cat-the": 1e-6})
    assert table.attribute("cat-the") == frequency_attribute("cat-the", "en") != "zf=4"  # not the pieces' lowest
    np.savez(path, **_arrays(latin=np.array(True), pieces=np.array(True)))
    assert FrequencyTable.load(path).attribute("cat-the") == "zf=4"


@pytest.mark.parametrize("language", ["tr", "az", "zh", "ja", "xx"])
def test_no_table_where_wordfreq_would_not_fold_ascii_words_as_lower_does(language):
    assert FrequencyTable.from_wordfreq(language) is None  # (Turkish I folds to dotless i; Chinese is segmented)


def test_a_saved_table_reads_back(tmp_path, monkeypatch):
    monkeypatch.setattr(wordfreq, "get_frequency_dict", lambda language, wordlist="best": {"the": 0.05, "cat": 1e-5})
    table = FrequencyTable.from_wordfreq("en")
    resources = FeatureResources(word_frequency=table)
    assert resources.save(tmp_path) == [WORD_FREQUENCY_FILE]
    assert FeatureResources.load(tmp_path) == resources and FrequencyTable.load(tmp_path / WORD_FREQUENCY_FILE) == table
    assert resources.frequency_attribute("Cat", "en") == frequency_attribute("cat", "en")
    assert FeatureResources().frequency_attribute("Cat", "en") == frequency_attribute("cat", "en")  # no table: wordfreq


def _arrays(**changes: np.ndarray) -> dict[str, np.ndarray]:
    arrays = {**pack_strings("language", ["en"]), "words": np.array([b"cat", b"the"], "S20"),
              "buckets": np.array([4, 7], np.uint8)}
    return {**arrays, **changes}


@pytest.mark.parametrize(("changes", "message"), [
    ({"words": np.array([b"the", b"cat"], "S20")}, "words: expected distinct words in sorted order"),
    ({"words": np.array([b"cat", b"cat"], "S20")}, "words: expected distinct words in sorted order"),
    ({"words": np.array([b"Cat", b"the"], "S20")}, "words: expected lowercase letters (ASCII or Latin, in UTF-8), or at most 4 digits"),
    ({"words": np.array([b"c t", b"the"], "S20")}, "words: expected lowercase letters (ASCII or Latin, in UTF-8), or at most 4 digits"),
    ({"words": np.array([b"", b"the"], "S20")}, "words: expected lowercase letters (ASCII or Latin, in UTF-8), or at most 4 digits"),
    ({"words": np.array([b"a1", b"the"], "S20")}, "words: expected lowercase letters (ASCII or Latin, in UTF-8), or at most 4 digits"),
    ({"words": np.array([b"12345", b"the"], "S20")}, "words: expected lowercase letters (ASCII or Latin, in UTF-8), or at most 4 digits"),
    ({"words": np.array(["cat", "the"])}, "words: expected (n,) byte strings of at most 20 bytes, got (2,) of <U3"),
    ({"words": np.array([b"cat", b"the"], "S21")}, "words: expected (n,) byte strings of at most 20 bytes"),
    ({"words": np.array([b"cat", "zürich".encode()], "S20")}, "words: expected ASCII letters only (latin is false)"),
    ({"words": np.array([b"\xbccat", b"the"], "S20"), "latin": np.array(True)}, "expected lowercase letters (ASCII or Latin"),
    ({"words": np.array([b"ca\xc3", b"the"], "S20"), "latin": np.array(True)}, "expected lowercase letters (ASCII or Latin"),
    ({"words": np.array([b"ca\xc3\xbc\xbc", b"the"], "S20"), "latin": np.array(True)}, "expected lowercase letters"),
    ({"latin": np.array([True])}, "latin: expected shape () of bool, got (1,) of bool"),
    ({"pieces": np.array(1)}, "pieces: expected shape () of bool, got () of int64"),
    ({"buckets": np.array([4, 10], np.uint8)}, "buckets: expected values 0..9, got 10"),
    ({"buckets": np.array([4], np.uint8)}, "buckets: expected shape (2,) of uint8, got (1,) of uint8"),
    ({**pack_strings("language", ["en", "de"])}, "language: expected one language code, got 2"),
    ({"extra": np.zeros(1)}, "holds ['buckets', 'extra'"),
    ({"extra": np.zeros(1)}, "(and optionally ['latin'] and ['pieces'], each whole or not at all)"),
])
def test_a_table_that_does_not_fit_is_refused_naming_the_array(tmp_path, changes, message):
    path = tmp_path / WORD_FREQUENCY_FILE
    np.savez(path, **_arrays(**changes))
    with pytest.raises(ModelError, match=r"^.*word_frequency\.npz: ") as error:
        FrequencyTable.load(path)
    assert message in str(error.value)


@pytest.fixture(scope="module")
def frequency_model(tmp_path_factory, tiny_corpus):
    """A tiny model with frequency features, its table made of a short list (wordfreq's buckets)."""
    patch = pytest.MonkeyPatch()
    patch.setattr(wordfreq, "get_frequency_dict", lambda language, wordlist="best": {"the": 0.05, "paris": 1e-5})
    try:
        directory = tmp_path_factory.mktemp("frequency") / "model"
        train(tiny_corpus, directory, TrainOptions(config=replace(RECOMMENDED, frequency="en"), max_iterations=10))
    finally:
        patch.undo()
    return directory


def test_training_stores_the_table(frequency_model):
    model = CrfModel.load(frequency_model)
    assert WORD_FREQUENCY_FILE in model.metadata["resources"] and WORD_FREQUENCY_FILE in model.metadata["files"]
    assert [w for w in model.resources.word_frequency.words.tolist() if w.isalpha()] == [b"paris", b"the"]


def _rewritten(model, tmp_path, change, drop: str = "") -> object:
    """A copy of ``model`` with its meta.json changed (and the file ``drop`` removed), resealed."""
    copy = tmp_path / "copy"
    shutil.copytree(model, copy)
    if drop:
        (copy / drop).unlink()
    meta = json.loads((copy / META_FILE).read_text())
    change(meta)
    (copy / META_FILE).write_text(json.dumps(meta))
    seal(copy, SEALED_FILES)
    return copy


def test_a_table_the_features_do_not_use_is_refused(frequency_model, tmp_path):
    copy = _rewritten(frequency_model, tmp_path, lambda meta: meta["features"].update(frequency=""))
    with pytest.raises(ModelError, match=r"meta\.json: resources list word_frequency\.npz but features\.frequency is empty"):
        CrfModel.load(copy)


def test_a_table_of_another_language_is_refused(frequency_model, tmp_path):
    copy = _rewritten(frequency_model, tmp_path, lambda meta: meta["features"].update(frequency="de"))
    with pytest.raises(ModelError, match=r"word_frequency\.npz: made for language 'en', expected the features' 'de'"):
        CrfModel.load(copy)


def test_a_model_without_the_table_asks_wordfreq(frequency_model, tmp_path):
    def without(meta):
        meta["resources"].remove(WORD_FREQUENCY_FILE)
        del meta["files"][WORD_FREQUENCY_FILE]
    copy = _rewritten(frequency_model, tmp_path, without, drop=WORD_FREQUENCY_FILE)
    with pytest.warns(HgnerWarning, match=r"types\.npz: made for other"):  # (made with the table: rows made again)
        model = CrfModel.load(copy)
    assert model.resources.word_frequency is None
    assert model.resources.frequency_attribute("Qxzv", "en") == "zf=0"


def test_tagging_new_words_never_imports_wordfreq():
    script = ("import sys, hgner; from hgner.crf.modelfiles import builtin_models; "
              "[hgner.load(name).tag('Zorblax Quentwhistle joined Siemens-Glarnberg on 1996-12-06 at 25.76 in the '"
              "'Zwölftonstraße , U.S. .') for name in builtin_models()]; print('wordfreq' in sys.modules)")
    output = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert output.split() == ["False"]
