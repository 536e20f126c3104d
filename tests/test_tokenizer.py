"""hgner.text.tokenizer: CoNLL-like tokens (sentence ends: tests/test_sentences.py),
offsets that always point back into the text, and the tokenizer offered to spaCy pipelines."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hgner.text.languages import likelier_language
from hgner.text.tokenizer import LONGEST_RUN, TextTokenizer, describe, make_tokenizer, recorded_version, split_sentences

TOKENIZER = TextTokenizer("en")


def tokens(text: str) -> list[str]:
    return [t for s in TOKENIZER(text) for t in s.tokens]


@pytest.mark.parametrize("word", ["AL-AIN", "Jean-Luc", "Collomb-Patton", "Emilia-Romagna", "al-Boushi", "1996-12-06",
                                  "2-1", "15-10", "U.S.", "cannot", "Wed", "237km", "S$", "O'Sullivan"])
def test_conll_keeps_whole(word):
    assert tokens(f"He saw {word} there.") == ["He", "saw", word, "there", "."]


@pytest.mark.parametrize(("text", "expected"), [
    ("ST. LOUIS 1996-08-30", ["ST.", "LOUIS", "1996-08-30"]),
    ("Warwickshire 195 ( The Oval ):", ["Warwickshire", "195", "(", "The", "Oval", ")", ":"]),
    ("Japan 's win didn't help.", ["Japan", "'s", "win", "did", "n't", "help", "."]),
    ("It cost $100 (about 5%).", ["It", "cost", "$", "100", "(", "about", "5", "%", ")", "."]),
    ("1. Michelle Freeman ( Jamaica ) 12.71", ["1.", "Michelle", "Freeman", "(", "Jamaica", ")", "12.71"]),
    ("He won in 1. He lost in 2.", ["He", "won", "in", "1", ".", "He", "lost", "in", "2", "."]),
])
def test_hard_cases(text, expected):
    assert tokens(text) == expected


def test_spacy_users_get_the_same_tokens():
    import spacy

    nlp = spacy.blank("en")
    nlp.tokenizer = make_tokenizer(nlp)
    assert [t.text for t in nlp("AL-AIN won 2-1 on 1996-12-06")] == ["AL-AIN", "won", "2-1", "on", "1996-12-06"]
    from spacy.util import registry

    assert registry.tokenizers.get("hgner.conll.v3")() is make_tokenizer


def test_the_tokenizer_is_spacys_in_a_pipeline(tmp_path):
    """The chunk-caching wrapper behaves as spaCy's Tokenizer: a config pipeline saves and loads,
    it pickles (nlp.pipe with n_process > 1), and settings reach the wrapped tokenizer."""
    import pickle

    import spacy

    nlp = spacy.blank("en", config={"nlp": {"tokenizer": {"@tokenizers": "hgner.conll.v2"}}})
    nlp.tokenizer.add_special_case("AL-AIN", [{"ORTH": "AL"}, {"ORTH": "-AIN"}])
    text = "AL-AIN won 2-1 on 1996-12-06"
    expected = ["AL", "-AIN", "won", "2-1", "on", "1996-12-06"]
    assert [t.text for t in nlp(text)] == expected
    nlp.to_disk(tmp_path / "pipeline")
    assert [t.text for t in spacy.load(tmp_path / "pipeline")(text)] == expected  # the special case was saved
    assert [t.text for t in pickle.loads(pickle.dumps(nlp.tokenizer))(text)] == expected
    assert [t.text for t in nlp("(hello)")] == ["(", "hello", ")"]
    nlp.tokenizer.token_match = lambda chunk: chunk == "(hello)"
    assert [t.text for t in nlp("(hello)")] == ["(hello)"]


def test_no_token_holds_whitespace():
    """spaCy's Spanish exceptions include EE. UU., one token with a space; CoNLL tokens have none."""
    assert [s.tokens for s in TextTokenizer("es")("Llegó a EE. UU. ayer .")] == [["Llegó", "a", "EE.", "UU.", "ayer", "."]]


@pytest.mark.parametrize("language", ["es", "nl", "de"])
def test_any_spacy_language(language):
    found = TextTokenizer(language)("Jean-Luc Collomb-Patton vive en AL-AIN.\n\nOtra frase")
    assert found[0].tokens[:2] == ["Jean-Luc", "Collomb-Patton"] and found[1].tokens == ["Otra", "frase"]


def test_describe():
    assert describe() == {"name": TextTokenizer.name, "version": TextTokenizer().version}


DUTCH = "Hij woont in 's-Hertogenbosch, niet in \u2019s-Gravenhage; 's avonds leest hij 't boek ('s-Hertogenbosch)."


