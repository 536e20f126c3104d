"""The CoNLL reader and writer on the fixture files (tests/fixtures/README.md), bad input, and
the real corpora (marked ``corpus``; skipped, saying why, when they are not available offline)."""

from __future__ import annotations

import io
import re
from collections import Counter
from pathlib import Path

import pytest
from corpus_support import needs_corpus
from seqeval.metrics import classification_report
from seqeval.metrics.sequence_labeling import get_entities

from hgner.core import schemes
from hgner.core.errors import ConllFormatError, HgnerError
from hgner.core.scoring import score
from hgner.data.corpus import Corpus, convert_corpus, load_corpus, parse_conll, read_conll, write_conll

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(name: str) -> Path:
    return FIXTURES / name


def sentence_lines(corpus: Corpus) -> list[list[int]]:
    return [[s.line for s in d.sentences] for d in corpus.documents]


def spans(corpus: Corpus) -> list[list[schemes.Span]]:
    return [schemes.chunks(s.tags) for s in corpus.sentences]


# --- good files ---------------------------------------------------------------------------------


def test_iob1_fixture_keeps_documents_sentences_and_lines():
    corpus = read_conll(fixture("iob1_docs.conll"))
    assert corpus.scheme == "IOB1"
    assert corpus.name == str(fixture("iob1_docs.conll"))
    assert [d.name for d in corpus.documents] == ["iob1_docs.conll#1", "iob1_docs.conll#2", "iob1_docs.conll#3"]
    assert sentence_lines(corpus) == [[3, 9], [14, 24], [29]]
    assert corpus.n_tokens == 21
    first = corpus.documents[0].sentences[0]
    assert first.tokens == ["EU", "rejects", "German", "call", "."]
    assert first.tags == ["I-ORG", "O", "I-MISC", "O", "O"]  # the last column, not the chunk column
    assert corpus.documents[1].tokens[:3] == ["In", "Paris", "and"]
    assert spans(corpus) == [
        [(0, 1, "ORG"), (2, 3, "MISC")],
        [(0, 2, "PER")],
        [(1, 2, "LOC"), (3, 4, "LOC"), (5, 6, "PER"), (6, 7, "PER")],  # Smith / B- Jones
        [],  # an all-O sentence is kept
        [(0, 2, "ORG")],  # a B- after O is accepted in IOB1 and starts the chunk
    ]


def test_declared_scheme_is_used_and_checked():
    assert read_conll(fixture("iob1_docs.conll"), "iob1").scheme == "IOB1"
    with pytest.raises(ConllFormatError) as error:
        read_conll(fixture("iob1_docs.conll"), "BIO")
    assert error.value.line == 3
    assert "'I-ORG' after O: IOB2 chunks start with B- (scheme IOB2)" in str(error.value)
    with pytest.raises(ConllFormatError) as error:
        read_conll(fixture("iob1_docs.conll"), "BIOES")
    assert error.value.line == 3 and "must continue a B- chunk" in str(error.value)


def test_bioes_fixture():
    corpus = read_conll(fixture("bioes_docs.conll"))
    assert corpus.scheme == "BIOES"
    assert sentence_lines(corpus) == [[3], [14]]
    assert corpus.documents[0].sentences[0].tokens[:4] == ["John", "Smith", "visited", "Paris"]
    assert spans(corpus) == [[(0, 2, "PER"), (3, 4, "LOC"), (5, 6, "LOC"), (6, 7, "LOC")], [(0, 3, "ORG")]]
    with pytest.raises(ConllFormatError) as error:
        read_conll(fixture("bioes_docs.conll"), "IOB2")
    assert error.value.line == 4 and "tag 'E-PER' has prefix E- which IOB2 does not use" in str(error.value)
    iob1 = convert_corpus(corpus, "IOB1")
    assert iob1.scheme == "IOB1" and spans(iob1) == spans(corpus)
    assert iob1.documents[0].sentences[0].tags == ["I-PER", "I-PER", "O", "I-LOC", "O", "I-LOC", "B-LOC", "O"]
    assert sentence_lines(iob1) == sentence_lines(corpus)


