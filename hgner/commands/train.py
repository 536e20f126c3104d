"""``hgner train``: a model directory from a tagged corpus (:func:`hgner.training.build_model`).
``--out NAME`` without a folder saves into the data home's ``models/`` folder, where ``--model
NAME`` finds it."""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from .. import commands
from ..core.errors import HgnerError, named
from ..data.augment import CASINGS, PROSE_COPIES
from ..data.reading import NO_DOCUMENTS, check_documents, read_tagged
from ..text.languages import language_defaults
from .arguments import OFFLINE_HELP, checked_by, nonnegative, positive_int, scheme

NAME = "train"
DEFAULT_LANGUAGE = "en"  # --lang (TrainOptions' own, written out: see add_parser)
DEFAULT_SHARE_BUCKETS = 10  # --share-buckets: the capitalised share in tenths (docs/development/research-log.md)
log = logging.getLogger("hgner")


def _source(text: str) -> str:
    """A model name, model directory or file to read a table from (``--gazetteer``, ``--word-clusters``)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a model name, a model directory or a file, got {text!r}")
    return text


def _neighbour_count(text: str) -> int:
    return 0 if text.strip() == "0" else positive_int(text, maximum=10)


def _casings(text: str) -> tuple[str, ...]:
    casings = tuple(v.strip() for v in text.split(","))
    if not set(casings) <= set(CASINGS) or len(set(casings)) != len(casings):
        raise argparse.ArgumentTypeError(f"expected {', '.join(CASINGS)} or both, comma-separated, got {text!r}")
    return casings


def _language(text: str) -> str:
    """A language code spaCy has (checked before any corpus is read)."""
    checked_by(language_defaults)(text)
    return text


def _folds(text: str) -> int:
    """A number of cross-validation folds: 2 or more."""
    value = positive_int(text)
    if value < 2:
        raise argparse.ArgumentTypeError(f"expected a whole number of folds, at least 2, got {text!r}")
    return value


def _method(text: str) -> str:
    """An adaptation method's name (checked when given)."""
    from ..training.adapt import check_method  # (startup: see hgner.commands)

    return check_method(text)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(NAME, help=commands.COMMANDS[NAME])
    parser.add_argument("--train", required=True, metavar="CORPUS",
                        help="training corpus: a CoNLL file, a catalogue name (conll2003:train, nltk:...) or an "
                             "annotation tool's export (spaCy .spacy, Prodigy or doccano .jsonl, Label Studio .json, "
                             "brat .ann/.txt or a folder of them; FORMAT:PATH names the format)")
    parser.add_argument("--dev", metavar="CORPUS",
                        help="development corpus: scored with Viterbi, tunes the skip potential's weight and fits the "
                             "calibration factor on every potential (without it neither is written)")
    parser.add_argument("--out", required=True, metavar="DIR|NAME",
                        help="model directory to write (e.g. ./my-model); a NAME without a folder saves into the data "
                             "home's models folder, where --model NAME finds it (hgner models lists it; a shipped "
                             "model's name is refused)")
    parser.add_argument("--lang", type=_language, metavar="CODE",
                        help="ISO code of the corpus language (default en): recorded in the model for tagging, and "
                             "its spaCy stop words complete the skip edges' learned function words")
    parser.add_argument("--scheme", type=scheme,
                        help="tag scheme of the corpora (IOB1, IOB2/BIO, BIOES; detected and printed when omitted; "
                             "given, it overrides leniently: tags are read as conlleval reads them)")
    parser.add_argument("--documents", type=checked_by(check_documents), default="auto", metavar="corpus|sentence|N",
                        help="documents: the corpus's own (-DOCSTART-), one per sentence, or groups of N sentences "
                             f"(default auto: the corpus's own, groups of {NO_DOCUMENTS} sentences when it has none)")
    parser.add_argument("--dev-documents", type=checked_by(check_documents), metavar="corpus|sentence|N",
                        help="documents of the development corpus, as --documents (default: as --documents says); "
                             "its skip weight and calibration factor are fitted on them")
    parser.add_argument("--base", metavar="MODEL",
                        help="adapt this model (a shipped model's name or a model directory) to the --train sentences: "
                             "train on its own training corpus, read again as its meta.json records it, with its "
                             "features and word tables, together with them (see --adapt-method)")
    parser.add_argument("--adapt-method", type=checked_by(_method), metavar="METHOD",
                        help="with --base, how the two corpora are combined: concatenate, weight (your sentences "
                             "repeated), augment (feature augmentation: the base corpus's attributes get copies of "
                             "their own) or augment-weight (the default: both)")
    # (the defaults of the next four are TrainOptions' own, written out: importing them would load numpy for every
    # command; with --base, the base model's are used unless they are given)
    parser.add_argument("--model-scheme", type=scheme,
                        help="tag scheme the model predicts: IO (default; lets samplers move one token at a time), "
                             "IOB1, IOB2 or BIOES (IOB2 and BIOES often a little better with Viterbi)")
    parser.add_argument("--c1", type=nonnegative, help="L1 regularisation (prunes features; default 0.05)")
    parser.add_argument("--c2", type=nonnegative, help="L2 regularisation (default 0.01)")
    parser.add_argument("--max-iterations", type=positive_int, help="L-BFGS iterations (default 150)")
    parser.add_argument("--sentence-start-penalty", type=nonnegative, metavar="P",
                        help="inside a sentence the rules ended with . ! or ?, a sentence start the model learns from "
                             "the corpus cuts it only where its score beats P (log-odds; default 3; lower cuts more, "
                             "as where bylines and section names run into the next sentence in a paragraph)")
    _add_feature_arguments(parser)
    parser.add_argument("--folds", type=_folds, metavar="K",
                        help="first cross-validate: split the training corpus's documents (its sentences when it is "
                             "one document) into K folds, seed 0, train on K-1 folds as this command trains, tag the "
                             "fold left out with Viterbi, each in turn; print the F1 of the pooled tags with a 95%% "
                             "bootstrap interval over the documents and record it in meta.json (K+1 trainings)")
    parser.add_argument("--drop-type", action="append", default=[], metavar="TYPE",
                        help="map an entity type to O (repeatable), e.g. --drop-type MISC for a 3-class model")
    parser.add_argument("--offline", action="store_true", help=OFFLINE_HELP)
    return parser