def test_version_2_keeps_dutch_s_names_whole():
    tokens = TextTokenizer("nl")(DUTCH)[0].tokens
    assert tokens[3:8] == ["'s-Hertogenbosch", ",", "niet", "in", "\u2019s-Gravenhage"]
    assert tokens[9:11] == ["'s", "avonds"] and "'t" in tokens and tokens[-4:] == ["(", "'s-Hertogenbosch", ")", "."]
    assert TextTokenizer("nl")("'S-HERTOGENBOSCH - De politie")[0].tokens[0] == "'S-HERTOGENBOSCH"


def test_a_saved_version_keeps_its_rules():
    """Version 1 (hgner.conll.v1 in a saved pipeline's config, or a model recording it) splits
    the apostrophe off; English splits the same in both versions."""
    import spacy

    assert TextTokenizer("nl", version=1)(DUTCH)[0].tokens[3:5] == ["'", "s-Hertogenbosch"]
    nlp = spacy.blank("nl", config={"nlp": {"tokenizer": {"@tokenizers": "hgner.conll.v1"}}})
    assert [t.text for t in nlp("in 's-Hertogenbosch")] == ["in", "'", "s-Hertogenbosch"]
    english = "Rock 'n' roll in 's-Hertogenbosch: the U.S. won 2-1."
    assert TextTokenizer("en", version=1)(english) == TextTokenizer("en")(english)


@pytest.mark.parametrize(("text", "expected"), [
    ("Tokyo-based Siemens hired", ["Tokyo", "-", "based", "Siemens", "hired"]),
    ("the U.S.-based group", ["the", "U.S.", "-", "based", "group"]),
    ("a New York-based bank,", ["a", "New", "York", "-", "based", "bank", ","]),
    ("(TOKYO-BASED)", ["(", "TOKYO", "-", "BASED", ")"]),
    ("web-based non-U.S.-based Tokyo-basedness 1996-based", ["web", "-", "based", "non-U.S.", "-", "based",
                                                             "Tokyo-basedness", "1996-based"]),
])
def test_version_3_splits_a_place_from_based(text, expected):
    """As spaCy's English rules split Tokyo-based (and, unlike them, U.S.-based), so that the place
    can be an entity; versions 1 and 2 keep the word whole, as the CoNLL corpus does."""
    assert tokens(text) == expected
    assert [t for s in TextTokenizer("en", version=2)(text) for t in s.tokens] == text.replace("(", "( ").replace(
        ")", " )").replace(",", " ,").split()


def test_corpus_tokens_are_never_split_again(tagger):
    """Corpus tokens (evaluation on a corpus, given sentences) are kept as they are: only raw text
    is tokenized, so the CoNLL token Tokyo-based stays one token there."""
    from hgner.data.corpus import parse_conll
    from hgner.tagging.tagger import TokenizedSentence

    corpus = parse_conll(["Tokyo-based I-MISC", "Siemens I-ORG", "hired O"], "tokyo.conll")
    assert [t for d in corpus.documents for s in d.sentences for t in s.tokens] == ["Tokyo-based", "Siemens", "hired"]
    text = "Tokyo-based Siemens hired"
    assert [s.tokens for s in tagger.sentences(text)] == [["Tokyo", "-", "based", "Siemens", "hired"]]
    given = [TokenizedSentence(["Tokyo-based", "Siemens", "hired"], [(0, 11), (12, 19), (20, 25)])]
    bounds = {0, 11, 12, 19, 20, 25}
    for group in next(iter(tagger.tag_tokenized([text], [given]))):
        assert group.sentences == given
        assert all(e.start in bounds and e.end in bounds for e in group.entities)


@pytest.mark.parametrize("record, version", [
    ({"name": "hgner.conll", "version": 1}, 1), ({"name": "hgner.conll", "version": 2}, 2),
    ({"name": "hgner.conll", "version": 3}, 3), ({"name": "hgner.conll", "version": 4}, None),
    ({"name": "hgner.conll"}, None),
    ({"name": "other", "version": 1}, None), ("whitespace", None), (None, None),
])
def test_recorded_version(record, version):
    assert recorded_version(record) == version


PIECES = st.sampled_from([
    "Jim Smith", "Paris", "AL-AIN", "1996-12-06", "U.S.", "Corp.", ".", ",", "!", "?", "(", ")", '"', "'s", "n't",
    "\U0001F600", "\U0001F1EB\U0001F1F7", "e\u0301", "\u05e9\u05dc\u05d5\u05dd", "\u0645\u0631\u062d\u0628\u0627",
    "\u200b", "\u200d", "\u200e", "\ufeff", "\r\n", "\n", "\n\n", "\r", " ", "  ", "\t", "\u00a0", "\u2028",
])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(PIECES, st.text(max_size=8)), max_size=40))
def test_offsets_point_back_into_any_text(pieces):
    text = "".join(pieces)
    previous_end = 0
    for sentence in TOKENIZER(text):
        assert sentence.tokens and len(sentence.tokens) == len(sentence.offsets)
        for token, (start, end) in zip(sentence.tokens, sentence.offsets):
            assert text[start:end] == token and token.strip() and start >= previous_end
            previous_end = end