def test_crlf_bom_and_trailing_whitespace():
    corpus = read_conll(fixture("crlf_bom.conll"))
    assert corpus.scheme == "IOB1"
    assert [d.name for d in corpus.documents] == ["crlf_bom.conll#1"]  # no -DOCSTART-: one document
    assert sentence_lines(corpus) == [[1, 5]]  # a line of spaces ends a sentence
    assert [s.tokens for s in corpus.sentences] == [["EU", "rejects", "German"], ["Peter", "Blackburn"]]
    assert [s.tags for s in corpus.sentences] == [["I-ORG", "O", "I-MISC"], ["I-PER", "I-PER"]]
    clean = "EU NNP I-ORG\nrejects VBZ O\nGerman JJ I-MISC\n\nPeter NNP I-PER\nBlackburn NNP I-PER\n"
    assert parse_conll(clean.splitlines(), str(fixture("crlf_bom.conll"))) == corpus
    # a BOM in lines already decoded is dropped too
    assert parse_conll(("\ufeff" + clean).splitlines(), "x").sentences[0].tokens[0] == "EU"


def test_empty_file():
    corpus = read_conll(fixture("empty.conll"))
    assert corpus.documents == [] and corpus.sentences == [] and corpus.n_tokens == 0
    assert corpus.scheme == "IOB2"
    assert read_conll(fixture("empty.conll"), "BIOES").scheme == "BIOES"
    assert parse_conll(["", "  ", "\t"], "blank").documents == []


def test_empty_documents_are_kept():
    corpus = read_conll(fixture("empty_document.conll"))
    assert [len(d.sentences) for d in corpus.documents] == [0, 1, 0]
    assert sentence_lines(corpus) == [[], [5], []]
    assert corpus.documents[1].tokens == ["Rome", "fell"]


def test_columns_are_split_at_ascii_whitespace_only():
    corpus = read_conll(fixture("unicode_space_token.conll"))
    assert corpus.sentences[0].tokens == ["Prices", "10\u00a0000", "St\u2009Louis"]
    assert corpus.sentences[0].tags == ["O", "O", "I-LOC"]


# --- bad files ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, line, message",
    [
        ("bad_columns.conll", 5, "expected 4 columns (as on line 3), got 3"),
        ("bad_tag.conll", 4, "malformed tag 'I--ORG' (expected O or B-/I-/E-/S- followed by a type)"),
        ("bad_scheme.conll", 8, "tag 'I-LOC' after O: BIOES I-/E- must continue a B- chunk of the same type (scheme BIOES); "
                                "BIOES was detected from 'E-PER' on line 4: scheme IOB1 or IOB2 reads the file leniently"),
        ("non_utf8.conll", 2, "not UTF-8 (byte 0xe9 at column 4)"),
    ],
)
def test_bad_files_name_file_line_and_problem(name, line, message):
    path = fixture(name)
    with pytest.raises(ConllFormatError) as error:
        read_conll(path)
    assert error.value.path == str(path)
    assert error.value.line == line
    assert str(error.value) == f"{path}:{line}: {message}"
    assert isinstance(error.value, HgnerError)


