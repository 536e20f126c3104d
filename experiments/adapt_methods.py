"""Which adaptation method ``hgner train --base`` uses by default (experiments/adapt_methods.md).

For each domain file of the adapt folder: the last third of its sentences is held out and scored;
200 sentences drawn at random (seed 1) from the first two thirds are the user's. Every method of
:data:`hgner.training.adapt.ADAPTATION_METHODS` adapts en-conll03 to them as ``hgner train --base``
does (no ``--dev``); the baselines are en-conll03 alone and the 200 sentences alone. One JSON line
per run is appended to ``experiments/adapt_methods.jsonl``::

    HGNER_MIRROR=/work/shared/corpora nice -n 10 python experiments/adapt_methods.py \\
        --adapt /work/shared/corpora/adapt re3d sec
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from hgner.crf.model import CrfModel
from hgner.data.corpus import Corpus, Document, read_conll, regroup_documents
from hgner.evaluation import EvaluateOptions, evaluate
from hgner.training.adapt import base_recipe, method_names, train_adapted
from hgner.training.crf import train

LOG = Path(__file__).with_name("adapt_methods.jsonl")


def split(path: Path, n: int, seed: int) -> tuple[Corpus, Corpus]:
    """The held-out last third of ``path``'s sentences (its documents kept) and ``n`` random
    sentences of the rest (in file order, groups of 40 as ``hgner train`` reads a file without
    documents)."""
    corpus = read_conll(path)
    sentences = [(k, s) for k, d in enumerate(corpus.documents) for s in d.sentences]
    cut = 2 * len(sentences) // 3
    held: dict[int, Document] = {}
    for k, sentence in sentences[cut:]:
        held.setdefault(k, Document(corpus.documents[k].name, [])).sentences.append(sentence)
    chosen = sorted(random.Random(seed).sample(range(cut), n))
    user = Corpus(f"{path.stem}-{n}", corpus.scheme, [Document("user", [sentences[i][1] for i in chosen])])
    return replace(corpus, name=f"{path.stem}-heldout", documents=list(held.values())), regroup_documents(user, 40)


def f1(model: CrfModel, corpus: Corpus) -> float:
    return round(evaluate(model, corpus, EvaluateOptions()).results[0].f1, 2)


def run(domain: str, adapt: Path, methods: list[str], n: int, seed: int) -> None:
    held, user = split(adapt / f"{domain}-train.conll", n, seed)
    for method in methods:
        started = time.perf_counter()
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "model"
            if method == "base":
                model = CrfModel.load("en-conll03")
            elif method == "domain":
                recipe = base_recipe("en-conll03")
                options = replace(recipe.options, config=replace(recipe.options.config, caseless_features=False))
                model = train(user, out, options, recipe.tables)
            else:
                model = train_adapted(user, out, "en-conll03", method)
            score = f1(model, held)
        row = {"domain": domain, "method": method, "sentences": n, "seed": seed, "heldout_sentences":
               len(held.sentences), "f1": score, "seconds": round(time.perf_counter() - started, 1)}
        print(json.dumps(row), flush=True)
        with LOG.open("a", encoding="utf-8") as log:
            log.write(json.dumps(row) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("domains", nargs="+", help="re3d, sec, gum, wnut17")
    parser.add_argument("--adapt", type=Path, required=True, help="the folder of DOMAIN-train.conll files")
    parser.add_argument("--methods", default=",".join(["base", "domain", *method_names()]))
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for domain in args.domains:
        run(domain, args.adapt, args.methods.split(","), args.sentences, args.seed)


if __name__ == "__main__":
    main()
