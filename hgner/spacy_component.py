"""The ``hgner`` spaCy pipeline component: ``nlp.add_pipe("hgner", config={...})``.

A whole ``Doc`` is one document (skip edges may join any two of its sentences). The component
tags the Doc's own tokens (whitespace tokens left out) sentence by sentence: the Doc's sentence
boundaries when it has them, otherwise those ``hgner tag`` finds, by its line-aware rules and the
model's learned sentence starts (:meth:`hgner.text.tokenizer.TextTokenizer.split`; the Doc's own
sentence annotation is left alone).
Decoding is :class:`hgner.tag.Tagger`'s, so entities equal ``hgner tag``'s for the same tokens.
The component never re-tokenizes: for the tokens the model was trained on (as ``hgner tag``
makes them), give the pipeline hgner's tokenizer, ``nlp.tokenizer =
hgner.text.tokenizer.make_tokenizer(nlp)`` (or ``@tokenizers = "hgner.conll.v3"`` in a config);
spaCy's default English tokenizer splits ``AL-AIN`` and ``1996-12-06``.

The model's language (``meta.json``) should be the pipeline's (``spacy.blank("es")`` for
``es-conll02``): the Doc's tokens come from the pipeline's tokenizer, so the first Doc tagged
warns when the two differ.

Entities go to ``doc.ents`` (``target="ents"``) or to the span group ``doc.spans[target]``.
``overwrite=True`` replaces what is there. ``overwrite=False`` (the default) keeps it: in
``doc.ents`` every existing entity stays and a predicted entity is added only if it overlaps
none of them (as spaCy's EntityRuler does without ``overwrite_ents``); a span group, which may
overlap, gets the predicted spans appended. Each predicted span carries its confidence in
``span._.hgner_confidence`` (see :mod:`hgner.tag`; ``None`` when the decoder has no marginals).

``label_names="spacy"`` writes spaCy's English label names (:data:`LABEL_NAMES`: PER -> PERSON,
LOC -> GPE, ORG -> ORG, MISC -> NORP) for pipelines that expect them; ``"hgner"`` (the default)
keeps the model's. :data:`DISPLACY_COLORS` colours hgner's labels in displaCy (registered as
spaCy's ``spacy_displacy_colors`` entry point, and for ``options={"colors": ...}``).
``nlp.evaluate`` scores the component (``ents_p/r/f``, ``ents_per_type``; ``spans_KEY_p/r/f`` for
a span group); ``nlp.update`` is refused (the CRF is trained by ``hgner train``).

Two of spaCy's :class:`~spacy.language.Language` methods are wrapped once, when this module is
imported, for pipelines holding the component: ``create_pipe`` names an unknown setting with the
valid ones (spaCy's own config error does not list them), and ``to_disk`` refuses a folder that
is a model folder (spaCy writes its ``meta.json`` there first, over the model's).

Importing this module loads no numba or crfsuite: the model loads with the first Doc (in a
worker process of ``nlp.pipe(n_process=...)`` too, one worker at a time: see :func:`_one_at_a_time`).
Serialization writes ``cfg`` (JSON settings) and ``model/`` (a copy of the model directory)
under the component's folder, so ``spacy.load`` restores it without the original model path.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import inspect
import json
import os
import tempfile
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spacy.displacy.render import DEFAULT_LABEL_COLORS
from spacy.language import Language
from spacy.scorer import Scorer, get_ner_prf
from spacy.tokens import Doc, Span
from spacy.training import Example

from .core.errors import HgnerError
from .core.fileio import write_text
from .core.integrity import copy_sealed, is_model_folder
from .core.validation import check, read_json
from .tagging.settings import TagSettings
from .text.tokenizer import TextTokenizer

if TYPE_CHECKING:
    from .tagging.tagger import TaggedGroup, Tagger

CONFIDENCE = "hgner_confidence"
CFG_FILE = "cfg"
MODEL_DIR = "model"
FACTORY = "hgner"
# the component's own settings; the rest are TagSettings'
COMPONENT_DEFAULTS: dict[str, Any] = {"target": "ents", "overwrite": False, "label_names": "hgner"}
# label_names: the names written for hgner's entity types (a type not listed keeps its name)
LABEL_NAMES: dict[str, dict[str, str]] = {
    "hgner": {},
    "spacy": {"PER": "PERSON", "LOC": "GPE", "ORG": "ORG", "MISC": "NORP"},  # spaCy's English (OntoNotes) names
}
# displaCy's colours for hgner's labels: those of spaCy's labels for the same types
DISPLACY_COLORS: dict[str, str] = {label: DEFAULT_LABEL_COLORS[spacy_label]
                                   for label, spacy_label in LABEL_NAMES["spacy"].items()}
SCORE_WEIGHTS = {"ents_f": 1.0, "ents_p": 0.0, "ents_r": 0.0, "ents_per_type": None}

if not Span.has_extension(CONFIDENCE):
    Span.set_extension(CONFIDENCE, default=None)


def make_hgner(nlp: Language, name: str, **cfg: Any) -> HgnerComponent:
    """The ``hgner`` factory. Its settings are the fields of
    :class:`~hgner.tagging.settings.TagSettings` (``model``: a model name or directory;
    ``decoder``, ``graph``, ``sweeps``, ``seed``; ``decoder_settings``: keywords for the decoder's
    constructor, as ``--set`` in ``hgner tag``; ``min_confidence``, ...), and ``target``
    (``"ents"`` or a ``doc.spans`` key), ``overwrite`` and ``label_names`` (:data:`LABEL_NAMES`)."""
    return HgnerComponent(nlp, name, **cfg)


def _factory_signature() -> inspect.Signature:
    """``make_hgner``'s signature as spaCy reads it: ``nlp``, ``name``, then one keyword per setting."""
    positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
    return inspect.Signature([inspect.Parameter("nlp", positional), inspect.Parameter("name", positional),
                              *(inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY) for n in _default_config())])


