"""tools/build_glove_clusters.py on small vectors: bisecting k-means paths that hgner train reads
as word clusters (the GloVe package itself is not needed)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest


@pytest.fixture(scope="module")
def builder():
    scripts = str(Path(__file__).resolve().parent.parent / "tools")
    sys.path.insert(0, scripts)
    try:
        import build_glove_clusters
    finally:
        sys.path.remove(scripts)
    return build_glove_clusters


def test_paths_follow_the_bisections(builder, tmp_path):
    """Four tight groups of vectors, four leaves: each group one cluster, the paths a binary tree's
    (no path a prefix of another), and the table is one hgner train reads."""
    from hgner.training.tables import read_word_clusters

    rng = np.random.default_rng(0)
    centres = np.array([[10, 0, 0], [0, 10, 0], [0, 0, 10], [-10, -10, -10]], dtype=float)
    vectors = np.repeat(centres, 5, axis=0) + rng.normal(scale=0.1, size=(20, 3))
    paths = builder.bisecting_paths(vectors, leaves=4, seed=0).tolist()
    groups = [set(paths[i * 5:(i + 1) * 5]) for i in range(4)]
    assert all(len(g) == 1 for g in groups) and len(set.union(*groups)) == 4
    leaves = sorted(set(paths))
    assert not any(a != b and b.startswith(a) for a in leaves for b in leaves)
    table = {}
    for i, path in enumerate(paths):
        table.setdefault(path, []).append(f"w{i}")
    (tmp_path / "c.json").write_text(json.dumps(table))
    clusters, _, _ = read_word_clusters(str(tmp_path / "c.json"))
    assert sorted(clusters) == leaves


def test_identical_vectors_stay_one_leaf(builder):
    assert builder.bisecting_paths(np.ones((6, 2)), leaves=3, seed=0).tolist() == ["0"] * 6