def _add_feature_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--features", choices=["recommended", "baseline"],
                        help="recommended: the shipped models' features without their gazetteer (window, affixes, "
                             "conjunctions, truecasing, document-level); baseline: word, shape, affixes and neighbours")
    parser.add_argument("--gazetteer", type=_source, metavar="MODEL|FILE",
                        help="add gazetteer features with these lists: a model's (a name or directory; the shipped "
                             "models': GeoNames places, US first names and surnames) or a JSON file mapping list names "
                             "to entries; one-token entries the training corpus usually writes in lower case are left "
                             "out")
    parser.add_argument("--word-clusters", type=_source, metavar="MODEL|FILE",
                        help="add Brown word-cluster features with these clusters: a model's (a name or directory; "
                             "es-conll02: spaCy's Spanish clusters, nl-conll02: its German ones), a JSON file "
                             "mapping cluster paths to words, or a file of Brown clusters, a line per word: "
                             "PATH<TAB>WORD<TAB>COUNT (as Liang's wcluster writes them)")
    parser.add_argument("--lowercase-clusters", action="store_true",
                        help="with --word-clusters: a capitalised word also gets its lowercase form's cluster when both "
                             "have one (es-conll02 uses it)")
    parser.add_argument("--neighbour-clusters", type=_neighbour_count, default=0, metavar="K",
                        help="with --word-clusters: the tokens up to K positions away (within the window) also give "
                             "their clusters (default 0)")
    parser.add_argument("--vector-clusters", type=_source, metavar="MODEL|FILE",
                        help="add clusters of word vectors beside any word clusters, with their own features (v4= ... "
                             "of the word, looked up as written then in lower case, and of the tokens one position "
                             "away): a model's, or a JSON file mapping cluster paths to words "
                             "(tools/build_glove_clusters.py writes one from GloVe vectors, with its sources beside it)")
    parser.add_argument("--word-frequency", action="store_true",
                        help="add each word's frequency bucket in the --lang language (wordfreq's Zipf scale)")
    parser.add_argument("--outside-truecase", type=_source, metavar="MODEL|FILE",
                        help="truecase caseless text (all lower or all upper case) with this table after the training "
                             "corpus's own: a model's (en-conll03, es-conll02: spaCy's English or Spanish word "
                             "probabilities) or a JSON file mapping lowercase words to their usual spelling")
    parser.add_argument("--capitalised-share", type=_source, metavar="MODEL|FILE",
                        help="add each word's share of capitalised (cs=) and all upper-case (cu=) occurrences in a large "
                             "outside corpus, in buckets, with this table: a model's or a JSON file mapping lowercase "
                             "words to [percent capitalised, percent upper case] (tools/build_models.py builds "
                             "spaCy's English one)")
    parser.add_argument("--share-buckets", type=partial(positive_int, maximum=100),
                        metavar="N", help="with --capitalised-share: the shares in N steps, cs=0..N "
                                          f"(default {DEFAULT_SHARE_BUCKETS})")
    parser.add_argument("--neighbour-shares", action="store_true",
                        help="with --capitalised-share: the tokens one position away also give their shares")
    parser.add_argument("--case-augment", type=_casings, default=(), metavar="lower,upper",
                        help="also train on a lowercased and/or uppercased copy of every training document")
    parser.add_argument("--prose-augment", nargs="?", const="all", default="", choices=PROSE_COPIES,
                        help="also train on every training document (all, the default) or on its table documents only "
                             "(tables: fewer than 70%% of the sentences after the first end in . ! ? or a quote) as "
                             "hgner tag splits it into sentences when it is written as one paragraph (headlines, "
                             "datelines and table rows run into the sentences after them)")