def _default_config() -> dict[str, Any]:
    """The factory's defaults: :class:`TagSettings`' (none checked: nothing loads on import) and the component's."""
    defaults = {f.name: f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc,operator]
                for f in dataclasses.fields(TagSettings)}
    return {**defaults, **COMPONENT_DEFAULTS}


make_hgner.__signature__ = _factory_signature()  # type: ignore[attr-defined]
Language.factory(FACTORY, default_config=_default_config(), default_score_weights=SCORE_WEIGHTS)(make_hgner)


def _check_keys(cfg: dict[str, Any], where: Path | str) -> None:
    """An :class:`HgnerError` naming ``where`` when ``cfg`` holds a setting the component does
    not have (a misspelt one would be ignored), with the closest valid one and all of them."""
    known = _default_config()
    for key in cfg:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise HgnerError(f"{where}: unknown setting {key!r} of the hgner component{hint}; its settings: "
                             f"{', '.join(known)}")


def _check_settings(cfg: dict[str, Any], where: Path) -> TagSettings:
    """``cfg``'s keys, then ``cfg`` against the component schema (errors name ``where``), then as
    ``hgner tag`` checks its settings; returns them."""
    if isinstance(cfg, dict):  # (anything else: the schema's error)
        _check_keys(cfg, where)
    check(cfg, "component", where, raises=HgnerError)
    if cfg.get("label_names", COMPONENT_DEFAULTS["label_names"]) not in LABEL_NAMES:
        raise HgnerError(f"{where}: label_names: expected one of {', '.join(LABEL_NAMES)}, got {cfg['label_names']!r}")
    return TagSettings.from_options({k: v for k, v in cfg.items() if k not in COMPONENT_DEFAULTS})


