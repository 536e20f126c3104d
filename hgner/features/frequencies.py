"""Word frequency buckets (``zf=B``): the one place that talks to ``wordfreq``, and the table a
model stores of them, ``word_frequency.npz``.

Asked for a word, wordfreq loads its whole list for the language the first time (about 0.4
CPU-seconds: its import and a list of some 300,000 words), which every process that tags a word
the model's type cache lacks used to pay (issue 39). So a model with frequency features stores
the bucket of each word of wordfreq's list made of letters only, in lower case (as wordfreq folds
case), at most :data:`TABLE_WIDTH` bytes in UTF-8, and of every number of at most
:data:`TABLE_DIGITS` digits (years, days), sorted, as fixed-width byte strings that numpy
searches: a compressed file of 1-2 MB, read and checked in 40-80 ms, a fifth of what wordfreq
costs. The letters are ASCII and, for a language whose wordfreq rules only normalise to NFC and
fold case (English, Spanish, Dutch and most others), the Latin letters of :data:`LATIN_LETTERS`
(``é``, ``ñ``, ``ü``), on which those rules are ``str.lower``. Such a word is looked up there: a
word the table lacks is one wordfreq does not know, bucket 0. Any other word (``1,000``, ``U.S.``,
``1996-12-06``, ``straße``, longer words) gets the lowest bucket of its pieces the table holds
(its runs of letters and its runs of digits: ``1,000`` the lower of ``1`` and ``000``), ``zf=?``
when it holds none of them; a word without a letter or digit gets ``zf=-``. So tagging never
imports wordfreq (the rule against asking wordfreq, on the dev sets: ``docs/development/research-log.md``). A
table written before the rule (without a ``pieces`` array) asks wordfreq about such words instead,
as its model was trained. The table is made only for a language whose wordfreq rules leave ASCII
letters as ``str.lower`` does and split no word of them (not Turkish or Azeri, whose ``I`` folds
to ``ı``, nor Chinese or Japanese); its buckets are wordfreq's own, asked word by word when the
table is made (a few CPU-seconds).
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import numpy as np

from ..core.errors import HgnerError, ModelError, named
from .packed import check_array, pack_strings, read_arrays, unpack_strings, write_arrays
from .wordcache import SMALL_ENTRIES, word_cache

TABLE_WIDTH = 20  # the longest word the table holds, in UTF-8 bytes (34 of English's 289,023 words are longer)
TABLE_DIGITS = 4  # the table holds every number of up to this many digits
_ARRAYS = {"language_utf8", "language_ends", "words", "buckets"}
_FLAGS = ("latin", "pieces")  # optional bool arrays (False when absent: tables written before them)
_PIECES = re.compile(r"[^\W\d_]+|\d+")  # a word's runs of letters and runs of digits
_MAX_BUCKET = 9  # wordfreq's Zipf values stay below 9 (once per 1,000 words is 6)
_LETTERS, _DIGITS = (ord("a"), ord("z")), (ord("0"), ord("9"))
_LEADS, _CONTINUATIONS = (0xC3, 0xC9), (0x80, 0xBF)  # UTF-8 of U+00C0..U+027F: a lead byte, a continuation


def _latin_letters() -> frozenset[str]:
    """The letters of U+00C0..U+024F (Latin-1 Supplement, Latin Extended-A and B) on which NFC,
    NFKC and ``str.casefold`` are ``str.lower``, a letter of the set too (no ``ß``, ``ĳ``, ``İ``)."""
    def plain(c: str) -> bool:
        lower = c.lower()
        return (c.isalpha() and len(lower) == 1 and lower.isalpha() and c.casefold() == lower
                and unicodedata.normalize("NFKC", c) == c)

    candidates = {c for c in map(chr, range(0xC0, 0x250)) if plain(c)}
    return frozenset(c for c in candidates if c.lower() in candidates)


LATIN_LETTERS = _latin_letters()


@word_cache(SMALL_ENTRIES)
def frequency_attribute(word: str, language: str) -> str:
    """``zf=B``: the word's Zipf frequency in ``language`` (``wordfreq``, which folds case; log10 of
    occurrences per billion words) rounded down, 0 for a word wordfreq does not know, ``zf=-``
    for a word without a letter or digit."""
    if not any(c.isalnum() for c in word):
        return "zf=-"
    from wordfreq import zipf_frequency  # imported on first use: only models with frequency features pay for it

    return f"zf={int(zipf_frequency(word, language))}"


def check_frequency_language(language: str) -> None:
    """A :class:`~hgner.core.errors.HgnerError` unless wordfreq has a word list of its own for
    ``language`` that it can read here (for others it fails, or quietly falls back to the list of
    the nearest language it has)."""
    try:
        from wordfreq import available_languages, zipf_frequency
    except ImportError:
        raise HgnerError(f"{named('word_frequency')} needs the wordfreq package (pip install wordfreq)") from None
    known = available_languages()
    if language not in known:
        raise HgnerError(f"{named('word_frequency')}: wordfreq has no word list for {language!r}; it has "
                         f"{', '.join(sorted(known))}")
    try:
        zipf_frequency("a", language)
    except (ImportError, LookupError) as error:  # zh needs jieba; ja and ko need MeCab
        raise HgnerError(f"{named('word_frequency')}: wordfreq cannot read its {language!r} list here ({error})") from None


def tabled(word: str, width: int = TABLE_WIDTH, latin: bool = True) -> bool:
    """Whether a table of words of at most ``width`` bytes answers for ``word``: ASCII letters (and,
    with ``latin``, letters of :data:`LATIN_LETTERS`), at most ``width`` bytes in UTF-8, or at most
    :data:`TABLE_DIGITS` ASCII digits."""
    if word.isascii():
        return word.isalpha() and len(word) <= width or word.isdigit() and len(word) <= TABLE_DIGITS
    return (latin and word.isalpha() and len(word.encode("utf-8")) <= width
            and all(c in LATIN_LETTERS or c.isascii() for c in word))


def _plain_folding(language: str) -> bool | None:
    """Whether wordfreq's rules for ``language`` fold Latin letters as ``str.lower`` does (True),
    only ASCII letters (False), or neither (None: it has no list, or splits or rewrites words)."""
    from wordfreq import available_languages, get_language_info

    if language not in available_languages():
        return None
    info = get_language_info(language)
    if info["tokenizer"] != "regex" or info["dotless_i"] or info["transliteration"] is not None:
        return None
    return info["normal_form"] == "NFC" and not info["remove_marks"] and info["diacritics_under"] is None


def _well_formed(characters: np.ndarray) -> bool:
    """Whether each row of ``characters`` (n, width) bytes is a word of letters (ASCII, or a Latin
    letter's lead and continuation bytes) or of at most :data:`TABLE_DIGITS` digits, then only
    padding (zero bytes)."""
    is_lead = (characters >= _LEADS[0]) & (characters <= _LEADS[1])
    is_continuation = (characters >= _CONTINUATIONS[0]) & (characters <= _CONTINUATIONS[1])
    is_letter = (characters >= _LETTERS[0]) & (characters <= _LETTERS[1]) | is_lead | is_continuation
    is_digit = (characters >= _DIGITS[0]) & (characters <= _DIGITS[1])
    filled = is_letter | is_digit
    padded = (filled | (characters == 0)).all() and (filled[:, 1:] <= filled[:, :-1]).all() and filled[:, 0].all()
    paired = ((is_continuation[:, 1:] == is_lead[:, :-1]).all() and not is_continuation[:, 0].any()
              and not is_lead[:, -1].any())
    one_kind = not (is_letter.any(axis=1) & is_digit.any(axis=1)).any() and not is_digit[:, TABLE_DIGITS:].any()
    return bool(padded and paired and one_kind)


class FrequencyTable:
    """The Zipf buckets of the words of letters of wordfreq's list for ``language`` (:func:`tabled`)
    and of the short numbers: ``words`` (n,) sorted UTF-8 byte strings (lowercase letters, at most
    :data:`TABLE_WIDTH` bytes, or digits, at most :data:`TABLE_DIGITS`), ``buckets`` (n,) uint8;
    ``latin``: whether its letters include :data:`LATIN_LETTERS` (else ASCII only, as every table
    written before they did); ``pieces``: whether a word it cannot hold gets the lowest bucket of
    its pieces (else wordfreq's own, as every table written before the rule)."""

    def __init__(self, language: str, words: np.ndarray, buckets: np.ndarray, latin: bool, pieces: bool) -> None:
        self.language, self.words, self.buckets, self.latin, self.pieces = language, words, buckets, latin, pieces
        self.width = words.dtype.itemsize

    @classmethod
    def from_wordfreq(cls, language: str) -> FrequencyTable | None:
        """The table of wordfreq's list for ``language``, or None when wordfreq has no list for
        it or its rules would not give ASCII words their lowercase form."""
        from wordfreq import get_frequency_dict

        latin = _plain_folding(language)
        if latin is None:
            return None
        numbers = [f"{n:0{width}d}" for width in range(1, TABLE_DIGITS + 1) for n in range(10 ** width)]
        listed = [w for w in get_frequency_dict(language) if w.islower() and tabled(w, latin=latin)]  # (no number)
        words = sorted(word.encode("utf-8") for word in listed + numbers)
        buckets = np.array([int(frequency_attribute(word.decode("utf-8"), language)[3:]) for word in words], np.uint8)
        return cls(language, np.array(words, dtype=f"S{TABLE_WIDTH}"), buckets, latin, pieces=True)

    @classmethod
    def load(cls, path: Path) -> FrequencyTable:
        """The table in ``path``; a :class:`~hgner.core.errors.ModelError` naming the file and the array
        when anything does not fit."""
        arrays = read_arrays(path, _ARRAYS, tuple(frozenset({name}) for name in _FLAGS))
        language, words, buckets = unpack_strings(path, "language", arrays), arrays["words"], arrays["buckets"]
        flags = {name: arrays.get(name, np.zeros((), np.bool_)) for name in _FLAGS}
        for name, flag in flags.items():
            check_array(path, name, flag, np.bool_, ())
        if len(language) != 1:
            raise ModelError(f"{path}: language: expected one language code, got {len(language)}")
        if words.dtype.kind != "S" or words.ndim != 1 or not 0 < words.dtype.itemsize <= TABLE_WIDTH:
            raise ModelError(f"{path}: words: expected (n,) byte strings of at most {TABLE_WIDTH} bytes, "
                             f"got {words.shape} of {words.dtype}")
        check_array(path, "buckets", buckets, np.uint8, words.shape)
        if len(buckets) and buckets.max() > _MAX_BUCKET:
            raise ModelError(f"{path}: buckets: expected values 0..{_MAX_BUCKET}, got {int(buckets.max())}")
        characters = words.view(np.uint8).reshape(len(words), words.dtype.itemsize)  # (n, width) bytes
        if not _well_formed(characters):
            raise ModelError(f"{path}: words: expected lowercase letters (ASCII or Latin, in UTF-8), or at most "
                             f"{TABLE_DIGITS} digits")
        if not flags["latin"] and (characters >= 0x80).any():
            raise ModelError(f"{path}: words: expected ASCII letters only (latin is false)")
        if not (words[1:] > words[:-1]).all():
            raise ModelError(f"{path}: words: expected distinct words in sorted order")
        return cls(language[0], words, buckets, bool(flags["latin"]), bool(flags["pieces"]))

    def save(self, path: Path) -> None:
        """Write the table to ``path`` (atomically, compressed), as :meth:`load` reads it."""
        write_arrays(path, {**pack_strings("language", [self.language]), "words": self.words, "buckets": self.buckets,
                            "latin": np.array(self.latin), "pieces": np.array(self.pieces)}, compressed=True)

    def attribute(self, word: str) -> str:
        """:func:`frequency_attribute` of ``word`` in the table's language when the table answers
        for the word (:func:`tabled`), read from the table; for another word, the lowest bucket of
        its pieces the table answers for (``zf=?`` if none, ``zf=-`` without a letter or digit), or
        for a table without ``pieces``, wordfreq's own."""
        if tabled(word, self.width, self.latin):
            return f"zf={self._bucket(word)}"
        if not self.pieces or not any(c.isalnum() for c in word):
            return frequency_attribute(word, self.language)  # wordfreq's own, or zf=- (without asking it)
        buckets = [self._bucket(piece) for piece in _PIECES.findall(word) if tabled(piece, self.width, self.latin)]
        return f"zf={min(buckets)}" if buckets else "zf=?"

    def _bucket(self, word: str) -> int:
        """The bucket of a word the table answers for (0 when it lacks the word)."""
        key = word.lower().encode("utf-8")
        index = int(self.words.searchsorted(key))
        return int(self.buckets[index]) if index < len(self.words) and self.words[index] == key else 0

    def __len__(self) -> int:
        return len(self.words)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FrequencyTable) and (self.language, self.latin, self.pieces) == (
            other.language, other.latin, other.pieces) and np.array_equal(self.words, other.words) \
            and np.array_equal(self.buckets, other.buckets)

    __hash__ = None  # type: ignore[assignment]
