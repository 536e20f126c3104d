"""Tagging and comparing for the server, without the web framework: the models named at startup,
loaded once, and the taggers built from them.

``/v1/tag`` goes through :class:`~hgner.tag.Tagger`, as ``hgner tag`` does, so the entities are
those of ``hgner tag --format jsonl`` (long documents split in the same blocks and groups).
``/v1/compare`` tokenizes a text once, builds its graph once and runs every decoder on it.

An :class:`Engine` is used from one thread at a time (the server's decoding thread).
"""

from __future__ import annotations

import dataclasses
import functools
import time
import warnings
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..api import model_info
from ..core.errors import HgnerError, HgnerWarning, UnknownNameError
from ..core.process import lasting
from ..crf.model import CrfModel
from ..crf.modelfiles import SKIP_FILES
from ..crf.pipeline import Pipeline
from ..decoders import available_decoders, decoder_class, decoder_settings, describe_decoder, make_decoder, settings_per_decoder
from ..graph.kinds import check_graph_kind
from ..tagging.defaults import DEFAULT_SPLIT
from ..tagging.settings import TagSettings
from ..tagging.tagger import Tagger, add_to_language_sample, entities
from .limits import Deadline

TAGGER_CACHE = 64  # taggers kept per worker (one per model, decoder, graph and settings asked)
TOKENIZER_WORDS = 20_000  # words a tagger's spaCy vocabulary holds (it keeps every word it has seen) before its
# tokenizer starts a new one (TextTokenizer.bound_vocabulary): a worker fed new words keeps its memory bounded (same answers)
WARM_UP_TEXT = "Warm up in London . London is warm ."  # a repeated name: skip edges too
CERTIFY_TOLERANCE = 1e-9  # relative: a score this close to the certified optimum reaches it (as exact's)
COMPARE_DECODERS = ("viterbi", "exact", "gibbs", "herded")  # the page's first choice


@dataclass(frozen=True)
class TagOptions:
    """The options of one ``/v1/tag`` request (shape already checked by the web layer)."""

    model: str
    decoder: str | None = None
    graph: str = "chain"
    sweeps: int | None = None
    seed: int | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    min_confidence: float | None = None
    tokens: bool = False
    split: str = DEFAULT_SPLIT

    def key(self) -> tuple:
        """The options as a cache key of what makes the tagging settings (each setting's value
        with its type: ``1``, ``1.0`` and ``true`` may be read differently)."""
        given = tuple(sorted((name, type(value).__name__, value) for name, value in self.settings.items()))
        return (self.model, self.decoder, self.graph, self.sweeps, self.seed, given, self.min_confidence, self.split)


@dataclass(frozen=True)
class CompareOptions:
    """The options of one ``/v1/compare`` request."""

    model: str
    decoders: Sequence[str] = COMPARE_DECODERS
    graph: str = "chain"
    sweeps: int | None = None
    seed: int | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)