WHOLE_TEXTS = make_tokenizer(TOKENIZER.nlp).tokenizer  # spaCy's Tokenizer, unwrapped


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(PIECES, st.text(max_size=8)), max_size=40))
def test_chunks_tokenized_alone_first_give_spacys_tokens(pieces):
    """make_tokenizer's tokenizer has spaCy tokenize each new chunk alone first, so that spaCy
    caches it: the tokens stay those of a spaCy tokenizer that only ever sees whole texts (runs
    without whitespace longer than LONGEST_RUN are cut: the next test)."""
    text = "".join(pieces)
    assume(max(map(len, text.split()), default=0) <= LONGEST_RUN)
    assert TOKENIZER(text) == split_sentences(WHOLE_TEXTS(text), text)


def test_a_long_run_without_whitespace_is_tokenized_in_pieces():
    """spaCy's time on a run of prefix characters grows with the square of its length, so a run
    longer than LONGEST_RUN is given to it in pieces: no token crosses a piece's end, and the
    Doc's text and offsets are the text's."""
    run = LONGEST_RUN * 2 + LONGEST_RUN // 2
    text = "Paris " + "(" * run + " " + "a" * run + " \U0001F600" * 3 + "\U0001F600" * run + " Berlin."
    doc = TOKENIZER.nlp.make_doc(text)
    assert doc.text == text
    assert [t.text for t in doc] == (["Paris"] + ["("] * run + ["a" * LONGEST_RUN] * 2 + ["a" * (LONGEST_RUN // 2)]
                                     + ["\U0001F600"] * (3 + run) + ["Berlin", "."])
    assert all(text[t.idx:t.idx + len(t)] == t.text for t in doc)
    assert TOKENIZER(text)[-1].tokens[-2:] == ["Berlin", "."]



@pytest.fixture(scope="module")
def tagger(tag_model):
    from hgner.tagging.settings import TagSettings
    from hgner.tagging.tagger import Tagger

    return Tagger(TagSettings(tag_model))


from tag_support import tag_model  # noqa: E402,F401  (fixture)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(PIECES, st.sampled_from(["Angela Merkel", "United Nations", "Tokyo", "works for"]),
                          st.text(max_size=6)), max_size=30))
def test_entity_text_is_its_span(tagger, pieces):
    text = "".join(pieces)
    if not text.strip():
        return
    for group in tagger.tag_text(text):
        for entity in group.entities:
            assert text[entity.start:entity.end] == entity.text


SPANISH_TEXT = ["El", "presidente", "del", "Gobierno", "dijo", "hoy", "que", "la", "reunión", "con", "los", "ministros", "de", "la", "Unión", "Europea", "fue", "muy", "difícil", ",", "pero", "que", "se", "ha", "llegado", "a", "un", "acuerdo", "para", "el", "año", "que", "viene", "en", "Madrid", ",", "según", "fuentes", "de", "su", "partido", "y", "de", "la", "oposición", ",", "que", "también", "estaban", "en", "la", "sala", "con", "otros", ".", "Cuando", "llegaron", ",", "nadie", "sabía", "si", "había", "sido", "una", "buena", "idea", "o", "si", "todo", "esto", "era", "solo", "para", "las", "cámaras", ",", "porque", "sus", "amigos", "no", "querían", "hablar", "más", "sobre", "ello"]


def test_likelier_language_from_the_most_frequent_words():
    other = likelier_language(SPANISH_TEXT, "en")
    assert other is not None and other.language == "es"
    assert other.evidence == "of its 66 most frequent words, 67% are spaCy stop words of 'es' and 3% of 'en'"
    assert likelier_language(SPANISH_TEXT, "es") is None  # the given language: nothing to say
    assert likelier_language(SPANISH_TEXT, "zz") is None  # no language spaCy has: nothing to compare with
    assert likelier_language(SPANISH_TEXT[:55], "en") is None  # under 50 distinct words say too little
    english = ["The", "minister", "said", "on", "Monday", "that", "he", "would", "not", "be", "in", "the", "city", "for", "the", "talks", "with", "them", ",", "but", "his", "office", "later", "told", "reporters", "that", "the", "trip", "to", "Madrid", "had", "been", "planned", "for", "weeks", "and", "could", "still", "go", "ahead", "if", "the", "union", "leaders", "agreed", "to", "meet", "again", "before", "the", "end", "of", "the", "month", ",", "when", "parliament", "returns", "from", "its", "summer", "break"]
    assert likelier_language(english + SPANISH_TEXT[:20], "en") is None  # English with a few Spanish words
    assert likelier_language(english, "es").language == "en"