def train_options(args: argparse.Namespace, documents: str) -> Any:
    """The :class:`~hgner.training.options.TrainOptions` of the parsed arguments."""
    from ..features import BASELINE, RECOMMENDED  # (startup: see hgner.commands)
    from ..training.options import TrainOptions

    if args.share_buckets is not None and not args.capitalised_share:
        raise HgnerError(f"{named('share_buckets')} sets the capitalised share's buckets: give "
                         f"{named('capitalised_share')} too")
    if args.dev_documents is not None and not args.dev:
        raise HgnerError(f"{named('dev_documents')} groups the development corpus: give {named('dev')} too")
    config = BASELINE if args.features == "baseline" else RECOMMENDED
    config = replace(config, gazetteer=bool(args.gazetteer), word_clusters=bool(args.word_clusters),
                     lowercase_clusters=args.lowercase_clusters, neighbour_clusters=args.neighbour_clusters,
                     frequency=(args.lang or DEFAULT_LANGUAGE) if args.word_frequency else "",
                     outside_truecase=bool(args.outside_truecase),
                     caseless_features=bool(args.case_augment),
                     capitalised_share=(args.share_buckets or DEFAULT_SHARE_BUCKETS) if args.capitalised_share else 0,
                     neighbour_shares=args.neighbour_shares, vector_clusters=bool(args.vector_clusters))
    return TrainOptions(config=config, label_map=dict.fromkeys(args.drop_type, "O"),
                        language=args.lang or DEFAULT_LANGUAGE, documents=documents, **_given(args))


def _given(args: argparse.Namespace) -> dict[str, Any]:
    """The regularisation, iterations and model scheme given on the command line (as settings)."""
    given = {"c1": args.c1, "c2": args.c2, "max_iterations": args.max_iterations, "scheme": args.model_scheme,
             "sentence_start_penalty": args.sentence_start_penalty}
    return {name: value for name, value in given.items() if value is not None}


def word_tables(args: argparse.Namespace) -> tuple[Any, list[Path | None]]:
    """The gazetteer, word clusters, outside truecasing table, capitalised shares and vector clusters
    the arguments name, and the files read (which the model must not overwrite)."""
    from ..training import tables as read_table  # (startup: see hgner.commands)
    from ..training.options import WordTables

    read = {"gazetteer": read_table.read_gazetteer, "word_clusters": read_table.read_word_clusters,
            "outside_truecase": read_table.read_outside_truecase, "capitalised_share": read_table.read_capitalised_share,
            "vector_clusters": read_table.read_vector_clusters}
    given: dict[str, tuple[Any, Any, Any]] = {
        name: reader(getattr(args, name)) if getattr(args, name) else (None, None, None) for name, reader in read.items()}
    tables = WordTables(**{key: value for name, (table, sources, _) in given.items()
                           for key, value in ((name, table), (f"{name}_sources", sources))})
    return tables, [file for _, _, file in given.values()]