class Engine:
    """The models of one worker (name -> directory, loaded by :meth:`load`) and a cache of taggers.
    ``timeout``: seconds, given as ``time_limit`` to the decoders that take one."""

    def __init__(self, models: Mapping[str, str | Path], timeout: float) -> None:
        self.paths = dict(models)
        self.timeout = timeout
        self.models: dict[str, Any] = {}  # name -> CrfModel
        self.infos: list[dict[str, Any]] = []  # /v1/models, read when the models were loaded
        self.ready = False
        self._taggers: OrderedDict[tuple, Any] = OrderedDict()
        self._checked: OrderedDict[tuple, tuple[TagSettings, list[Warning | str]]] = OrderedDict()

    # ------------------------------------------------------------------ startup
    def load(self, warm: bool = True) -> None:
        """Load every model; with ``warm``, compile every decoder's kernels on a short text."""
        with lasting(collect=True):  # the models last as long as the worker: full collections no longer scan them
            for name, path in self.paths.items():
                self.models[name] = model = CrfModel.load(path)  # its files checked against its seal
                model.sentence_starts  # noqa: B018  (the files read lazily, read now: they cannot change later)
                model.crfsuite_tag([[["bias"]]])  # (crfsuite's tagger, opened on the file checked now)
            self.infos = [self._info(name, path) for name, path in self.paths.items()]
            if warm:
                first = next(iter(self.models))
                for name in self.models:
                    self.tag([WARM_UP_TEXT], TagOptions(name, tokens=True), Deadline.after(3600))
                self.compare(WARM_UP_TEXT, CompareOptions(first, available_decoders(), "skip"), Deadline.after(3600))
                self.compare(WARM_UP_TEXT, CompareOptions(first, available_decoders(), "chain"), Deadline.after(3600))
        self.ready = True

    # ------------------------------------------------------------------ listings
    def model_infos(self) -> list[dict[str, Any]]:
        """``/v1/models``: what ``hgner models`` shows of each served model, as it was when loaded
        (a model retrained on disk since is not the one served)."""
        return self.infos

    def _info(self, name: str, path: str | Path) -> dict[str, Any]:
        info = model_info(path)
        return {"name": name, "language": info.language, "labels": info.labels, "scheme": info.scheme,
                "tags": list(self.models[name].labels), "dev_f1": info.dev, "test_f1": info.test, "size": info.size,
                "skip": _has_skip(info.metadata)}

    # ------------------------------------------------------------------ tagging
    def tag(self, texts: Sequence[str], options: TagOptions,
            deadline: Deadline) -> tuple[list[dict[str, Any]], list[str], str, int]:
        """Each text's ``{"entities": [...], "tokens": [...]?}``, the warnings, the decoder's name
        and the number of tokens tagged, as ``hgner tag`` gives them; :class:`~hgner.server.limits.TimedOut`
        once ``deadline`` passes (checked between groups of sentences)."""
        return self.tag_requests([texts], options, deadline)[0]

    def tag_requests(self, requests: Sequence[Sequence[str]], options: TagOptions,
                     deadline: Deadline) -> list[tuple[list[dict[str, Any]], list[str], str, int]]:
        """:meth:`tag` of several requests with the same options at once: their texts are tagged
        together (short ones decoded together, :meth:`~hgner.tagging.tagger.Tagger.tag_texts`), each
        request gets its own texts' answers, the warnings of the options and those of its own
        texts (the language check reads each request's texts alone)."""
        with warnings.catch_warnings(record=True) as caught:  # (one batch at a time per worker)
            warnings.simplefilter("always")
            tagger = self._tagger(options)
            answers = self._tag_texts(tagger, [text for texts in requests for text in texts], options, deadline)
        shared = _notes(caught)
        out, start = [], 0
        for texts in requests:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                sample: list[str] = []
                for text in texts:
                    if add_to_language_sample(sample, text):
                        break
                if sample:  # (as hgner tag reads it: the first words, to the end of the text that gives enough)
                    tagger.check_language(sample)
            mine = answers[start:start + len(texts)]
            start += len(texts)
            out.append(([result for result, _ in mine], list(dict.fromkeys(shared + _notes(caught))), tagger.decoder_name,
                        sum(count for _, count in mine)))
        return out

    def _tag_texts(self, tagger: Any, texts: Sequence[str], options: TagOptions,
                   deadline: Deadline) -> list[tuple[dict[str, Any], int]]:
        """Each text's entities (and tokens), and its number of tokens."""
        answers = []
        deadline.check()
        for text, groups in zip(texts, tagger.tag_texts(texts)):
            entities: list[dict[str, Any]] = []
            tokens: list[dict[str, Any]] = []
            count = 0
            for group in groups:
                entities += [e.to_json() for e in group.entities]
                count += sum(len(sentence.tokens) for sentence in group.sentences)
                if options.tokens:
                    tokens += _token_rows(text, group, tagger.pipeline.model.labels)
                deadline.check()
            answers.append(({"entities": entities, "tokens": tokens} if options.tokens else {"entities": entities}, count))
        return answers

    def _tagger(self, options: TagOptions) -> Any:
        """The cached :class:`~hgner.tagging.tagger.Tagger` for ``options``, with its
        :class:`~hgner.tagging.settings.TagSettings` (:meth:`_settings`)."""
        model = self.model(options.model)
        settings = self._settings(options)
        key = (options.model, settings)
        tagger = self._taggers.get(key)
        if tagger is None:
            tagger = self._taggers[key] = Tagger(settings, model, max_words=TOKENIZER_WORDS)
            if len(self._taggers) > TAGGER_CACHE:
                self._taggers.popitem(last=False)
        self._taggers.move_to_end(key)
        return tagger

    def _settings(self, options: TagOptions) -> TagSettings:
        """The :class:`~hgner.tagging.settings.TagSettings` every front end builds for ``options``
        (checked, and the decoder chosen for the graph, with its warning); a decoder that takes a
        ``time_limit`` gets the request's, at most the server's timeout (:func:`bounded_time_limit`).
        Built once per option set and kept with the warnings building it gave, which are given
        again at each use (each request gets them, as when they were built for it)."""
        key = options.key()
        cached = self._checked.get(key)
        if cached is None:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                settings = TagSettings(self.paths[options.model], options.decoder, options.graph, options.sweeps,
                                       options.seed, dict(options.settings), options.min_confidence, split=options.split)
                known = decoder_settings(str(settings.decoder))
                if "time_limit" in known:
                    limit = bounded_time_limit(known["time_limit"], options.settings.get("time_limit"), self.timeout)
                    settings = dataclasses.replace(settings, decoder_settings={**settings.decoder_settings,
                                                                               "time_limit": limit})
            cached = self._checked[key] = (settings, [w.message for w in caught])
            if len(self._checked) > TAGGER_CACHE:
                self._checked.popitem(last=False)
        self._checked.move_to_end(key)
        settings, given = cached
        for message in given:
            warnings.warn(message, stacklevel=2)
        return settings

    def model(self, name: str) -> Any:
        """The loaded model served as ``name``; :class:`UnknownNameError` lists the served ones."""
        if not isinstance(name, str) or name not in self.paths:
            raise UnknownNameError("model", str(name), self.paths)
        return self.models[name]

    # ------------------------------------------------------------------ comparing
    def compare(self, text: str, options: CompareOptions, deadline: Deadline) -> dict[str, Any]:
        """Every decoder of ``options`` on one graph of ``text`` (the whole text, not split): per
        decoder its entities, tags, graph score, whether it reached the certified optimum (exact's
        score when exact certifies it), its agreement with Viterbi (share of tokens), marginals
        (when it gives them) and seconds."""
        model = self.model(options.model)
        check_graph_kind(options.graph)
        names = list(dict.fromkeys(options.decoders))
        if not names:
            raise HgnerError("decoders: expected at least one decoder name")
        for name in names:
            decoder_class(name)  # an unknown name lists the valid ones
        per_decoder = settings_per_decoder(dict(options.settings), names)
        tagger = self._tagger(TagOptions(options.model, "viterbi"))
        sentences = list(tagger.sentences(text))
        started = time.perf_counter()
        builder = Pipeline(model, make_decoder("viterbi"), options.graph)
        prepared = builder.prepare([s.tokens for s in sentences])
        prepare_seconds = time.perf_counter() - started
        runs = names + [n for n in ("viterbi", "exact") if n not in names]  # the references, when not asked
        decoded = {name: _decode(model, name, prepared, options, per_decoder.get(name, {}), deadline) for name in runs}
        exact = decoded["exact"][0]
        certified = bool(exact.stats.get("certified", 0.0) == 1.0)
        optimum = float(prepared.graph.score(exact.labels)) if certified else None
        reference = decoded["viterbi"][0].labels
        results = [_compared(model, name, *decoded[name], text, sentences, prepared, optimum, reference)
                   for name in names]
        tokens = [{"start": a, "end": b, "text": text[a:b]} for s in sentences for a, b in s.offsets]
        return {"model": options.model, "graph": options.graph, "labels": list(model.labels), "tokens": tokens,
                "optimum": {"score": optimum, "certified": certified}, "prepare_seconds": prepare_seconds,
                "results": results}


