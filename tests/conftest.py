"""Shared fixtures: a tiny synthetic corpus and a model trained on it (always available), and the
environment the tests run in.

No test reaches the internet: ``HGNER_OFFLINE=1`` and a temporary, initially empty ``HGNER_DATA``
unless they are set. On a development machine, ``HGNER_MIRROR`` and ``NLTK_DATA`` point at
``../shared/corpora`` and ``../shared/nltk_data`` (relative to the repository root) when those
exist and the variables are unset; set them empty (``HGNER_MIRROR= NLTK_DATA=``) to run as on a
machine without corpora. Tests that need a corpus that is not there skip, saying why
(``tests/corpus_support.py``).

A test run started in the background of a shell without job control (``nohup ... &``, cron)
inherits SIGINT ignored, and Python then turns no Ctrl-C into ``KeyboardInterrupt``: the tests of
what Ctrl-C does would wait for it forever. Python's own handler is put back here, as an
interactive start has it."""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import tempfile
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


def _set_default(variable: str, folder: Path) -> None:
    if variable not in os.environ and folder.is_dir():
        os.environ[variable] = str(folder)


_set_default("HGNER_MIRROR", ROOT.parent / "shared" / "corpora")
_set_default("NLTK_DATA", ROOT.parent / "shared" / "nltk_data")  # before anything imports nltk
os.environ.setdefault("HGNER_OFFLINE", "1")
if not os.environ.get("HGNER_DATA"):
    os.environ["HGNER_DATA"] = tempfile.mkdtemp(prefix="hgner-test-data-")
    atexit.register(shutil.rmtree, os.environ["HGNER_DATA"], ignore_errors=True)

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

from hgner.data.corpus import Corpus, Document, Sentence  # noqa: E402

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


@pytest.hookimpl(tryfirst=True)  # before ``-m corpus`` selects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that uses the ``conll2003`` fixture needs the corpus: give it the ``corpus`` marker."""
    for item in items:
        if "conll2003" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.corpus("conll2003:train", "conll2003:testa", "conll2003:testb"))


def pytest_runtest_setup(item: pytest.Item) -> None:
    from corpus_support import skip_missing

    skip_missing(item)


@pytest.fixture(scope="session")
def tiny_corpus() -> Corpus:
    return synthetic_corpus()


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory, tiny_corpus):
    """A CRF trained in a second or so on the synthetic corpus."""
    from hgner.training import TrainOptions
    from hgner.training.crf import train

    return train(tiny_corpus, tmp_path_factory.mktemp("models") / "tiny", TrainOptions(max_iterations=50))


@pytest.fixture(scope="session")
def conll2003() -> Path:
    """The data home's CoNLL-2003 folder with eng.train, eng.testa and eng.testb (copied from the
    mirror when they are not there yet), or a skip saying why they are not available."""
    from corpus_support import missing_reason

    from hgner.data import catalog, datahome

    manifest = catalog.catalogue()["conll2003"]
    reasons = [r for r in map(missing_reason, manifest.split_names()) if r]
    if reasons:
        pytest.skip("; ".join(reasons))
    for split in manifest.splits.values():
        datahome.ensure(manifest, split)
    return datahome.file_path(manifest, manifest.splits["testb"]).parent