def _guard(name: str, check: Callable[..., None]) -> None:
    """Wrap :class:`Language`'s method ``name`` (once) so that ``check`` runs with its arguments first."""
    method = getattr(Language, name)
    if getattr(method, "_hgner_guard", False):
        return

    @functools.wraps(method)
    def guarded(self: Language, *args: Any, **kwargs: Any) -> Any:
        check(self, *args, **kwargs)
        return method(self, *args, **kwargs)

    guarded._hgner_guard = True  # type: ignore[attr-defined]
    setattr(Language, name, guarded)


def _check_new_pipe(nlp: Language, factory_name: str, name: str | None = None, **kwargs: Any) -> None:
    """Before spaCy checks an ``hgner`` component's config: its keys (:func:`_check_keys`)."""
    config = kwargs.get("config")
    if factory_name == FACTORY and isinstance(config, dict):
        _check_keys(config, f"[components.{name or factory_name}]")


def _check_destination(nlp: Language, path: str | Path, **kwargs: Any) -> None:
    """Before ``nlp.to_disk(path)`` writes spaCy's ``meta.json``: ``path`` is no model folder."""
    for name, component in nlp._components:
        if isinstance(component, HgnerComponent) and name not in kwargs.get("exclude", ()):
            component.refuse_folder(Path(path))


_guard("create_pipe", _check_new_pipe)
_guard("to_disk", _check_destination)


LOAD_LOCK_WAIT = 600.0  # seconds a process waits for another's loading before it loads anyway


@contextmanager
def _one_at_a_time() -> Iterator[None]:
    """Hold a lock shared by this user's processes (a file of theirs in the temporary folder,
    ``flock``) while a model loads and its kernels compile or load from numba's cache: worker
    processes of ``nlp.pipe(n_process=...)`` start together, and numba's cache is not safe for two
    processes compiling the same kernels at once. Without ``flock`` or the file, or after
    :data:`LOAD_LOCK_WAIT` seconds (a process stuck while loading), no lock."""
    try:
        import fcntl

        path = Path(tempfile.gettempdir()) / f"hgner-load-{os.getuid()}.lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC, 0o600)
    except (ImportError, OSError, AttributeError):
        yield
        return
    try:
        if os.fstat(fd).st_uid == os.getuid():  # (another user's file: never waited on)
            deadline = time.monotonic() + LOAD_LOCK_WAIT
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # (releases the lock)


