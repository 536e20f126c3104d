"""Word frequency buckets (``zf=B``): the one place that talks to ``wordfreq``, and the table a
model stores of them, ``word_frequency.npz``.

Asked for a word, wordfreq loads its whole list for the language the first time (about 0.4
CPU-seconds: its import and a list of some 300,000 words), which every process that tags a word
the model's type cache lacks used to pay (issue 39). So a model with frequency features stores
the bucket of each word of wordfreq's list made of at most :data:`TABLE_WIDTH` ASCII letters
(in lower case, as wordfreq folds case) and of every number of at most :data:`TABLE_DIGITS`
digits (years, days), sorted, as fixed-width byte strings that numpy searches: a compressed file
of about 1 MB, read and checked in 40-80 ms, a fifth of what wordfreq costs. Such a word is
looked up there: a word of letters the table lacks is one wordfreq does not know, bucket 0. Any
other word (``1,000``, ``U.S.``, ``Zürich``, longer words) asks wordfreq, imported then; a word
without a letter or digit needs no bucket. The table is made only for a language whose wordfreq
rules leave ASCII letters as ``str.lower`` does and split no word of them (not Turkish or Azeri,
whose ``I`` folds to ``ı``, nor Chinese or Japanese); its buckets are wordfreq's own, asked word
by word when the table is made (a few CPU-seconds).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from ..errors import ModelError
from .packed import check_array, pack_strings, read_arrays, unpack_strings, write_arrays

TABLE_WIDTH = 20  # the longest word the table holds (34 of English's 289,023 words are longer)
TABLE_DIGITS = 4  # the table holds every number of up to this many digits
_ARRAYS = {"language_utf8", "language_ends", "words", "buckets"}
_MAX_BUCKET = 9  # wordfreq's Zipf values stay below 9 (once per 1,000 words is 6)
_LETTERS, _DIGITS = (ord("a"), ord("z")), (ord("0"), ord("9"))


@lru_cache(maxsize=200_000)
def frequency_attribute(word: str, language: str) -> str:
    """``zf=B``: the word's Zipf frequency in ``language`` (``wordfreq``, which folds case; log10 of
    occurrences per billion words) rounded down, 0 for a word wordfreq does not know, ``zf=-``
    for a word without a letter or digit."""
    if not any(c.isalnum() for c in word):
        return "zf=-"
    from wordfreq import zipf_frequency  # imported on first use: only models with frequency features pay for it

    return f"zf={int(zipf_frequency(word, language))}"


def tabled(word: str, width: int = TABLE_WIDTH) -> bool:
    """Whether a table of words of at most ``width`` letters answers for ``word``: ASCII letters,
    no more than ``width`` of them, or at most :data:`TABLE_DIGITS` ASCII digits."""
    return word.isascii() and (word.isalpha() and len(word) <= width or word.isdigit() and len(word) <= TABLE_DIGITS)


class FrequencyTable:
    """The Zipf buckets of the ASCII-letter words of wordfreq's list for ``language`` and of the
    short numbers: ``words`` (n,) sorted byte strings (lowercase letters, at most
    :data:`TABLE_WIDTH`, or digits, at most :data:`TABLE_DIGITS`), ``buckets`` (n,) uint8."""

    def __init__(self, language: str, words: np.ndarray, buckets: np.ndarray) -> None:
        self.language, self.words, self.buckets = language, words, buckets
        self.width = words.dtype.itemsize

    @classmethod
    def from_wordfreq(cls, language: str) -> FrequencyTable | None:
        """The table of wordfreq's list for ``language``, or None when wordfreq has no list for
        it or its rules would not give ASCII words their lowercase form."""
        from wordfreq import available_languages, get_frequency_dict, get_language_info

        if language not in available_languages():
            return None
        info = get_language_info(language)
        if info["tokenizer"] != "regex" or info["dotless_i"] or info["transliteration"] is not None:
            return None
        numbers = [f"{n:0{width}d}" for width in range(1, TABLE_DIGITS + 1) for n in range(10 ** width)]
        listed = [w for w in get_frequency_dict(language) if w.islower() and tabled(w)]  # (islower: no number)
        words = sorted(listed + numbers)
        buckets = np.array([int(frequency_attribute(word, language)[3:]) for word in words], np.uint8)
        return cls(language, np.array(words, dtype=f"S{TABLE_WIDTH}"), buckets)

    @classmethod
    def load(cls, path: Path) -> FrequencyTable:
        """The table in ``path``; a :class:`~hgner.errors.ModelError` naming the file and the array
        when anything does not fit."""
        arrays = read_arrays(path, _ARRAYS)
        language, words, buckets = unpack_strings(path, "language", arrays), arrays["words"], arrays["buckets"]
        if len(language) != 1:
            raise ModelError(f"{path}: language: expected one language code, got {len(language)}")
        if words.dtype.kind != "S" or words.ndim != 1 or not 0 < words.dtype.itemsize <= TABLE_WIDTH:
            raise ModelError(f"{path}: words: expected (n,) byte strings of at most {TABLE_WIDTH} bytes, "
                             f"got {words.shape} of {words.dtype}")
        check_array(path, "buckets", buckets, np.uint8, words.shape)
        if len(buckets) and buckets.max() > _MAX_BUCKET:
            raise ModelError(f"{path}: buckets: expected values 0..{_MAX_BUCKET}, got {int(buckets.max())}")
        characters = words.view(np.uint8).reshape(len(words), words.dtype.itemsize)
        is_letter = (characters >= _LETTERS[0]) & (characters <= _LETTERS[1])
        is_digit = (characters >= _DIGITS[0]) & (characters <= _DIGITS[1])
        # each word: lowercase ASCII letters or at most TABLE_DIGITS digits, then only padding
        filled = is_letter | is_digit
        if not ((filled | (characters == 0)).all() and (filled[:, 1:] <= filled[:, :-1]).all() and filled[:, 0].all()
                and not (is_letter.any(axis=1) & is_digit.any(axis=1)).any()
                and not is_digit[:, TABLE_DIGITS:].any()):
            raise ModelError(f"{path}: words: expected lowercase ASCII letters, or at most {TABLE_DIGITS} digits")
        if not (words[1:] > words[:-1]).all():
            raise ModelError(f"{path}: words: expected distinct words in sorted order")
        return cls(language[0], words, buckets)

    def save(self, path: Path) -> None:
        """Write the table to ``path`` (atomically, compressed), as :meth:`load` reads it."""
        write_arrays(path, {**pack_strings("language", [self.language]), "words": self.words,
                            "buckets": self.buckets}, compressed=True)

    def attribute(self, word: str) -> str:
        """:func:`frequency_attribute` of ``word`` in the table's language, read from the table
        when it answers for the word (:func:`tabled`)."""
        if not tabled(word, self.width):
            return frequency_attribute(word, self.language)
        key = word.lower().encode("ascii")
        index = int(self.words.searchsorted(key))
        found = index < len(self.words) and self.words[index] == key
        return f"zf={self.buckets[index] if found else 0}"

    def __len__(self) -> int:
        return len(self.words)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FrequencyTable) and self.language == other.language and np.array_equal(
            self.words, other.words) and np.array_equal(self.buckets, other.buckets)

    __hash__ = None  # type: ignore[assignment]
