"""Non-local evidence as a second stage (issue 41 item 4): a two-stage CRF in the style of Krishnan
and Manning 2006 and Ratinov and Roth 2009. Stage 1 is a shipped model's chain CRF; stage 2 is a
chain CRF with the same features plus attributes aggregated from stage 1's Viterbi labels over the
document (and, in some variants, over the rest of the corpus being tagged). Decided on the dev sets
only (eng.testa and Wikigold, esp.testa, ned.testa).

    python experiments/tune_nonlocal.py en doc-tok doc-ent ...   # LANGUAGE then variants (see --list)
    python experiments/tune_nonlocal.py --list
    python experiments/tune_nonlocal.py --table                   # the results so far, as a Markdown table

Stage 1 labels of the training corpus come from a k-fold jackknife (:data:`FOLDS` folds of whole
documents, with every case-augmented copy of a document in its document's fold): each fold is
tagged by a model trained, with the shipped model's settings, on the other folds only (its
truecasing table learned from them too). The dev sets are tagged by the shipped model (trained on
the whole training corpus, as its ``build_command`` says). The jackknife's labels are cached in
``/tmp/hgner-nonlocal/`` (not in the repository), keyed by the stage-1 model's seal (the sha256 of
each of its files, :func:`stage1_key`), so a rebuilt or edited model never reads another's labels.

Stage-2 attributes of a token (stage-1 labels reduced to entity types; O for none):
  ``nt=T``  the majority type of the other occurrences of the same token in the document;
  ``ne=T``  the token is inside an occurrence of a string stage 1 tagged as an entity elsewhere in
            the document (longest match first), T the majority type of those other tags;
  ``ns=T``  the token is a word of a longer entity stage 1 tagged elsewhere in the document
            (super-entity), T the majority type;
  ``nf=T``  the type stage 1 gave the token's first occurrence in the document (prediction
            history, when that is another occurrence);
  ``ct=T`` / ``ce=T``  as ``nt`` / ``ne``, counted over the corpus's other documents.
Each is given only for a token with a letter, when there is such evidence.

Per run: F1 of stage 1 and stage 2 (Viterbi, conlleval) on each dev set, and the gain on both
halves of 30 random halvings of its documents (seed 0): mean, minimum, and how many halves gained
at least 0.5. Results are appended to ``experiments/tuning_nonlocal.jsonl``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hgner.core import integrity, schemes  # noqa: E402
from hgner.core.scoring import Counts, EntityCounts, entity_spans  # noqa: E402
from hgner.crf.crfsuite_adapter import fit, read_crfsuite_weights  # noqa: E402
from hgner.crf.model import CrfModel  # noqa: E402
from hgner.data.augment import case_augmented  # noqa: E402
from hgner.data.corpus import Corpus  # noqa: E402
from hgner.data.reading import read_tagged  # noqa: E402
from hgner.decoders.chain import viterbi  # noqa: E402
from hgner.evaluation import gold_tags  # noqa: E402
from hgner.features import document_features  # noqa: E402
from hgner.graph.factor_graph import FactorGraph  # noqa: E402
from hgner.training import TrainOptions, WordTables  # noqa: E402
from hgner.training.crf import train  # noqa: E402

RESULTS = ROOT / "experiments" / "tuning_nonlocal.jsonl"
CACHE = Path("/tmp/hgner-nonlocal")
FOLDS = 5
SEED = 0
HALVINGS = 30

# language -> the shipped stage-1 model, its training corpus as built (documents, case copies) and the dev sets
LANGUAGES = {
    "en": {"model": "en-conll03", "train": ("conll2003:train", "corpus"), "augment": ("lower", "upper"),
           "devs": {"conll2003:testa": "corpus", "wikigold": "auto"}},
    "es": {"model": "es-conll02", "train": ("nltk:conll2002/esp.train", "10"), "augment": (),
           "devs": {"nltk:conll2002/esp.testa": "auto"}},
    "nl": {"model": "nl-conll02", "train": ("nltk:conll2002/ned.train", "corpus"), "augment": (),
           "devs": {"nltk:conll2002/ned.testa": "corpus"}},
}
VARIANTS = {
    "none": (),  # the control: stage 2 with no stage-2 attribute is stage 1 retrained
    "doc-tok": ("nt",),
    "doc-ent": ("ne", "ns"),
    "doc-tok+ent": ("nt", "ne", "ns"),
    "doc-all": ("nt", "ne", "ns", "nf"),
    "doc+corpus-tok": ("nt", "ct"),
    "doc+corpus-all": ("nt", "ne", "ns", "nf", "ct", "ce"),
    "doc+corpus-ent": ("ne", "ns", "ce"),
    "doc+foldcorpus-tok+ent": ("nt", "ne", "ns", "ct", "ce"),
    "doc+foldcorpus-all": ("nt", "ne", "ns", "nf", "ct", "ce"),
}
# These count ct / ce over every other training document. That leaks: another document's jackknifed
# labels come from a model trained on this document's fold, gold tags included, so in training the
# corpus counts are better than they can be on new text. The "foldcorpus" variants count only the
# documents of the same fold (tagged by the one model that saw none of them), about as many
# documents as a dev set has.
WHOLE_CORPUS = {"doc+corpus-tok", "doc+corpus-all", "doc+corpus-ent"}
MAX_ENTITY = 6  # the longest entity string matched again (tokens)

Types = list[list[str]]  # one document: sentences -> the stage-1 type of each token ("O" for none)


# ---------------------------------------------------------------- stage-2 attributes
def _majority(counts: Counter) -> str | None:
    """The most frequent key (ties to the alphabetically first), None when empty."""
    if not counts:
        return None
    best = max(counts.values())
    return min(key for key, n in counts.items() if n == best and n > 0) if best > 0 else None


def _entities(tokens: list[str], types: list[str]) -> list[tuple[int, int, str]]:
    """(start, end, type) runs of one type (IO labels reduced to types) in a flat token list,
    sentence bounds already broken by the caller."""
    spans, start = [], None
    for i, t in enumerate([*types, "O"]):
        if start is not None and (t != types[start]):
            spans.append((start, i, types[start]))
            start = None
        if start is None and t != "O" and i < len(types):
            start = i
    return spans


def document_tables(sentences: Sequence[Sequence[str]], types: Types) -> dict:
    """Counts of one document: token -> Counter of types; entity string -> Counter of types;
    word -> Counter of the types of longer entities it is in; token -> type of its first occurrence."""
    tokens: Counter = {}
    entities: dict[tuple[str, ...], Counter] = {}
    supers: dict[str, Counter] = {}
    first: dict[str, tuple[int, int, str]] = {}
    for s, (words, kinds) in enumerate(zip(sentences, types)):
        for i, (word, kind) in enumerate(zip(words, kinds)):
            tokens.setdefault(word, Counter())[kind] += 1
            first.setdefault(word, (s, i, kind))
        for start, end, kind in _entities(list(words), list(kinds)):
            key = tuple(words[start:end])
            if len(key) <= MAX_ENTITY:
                entities.setdefault(key, Counter())[kind] += 1
            if len(key) > 1:
                for word in set(key):
                    supers.setdefault(word, Counter())[kind] += 1
    return {"tokens": tokens, "entities": entities, "supers": supers, "first": first}


def _has_letter(word: str) -> bool:
    return any(c.isalpha() for c in word)


def stage2_attributes(sentences: Sequence[Sequence[str]], types: Types, groups: Sequence[str],
                      corpus: dict | None = None) -> list[list[list[str]]]:
    """The stage-2 attributes (module docstring) of one document's tokens, per sentence; ``groups``
    the attribute groups wanted; ``corpus`` the counts of the corpus's *other* documents
    (:func:`document_tables` summed), for ``ct`` / ``ce``."""
    table = document_tables(sentences, types)
    out: list[list[list[str]]] = [[[] for _ in words] for words in sentences]
    for s, (words, kinds) in enumerate(zip(sentences, types)):
        own = {(start, end): kind for start, end, kind in _entities(list(words), list(kinds))}
        for i, (word, kind) in enumerate(zip(words, kinds)):
            if not _has_letter(word):
                continue
            attributes = out[s][i]
            if "nt" in groups:
                others = table["tokens"][word].copy()
                others[kind] -= 1
                found = _majority(+others)
                if found:
                    attributes.append(f"nt={found}")
            if "nf" in groups:
                where = table["first"][word]
                if where[:2] != (s, i):
                    attributes.append(f"nf={where[2]}")
            if "ns" in groups and word in table["supers"]:
                counts = table["supers"][word].copy()
                for (start, end), k in own.items():  # leave out the entity this token is in here
                    if start <= i < end and end - start > 1:
                        counts[k] -= 1
                found = _majority(+counts)
                if found:
                    attributes.append(f"ns={found}")
            if "ct" in groups and corpus is not None and word in corpus["tokens"]:
                found = _majority(corpus["tokens"][word])
                if found:
                    attributes.append(f"ct={found}")
        for name, entities, exclude_own in (("ne", table["entities"], True),
                                            ("ce", corpus["entities"] if corpus else None, False)):
            if name in groups and entities:
                _entity_matches(list(words), entities, own if exclude_own else {}, name, out[s])
    return out


def _entity_matches(words: list[str], entities: dict, own: dict, name: str, out: list[list[str]]) -> None:
    """Mark the tokens of each occurrence (longest first, no overlap) of an entity string of
    ``entities`` in one sentence with ``name=T``, T the majority type of the string's counts
    (less this occurrence's own stage-1 entity, from ``own``)."""
    i = 0
    while i < len(words):
        matched = 0
        for length in range(min(MAX_ENTITY, len(words) - i), 0, -1):
            key = tuple(words[i:i + length])
            if key in entities and _has_letter(" ".join(key)):
                counts = entities[key].copy()
                if (i, i + length) in own:
                    counts[own[(i, i + length)]] -= 1
                found = _majority(+counts)
                if found:
                    for j in range(i, i + length):
                        out[j].append(f"{name}={found}")
                    matched = length
                    break
        i += matched or 1


def corpus_tables(documents: list[tuple[list[list[str]], Types]], groups_of: list[int],
                  folds_of: list[int]) -> list[dict]:
    """For each document, the token and entity counts of the documents of its fold (``folds_of``)
    in other groups (a document's case-augmented copies are in its group, so they do not count for it)."""
    per_doc = [document_tables(sentences, types) for sentences, types in documents]
    totals: dict[int, dict] = {}
    by_group: dict[int, dict] = {}
    for table, group, fold in zip(per_doc, groups_of, folds_of):
        mine = by_group.setdefault(group, {"tokens": {}, "entities": {}})
        total = totals.setdefault(fold, {"tokens": {}, "entities": {}})
        for key in ("tokens", "entities"):
            for item, counts in table[key].items():
                total[key].setdefault(item, Counter()).update(counts)
                mine[key].setdefault(item, Counter()).update(counts)
    return [{key: _Minus(totals[fold][key], by_group[group][key]) for key in ("tokens", "entities")}
            for group, fold in zip(groups_of, folds_of)]


class _Minus(dict):
    """``total`` less ``mine``, computed per key on lookup (so each document does not copy the corpus)."""

    def __init__(self, total: dict, mine: dict) -> None:
        super().__init__()
        self.total, self.mine = total, mine

    def __contains__(self, key: object) -> bool:
        return key in self.total and bool(+(self.total[key] - self.mine.get(key, Counter())))

    def __getitem__(self, key):
        return +(self.total[key] - self.mine.get(key, Counter()))

    def __bool__(self) -> bool:
        return bool(self.total)


# ---------------------------------------------------------------- stage 1
def to_types(labels: Sequence[str]) -> list[str]:
    return [label.split("-", 1)[1] if "-" in label else "O" for label in labels]


def tag_types(model: CrfModel, corpus: Corpus) -> list[Types]:
    """Stage-1 Viterbi types of every document of ``corpus``."""
    result = []
    for document in corpus.documents:
        sentences = [s.tokens for s in document.sentences]
        labels = viterbi(model.chain_graph(sentences))
        flat = to_types([model.labels[k] for k in labels])
        bounds = np.cumsum([0, *map(len, sentences)])
        result.append([flat[bounds[j]:bounds[j + 1]] for j in range(len(sentences))])
    return result


def options_of(model: CrfModel) -> tuple[TrainOptions, WordTables]:
    meta = model.metadata
    training = meta["training"]
    options = TrainOptions(config=model.feature_config, scheme=meta["scheme"], c1=training["c1"], c2=training["c2"],
                           max_iterations=training["max_iterations"], label_map=meta.get("label_map") or {},
                           language=meta["language"], documents=meta["documents"])
    r = model.resources
    tables = WordTables(r.gazetteer or None, "shipped" if r.gazetteer else None, r.word_clusters or None,
                        "shipped" if r.word_clusters else None, r.outside_truecase or None,
                        "shipped" if r.outside_truecase else None)
    return options, tables


def stage1_key(model: CrfModel) -> str:
    """The stage-1 model's hash: the sha256 of its seal's files and their sha256s (the seal was
    verified when the model loaded), first 16 hex digits."""
    files = json.loads((model.directory / integrity.SEAL_FILE).read_text(encoding="utf-8"))["files"]
    sealed = json.dumps({name: entry["sha256"] for name, entry in files.items()}, sort_keys=True)
    return hashlib.sha256(sealed.encode()).hexdigest()[:16]


def jackknife(language: str, model: CrfModel, corpus: Corpus, augment: tuple[str, ...]) -> list[Types]:
    """Stage-1 types of every document of ``case_augmented(corpus, augment)`` from models that never
    saw its fold (cached under the stage-1 model's hash)."""
    cache = CACHE / f"{language}-jackknife-{FOLDS}-{stage1_key(model)}.json"
    if cache.is_file():
        return json.loads(cache.read_text())
    options, tables = options_of(model)
    n = len(corpus.documents)
    fold = np.random.default_rng(SEED).permutation(n) % FOLDS
    held: dict[int, Types] = {}
    for f in range(FOLDS):
        started = time.time()
        inside = Corpus(corpus.name, corpus.scheme, [d for d, k in zip(corpus.documents, fold) if k != f], [])
        outside_index = [i for i in range(n) if fold[i] == f]
        outside = Corpus(corpus.name, corpus.scheme, [corpus.documents[i] for i in outside_index], [])
        with tempfile.TemporaryDirectory(prefix="hgner-jk-") as out:
            fold_model = train(case_augmented(inside, augment) if augment else inside, Path(out) / "m", options,
                               tables)
            tagged = tag_types(fold_model, case_augmented(outside, augment) if augment else outside)
        copies = 1 + len(augment)
        per = len(outside_index)
        for c in range(copies):
            for j, i in enumerate(outside_index):
                held[c * n + i] = tagged[c * per + j]
        print(f"fold {f}: {len(inside.documents)} documents, {time.time() - started:.0f} s", flush=True)
    result = [held[i] for i in range(n * (1 + len(augment)))]
    CACHE.mkdir(exist_ok=True)
    cache.write_text(json.dumps(result))
    return result


# ---------------------------------------------------------------- stage 2
def stage2_features(model: CrfModel, corpus: Corpus, types: list[Types], groups: Sequence[str],
                    groups_of: list[int], folds_of: list[int]) -> list[list[list[str]]]:
    """Stage-1 model's attributes plus the stage-2 ones, every sentence of ``corpus``."""
    documents = [[s.tokens for s in d.sentences] for d in corpus.documents]
    corpus_counts = (corpus_tables(list(zip(documents, types)), groups_of, folds_of) if {"ct", "ce"} & set(groups)
                     else [None] * len(documents))
    xs = []
    for sentences, kinds, counts in zip(documents, types, corpus_counts):
        base = document_features(sentences, model.feature_config, model.resources)
        extra = stage2_attributes(sentences, kinds, groups, counts)
        xs.extend([[[*a, *b] for a, b in zip(bs, es)] for bs, es in zip(base, extra)])
    return xs


class Stage2:
    """A crfsuite model file's weights: Viterbi over attribute strings."""

    def __init__(self, path: Path) -> None:
        self.labels, attributes, self.weights, self.transitions = read_crfsuite_weights(path)
        self.index = {a: i for i, a in enumerate(attributes)}

    def tag(self, sentences: list[list[list[str]]]) -> list[str]:
        lengths = [len(s) for s in sentences]
        unary = np.zeros((sum(lengths), len(self.labels)))
        row = 0
        for sentence in sentences:
            for attributes in sentence:
                columns = [self.index[a] for a in attributes if a in self.index]
                unary[row] = self.weights[columns].sum(axis=0)
                row += 1
        labels = viterbi(FactorGraph.chain(unary, np.asarray(self.transitions), lengths, labels=tuple(self.labels)))
        return [self.labels[k] for k in labels]


def document_counts(model: CrfModel, corpus: Corpus, predicted: list[list[str]]) -> np.ndarray:
    """(D, 3) entities found correctly, predicted and gold per document; ``predicted`` the model's
    labels per document (flat)."""
    gold = gold_tags(corpus, model)
    counts = np.zeros((len(corpus.documents), 3), np.int64)
    s = 0
    for d, (document, labels) in enumerate(zip(corpus.documents, predicted)):
        found, start = EntityCounts(), 0
        for sentence in document.sentences:
            piece = schemes.convert(labels[start:start + len(sentence.tokens)], corpus.scheme)
            start += len(sentence.tokens)
            found.add(entity_spans(gold[s], corpus.scheme), entity_spans(piece, corpus.scheme))
            s += 1
        counts[d] = [sum(found.correct.values()), sum(found.predicted.values()), sum(found.gold.values())]
    return counts


def f1_of(counts: np.ndarray) -> float:
    return round(Counts(*map(int, counts.sum(axis=0))).f1, 2)


def halves(one: np.ndarray, two: np.ndarray) -> dict:
    """Gain of ``two`` over ``one`` (D, 3) on both halves of :data:`HALVINGS` random halvings."""
    rng = np.random.default_rng(SEED)
    gains = []
    documents = len(one)
    for _ in range(HALVINGS):
        order = rng.permutation(documents)
        for half in (order[: documents // 2], order[documents // 2:]):
            gains.append(f1_of(two[half]) - f1_of(one[half]))
    gains_array = np.array(gains)
    return {"mean": round(float(gains_array.mean()), 2), "min": round(float(gains_array.min()), 2),
            "at_least_0.5": int((gains_array >= 0.5).sum()), "positive": int((gains_array > 0).sum()),
            "halves": len(gains)}


def run(language: str, variants: list[str]) -> None:
    spec = LANGUAGES[language]
    model = CrfModel.load(spec["model"])
    train_name, documents = spec["train"]
    corpus = read_tagged(train_name, documents=documents, announce=False)[0]
    augment = spec["augment"]
    types = jackknife(language, model, corpus, augment)
    full = case_augmented(corpus, augment) if augment else corpus
    groups_of = [i % len(corpus.documents) for i in range(len(full.documents))]
    fold = np.random.default_rng(SEED).permutation(len(corpus.documents)) % FOLDS  # as jackknife() folds
    options, _ = options_of(model)
    ys = [schemes.relabel_tags(s.tags or [], options.label_map, options.scheme) for s in full.sentences]
    devs = {name: read_tagged(name, documents=how, announce=False)[0] for name, how in spec["devs"].items()}
    dev_types = {name: tag_types(model, dev) for name, dev in devs.items()}
    stage1 = {name: document_counts(model, dev, [[to_label(t) for s in ts for t in s] for ts in dev_types[name]])
              for name, dev in devs.items()}
    for variant in variants:
        groups = VARIANTS[variant]
        started = time.time()
        folds_of = [0] * len(groups_of) if variant in WHOLE_CORPUS else [int(fold[g]) for g in groups_of]
        xs = stage2_features(model, full, types, groups, groups_of, folds_of)
        featurised = time.time() - started
        with tempfile.TemporaryDirectory(prefix="hgner-s2-") as out:
            from tqdm import tqdm

            with tqdm(disable=True) as bar:
                iterations = fit(xs, ys, Path(out) / "s2.crfsuite", c1=options.c1, c2=options.c2,
                                 max_iterations=options.max_iterations, bar=bar)
            stage2 = Stage2(Path(out) / "s2.crfsuite")
        del xs
        result = {"language": language, "variant": variant, "groups": list(groups), "folds": FOLDS,
                  "corpus_counts": ("" if not {"ct", "ce"} & set(groups) else
                                    "every other training document" if variant in WHOLE_CORPUS else "same fold"),
                  "stage1_model": spec["model"], "iterations": len(iterations),
                  "train_seconds": round(time.time() - started), "featurise_seconds": round(featurised)}
        for name, dev in devs.items():
            dev_docs = [[s.tokens for s in d.sentences] for d in dev.documents]
            xs_dev = stage2_features(model, dev, dev_types[name], groups, list(range(len(dev_docs))), [0] * len(dev_docs))
            predicted, start = [], 0
            for sentences in dev_docs:
                predicted.append(stage2.tag(xs_dev[start:start + len(sentences)]))
                start += len(sentences)
            two = document_counts(model, dev, predicted)
            one = stage1[name]
            result[name] = {"stage1": f1_of(one), "stage2": f1_of(two), "gain": round(f1_of(two) - f1_of(one), 2),
                            "halves": halves(one, two)}
        result["when"] = time.strftime("%Y-%m-%d %H:%M")
        with open(RESULTS, "a", encoding="utf-8") as stream:
            stream.write(json.dumps(result) + "\n")
        print(json.dumps(result), flush=True)


def to_label(kind: str) -> str:
    """A type back as an IO label (the shipped models' scheme)."""
    return "O" if kind == "O" else f"I-{kind}"


def table() -> str:
    """The results in :data:`RESULTS` as a Markdown table: per run and dev set, stage 1, stage 2, the
    gain, and the gain on the 60 halves (mean, minimum, halves gaining at least 0.5)."""
    rows = ["| language | variant | dev set | stage 1 | stage 2 | gain | halves: mean | min | >= 0.5 |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for line in RESULTS.read_text(encoding="utf-8").splitlines():
        run_ = json.loads(line)
        for name in (key for key, value in run_.items() if isinstance(value, dict)):
            r, h = run_[name], run_[name]["halves"]
            rows.append(f"| {run_['language']} | {run_['variant']} | {name} | {r['stage1']:.2f} | {r['stage2']:.2f} | "
                        f"{r['gain']:+.2f} | {h['mean']:+.2f} | {h['min']:+.2f} | {h['at_least_0.5']}/{h['halves']} |")
    return "\n".join(rows)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("language", nargs="?", choices=sorted(LANGUAGES))
    parser.add_argument("variants", nargs="*", metavar="VARIANT")
    parser.add_argument("--list", action="store_true", help="list the variants")
    parser.add_argument("--table", action="store_true", help="print the results so far as a Markdown table")
    args = parser.parse_args(argv)
    if args.table:
        print(table())
        return
    if args.list or not args.language:
        for name, groups in VARIANTS.items():
            print(name, " ".join(groups))
        return
    unknown = sorted(set(args.variants) - set(VARIANTS))
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(unknown)}; see --list")
    run(args.language, args.variants)


if __name__ == "__main__":
    main(sys.argv[1:])
