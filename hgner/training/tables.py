"""The word tables ``hgner train`` adds from outside its corpus: gazetteer lists, Brown word
clusters, the outside truecasing table, the capitalised shares and clusters of word vectors, read
from a model or a file, with where they came from (for ``meta.json``)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from ..core.errors import HgnerError, named
from ..core.fileio import decode_utf8, file_sha256, read_input
from ..core.validation import ecma_pattern, load_schema, read_json, read_string_table
from ..crf.model import CrfModel
from ..crf.modelfiles import builtin_models
from ..features import TABLE_FILES, FeatureResources


def read_gazetteer(source: str) -> tuple[dict[str, list[str]], str, Path]:
    """Gazetteer lists for ``hgner train --gazetteer``, where they came from (for ``meta.json``)
    and the file read: the lists of a model (a shipped model's name or a model directory,
    checksum-verified), or a JSON file mapping list names to entries (checked against
    ``gazetteer.schema.json``). Training fits them to its corpus (:func:`hgner.features.fit_gazetteer`)."""
    return _read_word_table(source, "gazetteer", partial(read_string_table, schema_name="gazetteer"),
                            "gazetteer lists", "no gazetteer entries (expected list names mapped to entries)")


def read_outside_truecase(source: str) -> tuple[Any, str, Path]:
    """An outside truecasing table (lowercase form -> usual spelling) for ``hgner train
    --outside-truecase``, where it came from and the file read: a model's (a name or directory)
    or a JSON file mapping lowercase words to their spelling (checked against
    ``outside_truecase.schema.json``); a model stores the table as arrays (``outside_truecase.npz``)."""
    return _read_word_table(source, "outside_truecase", _read_truecase_file,
                            "outside truecasing table", "no entries (expected lowercase words mapped to their usual spelling)")


def _read_truecase_file(path: Path) -> dict[str, str]:
    table = read_string_table(path, "outside_truecase")
    cased = next((key for key in table if key != key.lower()), None)
    if cased is not None:  # looked up by lowercase form only: such a key would never be read
        raise HgnerError(f"{path}: {cased[:40]!r}: not a valid key; expected a lowercase word")
    return table


def read_capitalised_share(source: str) -> tuple[Any, str, Path]:
    """A capitalised-share table (``"C U"``, the percentages of occurrences capitalised and upper
    case -> lowercase forms) for ``hgner train --capitalised-share``, where it came from and the
    file read: a model's (a name or directory) or a JSON file as a model's
    ``capitalised_share.json`` (checked against its schema, each word under one key)."""
    return _read_word_table(source, "capitalised_share", _read_share_file, "capitalised-share table",
                            "no words in it (expected 'C U', percentages capitalised and upper case, mapped to "
                            "lowercase words)")


def _read_share_file(path: Path) -> dict[str, list[str]]:
    shares = read_string_table(path, "capitalised_share")
    problem = FeatureResources(capitalised_share=shares).repeated_share_word()
    if problem is not None:
        raise HgnerError(f"{path}: {problem}")
    return shares


def read_word_clusters(source: str) -> tuple[dict[str, list[str]], str, Path]:
    """Word clusters (path -> words) for ``hgner train --word-clusters``, where they came from (for
    ``meta.json``) and the file read: a model's (a shipped model's name or a model directory,
    checksum-verified), a JSON file mapping cluster paths to words (checked against
    ``word_clusters.schema.json``; a model stores them as arrays, ``word_clusters.npz``), or any
    other file as Brown clusters in the format of Liang's ``wcluster`` (its
    ``paths`` file: a line per word, ``PATH<TAB>WORD<TAB>COUNT``; the count may be left out and is
    not used)."""
    return _read_word_table(source, "word_clusters", _read_cluster_file, "word clusters",
                            "no word clusters in it")


def read_vector_clusters(source: str) -> tuple[dict[str, list[str]], str, Path]:
    """Clusters of word vectors (path -> words) for ``hgner train --vector-clusters``, where they
    came from (for ``meta.json``) and the file read: a model's (a name or directory), or a file as
    :func:`read_word_clusters` reads one (``tools/build_glove_clusters.py`` writes the JSON). Beside a
    file ``NAME.json``, the ``NAME.sources.json`` that tool writes adds the vectors' package, its
    version and its files' sha256 to where they came from; it must describe this file (its
    ``out_sha256``)."""
    table, sources, path = _read_word_table(source, "vector_clusters", _read_cluster_file, "vector clusters",
                                            "no word clusters in it")
    described = path.with_suffix(".sources.json")
    if path == Path(source) and described.is_file():  # (a file of clusters, not a model's table)
        sources += f": {_vector_sources(described, path)}"
    return table, sources, path


_BUILT_BY = ("package", "version", "sha256", "out_sha256")  # what build_glove_clusters.py's sources record


def _vector_sources(described: Path, clusters: Path) -> str:
    """The package, version, sha256s and settings that ``described`` (a ``.sources.json``)
    records of how ``clusters`` were built, as one line."""
    try:
        data = read_json(described, raises=HgnerError)
    except HgnerError as error:
        raise HgnerError(f"{named('vector_clusters')}: {error}") from None
    if not (isinstance(data, dict) and all(isinstance(data.get(key), str) for key in ("package", "version", "out_sha256"))
            and isinstance(data.get("sha256"), dict) and all(isinstance(v, str) for v in data["sha256"].values())):
        raise HgnerError(f"{named('vector_clusters')}: {described}: expected the object tools/build_glove_clusters.py "
                         "writes (package, version, sha256 of each file, out_sha256)")
    if data["out_sha256"] != file_sha256(clusters):
        raise HgnerError(f"{named('vector_clusters')}: {described}: describes another file than {clusters} (its "
                         "out_sha256 differs): build the clusters again, or remove it")
    files = ", ".join(f"{name} sha256 {digest}" for name, digest in data["sha256"].items())
    settings = ", ".join(f"{key} {value}" for key, value in data.items()
                         if key not in _BUILT_BY and isinstance(value, (str, int, float)))
    return f"{data['package']} {data['version']} ({files})" + (f"; {settings}" if settings else "")


def _read_word_table(source: str, setting: str, read_file: Callable[[Path], dict], what: str,
                     empty: str) -> tuple[dict[str, list[str]], str, Path]:
    """A table of :class:`~hgner.features.FeatureResources` (its field ``setting``, which errors
    name): read from the file ``source`` by ``read_file``, or a model's (``source`` a
    model name or directory); with where it came from (``meta.json``'s ``SETTING_sources``) and
    the file read. ``what`` names the table, ``empty`` says what an empty file lacks."""
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
            raise HgnerError(f"{named(setting)}: no file or model directory {source!r}, and no shipped model of that name "
                             f"(shipped: {', '.join(builtin_models())})") from None
        raise HgnerError(f"{named(setting)}: {error}") from None
    table = getattr(model.resources, setting)
    if not table:
        raise HgnerError(f"{named(setting)}: model {model.name} ({model.directory}) has no {what}")
    recorded = model.metadata.get(f"{setting}_sources")
    return (table, f"model {model.name}'s {what}" + (f": {recorded}" if recorded else ""),
            model.directory / TABLE_FILES[setting])


def _read_cluster_file(path: Path) -> dict[str, list[str]]:
    """Word clusters from a JSON file (one that starts with ``{`` or ``[``; the table is an
    object) or a Brown ``paths`` file (whose lines start with 0 or 1)."""
    try:
        head = read_input(path)[:4096]
    except OSError as error:
        raise HgnerError(f"{path}: cannot read ({error.strerror or error})") from None
    if head.removeprefix(b"\xef\xbb\xbf").lstrip()[:1] not in (b"{", b"["):
        return _read_brown_paths(path)
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
