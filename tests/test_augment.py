"""hgner.augment: case-augmented training corpora, and what a case-robust shipped model makes of
lowercased and uppercased text."""

from __future__ import annotations

import pytest

from hgner.augment import case_augmented, recased
from hgner.corpus import Corpus, Document, Sentence


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


def test_recased_refuses_an_unknown_casing():
    assert recased(corpus(), "upper").sentences[0].tokens[0] == "JOHN"
    with pytest.raises(ValueError, match="expected one of lower, upper"):
        recased(corpus(), "title")


def test_the_shipped_english_model_tags_lowercased_and_uppercased_text():
    """en-conll03 is trained on case-augmented eng.train (scripts/TUNING.md, "English: unlabelled
    data, case and running prose"): text typed in lower case, or a headline in capitals, keeps its
    entities. Before, ``apple ceo tim cook met president biden in washington`` gave
    ``[apple ceo tim cook](ORG)`` and the headline's companies were missed."""
    from hgner.modelfiles import builtin_models
    from hgner.tagging.tagger import Tagger
    from hgner.tagging.settings import TagSettings

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

    from hgner.modelfiles import builtin_models, model_directory

    if name not in builtin_models():
        pytest.skip(f"the shipped {name} model is not installed")
    table = json.loads((model_directory(name) / "truecase.json").read_text(encoding="utf-8"))
    assert (table["york"], table["islands"], table["telecom"]) == ("York", "Islands", "Telecom")
    assert "lumpur" not in table and "1998c" not in table  # only the lowercased copies wrote these
