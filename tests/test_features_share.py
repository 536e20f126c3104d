"""The capitalised-share features (``FeatureConfig.capitalised_share``: ``cs=`` / ``cu=`` buckets of
how often a word is capitalised / all upper case in a large outside corpus), their table as a model
resource, and the builder of that table from a table of word probabilities (tools/build_models.py)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from hgner.core.errors import ModelError
from hgner.features import CAPITALISED_SHARE_FILE, FeatureConfig, FeatureResources, document_features

SHARES = FeatureResources(capitalised_share={"26 1": ["laboratory"], "12 5": ["era"], "93 0": ["siemens"],
                                             "92 0": ["paris"], "8 0": ["the"], "95 90": ["nato"]})
TENTHS = FeatureConfig(capitalised_share=10)


def shares_of(tokens, config=TENTHS, resources=SHARES):
    return [sorted(a for a in token if a.lstrip("~").startswith(("cs=", "cu=")))
            for token in document_features([tokens], config, resources)[0]]


def test_known_words_get_their_shares_in_buckets_whatever_their_case():
    found = shares_of(["The", "Laboratory", "of", "ERA", "in", "Paris", ",", "1996"])
    assert found[0] == ["cs=1", "cu=0"]  # 8% capitalised: 0.8 tenths, rounded
    assert found[1] == ["cs=3", "cu=0"]  # a capitalised common noun: 26%
    assert found[3] == ["cs=1", "cu=1"]  # looked up by its lowercase form (12%, 5%: rounded half up)
    assert found[5] == ["cs=9", "cu=0"]  # a name: 92%
    assert found[2] == ["cs=?"]  # a word with a letter that the table lacks
    assert found[6] == found[7] == []  # no letter: nothing


def test_buckets_round_half_up_and_reach_the_count():
    quarters = FeatureConfig(capitalised_share=4)
    resources = FeatureResources(capitalised_share={"0 0": ["a"], "12 13": ["b"], "50 62": ["c"], "100 100": ["d"]})
    assert shares_of(["a", "b", "c", "d"], quarters, resources) == [
        ["cs=0", "cu=0"], ["cs=0", "cu=1"], ["cs=2", "cu=2"], ["cs=4", "cu=4"]]


def test_no_share_attributes_when_the_feature_is_off():
    assert shares_of(["The", "Laboratory"], FeatureConfig()) == [[], []]
    assert FeatureConfig.from_json({"window": 2}).capitalised_share == 0  # a model stored before the field: off


def test_caseless_sentences_give_the_shares_weights_of_their_own():
    config = FeatureConfig(truecase=True, caseless_features=True, capitalised_share=10)
    cased, headline = document_features([["Siemens", "opened", "a", "laboratory", "."],
                                         ["SIEMENS", "OPENS", "LABORATORY"]], config, SHARES)
    assert "cs=9" in cased[0] and "cs=3" in cased[3] and not any(a.startswith("~") for t in cased for a in t)
    assert "~cs=9" in headline[0] and "~cu=0" in headline[0] and "cs=9" not in headline[0]
    assert "~cs=3" in headline[2] and "~cs=?" in headline[1]
    shared = document_features([["SIEMENS", "OPENS", "LABORATORY"]], FeatureConfig(truecase=True, capitalised_share=10),
                               SHARES)[0]
    assert "cs=9" in shared[0]  # without caseless_features the cased weights are shared


def test_the_table_round_trips_and_a_bad_one_is_refused_naming_the_file(tmp_path):
    assert SHARES.save(tmp_path) == [CAPITALISED_SHARE_FILE]
    assert FeatureResources.load(tmp_path) == SHARES
    table = tmp_path / CAPITALISED_SHARE_FILE
    for content, expected in [('{"12": ["era"]}', "'12': not a valid key"),
                              ('{"12 101": ["era"]}', "'12 101': not a valid key"),
                              ('{"12 05": ["era"]}', "'12 05': not a valid key"),
                              ('{"12 5": "era"}', "12 5: expected a list of words, got 'era'"),
                              ('{"12 5": [""]}', "12 5: expected a non-empty string, got ''"),
                              ('{"12 5": ["era"], "13 5": ["era"]}', "word 'era' is listed twice (shares 12 5 and 13 5)"),
                              ('["era"]', "top level: expected an object mapping 'C U'"),
                              ('{"12 5": ["era"', "not valid JSON")]:
        table.write_text(content, encoding="utf-8")
        with pytest.raises(ModelError, match=r"^" + str(table).replace("\\", "\\\\") + ": ") as error:
            FeatureResources.load(tmp_path)
        assert expected in str(error.value)


@pytest.fixture(scope="module")
def build_models():
    scripts = str(Path(__file__).resolve().parent.parent / "tools")
    sys.path.insert(0, scripts)
    try:
        import build_models
    finally:
        sys.path.remove(scripts)
    return build_models


def test_builder_on_a_tiny_probability_table(build_models):
    log = math.log
    probabilities = {"era": log(0.08), "Era": log(0.01), "ERA": log(0.01),  # of 0.1: 20% capitalised, 10% upper
                     "Siemens": log(0.002), "SIEMENS": log(0.0001), "siemens": log(1e-12),  # below the floor: left out
                     "milepost": log(1e-6), "1996": log(0.01), "iPhone": log(0.001), "McDonald": log(1e-5),
                     "'s-Hertogenbosch": log(1e-5), "rare": log(1e-12)}
    table = build_models.capitalised_shares(probabilities, least=log(1e-9))
    # the first letter decides: iPhone and 's-Hertogenbosch do not start with a capital, McDonald does
    assert table == {"20 10": ["era"], "100 5": ["siemens"], "0 0": ["'s-hertogenbosch", "iphone", "milepost"],
                     "100 0": ["mcdonald"]}
    assert list(table) == sorted(table)  # written in a stable order
    resources = FeatureResources(capitalised_share=table)
    assert resources.repeated_share_word() is None
    assert shares_of(["ERA", "Milepost", "Siemens"], resources=resources) == [["cs=2", "cu=1"], ["cs=0", "cu=0"],
                                                                               ["cs=10", "cu=1"]]


def test_neighbour_shares_are_given_one_position_away_only():
    config = FeatureConfig(window=2, capitalised_share=10, neighbour_shares=True)
    features = document_features([["the", "Laboratory", "in", "Paris"]], config, SHARES)[0]
    given = [sorted(a for a in token if ":c" in a) for token in features]
    assert given[0] == ["1:cs=3", "1:cu=0"]  # Laboratory's, to the token before it
    assert given[1] == ["-1:cs=1", "-1:cu=0", "1:cs=?"]  # "in" is not in the table
    assert given[3] == ["-1:cs=?"] and not any("2:c" in a for a in given[2])  # nothing from two positions away
    assert not any(":c" in a for t in document_features([["the", "Laboratory"]], TENTHS, SHARES)[0] for a in t)


def test_neighbour_shares_need_the_capitalised_share():
    from hgner.training import TrainOptions

    with pytest.raises(ModelError, match="neighbour_shares.* adds to the capitalised-share features"):
        TrainOptions(config=FeatureConfig(neighbour_shares=True))