def _decode(model: Any, name: str, prepared: Any, options: CompareOptions, settings: Mapping[str, Any],
            deadline: Deadline) -> tuple[Any, float, str]:
    """Decoder ``name`` on the prepared graph (the chain for a chain-only decoder): its result,
    seconds and the graph decoded. A decoder that takes ``time_limit`` gets the time left."""
    deadline.check()
    settings = dict(settings)
    cls = decoder_class(name)
    known = decoder_settings(name)
    if "time_limit" in known:
        settings["time_limit"] = bounded_time_limit(known["time_limit"], settings.get("time_limit"),
                                                    max(0.001, deadline.remaining()))
    decoder = make_decoder(name, settings, shared={"sweeps": options.sweeps, "seed": options.seed, "marginals": True})
    graph = "chain" if cls.chain_only else options.graph
    started = time.perf_counter()
    result = Pipeline(model, decoder, graph).decode_prepared(
        prepared if graph == options.graph else replace(prepared, graph=prepared.chain))
    return result, time.perf_counter() - started, graph


def bounded_time_limit(setting: Any, given: Any, seconds: float) -> Any:
    """The ``time_limit`` a decoder gets: the request's, but at most ``seconds`` (what the server
    gives a request: a client cannot keep the decoding thread past its own timeout), or ``seconds``
    when the request gives none. A value the setting refuses is passed on for the decoder's error."""
    try:
        value = None if given is None else setting.read(given)
    except HgnerError:
        return given
    return seconds if value is None else min(value, seconds)


