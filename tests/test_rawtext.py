"""hgner.text.rawtext: the rebuilding rules, the layouts, span scoring with known answers, and
``hgner evaluate --input raw`` end to end on a tiny model."""

from __future__ import annotations

import json
import textwrap

import pytest

from hgner.data.corpus import Corpus, Document, Sentence
from hgner.text.rawtext import WRAP_COLUMNS, entities_joined_by_layout, join_tokens, rebuild, score_spans, wrap


@pytest.mark.parametrize(("tokens", "text"), [
    (["Japan", ",", "the", "U.S.", "and", "China", "."], "Japan, the U.S. and China."),
    (["He", "said", ":", "yes", ";", "no", "?", "!"], "He said: yes; no?!"),
    (["(", "Reuters", ")", "[", "a", "]", "{", "b", "}"], "(Reuters) [a] {b}"),
    (["$", "100", "rose", "5", "%"], "$100 rose 5%"),
    (["Japan", "'s", "men", "do", "n't", "we", "'re", "we", "'ll", "'ve", "I", "'m", "'d"],
     "Japan's men don't we're we'll've I'm'd"),
    (["SILVA", "'S", "CA", "N'T"], "SILVA'S CAN'T"),
    (['"', "Yes", ",", '"', "he", "said"], '" Yes, " he said'),
])
def test_join_tokens(tokens, text):
    joined, offsets = join_tokens(tokens)
    assert joined == text
    assert [joined[a:b] for a, b in offsets] == tokens


def test_rebuild_layouts_and_gold_spans():
    sentences = [["Nadim", "Ladki"], ["AL-AIN", ",", "United", "Arab", "Emirates", "1996-12-06"]]
    tags = [["B-PER", "I-PER"], ["B-LOC", "O", "B-LOC", "I-LOC", "I-LOC", "O"]]
    lines = rebuild(sentences, tags, "lines")
    assert lines.text == "Nadim Ladki\nAL-AIN, United Arab Emirates 1996-12-06\n"
    assert [(lines.text[a:b], t) for a, b, t in lines.entities] == [
        ("Nadim Ladki", "PER"), ("AL-AIN", "LOC"), ("United Arab Emirates", "LOC")]
    paragraph = rebuild(sentences, tags, "paragraph")
    assert paragraph.text == "Nadim Ladki AL-AIN, United Arab Emirates 1996-12-06\n"
    assert paragraph.entities == lines.entities and paragraph.sentences == lines.sentences
    with pytest.raises(ValueError, match="unknown layout"):
        rebuild(sentences, tags, "columns")


def test_iob1_tags_give_separate_entities():
    document = rebuild([["Paris", "London", "Rome"]], [["I-LOC", "B-LOC", "I-LOC"]])
    assert [(a, b) for a, b, _ in document.entities] == [(0, 5), (6, 17)]


@pytest.mark.parametrize("layout", ["paragraph", "wrapped"])
def test_a_name_the_corpus_breaks_between_sentences_is_one_entity_in_a_paragraph(layout):
    sentences = [["Billy", "Mayfair", ",", "Ken"], ["Green", ",", "Jerry", "Kelly", "."],
                 ["Paris", "beat", "Lyon"], ["Rome", "lost"]]
    tags = [["I-PER", "I-PER", "O", "I-PER"], ["I-PER", "O", "I-PER", "I-PER", "O"],
            ["I-ORG", "O", "I-ORG"], ["I-LOC", "O"]]
    document = rebuild(sentences, tags, layout)
    spans = [(document.text[a:b], t) for a, b, t in entities_joined_by_layout(document, layout)]
    # Ken / Green run together; Lyon (ORG) and Rome (LOC) differ in type; Mayfair is not at a sentence end
    assert spans == [("Billy Mayfair", "PER"), ("Ken Green", "PER"), ("Jerry Kelly", "PER"), ("Paris", "ORG"),
                     ("Lyon", "ORG"), ("Rome", "LOC")]
    lines = rebuild(sentences, tags, "lines")
    assert entities_joined_by_layout(lines, "lines") == lines.entities  # on its own line, a sentence keeps its end


