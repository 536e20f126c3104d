"""How ``hgner train`` and ``hgner evaluate`` read a tagged corpus (a CoNLL file, a catalogue name
or an annotation tool's export, :mod:`hgner.data.annotations`): its tag scheme and its documents,
both reported on stderr.

**Scheme.** Tags are always read as conlleval reads them: an ``I-`` after ``O`` or after another
type starts a chunk, whatever the scheme. Without ``--scheme`` the scheme is detected
(:func:`hgner.core.schemes.detect`: BIOES when an E-/S- tag occurs, IOB1 when some chunk starts with
``I-``, otherwise IOB2) and printed with the evidence (how many chunks start with ``I-`` and where
the first is). ``--scheme S`` overrides it leniently: the chunks read as above are rendered in S
(so IOB2 with a few stray ``I-`` starts is read as IOB2, each stray start being a chunk start), and
no file that reads under its detected scheme is rejected. The scheme only decides how gold and
predicted tags are written (``--predictions``); entity scores do not depend on it.

**Documents** (``--documents``): ``corpus`` keeps the corpus's own documents (``-DOCSTART-``
lines; a file without them is one document), ``sentence`` makes every sentence a document, N
groups N consecutive sentences. The default, ``auto``, keeps the corpus's documents when it has
more than one or marks its one with ``-DOCSTART-``, and otherwise warns and uses :data:`NO_DOCUMENTS` (groups of 40 sentences: on
esp.testa, ahead of groups of 5-20 sentences, one per sentence and the whole file, and level with
30-120; see ``docs/development/research-log.md``):
document-level features and skip edges spanning a whole corpus join unrelated articles, and
per-document report figures become corpus totals.
"""

from __future__ import annotations

import logging

from ..core import registry, schemes
from ..core.errors import HgnerError, named, warn
from ..core.wording import counted
from ..text.tokenizer import DEFAULT_LANGUAGE
from .annotations import detect
from .catalog import CorpusSource
from .corpus import Corpus, convert_corpus, load_corpus, regroup_documents

log = logging.getLogger("hgner")

NO_DOCUMENTS = "40"
DOCUMENT_MODES = ("auto", "corpus", "sentence")


def check_documents(text: str) -> str:
    """``text`` when it is a documents mode: auto, corpus, sentence or a whole number >= 1."""
    if isinstance(text, str) and (text in DOCUMENT_MODES or (text.isdigit() and int(text) >= 1)):
        return text
    raise HgnerError(f"{named('documents')}: expected auto, corpus, sentence or a whole number >= 1, got {text!r}")


def chunk_starts(corpus: Corpus) -> tuple[int, int, int | None]:
    """Chunks that start with ``I-``, all chunks, and the line of the first sentence with an ``I-`` start."""
    with_i, total, first_line = 0, 0, None
    for sentence in corpus.sentences:
        tags = sentence.tags or []
        for start, _, _ in schemes.chunks(tags):
            total += 1
            if schemes.split_tag(tags[start])[0] == "I":
                with_i += 1
                if first_line is None and sentence.line is not None:
                    first_line = sentence.line + start
    return with_i, total, first_line


def read_tagged(name: str, scheme: str | None = None, documents: str = "auto", what: str = "corpus",
                offline: bool = False, announce: bool = True, argument: str = "documents",
                language: str = DEFAULT_LANGUAGE) -> tuple[Corpus, str]:
    """Load a tagged corpus by name (a CoNLL file, a catalogue name or an annotation tool's export,
    :mod:`hgner.data.annotations`, tokenized in ``language``), put it in ``scheme`` (detected when
    None) and group its documents as ``documents`` says. What was detected and chosen goes into the corpus's notes
    (printed with every report) and, with ``announce``, to the ``hgner`` logger. A corpus without
    documents is a warning naming ``argument``, the setting that chooses its grouping. Returns the
    corpus and the documents mode used (``auto`` resolved)."""
    corpus = _load(name, offline, scheme is not None, language)
    detected = corpus.scheme
    with_i, total, first_line = chunk_starts(corpus)
    evidence = "" if detected == "BIOES" else (  # BIOES chunks start with B- or S-: I- starts tell nothing
        f"; {with_i} of {total} chunks start with I-" + (f", the first on line {first_line}" if first_line else ""))
    if scheme is None:
        message = f"scheme {detected} (detected{evidence})"
        if detected == "IOB1" and 0 < with_i <= 0.01 * total:
            message += "; if the file is IOB2 with stray I- starts, reading it as IOB2 takes each as a chunk start"
    else:
        try:
            wanted = schemes.normalize_scheme(scheme)
        except ValueError as error:
            raise HgnerError(f"{named('scheme')}: {error}") from None
        corpus = convert_corpus(corpus, wanted)  # (also when it was detected: tags that break it are rewritten)
        message = f"scheme {wanted} (given; detected {detected}{evidence}{', read as chunk starts' if with_i else ''})"
    corpus.notes.append(message)
    if announce:
        log.info("%s %s: %s", what, corpus.name, message)
    return _group(corpus, documents, what, argument)


def _load(name: str, offline: bool, lenient: bool, language: str) -> Corpus:
    """The corpus ``name`` names: an annotation tool's export when :func:`~hgner.data.annotations.detect` finds
    one, else a CoNLL file or a catalogue corpus (``lenient``: tags read as conlleval reads them)."""
    found = detect(name)
    if found is None:
        return load_corpus(name.removeprefix("conll:") if name.startswith("conll:") else name, offline=offline,
                           lenient=lenient)
    form, path = found
    return registry.lookup(registry.corpus_readers, form)(CorpusSource(name, path, {}, lenient), None,
                                                          language=language)


def _group(corpus: Corpus, documents: str, what: str, argument: str) -> tuple[Corpus, str]:
    mode = documents
    if documents == "auto":
        mode = "corpus"
        if len(corpus.documents) == 1 and len(corpus.sentences) > 1 and not corpus.marked:
            mode = NO_DOCUMENTS
            warn(f"{what} {corpus.name} has no -DOCSTART- document boundaries ({len(corpus.sentences)} sentences "
                 f"in one document); reading one document per {mode} sentences ({named(argument)} corpus|sentence|N "
                 "chooses)")
    grouped = regroup_documents(corpus, mode)
    if mode != "corpus":
        grouped.notes.append(f"documents: {mode} ({counted(len(grouped.documents), 'document')})")
    return grouped, mode
