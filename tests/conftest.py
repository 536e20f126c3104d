"""Shared fixtures: a tiny synthetic corpus and a model trained on it (always available), and
skips for tests that need the big corpora from ../shared."""

from __future__ import annotations

import numpy as np
import pytest

from hgner.corpus import Corpus, Document, Sentence, conll2003_dir

PEOPLE = ["John Smith", "Mary Jones", "Peter Blake", "Anna Berg", "Tom Hanks", "Ravi Patel"]
PLACES = ["London", "Paris", "New York", "Berlin", "Tokyo", "Nairobi"]
ORGS = ["Reuters", "Acme Corp", "United Nations", "Siemens", "Fiat"]
TEMPLATES = [
    "{PER} visited {LOC} on Monday .",
    "{ORG} said {PER} will move to {LOC} .",
    "Shares in {ORG} rose 3 percent .",
    "{PER} , who works for {ORG} , lives in {LOC} .",
    "The weather in {LOC} was cold .",
    "He met {PER} at the {ORG} office .",
]


def synthetic_corpus(n_documents: int = 12, sentences_per_document: int = 5, seed: int = 0) -> Corpus:
    """A small IOB2 corpus of templated newswire sentences with PER/LOC/ORG entities."""
    rng = np.random.default_rng(seed)
    names = {"PER": PEOPLE, "LOC": PLACES, "ORG": ORGS}
    documents = []
    for d in range(n_documents):
        sentences = []
        for _ in range(sentences_per_document):
            tokens: list[str] = []
            tags: list[str] = []
            for piece in TEMPLATES[rng.integers(len(TEMPLATES))].split():
                if piece.startswith("{"):
                    entity_type = piece[1:4]
                    words = names[entity_type][rng.integers(len(names[entity_type]))].split()
                    tokens += words
                    tags += [f"B-{entity_type}"] + [f"I-{entity_type}"] * (len(words) - 1)
                else:
                    tokens.append(piece)
                    tags.append("O")
            sentences.append(Sentence(tokens, tags))
        documents.append(Document(f"synthetic#{d + 1}", sentences))
    return Corpus("synthetic", "IOB2", documents)


@pytest.fixture(scope="session")
def tiny_corpus() -> Corpus:
    return synthetic_corpus()


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory, tiny_corpus):
    """A CRF trained in a second or so on the synthetic corpus."""
    from hgner.model import train

    return train(tiny_corpus, tmp_path_factory.mktemp("models") / "tiny", max_iterations=50, verbose=False)


@pytest.fixture(scope="session")
def conll2003():
    """The CoNLL-2003 folder, or a skip saying how to provide it."""
    directory = conll2003_dir()
    if directory is None or not (directory / "eng.testb").is_file():
        pytest.skip("CoNLL-2003 not found: set HGNER_CONLL2003 or put it at ../shared/corpora/conll2003")
    return directory
