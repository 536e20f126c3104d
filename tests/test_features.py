"""Feature extraction on tiny hand-made documents, the configuration round trip, and the shipped models."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hgner.core.errors import ModelError
from hgner.features import (
    FeatureConfig,
    FeatureResources,
    document_features,
    fit_gazetteer,
    is_caseless,
    learn_truecase,
    sentence_features,
    short_shape,
    word_attributes,
    word_shape,
)

FULL = FeatureConfig(window=2, affixes=4, conjunctions=True, truecase=True, document=True)


def test_shapes():
    assert word_shape("McDonald's") == "XxXxxxxx'x"
    assert short_shape("McDonald's") == "XxXx'x"
    assert short_shape("1996-08-30") == "d-d-d"
    assert short_shape("U.S.") == "X.X."


@pytest.mark.parametrize("word, shape, short", [
    ("Álvarez", "Xxxxxxx", "Xx"), ("MÉXICO", "XXXXXX", "X"), ("Zürich", "Xxxxxx", "Xx"),
    ("Ñuñoa-2", "Xxxxx-d", "Xx-d"), ("'s-Hertogenbosch", "'x-Xxxxxxxxxxxxx", "'x-Xx"), ("東京", "aa", "a"),
])
def test_shapes_are_unicode_aware(word, shape, short):
    assert word_shape(word) == shape and short_shape(word) == short


def test_flags_are_unicode_aware():
    assert {"title", "initial", "acronym"} <= set(word_attributes("Á.", 0))
    assert "acronym" in word_attributes("É.U.", 0) and "upper" in word_attributes("MÉXICO", 0)
    assert "title" in word_attributes("Örebro", 0) and "initial" not in word_attributes("Ö", 0)


def test_ascii_shapes_are_those_of_the_shipped_english_models():
    """The English models were trained with ASCII-only classes; on ASCII words nothing changed."""
    import re

    def ascii_shape(word):
        for pattern, symbol in ((r"[A-Z]", "X"), (r"[a-z]", "x"), (r"[0-9]", "d")):
            word = re.sub(pattern, symbol, word)
        return word

    for word in ["McDonald's", "U.S.", "1996-08-30", "IBM", "x-ray", "#1", "a_b", "J.", "3:0", "'s"]:
        assert word_shape(word) == ascii_shape(word)


def test_word_attributes_affixes_and_flags():
    attributes = set(word_attributes("Reuters", 3))
    assert {"bias", "w=Reuters", "l=reuters", "s=Xx", "S=Xxxxxxx", "title"} <= attributes
    assert {"p1=r", "p2=re", "p3=reu", "x1=s", "x2=rs", "x3=ers"} <= attributes
    assert "p4=reut" not in attributes
    assert "upper" not in attributes and "digit" not in attributes
    assert {"upper", "acronym", "period"} <= set(word_attributes("U.S.", 4))
    assert "initial" in word_attributes("J.", 4)
    assert {"digit", "alldigit"} <= set(word_attributes("1996", 4))
    assert {"hyphen", "punct"} <= set(word_attributes("-", 4))
    # affixes never longer than the word
    assert "p3=ab" not in word_attributes("ab", 4) and "p2=ab" in word_attributes("ab", 4)


def test_neighbours_and_position():
    features = sentence_features(["Peter", "lives", "in", "Paris"], FeatureConfig(window=1, affixes=2))
    assert len(features) == 4
    first, second, last = features[0], features[1], features[3]
    assert "BOS" in first and "EOS" not in first
    assert "EOS" in last
    assert "-1:l=peter" in second and "1:l=in" in second and "-1:s=Xx" in second
    assert not any(a.startswith("2:") or a.startswith("-2:") for a in second)  # window 1
    assert not any("|" in a for a in second)  # conjunctions off


def test_conjunctions():
    features = sentence_features(["Peter", "lives", "in", "Paris"], FeatureConfig(window=1, conjunctions=True))
    assert "-1|0:l=<s>|peter" in features[0]
    assert "0|+1:l=peter|lives" in features[0]
    assert "-1|0|+1:s=x|Xx|</s>" in features[3]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="aZé1.-ÉßǅΣ", max_size=4), max_size=8))
def test_caseless_rule_on_random_sentences(tokens):
    """The array form of the rule (word flags counted per sentence) against its plain statement."""
    cased = [t for t in tokens if t.upper() != t.lower()]
    expected = bool(cased) and (all(t.isupper() for t in cased) or (len(cased) >= 3 and all(t.islower() for t in cased)))
    assert is_caseless(tokens) == expected


def test_caseless_sentences():
    assert is_caseless(["SOCCER", "-", "JAPAN", "WIN", "."])
    assert is_caseless(["LONDON", "1996-08-30"])
    assert is_caseless(["the", "man", "from", "paris", "said"])
    assert not is_caseless(["The", "man", "from", "Paris"])
    assert not is_caseless(["1996-08-30"])
    assert not is_caseless(["in", "paris"])  # too short to tell lowercased text from a fragment


def test_truecase_table_ignores_sentences_without_case_evidence():
    """Short all-lower-case sentences (too short for :func:`is_caseless`) are no evidence: before,
    the lowercased copies of case augmentation turned 67 entries of en-conll03's table to lower
    case (``york -> york``)."""
    cased = [["He", "flew", "to", "New", "York", "."], ["In", "New", "York"], ["Visiting", "new", "York"]]
    original = learn_truecase(cased)
    assert original["york"] == "York" and original["new"] == "New"
    lowered = [[t.lower() for t in s] for s in cased]
    assert learn_truecase(cased + lowered) == original
    assert learn_truecase(cased + [["the", "york"], ["in", "york", "."]] * 3) == original
    assert learn_truecase([["in", "york"], ["A", "YORK"]]) == {}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["New", "new", "NEW", "York", "york", "Paris", "said", "IBM", "iPhone", "-",
                                          "1996"]), max_size=5), max_size=6))
def test_case_augmented_corpus_gives_the_original_truecase_table(sentences):
    from hgner.data.augment import case_augmented
    from hgner.data.corpus import Corpus, Document, Sentence

    corpus = Corpus("toy", "IOB2", [Document("d", [Sentence(s, ["O"] * len(s), i) for i, s in enumerate(sentences)])])
    augmented = case_augmented(corpus, ("lower", "upper"))
    assert learn_truecase(s.tokens for s in augmented.sentences) == learn_truecase(sentences)


def test_truecase_table_and_headline():
    table = learn_truecase([["The", "team", "from", "Japan", "won", "."], ["In", "Japan", "the", "team", "lost"],
                            ["JAPAN", "WIN"]])
    assert table["japan"] == "Japan" and table["the"] == "the" and table["team"] == "team"
    assert "in" not in table  # only non-initial positions count
    resources = FeatureResources(truecase=table)
    features = document_features([["JAPAN", "WON", "THE", "CUP"]], FULL, resources)[0]
    japan, won, the, cup = features
    assert "w=Japan" in japan and "caseless" in japan and "tc=Xx" in japan
    assert "w=won" in won and "tc=x" in won
    assert "w=Cup" in cup and "tc=?" in cup  # unknown upper-case word: Title case, unknown to the table
    assert "1:l=won" in japan and "1:s=x" in japan  # neighbours see truecased forms too


def test_document_casing_beats_table():
    resources = FeatureResources(truecase={"apple": "apple"})
    document = [["APPLE", "SHARES", "FALL"], ["Shares", "of", "Apple", "fell", "."]]
    headline = document_features(document, FULL, resources)[0]
    assert "w=Apple" in headline[0]  # the document says Apple


def test_document_features():
    document = [["Bill", "Clinton", "met", "reporters", "."], ["Clinton", "said", "the", "talks", "went", "well"],
                ["Talks", "resume", "on", "Monday", "."]]
    features = document_features(document, FULL, FeatureResources())
    clinton_later = features[1][0]
    assert "dp=E" in clinton_later  # inside a longer capitalised run elsewhere
    assert "f-1:l=bill" in clinton_later and "f+1:l=met" in clinton_later  # first occurrence's context
    assert "d:cap" in clinton_later  # capitalised at a non-initial position elsewhere
    assert "d:lower" not in clinton_later
    talks = features[2][0]
    assert "d:lower" in talks and "d:cap" not in talks  # "talks" is lower case elsewhere
    assert not any(a.startswith("f-1:") for a in features[0][1])  # the first occurrence itself
    assert not any(a.startswith(("d:", "dp=", "f-1")) for a in features[0][2])  # lower-case token
    off = document_features(document, FeatureConfig(), None)
    assert not any(a.startswith(("d:", "dp=", "f-1", "tc=")) or a == "caseless" for s in off for t in s for a in t)


def test_features_are_deterministic_and_document_local():
    document = [["Peter", "Blackburn"], ["BRUSSELS", "1996-08-22"], ["Blackburn", "spoke", "in", "Brussels", "."]]
    assert document_features(document, FULL) == document_features(document, FULL)
    alone = document_features([document[2]], FULL)[0]
    assert not any(a.startswith("f-1:") for a in alone[0])
    assert "f-1:l=peter" in document_features(document, FULL)[2][0]


def test_config_round_trip():
    config = FeatureConfig(window=3, affixes=5, conjunctions=True, truecase=False, document=True, gazetteer=True,
                           context=4)
    assert FeatureConfig.from_json(config.to_json()) == config
    assert FeatureConfig.from_json({}) == FeatureConfig()
    with pytest.raises(ModelError, match=r"unknown feature settings \['clusters'\]; expected some of \['affixes'"):
        FeatureConfig.from_json({"window": 2, "clusters": True})


def test_gazetteer():
    resources = FeatureResources(gazetteer={"LOC": ["new york", "york", "bosnia and herzegovina"],
                                            "FIRST": ["john"], "LAST": ["smith", "york"]})
    tokens = ["John", "Smith", "of", "New", "York", "visited", "Bosnia", "and", "Herzegovina", "and", "new", "york"]
    features = document_features([tokens], FeatureConfig(gazetteer=True), resources)[0]
    found = [[a for a in token if a.startswith("g=")] for token in features]
    assert found[:2] == [["g=FIRST:S"], ["g=LAST:S"]]
    assert found[3:5] == [["g=LOC:B"], ["g=LOC:E"]]  # the longest match wins over "york"
    assert found[6:9] == [["g=LOC:B"], ["g=LOC:I"], ["g=LOC:E"]]
    assert found[10:] == [[], []]  # lower-case tokens never match
    assert not any(found[i] for i in (2, 5, 9))
    off = document_features([tokens], FeatureConfig(), resources)[0]
    assert not any(a.startswith("g=") for token in off for a in token)


def test_gazetteer_is_fitted_to_the_training_corpus():
    truecase = learn_truecase([["Ella", "va", "para", "Granada", "con", "Will", "."],
                               ["Dijo", "que", "will", "para", "siempre", "."]])
    lists = {"LOC": ["Granada", "  Nueva   York ", "para", "granada", "a b c d e"], "FIRST": ["Will"], "EMPTY": ["para"]}
    fitted = fit_gazetteer(lists, truecase)
    # lowercased, spaces folded, duplicates merged; five tokens is too long; "para" is a common word here
    assert fitted == {"LOC": ["granada", "nueva york"], "FIRST": ["will"]}  # "will": as often capitalised
    assert "EMPTY" not in fitted  # a list left empty is dropped
    assert fit_gazetteer(fitted, truecase) == fitted


@given(st.dictionaries(st.sampled_from(["LOC", "FIRST"]),
                       st.lists(st.text(alphabet="aBc ÁéñZ-'", max_size=30), max_size=8)),
       st.dictionaries(st.text(alphabet="abcéñ", min_size=1, max_size=5), st.booleans()))
def test_fitted_gazetteer_entries_are_lowercase_single_spaced_and_short(lists, usually_lower):
    truecase = {word: word if lower else word.capitalize() for word, lower in usually_lower.items()}
    fitted = fit_gazetteer(lists, truecase)
    for entries in fitted.values():
        assert entries and entries == sorted(set(entries))
        for entry in entries:
            assert entry == entry.lower() and entry == " ".join(entry.split()) and len(entry.split()) <= 4
            assert " " in entry or not truecase.get(entry, "X")[:1].islower()
    assert fit_gazetteer(fitted, truecase) == fitted


def test_gazetteer_names_after_a_leading_non_letter():
    """'s-Hertogenbosch is written as a name though its first letter is lower case; 's is not."""
    resources = FeatureResources(gazetteer={"LOC": ["'s-hertogenbosch", "'s"]})
    tokens = ["In", "'s-Hertogenbosch", "en", "'s", "'S-HERTOGENBOSCH", "'s-hertogenbosch"]
    features = document_features([tokens], FeatureConfig(gazetteer=True), resources)[0]
    assert [[a for a in token if a.startswith("g=")] for token in features] == [[], ["g=LOC:S"], [], [], ["g=LOC:S"], []]


def test_context_aggregation():
    document = [["Bill", "Clinton", "met", "reporters", "."], ["Clinton", "said", "no", "."]]
    features = document_features(document, FeatureConfig(document=True, context=2))
    assert {"c-1:l=bill", "c+1:l=met", "c-1:l=<s>", "c+1:l=said"} <= set(features[1][0])
    one = document_features(document, FeatureConfig(document=True, context=1))
    assert "c+1:l=said" not in one[1][0] and "c+1:l=met" in one[1][0]


def test_word_clusters_give_path_prefixes():
    resources = FeatureResources(word_clusters={"110100101": ["Madrid", "Zaragoza"], "011": ["lunes", "el"],
                                                "1010011100110011101101": ["Oviedo"], "1": ["El"]})
    tokens = ["Madrid", "el", "lunes", "Lunes", "ZARAGOZA", "Oviedo", "Mérida"]

    def clusters(config, sentence=tokens):
        return [[a for a in token if re.fullmatch(r"c\d+=[01]+", a)] for token in
                document_features([sentence], config, resources)[0]]

    found = clusters(FeatureConfig(word_clusters=True))
    assert found[0] == ["c4=1101", "c6=110100", "c10=110100101", "c20=110100101"]  # the whole path when shorter
    assert found[6] == []  # a word of no cluster
    assert found[1] == ["c4=011", "c6=011", "c10=011", "c20=011"]
    assert clusters(FeatureConfig(word_clusters=True), ["El"]) == [["c4=1", "c6=1", "c10=1", "c20=1"]]  # as written
    assert found[2] == found[3] == ["c4=011", "c6=011", "c10=011", "c20=011"]  # "Lunes": its lower-case form's
    assert found[4] == []  # looked up as written and in lower case only (truecasing would make it Zaragoza)
    assert found[5] == ["c4=1010", "c6=101001", "c10=1010011100", "c20=10100111001100111011"]
    headline = clusters(FeatureConfig(word_clusters=True, truecase=True), ["LLUVIA", "EN", "ZARAGOZA"])
    assert headline[2] == found[0]  # truecased: Zaragoza
    assert not any(clusters(FeatureConfig()))


def test_lowercase_clusters_add_the_lowercase_forms_cluster_to_a_word_with_its_own():
    resources = FeatureResources(word_clusters={"0101": ["Cámara"], "1100": ["cámara", "lunes"], "111": ["Ana"]})
    tokens = ["Cámara", "cámara", "Lunes", "Ana", "CÁMARA"]

    def clusters(config):
        return [[a for a in token if re.fullmatch(r"l?c\d+=[01]+", a)] for token in
                document_features([tokens], config, resources)[0]]

    plain = clusters(FeatureConfig(word_clusters=True))
    both = clusters(FeatureConfig(word_clusters=True, lowercase_clusters=True))
    assert both[0] == plain[0] + ["lc4=1100", "lc6=1100", "lc10=1100", "lc20=1100"]  # Cámara and cámara
    assert both[1:] == plain[1:]  # already lower case; no own cluster (Lunes, CÁMARA); no lower-case one (Ana)
    assert plain[2] == plain[4] == plain[1] and plain[3] == ["c4=111", "c6=111", "c10=111", "c20=111"]


def test_neighbour_clusters_give_the_neighbours_path_prefixes():
    resources = FeatureResources(word_clusters={"0101101": ["Paris"], "11": ["in"]})
    tokens = ["He", "lives", "in", "Paris", "Unknownia"]

    def neighbours(config):
        return [[a for a in token if re.fullmatch(r"[-+]?\d+:c\d+=[01]+", a)] for token in
                document_features([tokens], config, resources)[0]]

    found = neighbours(FeatureConfig(word_clusters=True, neighbour_clusters=1))
    assert found[3] == ["-1:c4=11", "-1:c6=11", "-1:c10=11", "-1:c20=11"]  # "in"; Unknownia has no cluster
    assert found[4] == ["-1:c4=0101", "-1:c6=010110", "-1:c10=0101101", "-1:c20=0101101"]  # Paris
    assert found[1] == ["1:c4=11", "1:c6=11", "1:c10=11", "1:c20=11"]  # two away: not with k=1
    assert found[0] == []
    two = neighbours(FeatureConfig(word_clusters=True, neighbour_clusters=2))
    assert two[0] == ["2:c4=11", "2:c6=11", "2:c10=11", "2:c20=11"]
    assert not any(neighbours(FeatureConfig(word_clusters=True)))  # k = 0: none
    assert not any(neighbours(FeatureConfig(neighbour_clusters=1)))  # no clusters: none


def test_frequency_buckets_on_known_and_unknown_words():
    from wordfreq import zipf_frequency

    tokens = ["The", "the", "Siemens", "Qxzvbnmw", ",", "1996"]
    found = [[a for a in token if a.startswith("zf=")]
             for token in document_features([tokens], FeatureConfig(frequency="en"))[0]]
    assert found[0] == found[1] == [f"zf={int(zipf_frequency('the', 'en'))}"] and found[0] != ["zf=0"]  # case folded
    assert int(found[2][0][3:]) < int(found[0][0][3:])  # a rarer word, a lower bucket
    assert found[3] == ["zf=0"]  # a word wordfreq does not know
    assert found[4] == ["zf=-"]  # no letter or digit
    assert found[5][0].startswith("zf=")
    assert not any(a.startswith("zf=") for t in document_features([tokens], FeatureConfig())[0] for a in t)


def test_outside_truecasing_table_comes_after_the_corpus_table():
    resources = FeatureResources(truecase={"paris": "Paris"}, outside_truecase={"siemens": "Siemens", "paris": "PARIS",
                                                                                 "redesignated": "redesignated"})
    config = FeatureConfig(truecase=True, outside_truecase=True)
    lowered = document_features([["siemens", "opened", "in", "paris", "today"]], config, resources)[0]
    assert "w=Siemens" in lowered[0] and "w=Paris" in lowered[3]  # the corpus's own table first
    assert "w=opened" in lowered[1]  # in neither table: as written
    # sentence-initial words the document does not show elsewhere: a common noun, a name, unknown
    cased = [t[0] for t in document_features([["Redesignated", "in"], ["Siemens", "in"], ["Qxz", "in"]], config,
                                             resources)]
    assert "tc=x" in cased[0] and "tc=Xx" in cased[1] and "tc=?" in cased[2]


def test_caseless_features_mark_the_caseless_sentences_only():
    config = FeatureConfig(truecase=True, caseless_features=True)
    cased, headline = document_features([["John", "visited", "Paris", "."], ["JOHN", "VISITED", "PARIS"]], config)
    assert "w=John" in cased[0] and not any(a.startswith("~") for t in cased for a in t)
    assert "~w=John" in headline[0] and "~1:l=visited" in headline[0] and "w=John" not in headline[0]
    assert "BOS" in headline[0] and "caseless" in headline[0]  # shared: sentence edges and the flag
    plain = document_features([["John", "visited", "Paris", "."], ["JOHN", "VISITED", "PARIS"]],
                              FeatureConfig(truecase=True))[1]
    assert [[a.lstrip("~") for a in t] for t in headline] == plain


def test_a_word_in_two_clusters_is_named_before_anything_is_saved():
    assert FeatureResources(word_clusters={"0": ["a", "b"], "1": ["c"]}).repeated_cluster_word() is None
    assert FeatureResources(word_clusters={"0": ["a", "b"], "1": ["b"]}).repeated_cluster_word() == (
        "word 'b' is listed twice (clusters 0 and 1); expected each word once")


def test_resources_round_trip(tmp_path):
    resources = FeatureResources(truecase={"japan": "Japan", "nato": "NATO"}, gazetteer={"LOC": ["paris"]},
                                 word_clusters={"0110": ["Paris", "London"]})
    assert resources.save(tmp_path) == ["truecase.json", "gazetteer.json", "word_clusters.npz"]
    loaded = FeatureResources.load(tmp_path)
    assert [loaded.list_names[i] for i in loaded.lookup("paris")] == ["LOC"]
    assert FeatureResources.load(tmp_path) == resources
    assert FeatureResources.load(tmp_path / "missing") == FeatureResources()


@pytest.mark.parametrize("name", ["en-conll03", "en-3class"])
def test_shipped_models_load_by_name_and_tag(name):
    from hgner.crf.model import CrfModel
    from hgner.crf.modelfiles import builtin_models
    from hgner.decoders.chain import viterbi

    assert name in builtin_models()
    model = CrfModel.load(name)
    meta = model.metadata
    for key in ("labels", "scheme", "features", "tokenizer", "hgner_version", "training", "scores", "model_bytes"):
        assert key in meta
    assert meta["training"]["sha256"] and meta["scores"]["dev"]["conll2003:testa"]["f1"] > 80
    types = set(model.entity_types)
    assert types == ({"PER", "LOC", "ORG", "MISC"} if name == "en-conll03" else {"PER", "LOC", "ORG"})
    sentences = [["Angela", "Merkel", "visited", "Microsoft", "in", "Seattle", "on", "Monday", "."]]
    labels = viterbi(model.chain_graph(sentences))
    tags = [model.labels[k] for k in labels]
    assert tags == model.crfsuite_tag(model.features(sentences))[0]
    assert tags[0].endswith("PER") and tags[1].endswith("PER")
    assert tags[3].endswith("ORG") and tags[5].endswith("LOC")
    assert tags[2] == tags[6] == tags[8] == "O"


def test_lowercased_document_is_caseless_throughout():
    resources = FeatureResources(truecase={"london": "London", "said": "said"})
    document = [["london", "1996-08-30"], ["police", "said", "nothing", "."]]
    features = document_features(document, FULL, resources)
    assert "caseless" in features[0][0] and "w=London" in features[0][0]  # short sentence, lowercased document
    mixed = document_features([["london", "1996-08-30"], ["Police", "said", "nothing", "."]], FULL, resources)
    assert "caseless" not in mixed[0][0] and "w=london" in mixed[0][0]


def test_truecasing_falls_back_to_the_gazetteer_for_lower_case_names():
    resources = FeatureResources(truecase={"said": "said", "in": "in"}, gazetteer={"LAST": ["kowalski"]})
    features = document_features([["kowalski", "said", "in", "zzyzx"]], FULL, resources)[0]
    assert "w=Kowalski" in features[0]  # on a gazetteer list: Title case
    assert "w=zzyzx" in features[3]  # unknown everywhere: left alone


@settings(max_examples=80, deadline=None)
@given(st.lists(st.text("ab|", max_size=4), min_size=1, max_size=6, unique=True), st.data())
def test_pair_keys_are_exactly_the_pairs_whose_attribute_is_known(words, data):
    """The tagging path's table of word pairs (vocabulary.pair_keys) holds a pair exactly when its
    attribute string is among the model's, words holding the separator ``|`` included."""
    from hgner.features.vocabulary import _PAIR, PAIR_ATTRIBUTES, Vocabulary, pair_keys

    pairs = [(a, b) for a in words for b in words]
    for attribute in PAIR_ATTRIBUTES.values():
        known = {attribute(a, b) for a, b in data.draw(st.lists(st.sampled_from(pairs)))} | {"w=a|b", attribute("", "")[:-1]}
        vocabulary = Vocabulary(None)
        found = pair_keys(vocabulary, attribute, known)
        for a, b in pairs:
            key = vocabulary.lowers[a] * _PAIR + vocabulary.lowers[b]
            assert found.get(key) == (attribute(a, b) if attribute(a, b) in known else None)