@pytest.mark.parametrize(
    "lines, line, message",
    [
        (["EU I-ORG", "rejects"], 2, "expected a token and a tag, got 1 column ('rejects')"),
        (["EU"], 1, "got 1 column"),
        (["EU NNP I-ORG", "", "call NN O x"], 3, "expected 3 columns (as on line 1), got 4"),
        (["-DOCSTART- -X- O O", "", "EU I-ORG", "call NN O"], 4, "expected 2 columns (as on line 3), got 3"),
        (["EU X-ORG"], 1, "malformed tag 'X-ORG'"),
        (["EU ORG"], 1, "malformed tag 'ORG'"),
        (["EU B"], 1, "malformed tag 'B'"),
        (["EU B-"], 1, "malformed tag 'B-'"),
        (["EU b-ORG"], 1, "malformed tag 'b-ORG'"),
        (["EU O", "is O", "B-PER-"], 3, "got 1 column"),
        # scheme violations point at the offending token's line, in any sentence
        (["John S-PER", "", "in O", "New B-LOC", "fell O"], 5, "'O' after 'B-LOC': BIOES chunk left open"),
        (["John S-PER", "", "New B-LOC", "York I-LOC"], 4, "sentence ends inside a chunk of type LOC (expected E-LOC)"),
    ],
)
def test_bad_lines(lines, line, message):
    with pytest.raises(ConllFormatError) as error:
        parse_conll(lines, "inline.conll")
    assert error.value.line == line
    assert str(error.value).startswith(f"inline.conll:{line}: ")
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_missing_file_and_unknown_names(tmp_path):
    with pytest.raises(HgnerError, match="cannot read"):
        read_conll(tmp_path / "missing.conll")
    with pytest.raises(HgnerError, match="no such file"):
        load_corpus(str(tmp_path / "missing.conll"))
    with pytest.raises(HgnerError, match="conll2003 has no split 'dev'; expected one of conll2003:train, "
                                         "conll2003:testa, conll2003:testb"):
        load_corpus("conll2003:dev")
    with pytest.raises(HgnerError, match="not a catalogue name .*nltk:ieer"):
        load_corpus("nltk:brown")
    with pytest.raises(HgnerError, match="which split\\? expected one of conll2003:train"):
        load_corpus("conll2003")


def test_load_corpus_reads_a_path_with_a_scheme():
    assert load_corpus(str(fixture("iob1_docs.conll"))).scheme == "IOB1"
    with pytest.raises(ConllFormatError):
        load_corpus(str(fixture("iob1_docs.conll")), "IOB2")


# --- writing ------------------------------------------------------------------------------------


def some_predictions(corpus: Corpus) -> list[list[str]]:
    """IOB2 tags that differ from the gold ones: every other chunk dropped or retyped."""
    predictions = []
    for k, sentence in enumerate(corpus.sentences):
        found = schemes.chunks(sentence.tags)
        changed = [(a, b, "MISC" if (k + i) % 3 == 0 else t) for i, (a, b, t) in enumerate(found) if (k + i) % 2 == 0]
        if len(sentence.tokens) > 1 and not found:
            changed.append((0, 1, "PER"))
        predictions.append(schemes.render(changed, len(sentence.tokens), "IOB2"))
    return predictions


def read_as_conlleval(text: str) -> tuple[list[list[str]], list[list[str]]]:
    """Gold and guessed sentences as a conlleval/seqeval user reads a ``token gold guess`` file:
    fields split at single spaces, the last two columns, a blank line ends a sentence."""
    gold, guessed, sentence = [], [], []
    for line in text.split("\n"):
        fields = line.split(" ") if line else []
        if not fields or fields[0] == "-DOCSTART-":
            if sentence:
                gold.append([g for g, _ in sentence])
                guessed.append([p for _, p in sentence])
            sentence = []
            continue
        sentence.append((fields[-2], fields[-1]))
    assert not sentence  # the writer ends every sentence with a blank line
    return gold, guessed


@pytest.mark.parametrize(
    "name", ["iob1_docs.conll", "bioes_docs.conll", "crlf_bom.conll", "empty_document.conll", "empty.conll", "unicode_space_token.conll"]
)
def test_written_predictions_read_back_alike(name):
    corpus = read_conll(fixture(name))
    predictions = some_predictions(corpus)
    out = io.StringIO()
    write_conll(out, corpus, predictions)
    text = out.getvalue()
    lines = text.split("\n")
    # conlleval wants the same number of fields on every non-empty line
    assert {len(line.split(" ")) for line in lines if line} <= {3}
    assert sum(line.startswith("-DOCSTART- O O") for line in lines) == len(corpus.documents)

    # our reader: the documents and sentences again, the predictions as the tag column...
    again = parse_conll(lines, "written.conll")
    assert [len(d.sentences) for d in again.documents] == [len(d.sentences) for d in corpus.documents]
    assert [s.tokens for s in again.sentences] == [s.tokens for s in corpus.sentences]
    assert [s.tags for s in again.sentences] == predictions
    # ... and the gold column, as written
    gold_again = parse_conll([" ".join(line.split(" ")[:2]) for line in lines], "gold.conll", corpus.scheme)
    assert [s.tags for s in gold_again.sentences] == [s.tags for s in corpus.sentences]

    # seqeval on the file finds the entities that we find
    gold, guessed = read_as_conlleval(text)
    assert gold == [s.tags for s in corpus.sentences] and guessed == predictions
    for tags in gold + guessed:
        found = [(a, b + 1, t) for t, a, b in get_entities(tags)]
        assert found == schemes.chunks(tags)
    if any(gold):
        report = classification_report(gold, guessed, output_dict=True, zero_division=0)
        ours = score([s.tags for s in corpus.sentences], predictions, corpus.scheme)
        assert {t: c.gold for t, c in ours.per_type.items()} == {
            t: row["support"] for t, row in report.items() if not t.endswith(" avg")
        }
        assert ours.micro.f1 / 100 == pytest.approx(report["micro avg"]["f1-score"], abs=1e-12)


