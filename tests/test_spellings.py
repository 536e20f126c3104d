"""The outside truecasing table as a model stores it (hgner/features/spellings.py): it reads back
as the mapping it was made from, looks words up as a dict does, and a file that does not fit is
refused, naming the file and the array."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hgner.core.errors import ModelError
from hgner.features import FeatureResources
from hgner.features.packed import pack_strings
from hgner.features.spellings import AS_WRITTEN, SPELLED, TITLE, UPPER, SpellingTable

TABLE = {"paris": "Paris", "the": "the", "nasa": "NASA", "mcdonald": "McDonald", "ibm": "IBM", "é": "É", "": "x"}


def test_each_spelling_is_made_from_its_form_or_spelled_out():
    table = SpellingTable.from_mapping(TABLE)
    assert table.forms == sorted(TABLE)
    kinds = dict(zip(table.forms, table.kinds))
    assert (kinds["the"], kinds["paris"], kinds["nasa"], kinds["mcdonald"], kinds["é"]) == (
        AS_WRITTEN, TITLE, UPPER, SPELLED, TITLE)
    assert table.spellings == ["x", "McDonald"]  # the spelled-out ones, in the forms' order


def test_it_looks_words_up_as_a_dict_does():
    table = SpellingTable.from_mapping(TABLE)
    assert dict(table.items()) == TABLE and len(table) == len(TABLE) and list(table) == sorted(TABLE)
    assert table["mcdonald"] == "McDonald" and table.get("ibm") == "IBM" and "paris" in table
    assert table.get("london") is None and table.get("london", "?") == "?" and "london" not in table and 1 not in table
    with pytest.raises(KeyError):
        table["london"]
    assert table == TABLE and table == SpellingTable.from_mapping(dict(TABLE)) and table != {"paris": "PARIS"}


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(max_size=6), st.text(max_size=6), max_size=30), st.lists(st.text(max_size=6), max_size=10))
def test_a_saved_table_reads_back_and_answers_as_the_dict(tmp_path_factory, mapping, queries):
    path = tmp_path_factory.mktemp("table") / "outside_truecase.npz"
    mapping = {form: spelling for form, spelling in mapping.items()
               if not any("\ud800" <= c <= "\udfff" for c in form + spelling)}  # (not text: refused before saving)
    SpellingTable.from_mapping(mapping).save(path)
    loaded = SpellingTable.load(path)
    assert loaded == SpellingTable.from_mapping(mapping) and dict(loaded.items()) == mapping
    for query in [*queries, *mapping]:
        assert loaded.get(query) == mapping.get(query)


def test_feature_resources_take_any_mapping_and_save_the_arrays(tmp_path):
    resources = FeatureResources(truecase={"paris": "Paris"}, outside_truecase=TABLE)
    assert isinstance(resources.outside_truecase, SpellingTable)
    assert sorted(resources.save(tmp_path)) == ["outside_truecase.npz", "truecase.json"]
    assert FeatureResources.load(tmp_path) == resources
    assert FeatureResources().save(tmp_path) == []  # empty tables write nothing


def _arrays(**changes: np.ndarray) -> dict[str, np.ndarray]:
    table = SpellingTable.from_mapping({"b": "B", "c": "c", "d": "dD"})
    arrays = {**pack_strings("forms", table.forms), "kinds": np.frombuffer(table.kinds, np.uint8),
              **pack_strings("spellings", table.spellings)}
    return {**arrays, **changes}


@pytest.mark.parametrize(("changes", "message"), [
    ({**pack_strings("forms", ["c", "b", "d"])}, "forms: expected distinct forms in sorted order"),
    ({**pack_strings("forms", ["b", "b", "d"])}, "forms: expected distinct forms in sorted order"),
    ({"kinds": np.array([1, 0, 4], np.uint8)}, "kinds: expected values 0..3, got 4"),
    ({"kinds": np.array([1, 0, 3], np.int64)}, "kinds: expected shape (3,) of uint8, got (3,) of int64"),
    ({"kinds": np.array([1, 0], np.uint8)}, "kinds: expected shape (3,) of uint8, got (2,) of uint8"),
    ({"kinds": np.array([1, 3, 3], np.uint8)}, "spellings: expected 2 (one per form of kind 3), got 1"),
    ({"forms_utf8": np.frombuffer(b"\xffcd", np.uint8)}, "forms: not UTF-8"),
    ({"forms_ends": np.array([1, 3, 2], np.int64)}, "forms: end offsets out of order or range"),
    ({"extra": np.zeros(1)}, "holds ['extra', 'forms_ends'"),
])
def test_a_table_that_does_not_fit_is_refused_naming_the_array(tmp_path, changes, message):
    path = tmp_path / "outside_truecase.npz"
    np.savez(path, **_arrays(**changes))
    with pytest.raises(ModelError, match=r"^.*outside_truecase\.npz: ") as error:
        SpellingTable.load(path)
    assert message in str(error.value)


def test_a_pickled_array_is_refused(tmp_path):
    path = tmp_path / "outside_truecase.npz"
    np.savez(path, **_arrays(kinds=np.array([{"a": 1}], dtype=object)))
    with pytest.raises(ModelError, match="outside_truecase.npz: cannot read"):
        SpellingTable.load(path)
