"""spaCy's languages: their ``Defaults`` (tokenizer rules, stop words) by ISO code, and which
language a text looks like from its most frequent words (spaCy's stop words)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any, NamedTuple

from ..core.errors import ModelError


@cache
def language_defaults(language: str) -> Any:
    """spaCy's ``Defaults`` for ``language`` (an ISO code such as en, es, nl); a
    :class:`~hgner.core.errors.ModelError` when spaCy has no language of that code. Kept once found
    (spaCy reads the entry points of every installed package at each look-up)."""
    from spacy.util import get_lang_class

    try:
        if language in spacy_languages():  # not any module of spacy.lang (lex_attrs, en.stop_words)
            return get_lang_class(language).Defaults
    except ImportError:  # registered, but its module does not load here
        pass
    raise ModelError(f"language {language!r}: spaCy has no language of that code (expected an ISO code "
                     "such as en, es, nl, de)")


@cache
def spacy_languages() -> tuple[str, ...]:
    """The codes of the languages spaCy has: its own (the packages of ``spacy.lang``) and those
    other packages register (when first asked: scanning ``spacy.lang`` takes about 10 ms)."""
    import pkgutil

    import spacy.lang
    from spacy.util import registry

    own = {module.name for module in pkgutil.iter_modules(spacy.lang.__path__) if module.ispkg}
    return tuple(sorted(own | set(registry.languages.get_all())))


# likelier_language: of the 100 most frequent word types of CoNLL's English, Spanish and Dutch
# training corpora, 64-80% are spaCy stop words of their own language and at most 25% of any other
# (the small Spanish test fixture's 53: 28% Spanish, 2% English).
FREQUENT_TYPES = 100
MIN_TYPES = 50  # fewer distinct words say too little (and a small corpus is not worth spaCy's 79 languages' load)
LOOKS_LIKE = 0.4  # at least this share: the text looks like the given language, nothing more to check
OTHER_LANGUAGE = 0.25  # the least share, and twice the given language's, that suggests another language


class OtherLanguage(NamedTuple):
    """A language a text looks more like than the one it was given, and the evidence in words."""

    language: str
    evidence: str


def likelier_language(tokens: Iterable[str], language: str,
                      candidates: Callable[[], Iterable[str]] = spacy_languages) -> OtherLanguage | None:
    """The language ``tokens`` (a text's) look more like than ``language``, or None. The evidence:
    the share of the ``FREQUENT_TYPES`` most frequent alphabetic word types (lower case, at least
    ``MIN_TYPES``) that are spaCy stop words of ``language`` and, when that is below
    ``LOOKS_LIKE``, of each of the ``candidates()`` languages (by default every language spaCy
    has); the likeliest counts when its share is at least ``OTHER_LANGUAGE`` and twice that of
    ``language``. None too for a ``language`` spaCy does not have."""
    counts = Counter(token.lower() for token in tokens if token.isalpha())
    frequent = [word for word, _ in counts.most_common(FREQUENT_TYPES)]

    def share(code: str) -> float:
        stop_words = language_defaults(code).stop_words
        return sum(word in stop_words for word in frequent) / len(frequent)

    if len(frequent) < MIN_TYPES:
        return None
    try:
        shares = {language: share(language)}
    except ModelError:  # a language spaCy does not have: nothing to compare with
        return None
    if shares[language] >= LOOKS_LIKE:
        return None
    for code in candidates():
        try:
            shares[code] = share(code)
        except ModelError:  # registered, but its module does not load here
            continue
    likeliest = max(shares, key=shares.__getitem__)
    if likeliest == language or shares[likeliest] < max(OTHER_LANGUAGE, 2 * shares[language]):
        return None
    return OtherLanguage(likeliest, f"of its {len(frequent)} most frequent words, {shares[likeliest]:.0%} are spaCy "
                                    f"stop words of {likeliest!r} and {shares[language]:.0%} of {language!r}")