def test_write_conll_format():
    corpus = read_conll(fixture("bioes_docs.conll"))
    out = io.StringIO()
    write_conll(out, corpus, [s.tags for s in corpus.sentences])
    assert out.getvalue().startswith("-DOCSTART- O O\n\nJohn B-PER B-PER\nSmith E-PER E-PER\n")
    assert out.getvalue().endswith("Times E-ORG E-ORG\n\n")
    bare = io.StringIO()
    write_conll(bare, corpus, [s.tags for s in corpus.sentences], document_starts=False)
    assert bare.getvalue() == out.getvalue().replace("-DOCSTART- O O\n\n", "")


def test_write_conll_refuses_predictions_that_do_not_fit():
    corpus = read_conll(fixture("iob1_docs.conll"))
    predictions = [["O"] * len(s.tokens) for s in corpus.sentences]
    with pytest.raises(ValueError, match="4 predicted tag lists for 5 sentences"):
        write_conll(io.StringIO(), corpus, predictions[:-1])
    with pytest.raises(ValueError, match="6 predicted tag lists for 5 sentences"):
        write_conll(io.StringIO(), corpus, predictions + [["O"]])
    predictions[2] = predictions[2][:-1]
    with pytest.raises(ValueError, match="sentence 1 of iob1_docs.conll#2 has 9 tokens but 8 predicted tags"):
        write_conll(io.StringIO(), corpus, predictions)


# --- the real corpora ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def conll2003():
    return {split: load_corpus(f"conll2003:{split}") for split in ("train", "testa", "testb")}


@pytest.mark.corpus
@needs_corpus("conll2003:train", "conll2003:testa", "conll2003:testb")
@pytest.mark.parametrize(
    "split, documents, sentences, tokens, entities",
    [
        ("train", 946, 14041, 203621, {"LOC": 7140, "MISC": 3438, "ORG": 6321, "PER": 6600}),
        ("testa", 216, 3250, 51362, {"LOC": 1837, "MISC": 922, "ORG": 1341, "PER": 1842}),
        ("testb", 231, 3453, 46435, {"LOC": 1668, "MISC": 702, "ORG": 1661, "PER": 1617}),
    ],
)
def test_conll2003(conll2003, split, documents, sentences, tokens, entities):
    corpus = conll2003[split]
    assert corpus.scheme == "IOB1"
    assert (len(corpus.documents), len(corpus.sentences), corpus.n_tokens) == (documents, sentences, tokens)
    assert all(d.sentences for d in corpus.documents)
    found = Counter(t for s in corpus.sentences for _, _, t in schemes.chunks(s.tags))
    assert found == entities  # the phrase counts conlleval prints for the gold standard
    # every sentence's line is where its first token is in the file
    raw = Path(corpus.file).read_text(encoding="utf-8").split("\n")
    for sentence in corpus.sentences:
        assert raw[sentence.line - 1].split(" ")[0] == sentence.tokens[0]
        assert raw[sentence.line - 1 + len(sentence.tokens) - 1].split(" ")[-1] == sentence.tags[-1]
        assert raw[sentence.line - 1 + len(sentence.tokens)] == ""


