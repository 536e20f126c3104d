"""Issue 60 item 4 (diagnosis only): why a company name in a short sentence comes out O.

For a token of a sentence tagged by a model's chain CRF (Viterbi, the sentence as its own
document, tokenized as ``hgner tag`` tokenizes it), prints the token's state score per label and
the attributes that weigh most for and against a label against the label Viterbi chose: the CRF's
state features (``model.state_weights``, the weights of crfsuite's ``info().state_features`` read
from the model file at full precision), one row per attribute of the token. ``--dev`` tags the
short sentences of ``experiments/companies_dev.txt`` (one sentence per line, ``ORG`` names
marked ``[Name]``, one one-token name per line) and counts the companies tagged I-ORG, by whether
they have a word cluster; ``--cluster-of WORD`` also gives each company without a cluster WORD's
cluster features (a counterfactual for a table that covers them).

Usage: python experiments/companies.py [--model en-conll03] --sentence TEXT --token WORD [--label I-ORG]
       python experiments/companies.py [--model en-conll03] --dev [--cluster-of Siemens]
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import hgner  # noqa: E402
from hgner.crf.model import CrfModel  # noqa: E402
from hgner.decoders.chain import viterbi  # noqa: E402

DEV = ROOT / "experiments" / "companies_dev.txt"
_MARKED = re.compile(r"\[([^\]]+)\]")


def explain(model: CrfModel, text: str, word: str, label: str, top: int = 12) -> None:
    """Print the state scores of ``word``'s first occurrence in ``text`` and the attributes that
    decide between ``label`` and the label Viterbi gives it."""
    tagger = hgner.load(model.directory, "viterbi")
    tokens = [t for s in tagger.sentences(text) for t in s.tokens]
    position = tokens.index(word)
    graph = model.chain_graph([tokens])
    chosen = model.labels[viterbi(graph)[position]]
    attributes = model.features([tokens])[0][position]
    weights = np.array([model.state_weights[model.attribute_index[a]] if a in model.attribute_index
                        else np.zeros(len(model.labels)) for a in attributes])
    scores = weights.sum(axis=0)
    print(f"{text}\n  tokens {tokens}\n  {word!r}: Viterbi {chosen}; state scores "
          + ", ".join(f"{k} {s:.2f}" for k, s in zip(model.labels, scores, strict=True)))
    want, have = model.labels.index(label), model.labels.index(chosen)
    margin = weights[:, want] - weights[:, have]
    print(f"  {label} - {chosen}: {margin.sum():.2f} from {len(attributes)} attributes "
          f"({sum(a in model.attribute_index for a in attributes)} known to the model)")
    order = np.argsort(margin)
    for title, rows in (("against", order[:top]), ("for", order[::-1][:top])):
        print(f"  most {title} {label}: " + ", ".join(f"{attributes[i]} {margin[i]:+.2f}" for i in rows))


def dev_sentences(model: CrfModel) -> list[tuple[list[str], int]]:
    """The dev set's sentences, tokenized as ``model`` tags them, each with its company's token index
    (one one-token ORG per line)."""
    tagger = hgner.load(model.directory, "viterbi")
    found = []
    for line in DEV.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name = _MARKED.search(line)
            assert name is not None, line
            tokens = [t for s in tagger.sentences(_MARKED.sub(r"\1", line)) for t in s.tokens]
            found.append((tokens, tokens.index(name.group(1))))
    return found


def viterbi_labels(model: CrfModel, attributes: list[list[str]]) -> list[str]:
    """Viterbi labels of one sentence given its tokens' attributes."""
    from hgner.graph.factor_graph import FactorGraph

    unary = model.unary([attributes])
    graph = FactorGraph.chain(model.calibration * unary, model.calibration * model.transitions, [len(attributes)],
                              labels=model.labels)
    return [model.labels[k] for k in viterbi(graph)]


def dev_counts(model: CrfModel, cluster_of: str | None) -> None:
    """ORGs of the dev sentences found (the company's token labelled I-ORG), split by whether the
    company has a word cluster; with ``cluster_of``, again with that word's cluster features given
    to each company without a cluster of its own (a counterfactual: what a cluster would do)."""
    resources = model.resources
    outcome: Counter[tuple[bool, bool]] = Counter()
    missed: Counter[str] = Counter()
    for tokens, index in dev_sentences(model):
        attributes = model.features([tokens])[0]
        has_cluster = bool(resources.cluster_attributes(tokens[index]))
        if cluster_of and not has_cluster:
            attributes[index] = attributes[index] + list(resources.cluster_attributes(cluster_of))
        label = viterbi_labels(model, attributes)[index]
        outcome[has_cluster, label == "I-ORG"] += 1
        if label != "I-ORG":
            missed[f"{tokens[index]} {label}"] += 1
    for has in (True, False):
        print(f"  company {'with' if has else 'without'} a cluster of its own: "
              f"{outcome[has, True]}/{outcome[has, True] + outcome[has, False]} I-ORG")
    print("  missed: " + ", ".join(f"{name}" + (f" x{n}" if n > 1 else "") for name, n in missed.most_common()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="en-conll03")
    parser.add_argument("--sentence")
    parser.add_argument("--token")
    parser.add_argument("--label", default="I-ORG")
    parser.add_argument("--dev", action="store_true")
    parser.add_argument("--cluster-of", help="with --dev: also give each company without a cluster this word's")
    arguments = parser.parse_args()
    model = CrfModel.load(arguments.model)
    if arguments.dev:
        print(f"{model.name} on {DEV.name}:")
        dev_counts(model, None)
        if arguments.cluster_of:
            print(f"with the cluster of {arguments.cluster_of!r} for a company without one:")
            dev_counts(model, arguments.cluster_of)
    if arguments.sentence:
        explain(model, arguments.sentence, arguments.token, arguments.label)


if __name__ == "__main__":
    main()
