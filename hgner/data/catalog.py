"""The corpus catalogue: one JSON manifest per corpus in the top-level ``corpora/`` folder (installed
as ``hgner.corpora``), validated against ``corpora/manifest.schema.json``, and corpus names.

A corpus name is a catalogue name, ``CORPUS`` (its default split) or ``CORPUS<sep>SPLIT`` with the
manifest's separator (``conll2003:testb``, ``wikigold``, ``nltk:ieer``, ``nltk:conll2002/esp.testa``),
or the path of a CoNLL file. A catalogue corpus is read by the corpus reader its manifest names
(:data:`hgner.core.registry.corpus_readers`), from the data home (:mod:`hgner.data.datahome`), fetched there
first when it is missing. A new corpus in a known format is one new manifest file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from ..core.errors import HgnerError, ManifestError
from ..core.validation import check, read_json

SCHEMA_FILE = "manifest.schema.json"


@dataclass(frozen=True)
class Split:
    """One split: its file (an NLTK file id for NLTK packages), with the sha256 and size of a
    downloaded file (None for NLTK packages, which NLTK's downloader checks), and whether its
    documents are marked (``-DOCSTART-``; the corpus's setting unless the split has its own)."""

    name: str
    file: str | None
    sha256: str | None
    size: int | None
    documents_marked: bool


@dataclass(frozen=True)
class Manifest:
    """A corpus of the catalogue, as its manifest describes it."""

    name: str
    title: str
    description: str
    reader: str
    languages: tuple[str, ...]
    scheme: str
    entity_types: tuple[str, ...]
    label_map: Mapping[str, str]
    license: str
    citation: str
    separator: str
    splits: Mapping[str, Split]
    urls: tuple[str, ...]  # URL templates with {file}; empty for NLTK packages
    nltk_package: str | None
    default_split: str | None
    path: Path  # the manifest file

    def split_name(self, split: str) -> str:
        """The name that loads ``split``: ``conll2003:testb``, or ``wikigold`` for a default split."""
        return self.name if split == self.default_split else f"{self.name}{self.separator}{split}"

    def split_names(self) -> list[str]:
        return [self.split_name(split) for split in self.splits]


@dataclass(frozen=True)
class CorpusSource:
    """What a corpus reader is given: the corpus name (used in errors and reports), where to read
    (a local file path, or ``PACKAGE/FILE`` in NLTK's data), the manifest's label map, and whether
    to read the tags leniently (``--scheme`` given: as conlleval reads them, not checked against
    the detected scheme; the caller converts them)."""

    name: str
    location: str
    label_map: Mapping[str, str]
    lenient: bool = False


def manifests_dir() -> Path:
    """The installed ``hgner.corpora`` package data, or the top-level ``corpora/`` folder when
    running from a source checkout."""
    try:
        return Path(str(resources.files("hgner.corpora")))
    except ModuleNotFoundError:
        return Path(__file__).resolve().parents[2] / "corpora"


def load_manifest(path: str | Path) -> Manifest:
    """Read and validate one manifest (:func:`hgner.core.validation.read_json` and
    :func:`~hgner.core.validation.check`, as model files are); a :class:`ManifestError` names the file,
    the field, what was expected and what was found."""
    path = Path(path)
    data = read_json(path, raises=ManifestError)
    check(data, manifests_dir() / SCHEMA_FILE, path, raises=ManifestError)
    splits = {name: Split(name, entry.get("file"), entry.get("sha256"), entry.get("size"),
                          entry.get("documents_marked", data["documents_marked"]))
              for name, entry in data["splits"].items()}
    default = data.get("default_split")
    if default is not None and default not in splits:
        raise ManifestError(f"{path}: default_split: expected one of its splits ({', '.join(splits)}), got {default!r}")
    return Manifest(
        name=data["name"], title=data["title"], description=data["description"], reader=data["reader"],
        languages=tuple(data["languages"]), scheme=data["scheme"], entity_types=tuple(data["entity_types"]),
        label_map=dict(data["label_map"]), license=data["license"],
        citation=data["citation"], separator=data["separator"], splits=splits,
        urls=tuple(data["sources"].get("urls", ())), nltk_package=data["sources"].get("nltk"),
        default_split=default, path=path,
    )


def manifest_files(directory: Path | None = None) -> list[Path]:
    """Every manifest in ``directory`` (default: the installed catalogue), sorted."""
    directory = directory or manifests_dir()
    return sorted(p for p in directory.glob("*.json") if p.name != SCHEMA_FILE)


@cache
def _load_catalogue(directory: Path) -> dict[str, Manifest]:
    manifests: dict[str, Manifest] = {}
    for path in manifest_files(directory):
        manifest = load_manifest(path)
        if manifest.name in manifests:
            raise ManifestError(f"{path}: corpus {manifest.name!r} is also described by {manifests[manifest.name].path}")
        manifests[manifest.name] = manifest
    return manifests


def catalogue() -> dict[str, Manifest]:
    """The catalogue's manifests by corpus name."""
    return _load_catalogue(manifests_dir())


def all_split_names() -> list[str]:
    """Every name that loads a catalogue corpus, in catalogue order."""
    return [name for manifest in catalogue().values() for name in manifest.split_names()]


def find_manifest(name: str) -> Manifest:
    """The manifest of corpus ``name`` (``conll2003``, ``nltk:ieer``; a split name also works)."""
    found = resolve(name)
    if found is None:
        raise HgnerError(f"corpus {name!r}: not in the catalogue (corpora: {', '.join(catalogue())})")
    return found[0]


def resolve(name: str) -> tuple[Manifest, Split | None] | None:
    """The manifest and split a name means, with split None for a bare corpus name without a
    default split (``conll2003``); None when ``name`` is not a catalogue name. A known corpus with
    an unknown split is an :class:`HgnerError` listing its splits."""
    for manifest in sorted(catalogue().values(), key=lambda m: -len(m.name)):
        if name == manifest.name:
            return manifest, manifest.splits[manifest.default_split] if manifest.default_split else None
        prefix = manifest.name + manifest.separator
        if name.startswith(prefix):
            split = name[len(prefix):]
            if split not in manifest.splits:
                raise HgnerError(f"corpus {name!r}: {manifest.name} has no split {split!r}; "
                                 f"expected one of {', '.join(manifest.split_names())}")
            return manifest, manifest.splits[split]
    return None
