"""Training that adapts a model to the user's domain (``hgner train --base M``): the CRF is fitted
on the base model's own training corpus, read again as its ``meta.json`` records it (the corpus
name, its case and prose copies, the features, word tables, regularisation and schemes), together
with the user's sentences, mixed by an adaptation method registered by name
(:data:`ADAPTATION_METHODS`):

* ``concatenate``: the two corpora one after the other;
* ``weight``: the user's sentences repeated :data:`WEIGHT` times (instance weighting by
  repetition: python-crfsuite has no instance weights);
* ``augment``: Daumé III's "frustratingly easy" feature augmentation (ACL 2007), every attribute a
  general copy shared by both corpora and a copy of the base corpus's own
  (:data:`~hgner.training.crf.SOURCE_MARK`); the user's sentences, like the text the model tags,
  have the general copy only, so the user's domain-specific and the general weights are one (the
  text tagged never needs a copy of its own);
* ``augment-weight``: both.

The user's entity types make the model's label set: a base type the user's sentences never
annotate is dropped from the base corpus (an added type is learned from the user's sentences).
The default, ``augment-weight``, scored highest on held-out parts of re3d and SEC filings
(``experiments/adapt_methods.md``)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..core import schemes
from ..core.errors import HgnerError, named
from ..core.registry import Registry, lookup, names
from ..core.wording import counted
from ..crf.model import CrfModel
from ..crf.modelfiles import check_model_target
from ..data.augment import CASINGS, PROSE, augmented
from ..data.corpus import Corpus, Document, Sentence, convert_corpus, relabel
from ..data.reading import read_tagged
from ..features import FeatureConfig
from .build import build_model
from .crf import Adapted, corpus_checksum
from .options import TABLES, TrainOptions, WordTables
from .tables import read_capitalised_share, read_gazetteer, read_outside_truecase, read_vector_clusters, read_word_clusters

log = logging.getLogger("hgner")

ADAPTATION_METHODS = Registry("adaptation_methods", "adaptation method", ("hgner.training.adapt",))
DEFAULT_METHOD = "augment-weight"  # experiments/adapt_methods.md
WEIGHT = 10  # how many times ``weight`` repeats the user's sentences (not tuned: experiments/adapt_methods.md)
HELD_OUT = 5  # without a development corpus, every fifth of the user's sentences tunes the skip weight
MIN_HELD_OUT = 4  # and the calibration, when that makes at least this many sentences
SMALL_CORPUS = 1000  # sentences: a training corpus smaller than this is told about adapting a model
_READERS = {"gazetteer": read_gazetteer, "word_clusters": read_word_clusters,
            "outside_truecase": read_outside_truecase, "capitalised_share": read_capitalised_share,
            "vector_clusters": read_vector_clusters}
_PROSE_SUFFIXES = {f"+{PROSE}": "all", f"+{PROSE}-tables": "tables"}


@dataclass(frozen=True)
class Mixture:
    """What the CRF is fitted on: ``corpus``, whose first ``source_documents`` documents (the base
    corpus's) get attribute copies of their own, the user's sentences repeated ``weight`` times."""

    corpus: Corpus
    source_documents: int
    weight: int


Method = Callable[[Corpus, Corpus], Mixture]


def _mix(base: Corpus, user: Corpus, weight: int, augment: bool) -> Mixture:
    """``base``'s documents then ``weight`` copies of ``user``'s (named apart)."""
    copies = [Document(f"{d.name}#{k + 1}" if weight > 1 else d.name, d.sentences)
              for k in range(weight) for d in user.documents]
    corpus = Corpus(f"{base.name}+{user.name}" + (f"*{weight}" if weight > 1 else ""), base.scheme,
                    list(base.documents) + copies, base.notes + user.notes, marked=True)
    return Mixture(corpus, len(base.documents) if augment else 0, weight)


@ADAPTATION_METHODS.register("concatenate")
def concatenate(base: Corpus, user: Corpus) -> Mixture:
    """The base corpus, then the user's sentences once."""
    return _mix(base, user, 1, augment=False)


@ADAPTATION_METHODS.register("weight")
def weight(base: Corpus, user: Corpus) -> Mixture:
    """The base corpus, then the user's sentences :data:`WEIGHT` times."""
    return _mix(base, user, WEIGHT, augment=False)


@ADAPTATION_METHODS.register("augment")
def augment(base: Corpus, user: Corpus) -> Mixture:
    """Feature augmentation: the base corpus's attributes also in a copy of its own."""
    return _mix(base, user, 1, augment=True)


@ADAPTATION_METHODS.register("augment-weight")
def augment_weight(base: Corpus, user: Corpus) -> Mixture:
    """Feature augmentation with the user's sentences :data:`WEIGHT` times."""
    return _mix(base, user, WEIGHT, augment=True)


def method_names() -> list[str]:
    """The registered adaptation methods."""
    return names(ADAPTATION_METHODS)


def check_method(name: str) -> str:
    """``name`` when it is a registered adaptation method (else an error listing them)."""
    lookup(ADAPTATION_METHODS, name)
    return name


@dataclass(frozen=True)
class BaseRecipe:
    """How a base model was trained, from its ``meta.json``: the model, its training corpus's name,
    the case and prose copies it added, the settings and the word tables (read from the model)."""

    model: CrfModel
    corpus: str
    casings: tuple[str, ...]
    prose: str
    options: TrainOptions
    tables: WordTables


def base_recipe(name: str) -> BaseRecipe:
    """The recipe of the base model ``name`` (a shipped model's name or a model directory)."""
    try:
        model = CrfModel.load(name)
    except HgnerError as error:
        raise HgnerError(f"{named('base')}: {error}") from None
    meta = model.metadata
    if "adaptation" in meta:
        raise HgnerError(f"{named('base')}: model {model.name} is itself adapted ({meta['adaptation']['method']} on "
                         f"{meta['adaptation']['base']}); adapt its base, {meta['adaptation']['base']}, instead")
    training = meta["training"]
    corpus, casings, prose = split_corpus_name(training["corpus"])
    starts = meta.get("sentence_starts", {})
    options = TrainOptions(config=FeatureConfig.from_json(meta["features"]), scheme=meta["scheme"],
                           c1=training["c1"], c2=training["c2"], max_iterations=training["max_iterations"],
                           label_map=meta.get("label_map") or {}, language=meta["language"],
                           documents=meta.get("documents", "corpus"),
                           **({"sentence_start_penalty": starts["ended_penalty"]} if "ended_penalty" in starts else {}))
    tables: dict[str, Any] = {}
    for setting in TABLES:
        if getattr(options.config, setting):
            table, sources, _ = _READERS[setting](str(model.directory))
            tables[setting], tables[f"{setting}_sources"] = table, sources
    return BaseRecipe(model, corpus, casings, prose, options, WordTables(**tables))


def split_corpus_name(recorded: str) -> tuple[str, tuple[str, ...], str]:
    """A training corpus's recorded name split into the corpus read, its case copies and its prose
    copy: ``conll2003:train+lower+upper`` -> ``("conll2003:train", ("lower", "upper"), "")``."""
    name, prose = recorded, ""
    casings: list[str] = []
    while True:
        suffix = next((s for s in (*(f"+{c}" for c in CASINGS), *_PROSE_SUFFIXES) if name.endswith(s)), None)
        if suffix is None:
            return name, tuple(reversed(casings)), prose
        name = name.removesuffix(suffix)
        if suffix in _PROSE_SUFFIXES:
            prose = _PROSE_SUFFIXES[suffix]
        else:
            casings.append(suffix[1:])


def read_base_corpus(recipe: BaseRecipe, offline: bool = False) -> Corpus:
    """The base model's training corpus read again (documents as it was trained), an error
    naming the base model when it cannot be."""
    try:
        corpus, _ = read_tagged(recipe.corpus, None, recipe.options.documents, "base corpus", offline=offline,
                                announce=False)
    except HgnerError as error:
        raise HgnerError(f"{named('base')} {recipe.model.name}: its training corpus {recipe.corpus!r} cannot be read "
                         f"again ({error})") from None
    return corpus


def mix(recipe: BaseRecipe, base: Corpus, user: Corpus, method: str) -> tuple[Mixture, list[str]]:
    """The base corpus (base types the user's sentences lack dropped) and the user's sentences,
    each with the base model's case and prose copies, mixed by ``method``; and the types dropped."""
    user_types = set(_types(user))
    dropped = sorted(set(_types(base)) - user_types)
    if dropped:
        log.info("base corpus %s: %s dropped (%s never annotated there)", base.name, ", ".join(dropped), user.name)
    base = relabel(base, dict.fromkeys(dropped, "O"))
    user = convert_corpus(user, base.scheme)
    language = recipe.options.language
    copies = (augmented(base, recipe.casings, recipe.prose, language),
              augmented(user, recipe.casings, recipe.prose, language))
    return lookup(ADAPTATION_METHODS, method)(*copies), dropped


def adaptation_record(recipe: BaseRecipe, method: str, user: Corpus, mixture: Mixture, dropped: list[str],
                      held_out: int) -> dict[str, Any]:
    """What ``meta.json`` records of an adaptation (its ``adaptation``): the base model, the method,
    the user's corpus (its sha256, the sentences trained on and the ones set apart)."""
    base = recipe.model
    return {"base": base.name, "base_sha256": base.metadata["files"]["model.crfsuite"]["sha256"],
            "base_corpus": base.metadata["training"]["corpus"], "method": method, "weight": mixture.weight,
            "corpus": user.name, "sha256": corpus_checksum(user), "sentences": len(user.sentences),
            "held_out": held_out, "dropped_types": dropped}


def held_out(user: Corpus, every: int = HELD_OUT) -> tuple[Corpus, Corpus | None]:
    """Every ``every``-th sentence of ``user`` set apart (in its documents) to tune the skip weight
    and the calibration factor on, and the rest; no part set apart from fewer than
    :data:`MIN_HELD_OUT` sentences, or when it has no entity."""
    kept: list[Document] = []
    held: list[Document] = []
    count = 0
    for document in user.documents:
        parts: tuple[list[Sentence], list[Sentence]] = ([], [])
        for sentence in document.sentences:
            parts[count % every == every - 1].append(sentence)
            count += 1
        kept.extend([Document(document.name, parts[0])] if parts[0] else [])
        held.extend([Document(document.name, parts[1])] if parts[1] else [])
    dev = replace(user, name=f"{user.name} (every {every}th sentence)", documents=held, file=None)
    if count < MIN_HELD_OUT * every or not _types(dev):
        return user, None
    return replace(user, documents=kept), dev


def train_adapted(user: Corpus, out: str | Path, base: str | BaseRecipe, method: str = DEFAULT_METHOD, *,
                  dev: Corpus | None = None, dev_documents: str | None = None,
                  changes: Mapping[str, Any] | None = None, language: str | None = None,
                  offline: bool = False, progress: bool = False) -> CrfModel:
    """A model adapting ``base`` to the tagged sentences ``user`` by ``method``, written to ``out``
    (:func:`hgner.training.build_model`; ``changes``: settings of :class:`TrainOptions` given
    instead of the base model's, a ``label_map`` added to its; ``language``, when given, must be
    the base model's). The base corpus's case copies are left out (they triple the
    training time) and with them the caseless features. Without ``dev``, a fifth of ``user``
    (:func:`held_out`) is set apart to tune the skip weight and fit the calibration factor."""
    check_method(method)
    recipe = base_recipe(base) if isinstance(base, str) else base
    if language is not None and language != recipe.options.language:
        raise HgnerError(f"{named('language')} {language}: model {recipe.model.name} is for "
                         f"{recipe.options.language!r}; adapt a model of your language")
    check_model_target(Path(out), [user.file])
    base_corpus = read_base_corpus(recipe, offline)
    set_apart = 0
    if dev is None:
        user, dev = held_out(user)
        set_apart = len(dev.sentences) if dev is not None else 0
        log.info("%s", f"no development corpus: {dev.name} set apart to tune the skip weight and the calibration "
                       f"factor ({counted(len(dev.sentences), 'sentence')}; {named('dev')} trains on them all)"
                 if dev is not None else "no development corpus and too few sentences to set some apart: no skip "
                 "potential and no calibration")
    recipe = replace(recipe, casings=())
    mixture, dropped = mix(recipe, base_corpus, user, method)
    config = replace(recipe.options.config, caseless_features=False)
    changes = dict(changes or {})
    label_map = {**(recipe.options.label_map or {}), **changes.pop("label_map", {})}
    options = replace(recipe.options, config=config, label_map=label_map, **changes)
    record = adaptation_record(recipe, method, user, mixture, dropped, set_apart)
    log.info("adapting %s to %s by %s: %s", recipe.model.name, user.name, method,
             counted(len(mixture.corpus.sentences), "sentence"))
    return build_model(mixture.corpus, out, options, recipe.tables, dev=dev, dev_documents=dev_documents,
                       progress=progress, adapted=Adapted(mixture.source_documents, record))


def small_corpus_hint(corpus: Corpus, language: str) -> str | None:
    """A line for a small training corpus: adapting a model (``base``) learns more from it."""
    if len(corpus.sentences) >= SMALL_CORPUS:
        return None
    model = {"en": "en-conll03", "es": "es-conll02", "nl": "nl-conll02"}.get(language, "MODEL")
    return (f"{corpus.name} has {len(corpus.sentences)} sentences, a small training corpus: a model trained on it "
            f"alone knows little else; {named('base')} {model} adapts a model trained on a large corpus to it instead")


def _types(corpus: Corpus) -> list[str]:
    return schemes.entity_types(tag for sentence in corpus.sentences for tag in sentence.tags or [])
