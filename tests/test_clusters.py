"""hgner.features.clusters: word clusters as a model stores them (sorted words, each with its
cluster's path), looked up by bisection, equal to the mapping they were made from, and checked
array by array when a model loads them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hgner.core.errors import ModelError
from hgner.features.clusters import ClusterTable
from hgner.features.packed import pack_strings, write_arrays

CLUSTERS = {"0110": ["Madrid", "México", "Roma"], "0111": ["Telefónica"], "10": ["el", "la"]}


def test_lookup_and_the_mapping_it_was_made_from(tmp_path):
    table = ClusterTable.from_mapping(CLUSTERS)
    assert table.path_of("México") == "0110" and table.path_of("la") == "10" and table.path_of("Lima") is None
    assert table == CLUSTERS and dict(table) == CLUSTERS and len(table) == 3 and table.repeated is None
    assert table != {**CLUSTERS, "10": ["el"]}
    table.save(tmp_path / "c.npz")
    first = (tmp_path / "c.npz").read_bytes()
    loaded = ClusterTable.load(tmp_path / "c.npz")
    assert loaded == table and loaded.path_of("Telefónica") == "0111"
    loaded.save(tmp_path / "again.npz")
    assert (tmp_path / "again.npz").read_bytes() == first  # the same table makes the same bytes


words = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8)


@given(st.dictionaries(words, st.sampled_from(["0", "1", "01", "110", "0001"]), max_size=30), words)
def test_every_word_is_found_in_its_cluster_and_no_other_word_is(cluster_of, other):
    table = ClusterTable.from_mapping({path: [w for w, p in cluster_of.items() if p == path]
                                       for path in sorted(set(cluster_of.values()))})
    assert all(table.path_of(word) == path for word, path in cluster_of.items())
    assert table.path_of(other) == cluster_of.get(other)


def _write(path, words, paths, clusters):
    write_arrays(path, {**pack_strings("words", words), **pack_strings("paths", paths),
                        "clusters": np.array(clusters, dtype=np.int32)})


@pytest.mark.parametrize("words, paths, clusters, expected", [
    (["b", "a"], ["0"], [0, 0], "words: expected distinct words in sorted order"),
    (["a", "a"], ["0"], [0, 0], "words: expected distinct words in sorted order"),
    (["a", "b"], ["0"], [0, 1], r"clusters: expected indices 0..0 into paths"),
    (["", "a"], ["0"], [0, 0], "words: expected non-empty words"),
    (["a", "b"], ["0", "2"], [0, 1], "paths: expected distinct strings of 1 to 64 0s and 1s, got '2'"),
    (["a", "b"], ["0", "0"], [0, 1], "paths: a path is listed twice"),
])
def test_a_damaged_table_is_a_model_error_naming_the_file_and_the_array(tmp_path, words, paths, clusters, expected):
    _write(tmp_path / "word_clusters.npz", words, paths, clusters)
    with pytest.raises(ModelError, match=rf"word_clusters.npz: {expected}"):
        ClusterTable.load(tmp_path / "word_clusters.npz")


def test_clusters_of_another_dtype_are_refused(tmp_path):
    write_arrays(tmp_path / "c.npz", {**pack_strings("words", ["a"]), **pack_strings("paths", ["0"]),
                                      "clusters": np.zeros(1, dtype=np.int64)})
    with pytest.raises(ModelError, match=r"c.npz: clusters: expected shape \(1,\) of int32, got \(1,\) of int64"):
        ClusterTable.load(tmp_path / "c.npz")