@pytest.mark.corpus
@needs_corpus("conll2003:train", "conll2003:testa", "conll2003:testb")
def test_conll2003_testb_written_and_scored(conll2003):
    corpus = conll2003["testb"]
    gold = [s.tags for s in corpus.sentences]
    predictions = [schemes.convert(tags, "IOB2") for tags in gold]  # another spelling, same chunks
    out = io.StringIO()
    write_conll(out, corpus, predictions)
    written_gold, written_guess = read_as_conlleval(out.getvalue())
    assert written_gold == gold and written_guess == predictions
    result = score(written_gold, written_guess, "IOB1")
    assert result.micro.correct == result.micro.gold == 5648 and result.micro.f1 == 100.0
    assert classification_report(written_gold, written_guess, output_dict=True)["micro avg"]["support"] == 5648


@pytest.mark.corpus
@needs_corpus("nltk:ieer")
def test_nltk_ieer():
    corpus = load_corpus("nltk:ieer")
    assert corpus.name == "nltk:ieer" and corpus.scheme == "IOB2"
    assert len(corpus.documents) == 94
    assert len({d.name for d in corpus.documents}) == 94
    assert all(d.name.startswith("ieer/") and d.sentences for d in corpus.documents)
    for sentence in corpus.sentences:
        assert len(sentence.tokens) == len(sentence.tags) > 0
        assert all(schemes.is_wellformed(tag) for tag in sentence.tags)
        assert schemes.check(sentence.tags, "IOB2") is None
    # every PERSON/ORGANIZATION/LOCATION mention is in the gold standard or counted in the notes
    from nltk.corpus import ieer

    mentions = Counter()
    for fileid in ieer.fileids():
        for document in ieer.parsed_docs(fileid):
            for child in document.text:
                if hasattr(child, "label") and child.label() in ("PERSON", "ORGANIZATION", "LOCATION"):
                    mentions[{"PERSON": "PER", "ORGANIZATION": "ORG", "LOCATION": "LOC"}[child.label()]] += 1
    left_out, total = map(int, re.match(r"(\d+) of (\d+) gold entities", corpus.notes[0]).groups())
    assert total == sum(mentions.values())
    found = Counter(t for s in corpus.sentences for _, _, t in schemes.chunks(s.tags))
    assert sum(found.values()) == total - left_out
    assert set(found) <= {"PER", "ORG", "LOC"}


@pytest.mark.corpus
@needs_corpus("nltk:conll2002/ned.testa")
def test_nltk_conll2002_ned_testa():
    from nltk.corpus import conll2002

    corpus = load_corpus("nltk:conll2002/ned.testa")
    assert corpus.scheme == "IOB2"
    with conll2002.open("ned.testa") as stream:
        raw = stream.read().split("\n")
    assert len(corpus.documents) == sum(line.startswith("-DOCSTART-") for line in raw) == 74
    assert corpus.documents[0].name == "ned.testa#1"
    expected = conll2002.iob_sents("ned.testa")  # NLTK leaves the -DOCSTART- lines out
    assert len(corpus.sentences) == len(expected) == 2895
    assert corpus.n_tokens == 37687
    for sentence, triples in zip(corpus.sentences, expected):
        assert sentence.tokens == [word for word, _, _ in triples]
        assert sentence.tags == [tag for _, _, tag in triples]
        assert raw[sentence.line - 1].split(" ")[0] == sentence.tokens[0]


@pytest.mark.corpus
@needs_corpus("nltk:conll2002/esp.testa")
def test_nltk_conll2002_esp_testa_has_one_iob1_chunk():
    """esp.testa is IOB2 but for one I-LOC after O: detected as IOB1 (read as conlleval reads
    it), and refused with the line number when IOB2 is declared."""
    assert load_corpus("nltk:conll2002/esp.testa").scheme == "IOB1"
    with pytest.raises(ConllFormatError) as error:
        load_corpus("nltk:conll2002/esp.testa", "IOB2")
    assert error.value.path == "nltk:conll2002/esp.testa"
    assert error.value.line == 30882
    assert "'I-LOC' after O: IOB2 chunks start with B-" in str(error.value)
    from nltk.corpus import conll2002

    with conll2002.open("esp.testa") as stream:
        assert stream.read().split("\n")[30882 - 1].split(" ")[-1] == "I-LOC"
