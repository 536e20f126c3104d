"""hgner.data.augment: case-augmented and prose-augmented training corpora, and what a case-robust
shipped model makes of lowercased and uppercased text."""

from __future__ import annotations

import pytest

from hgner.data.augment import augmented, case_augmented, is_table, prose_augmented, recased
from hgner.data.corpus import Corpus, Document, Sentence


def corpus() -> Corpus:
    sentences = [Sentence(["John", "Smith", "visited", "Paris", "."], ["B-PER", "I-PER", "O", "B-LOC", "O"], 3),
                 Sentence(["Acme", "Corp", "fell"], ["B-ORG", "I-ORG", "O"], 9)]
    return Corpus("toy", "IOB2", [Document("d1", sentences[:1]), Document("d2", sentences[1:])], file="toy.conll")


def test_case_augmentation_grows_the_corpus_by_one_copy_per_casing():
    original = corpus()
    augmented = case_augmented(original, ("lower", "upper"))
    assert len(augmented.documents) == 3 * len(original.documents)
    assert len(augmented.sentences) == 3 * len(original.sentences) and augmented.n_tokens == 3 * original.n_tokens
    assert augmented.documents[:2] == original.documents  # the original first, unchanged
    lowered, uppered = augmented.documents[2:4], augmented.documents[4:]
    assert lowered[0].sentences[0].tokens == ["john", "smith", "visited", "paris", "."]
    assert uppered[1].sentences[0].tokens == ["ACME", "CORP", "FELL"]
    assert [s.tags for d in lowered + uppered for s in d.sentences] == [s.tags for s in original.sentences] * 2
    assert [s.line for d in lowered for s in d.sentences] == [3, 9]
    assert augmented.name == "toy+lower+upper" and augmented.file == "toy.conll" and augmented.scheme == "IOB2"
    assert len(case_augmented(original, ("lower",)).documents) == 2 * len(original.documents)
    assert case_augmented(original, ()).documents == original.documents


def news_story() -> Corpus:
    """A made-up document laid out as CoNLL-2003 lays one out: a headline, a dateline, a sentence
    that introduces two table rows, a sentence, one ending in a state's abbreviation (``Ala .``)
    and one more."""
    lines = [("BASEBALL - MAJOR LEAGUE RESULTS THURSDAY", "O O I-MISC I-MISC O O"),
             ("NEW YORK 1996-08-30", "I-LOC I-LOC O"),
             ("Results of games played on Thursday , the Associated Press said :", "O O O O O O O O I-ORG I-ORG O O"),
             ("Kansas City at Detroit", "I-ORG I-ORG O I-ORG"),
             ("Baltimore at Seattle", "I-ORG O I-ORG"),
             ("Play resumes on Friday .", "O O O O O"),
             ("Smith moved to Montgomery , Ala .", "I-PER O O I-LOC O I-LOC O"),
             ("Jones stayed .", "I-PER O O"),
             ("The Yankees won in New York .", "O I-ORG O O I-LOC I-LOC O")]
    sentences = [Sentence(text.split(), tags.split(), 10 + i) for i, (text, tags) in enumerate(lines)]
    return Corpus("news", "IOB1", [Document("story", sentences)], file="news.conll")


