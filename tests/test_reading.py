"""How train and evaluate read a corpus: --documents regrouping, the warning for a corpus without
-DOCSTART-, and the reported / overridden tag scheme."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from hgner.core.errors import HgnerError
from hgner.data.corpus import Corpus, Document, Sentence, read_conll, regroup_documents
from hgner.data.reading import NO_DOCUMENTS, read_tagged
from hgner.data.reading import check_documents as documents_option

FIXTURES = Path(__file__).parent / "fixtures"
SPANISH = str(FIXTURES / "spanish_like.conll")  # 48 sentences, no -DOCSTART-, one stray I- start (line 49)


def read_logged(log, *args, **kwargs):
    """:func:`read_tagged`, its notes (the ``hgner`` logger) and warnings (``warning: ...``) written to ``log``."""
    import logging
    import warnings

    handler = logging.StreamHandler(log)
    logger = logging.getLogger("hgner")
    logger.addHandler(handler)
    level, logger.level = logger.level, logging.INFO
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = read_tagged(*args, **kwargs)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    for warning in caught:
        log.write(f"warning: {warning.message}\n")
    return result


def two_documents() -> Corpus:
    sentence = lambda i: Sentence([f"w{i}"], ["O"], i)  # noqa: E731
    return Corpus("c", "IOB2", [Document("a", [sentence(i) for i in range(5)]), Document("b", [sentence(5)])])


def test_regroup_documents():
    corpus = two_documents()
    assert regroup_documents(corpus, "corpus") is corpus
    by_sentence = regroup_documents(corpus, "sentence")
    assert [len(d.sentences) for d in by_sentence.documents] == [1] * 6
    groups = regroup_documents(corpus, "2")
    assert [[s.tokens[0] for s in d.sentences] for d in groups.documents] == [["w0", "w1"], ["w2", "w3"], ["w4"], ["w5"]]
    assert [s.tokens for s in groups.sentences] == [s.tokens for s in corpus.sentences]  # order and content kept
    assert len(regroup_documents(corpus, 10).documents) == 2  # never across the corpus's own boundaries
    with pytest.raises(HgnerError, match="whole number >= 1"):
        regroup_documents(corpus, 0)


def test_documents_option():
    assert [documents_option(v) for v in ("auto", "corpus", "sentence", "20")] == ["auto", "corpus", "sentence", "20"]
    for bad in ("0", "-3", "doc", "2.5"):
        with pytest.raises(HgnerError, match="documents: expected auto, corpus, sentence or a whole number >= 1"):
            documents_option(bad)


def test_corpus_without_docstart_is_warned_about_and_split():
    log = io.StringIO()
    corpus, mode = read_logged(log, SPANISH)
    assert mode == NO_DOCUMENTS == "40" and len(corpus.documents) == 2 and len(corpus.sentences) == 48
    assert "no -DOCSTART- document boundaries (48 sentences in one document)" in log.getvalue()
    assert "reading one document per 40 sentences" in log.getvalue()
    assert "documents: 40 (2 documents)" in corpus.notes
    for option, documents in (("corpus", 1), ("sentence", 48), ("7", 7)):
        log = io.StringIO()
        corpus, mode = read_logged(log, SPANISH, documents=option)
        assert mode == option and len(corpus.documents) == documents and "warning" not in log.getvalue()


def test_scheme_given_reads_tags_that_break_the_detected_one_as_conlleval_does(tmp_path):
    bioes = tmp_path / "bioes.conll"  # BIOES (E-/S- tags), with an E- right after O on line 7
    bioes.write_text("John B-PER\nSmith E-PER\nin O\nParis S-LOC\n\nHe O\nBob E-PER\nran O\n")
    with pytest.raises(HgnerError, match=r"bioes.conll:7: tag 'E-PER' after O: .*\(scheme BIOES\); BIOES was detected "
                                          r"from 'E-PER' on line 2: scheme IOB1 or IOB2 reads the file leniently"):
        read_tagged(str(bioes))  # detected: checked, and the error says what made it BIOES
    for given in ("IOB2", "BIOES"):
        log = io.StringIO()
        corpus, _ = read_logged(log, str(bioes), scheme=given)
        assert corpus.scheme == given and f"scheme {given} (given; detected BIOES)" in log.getvalue()
        assert corpus.sentences[1].tags == ["O", "B-PER" if given == "IOB2" else "S-PER", "O"]  # a chunk start


def test_one_marked_document_is_kept_without_warning(tmp_path):
    one = tmp_path / "one.conll"  # a file cut from a corpus: one -DOCSTART-, several sentences
    one.write_text("-DOCSTART- O\n\nJohn B-PER\nran O\n\nMary B-PER\nsat O\n\nBob B-PER\nate O\n")
    log = io.StringIO()
    corpus, mode = read_logged(log, str(one))
    assert mode == "corpus" and len(corpus.documents) == 1 and len(corpus.sentences) == 3
    assert "warning" not in log.getvalue()


def test_corpus_with_documents_keeps_them_without_warning():
    log = io.StringIO()
    corpus, mode = read_logged(log, str(FIXTURES / "iob1_docs.conll"))
    assert mode == "corpus" and len(corpus.documents) == 3 and "warning" not in log.getvalue()


def test_bioes_scheme_is_reported_without_i_start_evidence(tmp_path):
    path = tmp_path / "bioes.conll"
    path.write_text("John B-PER\nSmith E-PER\nin O\nParis S-LOC\n\n", encoding="utf-8")
    log = io.StringIO()
    read_logged(log, str(path))
    assert log.getvalue().startswith(f"corpus {path}: scheme BIOES (detected)\n")
    log = io.StringIO()
    converted, _ = read_logged(log, str(path), scheme="IOB2")
    assert f"corpus {path}: scheme IOB2 (given; detected BIOES)\n" in log.getvalue()
    assert converted.sentences[0].tags == ["B-PER", "I-PER", "O", "B-LOC"]


def test_scheme_is_reported_and_overridden_leniently():
    log = io.StringIO()
    detected, _ = read_logged(log, SPANISH)
    assert detected.scheme == "IOB1"
    assert "scheme IOB1 (detected; 1 of 107 chunks start with I-, the first on line 49)" in log.getvalue()
    assert "reading it as IOB2 takes each as a chunk start" in log.getvalue()
    log = io.StringIO()
    overridden, _ = read_logged(log, SPANISH, scheme="bio")
    assert overridden.scheme == "IOB2" and "scheme IOB2 (given; detected IOB1" in log.getvalue()
    stray = next(s for s in overridden.sentences if s.line is not None and s.line <= 49 < s.line + len(s.tokens))
    assert stray.tags[49 - stray.line].startswith("B-")  # the stray I- start, now a chunk start
    assert read_conll(SPANISH, "IOB1").sentences[4].tokens == overridden.sentences[4].tokens
    with pytest.raises(HgnerError, match="scheme: unknown tag scheme 'XYZ'"):
        read_tagged(SPANISH, scheme="XYZ")
