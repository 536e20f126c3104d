"""Issue 60 item 2: how many entity tokens of the dev sets that eng.train never shows get a word
cluster (``cK=`` features, looked up as hgner looks them up: as written, then in lower case),
from the shipped Brown table (en-conll03's ``word_clusters.npz``) and from a GloVe table made by
``tools/build_glove_clusters.py``.

Usage: HGNER_MIRROR=... python experiments/glove_coverage.py GLOVE.json [--model en-conll03]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from hgner.crf.model import CrfModel
from hgner.data.corpus import Corpus, load_corpus
from hgner.features import FeatureResources

DEV_SETS = ("conll2003:testa", "wikigold")


def entity_tokens(corpus: Corpus) -> Counter[tuple[str, str]]:
    """(token, entity type) of each token inside an entity, counted."""
    return Counter((token, tag.rpartition("-")[2]) for document in corpus.documents for sentence in document.sentences
                   for token, tag in zip(sentence.tokens, sentence.tags or (), strict=False) if tag != "O")


def covered(resources: FeatureResources, tokens: Counter[tuple[str, str]]) -> dict[str, float]:
    """The share of ``tokens`` (by occurrence), overall and per entity type, that have a cluster."""
    shares: dict[str, float] = {}
    for label in ["all", *sorted({t for _, t in tokens})]:
        chosen = {k: n for k, n in tokens.items() if label in ("all", k[1])}
        have = sum(n for (word, _), n in chosen.items() if resources.cluster_attributes(word))
        shares[label] = round(100 * have / max(1, sum(chosen.values())), 1)
    return shares


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("glove", type=Path)
    parser.add_argument("--model", default="en-conll03")
    arguments = parser.parse_args()
    tables = {"brown": FeatureResources(word_clusters=CrfModel.load(arguments.model).resources.word_clusters),
              "glove": FeatureResources(word_clusters=json.loads(arguments.glove.read_text(encoding="utf-8")))}
    seen = {t for d in load_corpus("conll2003:train").documents for s in d.sentences for t in s.tokens}
    for name in DEV_SETS:
        tokens = entity_tokens(load_corpus(name))
        unseen = Counter({k: n for k, n in tokens.items() if k[0] not in seen})
        print(json.dumps({"corpus": name, "entity_tokens": sum(tokens.values()), "unseen": sum(unseen.values()),
                          "unseen_types": len({w for w, _ in unseen}),
                          **{table: covered(resources, unseen) for table, resources in tables.items()}}))


if __name__ == "__main__":
    main()
