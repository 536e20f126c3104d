"""Caches of functions of one word, bounded in bytes (:func:`word_cache`).

A cache holds at most its number of entries, and words over :data:`CACHED_WORD_CHARS`
characters are computed again at each call, never cached, so that an entry takes at most about
:data:`WORD_ENTRY_BYTES` per string it holds (key or value). The caches of
:mod:`~hgner.features.words` and :mod:`~hgner.features.frequencies` hold at most
:data:`WORD_CACHE_BYTES` together (about a quarter of it for plain ASCII words), so a
long-running server fed new words stays within it. A cache never changes a result.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, wraps
from typing import Any, TypeVar, cast

Function = TypeVar("Function", bound=Callable[..., Any])

CACHED_WORD_CHARS = 40
WORD_ENTRY_BYTES = 400  # at most, per string an entry holds (76 + 4 x 44 bytes for the string, the cache's share)
SMALL_ENTRIES = 16_384  # a cache of one string (or number) per word: shapes, flags, frequency bucket
TUPLE_ENTRIES = 8_192  # a cache of several strings per word: its attributes (at most 18), its neighbours' (2)
# word_shape, short_shape, word_flags, frequency_attribute; word_attributes; neighbour_attributes (2 x TUPLE_ENTRIES)
WORD_CACHE_BYTES = WORD_ENTRY_BYTES * (4 * 2 * SMALL_ENTRIES + TUPLE_ENTRIES * (1 + 18) + 2 * TUPLE_ENTRIES * (1 + 2))


def word_cache(entries: int) -> Callable[[Function], Function]:
    """``functools.lru_cache(entries)`` for a function whose first argument is a word, except for
    words over :data:`CACHED_WORD_CHARS` characters (so that the cache is bounded in bytes)."""
    def decorate(function: Function) -> Function:
        cached = lru_cache(maxsize=entries)(function)

        @wraps(function)
        def call(word: str, *rest: Any) -> Any:
            return cached(word, *rest) if len(word) <= CACHED_WORD_CHARS else function(word, *rest)

        call.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
        call.cache_info = cached.cache_info  # type: ignore[attr-defined]
        return cast(Function, call)
    return decorate
