"""The ``hgner`` spaCy pipeline component: ``nlp.add_pipe("hgner", config={...})``.

A whole ``Doc`` is one document (skip edges may join any two of its sentences). The component
tags the Doc's own tokens (whitespace tokens left out) sentence by sentence: the Doc's sentence
boundaries when it has them, otherwise those ``hgner tag`` finds, by its line-aware rules and the
model's learned sentence starts (:meth:`hgner.text.tokenizer.TextTokenizer.split`; the Doc's own
sentence annotation is left alone).
Decoding is :class:`hgner.tag.Tagger`'s, so entities equal ``hgner tag``'s for the same tokens.
The component never re-tokenizes: for the tokens the model was trained on (as ``hgner tag``
makes them), give the pipeline hgner's tokenizer, ``nlp.tokenizer =
hgner.text.tokenizer.make_tokenizer(nlp)`` (or ``@tokenizers = "hgner.conll.v2"`` in a config);
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

Importing this module loads no numba or crfsuite: the model loads with the first Doc.
Serialization writes ``cfg`` (JSON settings) and ``model/`` (a copy of the model directory)
under the component's folder, so ``spacy.load`` restores it without the original model path.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spacy.language import Language
from spacy.tokens import Doc, Span

from .core.errors import HgnerError
from .core.fileio import write_text
from .core.integrity import copy_sealed
from .core.validation import check, read_json
from .tagging.settings import TagSettings
from .text.tokenizer import TextTokenizer

if TYPE_CHECKING:
    from .tagging.tagger import TaggedGroup, Tagger

CONFIDENCE = "hgner_confidence"
CFG_FILE = "cfg"
MODEL_DIR = "model"
COMPONENT_DEFAULTS = {"target": "ents", "overwrite": False}  # the component's own settings; the rest are TagSettings'

if not Span.has_extension(CONFIDENCE):
    Span.set_extension(CONFIDENCE, default=None)


def make_hgner(nlp: Language, name: str, **cfg: Any) -> HgnerComponent:
    """The ``hgner`` factory. Its settings are the fields of
    :class:`~hgner.tagging.settings.TagSettings` (``model``: a model name or directory;
    ``decoder``, ``graph``, ``sweeps``, ``seed``; ``decoder_settings``: keywords for the decoder's
    constructor, as ``--set`` in ``hgner tag``; ``min_confidence``, ...), and ``target``
    (``"ents"`` or a ``doc.spans`` key) and ``overwrite``."""
    return HgnerComponent(nlp, name, **cfg)


def _factory_signature() -> inspect.Signature:
    """``make_hgner``'s signature as spaCy reads it: ``nlp``, ``name``, then one keyword per setting."""
    positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
    names = [*(f.name for f in dataclasses.fields(TagSettings)), *COMPONENT_DEFAULTS]
    return inspect.Signature([inspect.Parameter("nlp", positional), inspect.Parameter("name", positional),
                              *(inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY) for n in names)])


def _default_config() -> dict[str, Any]:
    """The factory's defaults: :class:`TagSettings`' (none checked: nothing loads on import) and the component's."""
    defaults = {f.name: f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc,operator]
                for f in dataclasses.fields(TagSettings)}
    return {**defaults, **COMPONENT_DEFAULTS}


make_hgner.__signature__ = _factory_signature()  # type: ignore[attr-defined]
Language.factory("hgner", default_config=_default_config())(make_hgner)


def _check_settings(cfg: dict[str, Any], where: Path) -> TagSettings:
    """``cfg`` against the component schema (errors name ``where``), then as ``hgner tag`` checks
    its settings; returns them."""
    check(cfg, "component", where, raises=HgnerError)
    return TagSettings.from_options({k: v for k, v in cfg.items() if k not in COMPONENT_DEFAULTS})


class HgnerComponent:
    """Tags each Doc with an hgner model; see the module docstring for the rules."""

    def __init__(self, nlp: Language, name: str = "hgner", **cfg: Any) -> None:
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
        """The model and decoder, loaded on first use."""
        from .tagging.tagger import Tagger  # (numba, crfsuite: with the first Doc, not with spaCy's entry points)

        if self._tagger is None:
            self._tagger = Tagger(self.settings.with_model(self.model_path))
            trained = self._tagger.tokenizer.language
            if trained != self.language:
                warnings.warn(f"hgner: model {self._tagger.pipeline.model.name!r} is for language {trained!r}, but this "
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
        for group in groups:
            for entity in group.entities:
                # expand: an entity can end inside a Doc token, as "Corp" in "Corp." at a line end,
                # whose final period hgner tag's sentence rules read as the full stop
                span = doc.char_span(entity.start, entity.end, label=entity.label, alignment_mode="expand")
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

    def _model_directory(self) -> Path:
        from .crf.modelfiles import model_directory  # (numba, with the features: not on import)

        return model_directory(self.model_path)

    def to_disk(self, path: str | Path, *, exclude: Iterable[str] = ()) -> None:
        """Write ``cfg`` and a copy of the model's sealed files as ``model/``."""
        from .crf.modelfiles import SEALED_FILES, model_workspace  # (numba, with the features: not on import)

        path = Path(path)
        source = self._model_directory()  # a model that cannot be found fails before anything is written
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
        self.cfg = cfg
        self.model_path = path / MODEL_DIR
        self._tagger = None
        return self

    def __getstate__(self) -> dict[str, Any]:
        """Pickle the settings only (for spawned worker processes); the model reloads there."""
        return {"name": self.name, "language": self.language, "cfg": self.cfg, "settings": self.settings,
                "model_path": self.model_path,
                "_tagger": None}