def test_wrap_keeps_offsets_and_fills_like_textwrap():
    line = " ".join(f"word{i}" * (1 + i % 3) for i in range(60))
    wrapped = wrap(line)
    assert len(wrapped) == len(line) and wrapped.replace("\n", " ") == line
    assert wrapped.split("\n") == textwrap.wrap(line, WRAP_COLUMNS, break_long_words=False, break_on_hyphens=False)
    long_word = "x" * 100
    assert wrap(f"a {long_word} b") == f"a\n{long_word}\nb"
    half = line.split()[:30], line.split()[30:]  # two sentences: one paragraph, wrapped
    document = rebuild(list(half), [["O"] * len(h) for h in half], "wrapped")
    assert document.text == wrapped + "\n"
    assert rebuild(list(half), [["O"] * len(h) for h in half], "paragraph").text == line + "\n"


def test_score_spans_known_answers():
    gold = [[(0, 5, "PER"), (10, 15, "LOC")], [(3, 8, "ORG")]]
    predicted = [[(0, 5, "PER"), (10, 15, "ORG")], [(3, 9, "ORG"), (20, 22, "MISC")]]
    score = score_spans(gold, predicted, "IOB1")
    assert (score.micro.correct, score.micro.predicted, score.micro.gold) == (1, 4, 3)
    assert score.micro.precision == pytest.approx(25.0) and score.micro.recall == pytest.approx(100 / 3)
    assert score.micro.f1 == pytest.approx(2 * 25 * (100 / 3) / (25 + 100 / 3))
    assert score.per_type["PER"].f1 == 100.0 and score.per_type["LOC"].recall == 0.0
    assert score.per_type["MISC"].precision == 0.0 and score.per_type["MISC"].gold == 0
    assert score_spans([[]], [[]], "IOB2").micro.f1 == 0.0
    with pytest.raises(ValueError):
        score_spans([[]], [], "IOB2")


from tag_support import SENTENCE, tag_model  # noqa: E402,F401  (fixture)


def test_evaluate_raw_end_to_end(tag_model, tmp_path, capsys):
    """The tiny model tags its own training sentences: raw-text scoring equals the token scoring
    when the text tokenizes back into the same tokens and sentences."""
    from hgner.cli import main
    from hgner.data.corpus import write_conll

    tokens = SENTENCE.split()
    tags = ["B-PER", "I-PER", "O", "O", "B-ORG", "I-ORG", "O", "B-LOC", "O"]
    corpus = Corpus("raw", "IOB2", [Document("d1", [Sentence(tokens, tags), Sentence(tokens, tags)])])
    path = tmp_path / "raw.conll"
    with open(path, "w", encoding="utf-8") as out:
        write_conll(out, corpus, [tags, tags])
    for layout in ("lines", "wrapped", "paragraph"):
        assert main(["evaluate", "--model", str(tag_model), "--corpus", str(path), "--input", "raw",
                     "--layout", layout, "--json", str(tmp_path / "raw.json")]) == 0
        report = json.loads((tmp_path / "raw.json").read_text())
        assert report["input"] == "raw" and report["layout"] == layout and report["raw_sentences"] == 2
        assert "input raw text" in capsys.readouterr().out
    assert main(["evaluate", "--model", str(tag_model), "--corpus", str(path), "--input", "raw", "--decoders",
                 "viterbi,herded", "--sweeps", "50", "--json", str(tmp_path / "two.json")]) == 0
    herded = json.loads((tmp_path / "two.json").read_text())["results"][1]
    assert herded["decoder"] == "herded" and 0.0 <= herded["viterbi_agreement"] <= 1.0
    assert main(["evaluate", "--model", str(tag_model), "--corpus", str(path), "--json", str(tmp_path / "tok.json")]) == 0
    tokens_report = json.loads((tmp_path / "tok.json").read_text())
    assert tokens_report["input"] == "tokens"
    raw, by_tokens = report["results"][0], tokens_report["results"][0]
    assert raw["f1"] == pytest.approx(by_tokens["f1"]) and raw["per_type"] == by_tokens["per_type"]
    assert main(["evaluate", "--model", str(tag_model), "--corpus", str(path), "--input", "raw", "--mode", "strict"]) == 2
    assert main(["evaluate", "--model", str(tag_model), "--corpus", str(path), "--layout", "wrapped"]) == 2
    assert "needs --input raw" in capsys.readouterr().err
