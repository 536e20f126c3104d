"""hgner.text.sentences: where sentences end in running prose, in hard-wrapped paragraphs and in text
laid out one sentence per line; headlines, bylines and datelines run into the sentence after
them; and splitting that never loses, adds or reorders a character."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hgner.text.rawtext import wrap
from hgner.text.sentences import DASHES, LIST_ITEMS, abbreviation_ends, list_markers, split_sentences, stop_words
from hgner.text.tokenizer import TextTokenizer

TOKENIZER = TextTokenizer("en")


def tokens(text: str) -> list[str]:
    return [t for s in TOKENIZER(text) for t in s.tokens]


def sentences(text: str) -> list[str]:
    return [" ".join(s.tokens) for s in TOKENIZER(text)]


def paragraph_and_lines(lines: list[str]) -> tuple[list[str], list[str]]:
    """The sentences found in ``lines`` run into one paragraph, and one line each."""
    return sentences(" ".join(lines)), sentences("\n".join(lines))


def test_final_period_of_an_abbreviation_at_a_line_end_is_the_full_stop():
    assert sentences("It bought Lear Corp.\nThe deal closed in the U.S.\n") == [
        "It bought Lear Corp .", "The deal closed in the U.S ."]
    assert tokens("Lear Corp. said it would buy it.") == ["Lear", "Corp.", "said", "it", "would", "buy", "it", "."]


def test_blank_line_always_ends_a_sentence():
    long_line = "the committee said on Tuesday that it would consider the matter further and"
    assert len(long_line) > 72
    assert sentences(f"{long_line}\n\nthen it left") == [long_line, "then it left"]
    assert sentences("one\r\n\r\ntwo") == ["one", "two"]


def test_headline_dateline_byline():
    text = ("SOCCER - JAPAN GET LUCKY WIN , CHINA IN SURPRISE DEFEAT .\nNadim Ladki\n"
            "AL-AIN , United Arab Emirates 1996-12-06\nJapan began the defence of their Asian Cup title with a "
            "lucky 2-1 win against Syria in a Group C championship match on Friday .\n")
    assert sentences(text) == [
        "SOCCER - JAPAN GET LUCKY WIN , CHINA IN SURPRISE DEFEAT .",
        "Nadim Ladki",
        "AL-AIN , United Arab Emirates 1996-12-06",
        "Japan began the defence of their Asian Cup title with a lucky 2-1 win against Syria in a Group C "
        "championship match on Friday .",
    ]
    assert sentences("NORTHERN ITALY\n\nHeavy rain fell.") == ["NORTHERN ITALY", "Heavy rain fell ."]
    assert sentences("RESULTS OF THE DAY IN THE ENGLISH PREMIER LEAGUE AND THE SCOTTISH CUP MATCHES\nLondon won") == [
        "RESULTS OF THE DAY IN THE ENGLISH PREMIER LEAGUE AND THE SCOTTISH CUP MATCHES", "London won"]


def test_hard_wrapped_paragraph_is_not_split_at_line_ends():
    first = ("Japan began the defence of their Asian Cup title with a lucky win against Syria in a Group C "
             "championship match on Friday, after the Syrians had dominated the second half of the game.")
    second = "But China saw their luck desert them in the second match of the group, crashing to a surprise defeat."
    wrapped = textwrap.fill(f"{first} {second}", 72)
    assert wrapped.count("\n") >= 3
    assert sentences(wrapped) == [" ".join(tokens(first)), " ".join(tokens(second))]


def test_an_abbreviation_at_a_wrapped_line_end_ends_the_sentence_only_where_the_next_word_would_have_fitted():
    """A wrapper breaks a line only where the next word does not fit: after such a break the
    paragraph's rule decides (a capitalised stop word must follow); after a break the next word
    would have fitted before, the writer ended the line, and with it the sentence."""
    line = "The champion, who turned professional after winning the title in the U.S."
    assert len(line) == 73
    words = "The champion , who turned professional after winning the title in the U.S"
    assert sentences(f"{line}\nAmateur Championship in 1994, won again on Sunday.") == [
        f"{words}. Amateur Championship in 1994 , won again on Sunday ."]  # wrapped at 73
    longer = "Championship stayed on a line of its own, for the sake of a line longer than the first."
    assert len(longer) >= len(line) + 1 + len("Amateur")  # so "Amateur" would have fitted after the first
    assert sentences(f"{line}\nAmateur\n{longer}") == [f"{words} .", "Amateur", " ".join(tokens(longer))]


def test_dateline_ends_its_sentence_in_running_text():
    assert sentences("AL-AIN, United Arab Emirates 1996-12-06 Japan began the defence") == [
        "AL-AIN , United Arab Emirates 1996-12-06", "Japan began the defence"]
    assert sentences("It expires 1996-12-06 and then") == ["It expires 1996-12-06 and then"]


def test_headline_and_byline_run_into_the_dateline_and_first_sentence():
    """A whole article as one paragraph: the byline, the dateline and the headline without a full
    stop each end their sentence, so the entities of the first sentence keep their context."""
    assert sentences("SOCCER - JAPAN GET LUCKY WIN, CHINA IN SURPRISE DEFEAT. Nadim Ladki AL-AIN, United Arab "
                     "Emirates 1996-12-06 Japan began the defence of their title.") == [
        "SOCCER - JAPAN GET LUCKY WIN , CHINA IN SURPRISE DEFEAT .", "Nadim Ladki",
        "AL-AIN , United Arab Emirates 1996-12-06", "Japan began the defence of their title ."]
    assert sentences("Larisa Sayenko MINSK 1996-08-30 Belarus said on Friday.") == [
        "Larisa Sayenko", "MINSK 1996-08-30", "Belarus said on Friday ."]
    assert sentences("SWIMMING - POPOV TRAINS IN U.S. Maggie McNeil said it.") == [
        "SWIMMING - POPOV TRAINS IN U.S.", "Maggie McNeil said it ."]
    # all caps inside a cased sentence, or too short a run, is not a headline
    assert sentences("He met NEW YORK officials and the UN Secretary on Monday.") == [
        "He met NEW YORK officials and the UN Secretary on Monday ."]
    assert sentences("It was reported by the BBC World Service 1996-08-30 in London.") == [
        "It was reported by the BBC World Service 1996-08-30 in London ."]


def test_wrapped_paragraph_keeps_datelines_and_initials_together():
    text = textwrap.fill("ATHLETICS - HARRISON, EDWARDS TO MEET IN SARAJEVO. MONTE CARLO 1996-08-30 Olympic "
                         "champion Kenny Harrison will take part, said the official. The county of Gloucestershire "
                         "then beat the side of the S. Watkin in a long match at the ground on Friday.", 72)
    assert "CARLO\n1996" in text and "S.\nWatkin" in text
    assert sentences(text) == [
        "ATHLETICS - HARRISON , EDWARDS TO MEET IN SARAJEVO .", "MONTE CARLO 1996-08-30",
        "Olympic champion Kenny Harrison will take part , said the official .",
        "The county of Gloucestershire then beat the side of the S. Watkin in a long match at the ground on Friday ."]


@pytest.mark.parametrize(("language", "text", "expected"), [
    ("es", "Llegó a Madrid. ¿Qué hará Juan? ¡Nadie lo sabe! «Vamos», dijo Ana.",
     ["Llegó a Madrid .", "¿ Qué hará Juan ?", "¡ Nadie lo sabe !", "« Vamos » , dijo Ana ."]),
    ("en", 'He left Paris. "We will win," said John. (Reuters) reported it.',
     ["He left Paris .", '" We will win , " said John .', "( Reuters ) reported it ."]),
    # closing marks stay with the sentence they end: no space before them, or spaces on both sides
    ("en", 'He said "no." Then (he left.) It ended. \' Yes.',
     ['He said " no . "', "Then ( he left . )", "It ended . '", "Yes ."]),
])
def test_an_opening_mark_after_a_sentence_end_starts_the_next_sentence(language, text, expected):
    assert [" ".join(s.tokens) for s in TextTokenizer(language)(text)] == expected


def test_results_table_lines_end_their_sentences():
    text = ("Alex Corretja (Spain) beat Byron Black (Zimbabwe) 7-6 (8-6) 3-6 6-2 6-2\n"
            "Scott Draper (Australia) beat Jason Stoltenberg (Australia) 6-4 6-2\n")
    assert len(sentences(text)) == 2

ARTICLE = ["SOCCER - JAPAN GET LUCKY WIN, CHINA IN SURPRISE DEFEAT.", "Nadim Ladki",
           "AL-AIN, United Arab Emirates 1996-12-06",
           "Japan began the defence of their Asian Cup title with a lucky 2-1 win against Syria on Friday.",
           '" We were lucky, " said coach Hans Ooft of Japan Football Association Inc.',
           '" We will do better, " he said.', "-- Tokyo Newsroom +81 3 3432 4291"]


def test_headline_byline_and_dateline_run_into_a_paragraph_end_where_their_lines_do():
    """The whole article as one paragraph, and as one paragraph hard-wrapped at 72 columns, gives
    the sentences (so the tokens and the entities) of the article laid out one sentence per line."""
    paragraph, lines = paragraph_and_lines(ARTICLE)
    assert paragraph == lines == [
        "SOCCER - JAPAN GET LUCKY WIN , CHINA IN SURPRISE DEFEAT .", "Nadim Ladki",
        "AL-AIN , United Arab Emirates 1996-12-06",
        "Japan began the defence of their Asian Cup title with a lucky 2-1 win against Syria on Friday .",
        '" We were lucky , " said coach Hans Ooft of Japan Football Association Inc .',
        '" We will do better , " he said .', "-- Tokyo Newsroom +81 3 3432 4291"]
    assert sentences(wrap(" ".join(ARTICLE))) == lines


def test_a_headline_run_into_a_paragraph_keeps_its_entities(tag_model):
    from hgner.tagging.settings import TagSettings
    from hgner.tagging.tagger import Tagger

    tagger = Tagger(TagSettings(tag_model))
    lines = ["MERKEL VISITS UNITED NATIONS IN TOKYO", "Angela Merkel works for United Nations in Tokyo."]

    def entities(text: str) -> list[tuple[str, str]]:
        return [(e.text, e.label) for group in tagger.tag_text(text) for e in group.entities]

    assert entities(" ".join(lines)) == entities("\n".join(lines))
    assert ("Angela Merkel", "PER") in entities(" ".join(lines))


def test_a_dateline_run_into_its_first_sentence():
    assert sentences("LONDON 1996-08-30 The Bank of England said on Friday it would not move rates.") == [
        "LONDON 1996-08-30", "The Bank of England said on Friday it would not move rates ."]
    assert sentences("Mexican avocados. Maggie McNeil WASHINGTON 1996-08-30 U.S. officials said so.") == [
        "Mexican avocados .", "Maggie McNeil", "WASHINGTON 1996-08-30", "U.S. officials said so ."]


@pytest.mark.parametrize(("text", "expected"), [
    # a straight quote spaced on both sides opens a sentence when the quotes before it are balanced
    ('He left. " We will win, " he said. " It is over. "',
     ["He left .", '" We will win , " he said .', '" It is over . "']),
    ('" We lost. " He left.', ['" We lost . "', "He left ."]),
    # unbalanced: the quote closes the sentence it follows
    ('" We will win. " He left.', ['" We will win . "', "He left ."]),
    # a quote before a line break opens nothing on its line
    ('He said so. "\nThen he left.', ['He said so . "', "Then he left ."]),
])
def test_quote_parity_decides_a_quote_spaced_on_both_sides(text, expected):
    assert sentences(text) == expected


def test_a_dash_spaced_on_both_sides_opens_a_sentence():
    assert sentences("Rates were steady. -- Reuters Newsroom 212-859-1620") == [
        "Rates were steady .", "-- Reuters Newsroom 212-859-1620"]
    assert sentences("Prices fell 3-4 percent. - - - - KOMPAS") == ["Prices fell 3-4 percent .", "- - - - KOMPAS"]
    assert sentences("It won 3-2 - a record.") == ["It won 3-2 - a record ."]
    assert {"-", "--"} <= DASHES


@pytest.mark.parametrize(("text", "expected"), [
    ("He works for Barnett Banks Inc. in Jacksonville, Fla. The reports fanned worries.",
     ["He works for Barnett Banks Inc. in Jacksonville , Fla .", "The reports fanned worries ."]),
    ('It was Schroder Wertheim & Co. " It should help, " he said.',
     ["It was Schroder Wertheim & Co .", '" It should help , " he said .']),
    # not before a name, a lower-case word or after an initial or a lower-case abbreviation
    ("Lear Corp. Chairman Ken Way and Gov. Carroll Campbell met S. The Band, e.g. The Who.",
     ["Lear Corp. Chairman Ken Way and Gov. Carroll Campbell met S. The Band , e.g. The Who ."]),
])
def test_an_abbreviations_period_ends_the_sentence_before_a_capitalised_stop_word_or_a_quote(text, expected):
    assert sentences(text) == expected


def test_abbreviation_ends():
    stops = stop_words("en")
    assert abbreviation_ends("U.S.", "The", False, stops) and abbreviation_ends("Co.", '"', True, stops)
    assert not abbreviation_ends("Co.", "(", True, stops)  # a bracket after an abbreviation: (NYSE: X)
    assert not abbreviation_ends("U.S.", "Open", False, stops) and not abbreviation_ends("J.", "The", False, stops)
    assert not abbreviation_ends("Inc", "The", False, stops) and not abbreviation_ends("...", "The", False, stops)


def test_a_numbered_list_run_into_a_paragraph():
    text = ("Results on Friday: 1. Michelle Freeman (Jamaica) 12.71 seconds 2. Ludmila Engquist (Sweden) 12.74 "
            "3. Aliuska Lopez (Cuba) 12.85")
    assert sentences(text) == ["Results on Friday :", "1. Michelle Freeman ( Jamaica ) 12.71 seconds",
                               "2. Ludmila Engquist ( Sweden ) 12.74", "3. Aliuska Lopez ( Cuba ) 12.85"]
    # two numbers are not a list: their periods are full stops
    assert sentences("He won in 1. He lost in 2. That was it.") == [
        "He won in 1 .", "He lost in 2 .", "That was it ."]


def test_list_markers():
    text = "a 1. Bo 2. Al 3. Cy 5. Di 6. Ed\n1. x"
    words = [(t.idx, t.idx + len(t)) for t in TOKENIZER.nlp.make_doc(text) if not t.is_space]
    starts = {text.index(n) for n in ("1. Bo", "2. Al", "3. Cy")} | {text.rindex("1. x")}
    assert list_markers(text, words) == starts
    assert LIST_ITEMS == 3


def test_split_sentences_of_a_doc_without_a_language():
    import spacy

    doc = TOKENIZER.nlp.make_doc("Lear Corp. The deal closed.")
    assert [s.tokens for s in split_sentences(doc, language="en")] == [["Lear", "Corp", "."], ["The", "deal", "closed", "."]]
    assert len(split_sentences(spacy.blank("en").make_doc("Lear Corp. The deal closed."))) == 2


PROSE = st.sampled_from([" ", "  ", "\n", "\n\n", "\r\n", "\t", '"', "'", "--", " - ", ".", ". ", "? ", "!", "(", ")",
                         "1. ", "2. ", "3. ", "Corp.", "U.S.", "Fla.", "S.", "e.g.", "The", "It", "He", "MINSK",
                         "NEW YORK", "1996-08-30", "Reuters", "said", "won", "12.71", "6-2", ":", ",", "\u201c", "\u201d"])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(PROSE, st.text(max_size=5)), max_size=60))
def test_splitting_never_loses_adds_or_reorders_a_character(pieces):
    text = "".join(pieces)
    found = TOKENIZER(text)
    spans = [span for sentence in found for span in sentence.offsets]
    assert all(s.tokens and len(s.tokens) == len(s.offsets) for s in found)
    assert all(text[a:b] == t for s in found for t, (a, b) in zip(s.tokens, s.offsets))
    assert all(a < b <= c for (a, b), (c, _) in zip(spans, spans[1:]))  # in text order, never overlapping
    assert "".join(text[a:b] for a, b in spans) == "".join(text.split())  # every other character, once


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from([s for line in ARTICLE for s in line.split()] + ["1.", "2.", "3.", "Corp.", '"']),
                min_size=1, max_size=80))
def test_paragraph_and_wrapped_paragraph_keep_the_same_characters(words):
    paragraph = " ".join(words)
    for text in (paragraph, wrap(paragraph)):
        assert "".join(t for s in TOKENIZER(text) for t in s.tokens) == paragraph.replace(" ", "")


from tag_support import tag_model  # noqa: E402,F401  (fixture)