def run(args: argparse.Namespace) -> int:
    """``hgner train``: see ``hgner train --help``."""
    from ..crf.modelfiles import check_model_target, model_target
    from ..data.augment import augmented  # (startup: see hgner.commands)
    from ..training.adapt import small_corpus_hint
    from ..training.build import build_model

    if args.base:
        return _run_adapted(args)
    if args.adapt_method:
        raise HgnerError(f"{named('adapt_method')} says how a base model is adapted: give {named('base')} too")
    options = train_options(args, args.documents)  # checked before anything is read: fail fast
    tables, files = word_tables(args)
    out = model_target(args.out)
    check_model_target(out, files)
    read = partial(read_tagged, scheme=args.scheme, offline=args.offline, language=options.language)
    train_corpus, documents = read(args.train, documents=args.documents, what="training corpus")
    dev_corpus, dev_documents = (read(args.dev, documents=args.dev_documents or args.documents,
                                      what="development corpus", argument="dev_documents") if args.dev else (None, None))
    hint = small_corpus_hint(train_corpus, options.language)  # (before its copies)
    if hint is not None:
        log.info("%s", hint)

    def train(corpus: Any, into: Path, *, progress: bool) -> Any:
        return build_model(augmented(corpus, args.case_augment, args.prose_augment, options.language), into,
                           replace(options, documents=documents), tables, dev=dev_corpus, dev_documents=dev_documents,
                           progress=progress)

    return _trained(args, train_corpus, out, train)


def _trained(args: argparse.Namespace, corpus: Any, out: Path, train: Any) -> int:
    """The model ``train`` trains on ``corpus`` written to ``out``; with ``--folds``, cross-validated
    first (:func:`hgner.training.crossval.train_cross_validated`) and the figures printed."""
    from ..training.crossval import train_cross_validated  # (startup: see hgner.commands)

    if args.folds is None:
        train(corpus, out, progress=sys.stderr.isatty())
    else:
        _, result = train_cross_validated(corpus, out, args.folds, train, progress=sys.stderr.isatty())
    log.info("wrote %s", out)
    if args.folds is not None:
        sys.stdout.write(result.summary())
    return 0


# the settings a base model gives (--base): its features, word tables and language
_BASE_GIVES = ("features", "gazetteer", "word_clusters", "lowercase_clusters", "neighbour_clusters", "word_frequency",
               "outside_truecase", "capitalised_share", "share_buckets", "neighbour_shares", "vector_clusters",
               "case_augment", "prose_augment")


def _run_adapted(args: argparse.Namespace) -> int:
    """``hgner train --base``: the base model adapted to the training corpus
    (:func:`hgner.training.adapt.train_adapted`)."""
    from ..crf.modelfiles import check_model_target, model_target
    from ..training.adapt import DEFAULT_METHOD, base_recipe, train_adapted

    given = next((name for name in _BASE_GIVES if getattr(args, name) not in (None, False, 0, (), "")), None)
    if given is not None:
        raise HgnerError(f"{named(given)}: with {named('base')} the features and word tables are the base model's")
    if args.dev_documents is not None and not args.dev:
        raise HgnerError(f"{named('dev_documents')} groups the development corpus: give {named('dev')} too")
    changes = {**_given(args), "label_map": dict.fromkeys(args.drop_type, "O")}
    out = model_target(args.out)
    check_model_target(out, [])
    recipe = base_recipe(args.base)
    read = partial(read_tagged, scheme=args.scheme, offline=args.offline, language=recipe.options.language)
    train_corpus, _ = read(args.train, documents=args.documents, what="training corpus")
    dev_corpus, dev_documents = (read(args.dev, documents=args.dev_documents or args.documents,
                                      what="development corpus", argument="dev_documents") if args.dev else (None, None))
    train = partial(train_adapted, base=recipe, method=args.adapt_method or DEFAULT_METHOD, dev=dev_corpus,
                    dev_documents=dev_documents, changes=changes, language=args.lang, offline=args.offline)
    return _trained(args, train_corpus, out, train)
