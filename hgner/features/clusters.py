"""Word clusters (cluster path -> its words) as a model stores them, ``word_clusters.npz``: the
words sorted, each with the index of its cluster's path, looked up by bisection, so that loading a
model decodes two blocks of UTF-8 instead of building a dictionary of every word (issue 39:
indexing nl-conll02's 860,592 words took 0.28 s, half of its loading time).

Arrays only, in numpy's format (no pickle); the words' order, the paths and every array's dtype
and shape are checked when the model loads, and the seal covers the file. Training reads word
clusters from a JSON file (``word_clusters.schema.json``), a Brown ``paths`` file or a model
(:mod:`hgner.training.tables`)."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Mapping
from functools import cached_property
from pathlib import Path

import numpy as np

from ..core.errors import ModelError
from .packed import pack_strings, read_keyed_table, write_arrays

_PATH = re.compile(r"[01]{1,64}")  # as word_clusters.schema.json's paths


class ClusterTable(Mapping[str, list[str]]):
    """Cluster path -> its words, read-only: ``words`` sorted and distinct, ``paths``, and
    ``clusters`` ((W,) int32: the index in ``paths`` of each word's cluster). :meth:`path_of`
    looks a word up. Two tables are equal when they put the same words in the same clusters."""

    def __init__(self, words: list[str], paths: list[str], clusters: np.ndarray, repeated: str | None = None) -> None:
        self.words, self.paths, self.clusters = words, paths, clusters
        self.repeated = repeated  # what is wrong when the mapping it was made from lists a word twice

    @classmethod
    def from_mapping(cls, table: Mapping[str, list[str]]) -> ClusterTable:
        """The table of ``table`` (path -> words; a :class:`ClusterTable` is returned as it is). A
        word listed twice keeps its last cluster, and :attr:`repeated` says which word it was."""
        if isinstance(table, ClusterTable):
            return table
        paths = list(table)
        path_of: dict[str, int] = {}
        repeated = None
        for index, path in enumerate(paths):
            for word in table[path]:
                if repeated is None and word in path_of:
                    repeated = (f"word {word[:40]!r} is listed twice (clusters {paths[path_of[word]]} and {path}); "
                                "expected each word once")
                path_of[word] = index
        words = sorted(path_of)
        return cls(words, paths, np.array([path_of[w] for w in words], dtype=np.int32), repeated)

    @classmethod
    def load(cls, path: Path) -> ClusterTable:
        """The table in ``path`` (see the module docstring); a :class:`~hgner.core.errors.ModelError`
        naming the file and the array when anything does not fit."""
        words, paths, clusters = read_keyed_table(path, "words", "paths", "clusters", np.int32)
        if len(clusters) and (clusters.min() < 0 or clusters.max() >= len(paths)):
            raise ModelError(f"{path}: clusters: expected indices 0..{len(paths) - 1} into paths")
        if words and not words[0]:
            raise ModelError(f"{path}: words: expected non-empty words")
        bad = next((p for p in paths if not _PATH.fullmatch(p)), None)
        if bad is not None or len(set(paths)) != len(paths):
            raise ModelError(f"{path}: paths: expected distinct strings of 1 to 64 0s and 1s, got {bad!r}"
                             if bad is not None else f"{path}: paths: a path is listed twice")
        return cls(words, paths, clusters)

    def save(self, path: Path) -> None:
        """Write the table to ``path`` (atomically), as :meth:`load` reads it."""
        write_arrays(path, {**pack_strings("words", self.words), **pack_strings("paths", self.paths),
                            "clusters": self.clusters})

    def path_of(self, word: str) -> str | None:
        """The path of ``word``'s cluster, or None when it has none."""
        index = bisect.bisect_left(self.words, word)
        if index < len(self.words) and self.words[index] == word:
            return self.paths[int(self.clusters[index])]
        return None

    @cached_property
    def _members(self) -> dict[str, list[str]]:
        """Path -> its words (in sorted order), for the paths that have words, in the paths' order."""
        members: dict[str, list[str]] = {}
        for index in np.argsort(self.clusters, kind="stable").tolist():
            members.setdefault(self.paths[self.clusters[index]], []).append(self.words[index])
        return {path: members[path] for path in self.paths if path in members}

    def __getitem__(self, path: str) -> list[str]:
        return self._members[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._members)

    def __len__(self) -> int:
        return len(np.unique(self.clusters))  # the clusters with a word

    def __bool__(self) -> bool:
        return bool(self.words)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            other = ClusterTable.from_mapping(other)
            return (self.words == other.words
                    and [self.paths[i] for i in self.clusters] == [other.paths[i] for i in other.clusters])
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]
