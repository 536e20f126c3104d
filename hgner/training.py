"""``hgner train``'s work in one call: a complete model directory from a training and a development
corpus (the crfsuite CRF, its skip potential with the weight tuned on the development corpus, its
calibration factor fitted there, and ``meta.json`` with the language, documents mode and
development figures)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TextIO

from . import calibration, schemes, skip
from .corpus import Corpus
from .errors import HgnerError
from .evaluation import evaluate, unknown_types_warning
from .features import TABLE_FILES, FeatureResources
from .fileio import decode_utf8, file_sha256, read_input
from .model import SKIP_FILES, CrfModel, builtin_models, check_model_target, train, write_metadata
from .report import counted
from .tokenizer import DEFAULT_LANGUAGE, likelier_language


def build_model(
    train_corpus: Corpus,
    out: str | Path,
    *,
    dev: Corpus | None = None,
    language: str = DEFAULT_LANGUAGE,
    documents: str = "corpus",
    dev_documents: str | None = None,
    function_words: tuple[str, ...] | None = None,
    progress: bool = False,
    log: TextIO | None = None,
    **options: Any,
) -> CrfModel:
    """Train a CRF on ``train_corpus`` (whose documents were grouped as ``documents`` says) into
    ``out``; with ``dev``, score it there with Viterbi, learn the skip potential from
    ``train_corpus`` and tune its weight on ``dev`` (:func:`hgner.skip.build`, decoded by
    ``exact``; weight 0 when skip edges do not beat the chain, or when the weight picked on half of
    ``dev``'s documents does not beat it on the other half), and fit the calibration factor
    on ``dev`` (:func:`hgner.calibration.fit`). Without ``dev`` no skip potential is written (its
    weight needs a development corpus) and the model is not calibrated. ``function_words`` replaces the learned
    list of words never joined by skip edges (:func:`hgner.skip.function_words`). ``options`` go to
    :func:`hgner.model.train` (features, scheme, regularisation, ...)."""
    skip.stop_words(language)  # an unknown language code fails before training
    if dev is not None:  # (train checks the training corpus)
        check_model_target(Path(out), [dev.file])
    types = set(_entity_types(train_corpus))
    dropped = {name for name, target in (options.get("label_map") or {}).items() if target == "O"}
    if dropped - types:
        raise HgnerError(f"--drop-type {', '.join(sorted(dropped - types))}: no such entity type in "
                         f"{train_corpus.name} (its types: {', '.join(sorted(types)) or 'none'})")
    if dev is not None and types - dropped and not types.intersection(_entity_types(dev)) - dropped:
        raise HgnerError(f"development corpus {dev.name}: no entity of the model's types "
                         f"({', '.join(sorted(types - dropped)) or 'none'}) to score or tune on")
    say = (lambda text: print(text, file=log, flush=True)) if log is not None else (lambda text: None)
    say(f"training on {train_corpus.name}: {counted(len(train_corpus.documents), 'document')}, "
        f"{counted(len(train_corpus.sentences), 'sentence')}, {counted(train_corpus.n_tokens, 'token')} "
        f"(language {language})")
    other = likelier_language(train_corpus.tokens, language)
    if other is not None:
        say(f"warning: training corpus {train_corpus.name}: {other.evidence}, the language recorded in the model: "
            f"if the corpus is in {other.language!r}, train with --lang {other.language}")
    dev_other = likelier_language(dev.tokens, language) if dev is not None else None
    if dev_other is not None and (other is None or other.language != dev_other.language):
        say(f"warning: development corpus {dev.name}: {dev_other.evidence}, the model's language: "
            f"its dev figures and the skip weight tuned on it are for another language than "
            f"{train_corpus.name}'s; give a development corpus in the training corpus's language")

    def finish(model: CrfModel) -> None:
        """Score ``dev`` and add the skip potential, in the model's workspace (before it is swapped in)."""
        training = model.metadata["training"]
        lists = model.resources.gazetteer
        if lists:
            kept = ", ".join(f"{name} {counted(len(entries), 'entry')}" for name, entries in sorted(lists.items()))
            say(f"gazetteer lists fitted to {train_corpus.name}: {kept}")
        clusters = model.resources.word_clusters
        if clusters:
            say(f"word clusters: {counted(sum(map(len, clusters.values())), 'word')} in "
                f"{counted(len(clusters), 'cluster')}")
        say(f"trained in {training['seconds']:.0f} s ({counted(training['iterations'], 'L-BFGS iteration')} of at most "
            f"{training['max_iterations']}, loss {training['loss']:.2f}): {len(model.attribute_index)} attributes")
        if dev is None:
            say("no development corpus: no skip potential written and no calibration (--dev gives both)")
            return
        unknown = unknown_types_warning(model, dev, "development corpus")
        if unknown is not None:
            say(f"warning: {unknown}")
        result = evaluate(model, dev, ["viterbi"], progress=progress)["results"][0]
        say(f"dev F1 on {dev.name}: {result['f1']:.2f} (Viterbi)")
        tuned = skip.build(model, train_corpus, dev, language, words=function_words, progress=progress)
        say(f"skip potential: {tuned.info['edges']} skip edges in {train_corpus.name}, "
            f"{len(tuned.config.function_words)} function words; {skip.tuning_summary(tuned)}")
        model.metadata["dev"] = {
            "corpus": dev.name,
            "documents": dev_documents or documents,
            "decoder": "viterbi",
            "f1": round(result["f1"], 2),
            "precision": round(result["precision"], 2),
            "recall": round(result["recall"], 2),
            "skip": skip.dev_record(tuned),
        }
        model.metadata["calibration"] = fitted = calibration.fit(model, dev, progress=progress)
        say(f"calibration: every potential times {fitted['factor']} (gold NLL per sentence on {dev.name} "
            f"{fitted['gold_nll_per_sentence']:.3f} -> {fitted['gold_nll_per_sentence_at_factor']:.3f}; "
            f"Viterbi and exact labellings do not change)")
        if calibration.at_bound(fitted["factor"]):
            say(f"warning: the calibration factor is at its bound {fitted['factor']}: {dev.name} is fitted "
                "(almost) perfectly or not at all; is it the training corpus?")
        write_metadata(model.directory, model.metadata, changed=SKIP_FILES)  # skip.build wrote them

    return train(train_corpus, out, language=language, documents=documents, finish=finish, progress=progress,
                 **options)


def _entity_types(corpus: Corpus) -> list[str]:
    """The entity types of ``corpus``'s gold tags."""
    return schemes.entity_types(tag for sentence in corpus.sentences for tag in sentence.tags)


def read_gazetteer(source: str) -> tuple[dict[str, list[str]], str, Path]:
    """Gazetteer lists for ``hgner train --gazetteer``, where they came from (for ``meta.json``)
    and the file read: the lists of a model (a shipped model's name or a model directory,
    checksum-verified), or a JSON file mapping list names to entries (checked against
    ``gazetteer.schema.json``). Training fits them to its corpus (:func:`hgner.features.fit_gazetteer`)."""
    from .validation import read_string_table

    return _read_word_table(source, "--gazetteer", "gazetteer", partial(read_string_table, schema_name="gazetteer"),
                            "gazetteer lists", "no gazetteer entries (expected list names mapped to entries)")


def read_word_clusters(source: str) -> tuple[dict[str, list[str]], str, Path]:
    """Word clusters (path -> words) for ``hgner train --word-clusters``, where they came from (for
    ``meta.json``) and the file read: a model's (a shipped model's name or a model directory,
    checksum-verified), a JSON file as a model's ``word_clusters.json`` (checked against its
    schema), or any other file as Brown clusters in the format of Liang's ``wcluster`` (its
    ``paths`` file: a line per word, ``PATH<TAB>WORD<TAB>COUNT``; the count may be left out and is
    not used)."""
    return _read_word_table(source, "--word-clusters", "word_clusters", _read_cluster_file, "word clusters",
                            "no word clusters in it")


def read_outside_truecase(source: str) -> tuple[dict[str, str], str, Path]:
    """An outside truecasing table (lowercase form -> usual spelling) for ``hgner train
    --outside-truecase``, where it came from and the file read: a model's (a name or directory)
    or a JSON file as a model's ``outside_truecase.json`` (checked against its schema)."""
    from .validation import read_string_table

    return _read_word_table(source, "--outside-truecase", "outside_truecase",
                            partial(read_string_table, schema_name="outside_truecase"), "outside truecasing table",
                            "no entries (expected lowercase words mapped to their usual spelling)")


def _read_word_table(source: str, option: str, setting: str, read_file: Callable[[Path], dict], what: str,
                     empty: str) -> tuple[dict[str, list[str]], str, Path]:
    """A table of :class:`~hgner.features.FeatureResources` (its field ``setting``) for the training
    option ``option``: read from the file ``source`` by ``read_file``, or a model's (``source`` a
    model name or directory); with where it came from (``meta.json``'s ``SETTING_sources``) and
    the file read. ``what`` names the table in errors, ``empty`` says what an empty file lacks."""
    path = Path(source)
    try:
        if path.exists() and not path.is_dir():
            if not path.is_file():
                raise HgnerError(f"{path}: not a regular file")
            table = read_file(path)
            if not any(table.values()):
                raise HgnerError(f"{path}: {empty}")
            return table, f"{source} (sha256 {file_sha256(path)})", path
        model = CrfModel.load(source)
    except HgnerError as error:
        if not path.exists() and source not in builtin_models():
            raise HgnerError(f"{option}: no file or model directory {source!r}, and no shipped model of that name "
                             f"(shipped: {', '.join(builtin_models())})") from None
        raise HgnerError(f"{option}: {error}") from None
    table = getattr(model.resources, setting)
    if not table:
        raise HgnerError(f"{option}: model {model.name} ({model.directory}) has no {what}")
    recorded = model.metadata.get(f"{setting}_sources")
    return (table, f"model {model.name}'s {what}" + (f": {recorded}" if recorded else ""),
            model.directory / TABLE_FILES[setting])


def _read_cluster_file(path: Path) -> dict[str, list[str]]:
    """Word clusters from a JSON file (one that starts with ``{`` or ``[``; ``word_clusters.json``
    is an object) or a Brown ``paths`` file (whose lines start with 0 or 1)."""
    try:
        head = read_input(path)[:4096]
    except OSError as error:
        raise HgnerError(f"{path}: cannot read ({error.strerror or error})") from None
    if not head.removeprefix(b"\xef\xbb\xbf").lstrip()[:1] in (b"{", b"["):
        return _read_brown_paths(path)
    from .validation import read_string_table

    clusters = read_string_table(path, "word_clusters")
    problem = FeatureResources(word_clusters=clusters).repeated_cluster_word()
    if problem is not None:
        raise HgnerError(f"{path}: {problem}")
    return clusters


def _read_brown_paths(path: Path) -> dict[str, list[str]]:
    """The clusters of a Brown ``paths`` file (see :func:`read_word_clusters`): UTF-8 (a byte-order
    mark allowed), lines ending in LF or CRLF, blank lines skipped. Paths and words are checked as
    ``word_clusters.schema.json`` checks them, and a word is not only white space (nor, the format
    being lines of tab-separated fields, has a carriage return)."""
    from .validation import ecma_pattern, load_schema

    schema = load_schema("word_clusters")
    path_pattern = ecma_pattern(schema["propertyNames"]["pattern"])
    longest = schema["additionalProperties"]["items"]["maxLength"]
    clusters: dict[str, list[str]] = {}
    first_line: dict[str, int] = {}  # word -> the line it is on
    try:
        raw = read_input(path)
    except OSError as error:
        raise HgnerError(f"{path}: cannot read ({error.strerror or error})") from None
    for number, line in enumerate(decode_utf8(raw, str(path)).split("\n"), 1):
        text = line.removesuffix("\r")
        fields = text.split("\t")
        if fields == [""]:
            continue
        word = fields[1] if len(fields) > 1 else ""
        if not (len(fields) in (2, 3) and path_pattern.search(fields[0]) and 0 < len(word) <= longest
                and not word.isspace() and "\r" not in word
                and (len(fields) == 2 or (fields[2].isascii() and fields[2].isdigit()))):
            raise HgnerError(f"{path}:{number}: expected PATH<TAB>WORD<TAB>COUNT (PATH 1 to 64 0s and 1s, "
                             f"a word, an optional count), got {text[:60]!r}")
        bits = fields[0]
        if word in first_line:
            raise HgnerError(f"{path}:{number}: word {word[:40]!r} again (first on line "
                             f"{first_line[word]}); expected each word once")
        first_line[word] = number
        clusters.setdefault(bits, []).append(word)
    return clusters