def test_prose_copy_runs_headline_dateline_and_table_rows_together_with_their_gold_tags():
    original = news_story()
    grown = prose_augmented(original)
    assert grown.documents[0] == original.documents[0]  # the original first, unchanged
    assert grown.name == "news+prose" and grown.file == "news.conll" and grown.scheme == "IOB1"
    (copy,) = grown.documents[1:]
    assert copy.name == "story:prose"
    tagged = [list(zip(s.tokens, s.tags or [])) for s in copy.sentences]
    assert len(tagged) == 3
    # the headline runs into the dateline: one sentence, as hgner tag splits the paragraph
    assert tagged[0] == [("BASEBALL", "O"), ("-", "O"), ("MAJOR", "I-MISC"), ("LEAGUE", "I-MISC"), ("RESULTS", "O"),
                         ("THURSDAY", "O"), ("NEW", "I-LOC"), ("YORK", "I-LOC"), ("1996-08-30", "O")]
    # the table rows run into the sentences before and after them, which keep their tags; Detroit and
    # Baltimore, two ORG entities that only a line break separated, are now adjacent: IOB1 marks the
    # second with B- so that they stay two entities
    assert tagged[1][8:] == [("Associated", "I-ORG"), ("Press", "I-ORG"), ("said", "O"), (":", "O"), ("Kansas", "I-ORG"),
                             ("City", "I-ORG"), ("at", "O"), ("Detroit", "I-ORG"), ("Baltimore", "B-ORG"), ("at", "O"),
                             ("Seattle", "I-ORG"), ("Play", "O"), ("resumes", "O"), ("on", "O"), ("Friday", "O"),
                             (".", "O")]
    # "Ala ." is rebuilt as "Ala." and kept as one token, which straddles the LOC entity's edge: its
    # sentence (with "Jones stayed.", which the abbreviation does not end) has no gold tags and is left out
    assert tagged[2] == [("The", "O"), ("Yankees", "I-ORG"), ("won", "O"), ("in", "O"), ("New", "I-LOC"),
                         ("York", "I-LOC"), (".", "O")]
    assert grown.notes == ["prose augmentation: 1 sentence(s) of the prose copy left out, a token straddling a gold "
                           "entity's edge"]
    assert [s.line for s in copy.sentences] == [10, 12, 18]  # the corpus line of each new sentence's first token


def test_prose_copy_tags_every_token_as_the_corpus_token_with_its_characters():
    """Whatever the split, a token of the prose copy that is a corpus token carries that token's
    entity type, and the copy's entities are the corpus's (none is left out here)."""
    from hgner.core import schemes
    from hgner.text.rawtext import rebuild

    document = Document("d", news_story().documents[0].sentences[:6])
    copy = prose_augmented(Corpus("news", "IOB1", [document])).documents[1]
    assert len(copy.sentences) != len(document.sentences)  # split differently
    raw = rebuild([s.tokens for s in document.sentences], [s.tags or [] for s in document.sentences], "paragraph")
    gold_entities = [raw.text[start:end] for start, end, _ in raw.entities]
    copy_entities = [" ".join(s.tokens[a:b]) for s in copy.sentences for a, b, _ in schemes.chunks(s.tags or [])]
    assert copy_entities == gold_entities
    assert [t for s in copy.sentences for t in s.tokens] == [t for s in document.sentences for t in s.tokens]
    assert ([schemes.split_tag(t)[1] for s in copy.sentences for t in s.tags or []]
            == [schemes.split_tag(t)[1] for s in document.sentences for t in s.tags or []])


def test_augmented_adds_case_copies_then_the_prose_copy_of_the_cased_documents():
    original = news_story()
    grown = augmented(original, ("lower", "upper"), prose="all")
    assert grown.name == "news+lower+upper+prose" and grown.file == "news.conll"
    assert [d.name for d in grown.documents] == ["story", "story:lower", "story:upper", "story:prose"]
    assert grown.documents[3] == prose_augmented(original).documents[1]  # from the cased text
    assert grown.notes == prose_augmented(original).notes
    assert augmented(original, ("lower",)).documents == case_augmented(original, ("lower",)).documents
    assert augmented(original).documents == original.documents


def prose_story() -> Document:
    """A made-up story of running prose: a headline, then sentences ending in ``.``, ``?`` and a
    closing quote, and one that does not end like a sentence (a dateline)."""
    lines = [("Fed holds rates", "I-ORG O O"),
             ("WASHINGTON 1996-08-30", "I-LOC O"),
             ("The Fed held rates on Tuesday .", "O I-ORG O O O O O"),
             ("Will it move in September ?", "O O O O I-MISC O"),
             ('" We wait , " Greenspan said . "', "O O O O O I-PER O O O")]
    return Document("prose", [Sentence(text.split(), tags.split(), 30 + i) for i, (text, tags) in enumerate(lines)])


def test_a_table_document_ends_fewer_than_70_percent_of_its_body_sentences_like_a_sentence():
    # the news story's body (after its headline): 4 of 8 sentences end in "." (the dateline, the line
    # introducing the table and the two table rows do not)
    assert is_table(news_story().documents[0])
    # 3 of 4 end like a sentence (".", "?" and a closing quote): 75%, prose
    assert not is_table(prose_story())
    story = prose_story()
    # one more dateline-like line: 3 of 5, 60%
    assert is_table(Document("d", story.sentences + [Sentence(["Reuters", "1996"], ["I-ORG", "O"], 40)]))
    # a headline alone has no body: nothing to run together, not a table
    assert not is_table(Document("headline", story.sentences[:1]))
    assert not is_table(Document("results", [Sentence(["RESULTS"], ["O"], 1), Sentence(["Smith", "!"], ["I-PER", "O"],
                                                                                          2)]))