def _compared(model: Any, name: str, result: Any, seconds: float, graph: str, text: str, sentences: list[Any],
              prepared: Any, optimum: float | None, reference: Any) -> dict[str, Any]:
    """One decoder's row of ``/v1/compare``: entities (confidences through ``model``'s map, as
    ``/v1/tag``'s), tags, score in the graph asked for, whether it reached the certified
    ``optimum``, agreement with Viterbi's labels ``reference`` (tokens,)."""
    score = float(prepared.graph.score(result.labels))
    reached = None if optimum is None else score >= optimum - CERTIFY_TOLERANCE * max(1.0, abs(optimum))
    return {
        "decoder": name, "graph": graph,
        "entities": [e.to_json() for e in entities(text, sentences, result, model)],
        "tags": [t for sentence in result.tags for t in sentence],
        "score": score, "optimum_reached": reached,
        "agreement_with_viterbi": float((result.labels == reference).mean()) if len(reference) else 1.0,
        "marginals": None if result.marginals is None else result.marginals.tolist(),
        "seconds": seconds,
        "stats": {k: float(v) for k, v in result.stats.items()},
    }


@functools.cache
def decoder_infos() -> list[dict[str, Any]]:
    """Every decoder as ``hgner decoders`` shows it (:func:`~hgner.decoders.describe_decoder`, with
    the default settings): built once per worker (about 20 ms of registry lookups that
    ``/v1/decoders`` would otherwise spend on the event loop at each request; the registry does not
    change while serving)."""
    return [describe_decoder(name) for name in available_decoders()]


def _has_skip(metadata: Mapping[str, Any]) -> bool:
    return all(f in metadata.get("files", {}) for f in SKIP_FILES)


def _notes(caught: Sequence[warnings.WarningMessage]) -> list[str]:
    """The messages of the hgner warnings ``caught``, each once, in order."""
    return list(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, HgnerWarning)))


def _token_rows(text: str, group: Any, labels: Sequence[str]) -> list[dict[str, Any]]:
    """One row per token of a :class:`~hgner.tag.TaggedGroup`: offsets, text, tag (model scheme)
    and the marginal of each tag (None when the decoder gives none)."""
    rows = []
    position = 0
    for sentence, tags in zip(group.sentences, group.tags):
        for (start, end), tag in zip(sentence.offsets, tags):
            marginals = None
            if group.marginals is not None:
                marginals = dict(zip(labels, group.marginals[position].tolist()))
            rows.append({"start": start, "end": end, "text": text[start:end], "tag": tag, "marginals": marginals})
            position += 1
    return rows

