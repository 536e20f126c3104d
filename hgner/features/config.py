"""Feature configuration (which attribute groups a model uses) and resources (the tables they
read), the two things a model needs besides its weights to featurise text."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, cast

from ..core.validation import check_fields
from .clusters import ClusterTable
from .frequencies import FrequencyTable, frequency_attribute
from .spellings import SpellingTable


@dataclass(frozen=True)
class FeatureConfig:
    """Which attribute groups a model uses (see the module docstring)."""

    window: int = 2
    affixes: int = 4
    conjunctions: bool = False
    truecase: bool = False
    document: bool = False
    gazetteer: bool = False
    context: int = 0
    word_clusters: bool = False
    lowercase_clusters: bool = False
    neighbour_clusters: int = 0
    frequency: str = ""
    outside_truecase: bool = False
    caseless_features: bool = False
    capitalised_share: int = 0
    neighbour_shares: bool = False
    vector_clusters: bool = False

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> FeatureConfig:
        check_fields(data, cls, "feature settings")
        return cls(**data)


# The shipped models' features without the gazetteer (which needs lists from outside the training
# corpus): what `hgner train` uses unless told otherwise (eng.testa: docs/development/research-log.md).
RECOMMENDED = FeatureConfig(window=2, affixes=4, conjunctions=True, truecase=True, document=True, context=10)
BASELINE = FeatureConfig()

TRUECASE_FILE = "truecase.json"
GAZETTEER_FILE = "gazetteer.json"
GAZETTEER_MAX_TOKENS = 4
WORD_CLUSTERS_FILE = "word_clusters.npz"
OUTSIDE_TRUECASE_FILE = "outside_truecase.npz"
CAPITALISED_SHARE_FILE = "capitalised_share.json"
WORD_FREQUENCY_FILE = "word_frequency.npz"
VECTOR_CLUSTERS_FILE = "vector_clusters.npz"
CLUSTER_PREFIXES = (4, 6, 10, 20)  # the path prefixes a word's cluster gives it (Ratinov and Roth 2009)


@dataclass
class FeatureResources:
    """Tables the features need, saved in the model directory: JSON, and as arrays the word and
    vector clusters (:class:`~hgner.features.clusters.ClusterTable`) and the outside truecasing table
    (:class:`~hgner.features.spellings.SpellingTable`), each given as any mapping, and the word
    frequency buckets (:class:`~hgner.features.frequencies.FrequencyTable`).

    ``truecase`` maps a lowercase form to its most frequent surface form in the training corpus.
    ``gazetteer`` maps a list name (e.g. ``LOC``, ``FIRST``, ``LAST``) to its entries, each a
    lowercase string of space-separated tokens (at most ``GAZETTEER_MAX_TOKENS`` tokens).
    ``word_clusters`` maps a Brown cluster's path (a string of 0s and 1s) to its words, each word
    in one cluster (:meth:`repeated_cluster_word` says when one is not); ``vector_clusters`` is a
    second such table, of clusters of word vectors (GloVe). ``outside_truecase`` maps
    a lowercase form to its most frequent surface form in text far larger than the training
    corpus (consulted after ``truecase``).
    ``capitalised_share`` maps ``"C U"`` to the lowercase forms of which C percent of the
    occurrences in such text start with an upper-case letter and U percent are all upper case
    (integers 0..100), each form under one key (grouped as ``word_clusters`` is: a smaller file,
    read three times as fast as a map of each form to its pair). ``word_frequency``: the frequency
    features' buckets of the words of letters (None: every word's is asked of wordfreq)."""

    truecase: dict[str, str] = field(default_factory=dict)
    gazetteer: dict[str, list[str]] = field(default_factory=dict)
    word_clusters: Mapping[str, list[str]] = field(default_factory=dict)
    outside_truecase: Mapping[str, str] = field(default_factory=dict)
    capitalised_share: dict[str, list[str]] = field(default_factory=dict)
    word_frequency: FrequencyTable | None = None
    vector_clusters: Mapping[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.outside_truecase = SpellingTable.from_mapping(self.outside_truecase)
        self.word_clusters = ClusterTable.from_mapping(self.word_clusters)
        self.vector_clusters = ClusterTable.from_mapping(self.vector_clusters)
        self.list_names = sorted(self.gazetteer)
        self._entries: dict[str, tuple[int, ...]] = {}  # entry -> the lists it is on (indices in list_names)
        for list_index, list_name in enumerate(self.list_names):
            alone, lists_of = (list_index,), self._entries.get  # (an entry on one list shares the tuple)
            for entry in self.gazetteer[list_name]:
                self._entries[entry] = lists_of(entry, ()) + alone
        # the entries' first tokens ("new" of "new york city"): the words a match may start with
        self.entry_starts = frozenset(entry.partition(" ")[0] for entry in self._entries)
        self._shares_of = {word: shares for shares, words in self.capitalised_share.items() for word in words}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FeatureResources) and all(
            getattr(self, key) == getattr(other, key) for key in TABLE_FILES)

    def has_entries(self, setting: str) -> bool:
        """Whether the table ``setting`` (a field) has an entry: a word in a cluster, a form, a list entry."""
        table = getattr(self, setting)
        return bool(table.words) if isinstance(table, ClusterTable) else any(table.values())

    def _clusters(self, setting: str) -> ClusterTable:
        """The cluster table ``setting`` (a key of :data:`CLUSTER_TABLES`) as :meth:`__post_init__` made it."""
        return cast(ClusterTable, getattr(self, setting))

    def repeated_cluster_word(self, setting: str = "word_clusters") -> str | None:
        """What is wrong when a word is in the cluster table ``setting`` twice, or None."""
        return self._clusters(setting).repeated

    def repeated_share_word(self) -> str | None:
        """What is wrong when a word is in ``capitalised_share`` twice, or None."""
        return _repeated_word(self.capitalised_share, self._shares_of, "shares")

    def cluster_attributes(self, word: str, lowercase: bool = False, setting: str = "word_clusters") -> tuple[str, ...]:
        """``cK=`` for each prefix length K of ``word``'s path in the cluster table ``setting``
        (``vK=`` for ``vector_clusters``: :data:`CLUSTER_TABLES`), looked up as written, then in lower
        case; () when it has no cluster. With ``lowercase``, also ``lcK=`` of its lowercase form's
        path when the word differs from that form and both have a cluster."""
        lower, path_of, name = word.lower(), self._clusters(setting).path_of, CLUSTER_TABLES[setting]
        own = path_of(word)
        path = own or path_of(lower)
        attributes = () if path is None else _path_prefixes(path, name)
        lower_path = path_of(lower) if lowercase and own is not None and lower != word else None
        return attributes if lower_path is None else attributes + _path_prefixes(lower_path, f"l{name}")

    def neighbour_cluster_attributes(self, word: str, offset: int, setting: str = "word_clusters") -> tuple[str, ...]:
        """``{offset}:cK=`` (``{offset}:vK=``) for each prefix length K of ``word``'s path in the
        cluster table ``setting`` (as written, then in lower case), what the word tells the token
        ``offset`` positions away; () without a cluster."""
        table = self._clusters(setting)
        path = table.path_of(word) or table.path_of(word.lower())
        return () if path is None else _path_prefixes(path, f"{offset}:{CLUSTER_TABLES[setting]}")

    def share_attributes(self, word: str, buckets: int) -> tuple[str, ...]:
        """``cs=K`` and ``cu=K``: the shares of ``word``'s lowercase form's occurrences that are
        capitalised and all upper case, each in ``buckets`` steps (K = 0..buckets, rounded half
        up); ``("cs=?",)`` for a word with a letter that the table lacks, () for one without."""
        shares = self._shares_of.get(word.lower())
        if shares is None:
            return ("cs=?",) if any(c.isalpha() for c in word) else ()
        return _share_buckets(shares, buckets)

    def frequency_attribute(self, word: str, language: str) -> str:
        """``zf=B``, ``word``'s frequency bucket in ``language`` (:mod:`hgner.features.frequencies`):
        from the table when the model has one (made for ``language``: checked when it loads)."""
        table = self.word_frequency
        return frequency_attribute(word, language) if table is None else table.attribute(word)

    def neighbour_share_attributes(self, word: str, offset: int, buckets: int) -> tuple[str, ...]:
        """:meth:`share_attributes` of ``word`` as the token ``offset`` positions away gets them
        (``-1:cs=K``, ``-1:cu=K``)."""
        return _given(self.share_attributes(word, buckets), offset)

    def lookup(self, entry: str) -> tuple[int, ...]:
        """The gazetteer lists (indices in ``list_names``) a lowercase space-separated token string is on."""
        return self._entries.get(entry, ())

    def save(self, directory: str | Path) -> list[str]:
        """Write the non-empty tables into ``directory`` (atomically); returns the file names written."""
        from ..core.fileio import write_text

        written = []
        for key, file_name in TABLE_FILES.items():
            table, path = getattr(self, key), Path(directory) / file_name
            if not table:
                continue
            if file_name in _ARRAY_TABLES:
                table.save(path)
            else:
                write_text(path, json.dumps(table, ensure_ascii=False, sort_keys=True, separators=(",", ":")))
            written.append(file_name)
        return written

    @classmethod
    def load(cls, directory: str | Path, names: Sequence[str] | None = None) -> FeatureResources:
        """The tables in ``directory``, each checked against its schema (``hgner/schemas/``):
        exactly the files ``names`` (a missing one is a :class:`~hgner.core.errors.ModelError`), or,
        when ``names`` is None, whichever of them exist. A word in two clusters (or under two
        shares) is an error too."""
        from ..core.validation import read_string_table

        tables: dict[str, Any] = {}  # (a table not read keeps its empty default)
        for key, file_name in TABLE_FILES.items():
            path = Path(directory) / file_name
            if (file_name in names) if names is not None else path.is_file():
                load = _ARRAY_TABLES.get(file_name)
                tables[key] = load(path) if load is not None else read_string_table(path, table_schema(key))
        resources = cls(**tables)
        for file_name, repeated in (*((TABLE_FILES[s], resources.repeated_cluster_word(s)) for s in CLUSTER_TABLES),
                                    (CAPITALISED_SHARE_FILE, resources.repeated_share_word())):
            if repeated is not None:
                from ..core.errors import ModelError

                raise ModelError(f"{Path(directory) / file_name}: {repeated}")
        return resources


# FeatureResources' tables: field -> file (and schema: :func:`table_schema`)
TABLE_FILES = {"truecase": TRUECASE_FILE, "gazetteer": GAZETTEER_FILE, "word_clusters": WORD_CLUSTERS_FILE,
               "outside_truecase": OUTSIDE_TRUECASE_FILE, "capitalised_share": CAPITALISED_SHARE_FILE,
               "word_frequency": WORD_FREQUENCY_FILE, "vector_clusters": VECTOR_CLUSTERS_FILE}
# the tables stored as arrays: file -> its reader (the others are JSON)
_ARRAY_TABLES: dict[str, Callable[[Path], Any]] = {WORD_CLUSTERS_FILE: ClusterTable.load,
                                                   OUTSIDE_TRUECASE_FILE: SpellingTable.load,
                                                   WORD_FREQUENCY_FILE: FrequencyTable.load,
                                                   VECTOR_CLUSTERS_FILE: ClusterTable.load}
# the cluster tables: field -> the name its attributes start with (c4= ..., v4= ...); each is read,
# as a file given to training, as word_clusters.schema.json says (:func:`table_schema`)
CLUSTER_TABLES = {"word_clusters": "c", "vector_clusters": "v"}


def table_schema(setting: str) -> str:
    """The name of the schema of the table ``setting`` (a key of :data:`TABLE_FILES`) as a JSON
    file: its own (``hgner/schemas/SETTING.schema.json``), ``word_clusters``' for a cluster table."""
    return "word_clusters" if setting in CLUSTER_TABLES else setting


@cache  # one entry per cluster path and attribute name (c, lc, v, -1:c, ...)
def _path_prefixes(path: str, name: str) -> tuple[str, ...]:
    return tuple(f"{name}{k}={path[:k]}" for k in CLUSTER_PREFIXES)


def _repeated_word(table: dict[str, list[str]], index: dict[str, str], what: str) -> str | None:
    """What is wrong when a word is listed twice in ``table`` (key -> words; ``index``: word -> key), or None."""
    if len(index) == sum(map(len, table.values())):
        return None
    seen: dict[str, str] = {}
    for key, words in table.items():
        for word in words:
            if word in seen:
                return f"word {word[:40]!r} is listed twice ({what} {seen[word]} and {key}); expected each word once"
            seen[word] = key
    return None


@cache  # one entry per share attributes and offset
def _given(attributes: tuple[str, ...], offset: int) -> tuple[str, ...]:
    return tuple(f"{offset}:{attribute}" for attribute in attributes)


@cache  # one entry per key of the table ("C U") and bucket count
def _share_buckets(shares: str, buckets: int) -> tuple[str, ...]:
    capitalised, upper = map(int, shares.split())
    return f"cs={(capitalised * buckets + 50) // 100}", f"cu={(upper * buckets + 50) // 100}"