def test_prose_copy_of_the_table_documents_only():
    news = news_story()
    original = Corpus("news", "IOB1", [news.documents[0], prose_story()], file="news.conll")
    grown = prose_augmented(original, documents="tables")
    assert grown.name == "news+prose-tables" and grown.file == "news.conll"
    assert grown.documents[:2] == original.documents
    assert [d.name for d in grown.documents[2:]] == ["story:prose"]  # the table document's copy, not the prose one's
    assert grown.documents[2] == prose_augmented(news).documents[1] and grown.notes == prose_augmented(news).notes
    every = prose_augmented(original)  # the default: every document
    assert [d.name for d in every.documents[2:]] == ["story:prose", "prose:prose"] and every.name == "news+prose"
    both = augmented(original, ("lower",), prose="tables")
    assert both.name == "news+lower+prose-tables"
    assert [d.name for d in both.documents] == ["story", "prose", "story:lower", "prose:lower", "story:prose"]
    with pytest.raises(ValueError, match="expected one of all, tables, got 'prose'"):
        prose_augmented(original, documents="prose")


def test_prose_augmentation_needs_gold_tags():
    untagged = Corpus("raw", "IOB1", [Document("d", [Sentence(["Paris"], None)])])
    with pytest.raises(ValueError, match="needs gold tags"):
        prose_augmented(untagged)


def test_recased_refuses_an_unknown_casing():
    assert recased(corpus(), "upper").sentences[0].tokens[0] == "JOHN"
    with pytest.raises(ValueError, match="expected one of lower, upper"):
        recased(corpus(), "title")


def test_the_shipped_english_model_tags_lowercased_and_uppercased_text():
    """en-conll03 is trained on case-augmented eng.train (docs/development/research-log.md, "English: unlabelled
    data, case and running prose"): text typed in lower case, or a headline in capitals, keeps its
    entities. Before, ``apple ceo tim cook met president biden in washington`` gave
    ``[apple ceo tim cook](ORG)`` and the headline's companies were missed."""
    from hgner.crf.modelfiles import builtin_models
    from hgner.tagging.settings import TagSettings
    from hgner.tagging.tagger import Tagger

    if "en-conll03" not in builtin_models():
        pytest.skip("the shipped en-conll03 model is not installed")
    tagger = Tagger(TagSettings("en-conll03"))

    def tagged(text: str) -> list[tuple[str, str]]:
        return [(text[e.start:e.end], e.label) for e in tagger.tag(text)]

    assert tagged("apple ceo tim cook met president biden in washington") == [
        ("tim cook", "PER"), ("biden", "PER"), ("washington", "LOC")]
    assert tagged("john smith visited paris and london with the united nations .") == [
        ("john smith", "PER"), ("paris", "LOC"), ("london", "LOC"), ("united nations", "ORG")]
    assert tagged("SIEMENS AND MICROSOFT SEAL CLOUD DEAL IN MUNICH") == [
        ("SIEMENS", "ORG"), ("MICROSOFT", "ORG"), ("MUNICH", "LOC")]


@pytest.mark.parametrize("name", ["en-conll03", "en-3class"])
def test_the_shipped_english_truecasing_tables_are_not_lowercased_by_the_copies(name):
    """The case-augmented copies are no evidence of case (:func:`hgner.features.learn_truecase`):
    before, their short lowercase sentences turned 67 entries of the table to lower case."""
    import json

    from hgner.crf.modelfiles import builtin_models, model_directory

    if name not in builtin_models():
        pytest.skip(f"the shipped {name} model is not installed")
    table = json.loads((model_directory(name) / "truecase.json").read_text(encoding="utf-8"))
    assert (table["york"], table["islands"], table["telecom"]) == ("York", "Islands", "Telecom")
    assert "lumpur" not in table and "1998c" not in table  # only the lowercased copies wrote these