class HgnerComponent:
    """Tags each Doc with an hgner model; see the module docstring for the rules."""

    def __init__(self, nlp: Language, name: str = FACTORY, **cfg: Any) -> None:
        """The settings are checked here, as :meth:`from_disk` checks them, so that a pipeline that
        tags can be saved and loaded again; the model is found and loaded with the first Doc (a
        loaded pipeline's model is the copy :meth:`from_disk` finds)."""
        cfg = {**_default_config(), **cfg}
        self.settings = _check_settings(cfg, Path(f"[components.{name}]"))
        self.name = name
        self.language = nlp.lang
        self.cfg: dict[str, Any] = cfg
        self.model_path: str | Path = cfg["model"]
        self._tagger: Tagger | None = None

    @property
    def tagger(self) -> Tagger:
        """The model and decoder, loaded on first use (and its kernels made ready by tagging a
        sentence, one process at a time: :func:`_one_at_a_time`)."""
        from .tagging.tagger import Tagger  # (numba, crfsuite: with the first Doc, not with spaCy's entry points)

        if self._tagger is None:
            with _one_at_a_time():
                tagger = Tagger(self.settings.with_model(self.model_path))
                tagger.tag("Warm up in Paris .")
            self._tagger = tagger
            trained = tagger.tokenizer.language
            if trained != self.language:
                warnings.warn(f"hgner: model {tagger.pipeline.model.name!r} is for language {trained!r}, but this "
                              f"pipeline's language is {self.language!r}: its tokenizer may split text unlike the "
                              f"model's training corpus (spacy.blank({trained!r}) matches the model)", stacklevel=2)
        return self._tagger

    def __call__(self, doc: Doc) -> Doc:
        return next(self.pipe([doc]))

    def pipe(self, docs: Iterable[Doc], batch_size: int = 64) -> Iterator[Doc]:
        """Each Doc with its entities, ``batch_size`` at a time: short Docs are decoded together
        (:meth:`~hgner.tagging.tagger.Tagger.tag_tokenized`)."""
        batch: list[Doc] = []
        for doc in docs:
            batch.append(doc)
            if len(batch) >= batch_size:
                yield from self._tag_docs(batch)
                batch = []
        yield from self._tag_docs(batch)

    def _tag_docs(self, docs: list[Doc]) -> Iterator[Doc]:
        texts = [doc.text for doc in docs]
        # the Doc's sentences, else hgner tag's own sentence rules read off its tokens (the Doc is left alone)
        split = self.tagger.tokenizer.split
        sentences = [TextTokenizer.from_doc(doc, text) if doc.has_annotation("SENT_START") else split(doc, text, doc.lang_)
                     for doc, text in zip(docs, texts)]
        for doc, groups in zip(docs, self.tagger.tag_tokenized(texts, list(sentences))):
            self._add_entities(doc, groups)
            yield doc

    def _add_entities(self, doc: Doc, groups: Iterable[TaggedGroup]) -> None:
        spans, confidences = [], []
        names = LABEL_NAMES[self.cfg["label_names"]]
        for group in groups:
            for entity in group.entities:
                # expand: an entity can end inside a Doc token, as "Corp" in "Corp." at a line end,
                # whose final period hgner tag's sentence rules read as the full stop
                span = doc.char_span(entity.start, entity.end, label=names.get(entity.label, entity.label),
                                     alignment_mode="expand")
                if span is None:  # (expand covers any offsets inside the text: never)
                    continue
                spans.append(span)
                confidences.append(entity.confidence)
        if self.cfg["target"] == "ents":
            kept = self._set_ents(doc, spans)
        elif self.cfg["overwrite"] or self.cfg["target"] not in doc.spans:
            doc.spans[self.cfg["target"]] = kept = spans
        else:
            group = doc.spans[self.cfg["target"]]
            places = {(t.start, t.end) for t in group}
            group.extend(spans)  # all of them; a confidence only where no earlier span has the same place
            kept = [s for s in spans if (s.start, s.end) not in places]
        # spaCy keys a span's extension values by its offsets: set only on the spans added, never
        # on an entity another component found at the same place
        chosen = {id(span) for span in kept}
        for span, confidence in zip(spans, confidences):
            if id(span) in chosen:
                span._.set(CONFIDENCE, confidence)

    def _set_ents(self, doc: Doc, spans: list[Span]) -> list[Span]:
        """Set ``spans`` as the Doc's entities (beside those it has, without overlap unless
        ``overwrite``); the spans added."""
        if self.cfg["overwrite"] or not doc.ents:
            doc.ents = spans
            return spans
        taken = {i for entity in doc.ents for i in range(entity.start, entity.end)}
        added = [s for s in spans if taken.isdisjoint(range(s.start, s.end))]
        doc.ents = [*doc.ents, *added]
        return added

    def score(self, examples: Iterable[Example], **kwargs: Any) -> dict[str, Any]:
        """``nlp.evaluate``'s scores for the component's entities: spaCy's ``ents_p``, ``ents_r``,
        ``ents_f`` and ``ents_per_type`` (:func:`spacy.scorer.get_ner_prf`), or for a span group
        target ``KEY`` the ``spans_KEY_p/r/f`` and ``spans_KEY_per_type`` of
        :meth:`spacy.scorer.Scorer.score_spans`, against the examples' reference Docs."""
        target = self.cfg["target"]
        if target == "ents":
            return get_ner_prf(examples)
        prefix = "spans_"
        return Scorer.score_spans(examples, f"{prefix}{target}", getter=lambda doc, attr: doc.spans.get(attr[len(prefix):], []),
                                  has_annotation=lambda doc: target in doc.spans, allow_overlap=True, **kwargs)

    def update(self, examples: Iterable[Example], **kwargs: Any) -> dict[str, float]:
        """Refused: the component's CRF learns from a corpus with ``hgner train``, not from ``nlp.update``."""
        raise HgnerError("the hgner component does not learn in nlp.update: train its CRF with the command "
                         "hgner train on a CoNLL corpus, then add_pipe('hgner', config={'model': MODEL_DIR}); to "
                         f"train the pipeline's other components, leave it out (nlp.update(..., exclude=[{self.name!r}]), "
                         f"or frozen_components = [{self.name!r}] in a training config)")

    def refuse_folder(self, path: Path) -> None:
        """An :class:`HgnerError` when ``nlp.to_disk(path)`` would write into a model folder (the
        component's model, or any: spaCy's ``meta.json`` would replace the model's)."""
        try:
            model = self._model_directory().resolve()
        except HgnerError:
            model = None  # (a model that cannot be found: to_disk says so)
        target = path.resolve()
        if model is not None and (target == model or model in target.parents):
            raise HgnerError(f"{path}: the model folder of the hgner component {self.name!r}; nlp.to_disk would write "
                             "spaCy's meta.json over the model's: save the pipeline into another folder (the "
                             f"component copies its model into it, as {self.name}/{MODEL_DIR})")
        if is_model_folder(target):
            raise HgnerError(f"{path}: an hgner model folder; nlp.to_disk would write spaCy's meta.json over the "
                             "model's: save the pipeline into another folder")

    def _model_directory(self) -> Path:
        from .crf.modelfiles import model_directory  # (numba, with the features: not on import)

        return model_directory(self.model_path)

    def to_disk(self, path: str | Path, *, exclude: Iterable[str] = ()) -> None:
        """Write ``cfg`` and a copy of the model's sealed files as ``model/``."""
        from .crf.modelfiles import SEALED_FILES, model_workspace  # (numba, with the features: not on import)

        path = Path(path)
        source = self._model_directory()  # a model that cannot be found fails before anything is written
        self.refuse_folder(path)
        path.mkdir(parents=True, exist_ok=True)
        target = path / MODEL_DIR
        if source.resolve() != target.resolve():
            with model_workspace(target) as work:  # a failed copy leaves the previous one as it was
                copy_sealed(source, work, SEALED_FILES)  # the recorded files only, never through a link
        write_text(path / CFG_FILE, json.dumps(self.cfg, indent=2) + "\n")  # after the model: never a cfg without it

    def to_bytes(self, *, exclude: Iterable[str] = ()) -> bytes:
        """Refused: the component's model is a folder of files, which ``nlp.to_disk`` copies."""
        raise HgnerError("the hgner component saves with nlp.to_disk (its model is a folder of files); "
                         "nlp.to_bytes cannot hold it")

    def from_bytes(self, data: bytes, *, exclude: Iterable[str] = ()) -> HgnerComponent:
        """Refused, as :meth:`to_bytes`."""
        raise HgnerError("the hgner component loads with spacy.load or nlp.from_disk; nlp.from_bytes cannot hold its model")

    def from_disk(self, path: str | Path, *, exclude: Iterable[str] = ()) -> HgnerComponent:
        """Read what :meth:`to_disk` wrote; the model loads with the next Doc."""
        path = Path(path)
        cfg = read_json(path / CFG_FILE, raises=HgnerError)
        self.settings = _check_settings(cfg, path / CFG_FILE)
        self.cfg = {**COMPONENT_DEFAULTS, **cfg}  # (a cfg saved before a component setting existed: its default)
        self.model_path = path / MODEL_DIR
        self._tagger = None
        return self

    def __getstate__(self) -> dict[str, Any]:
        """Pickle the settings only (for spawned worker processes); the model reloads there."""
        return {"name": self.name, "language": self.language, "cfg": self.cfg, "settings": self.settings,
                "model_path": self.model_path,
                "_tagger": None}
