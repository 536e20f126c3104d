"""One default everywhere (issue 61): the model of ``hgner tag``, the chain graph and viterbi for
``/v1/tag`` and ``/v1/compare`` without a model, the page's first view and ``hgner serve``'s models."""

from __future__ import annotations

import json
import time

import pytest

pytest.importorskip("fastapi", reason="hgner serve needs the serve extra (pip install 'hgner[serve]')")

from fastapi.testclient import TestClient  # noqa: E402
from server_support import settings  # noqa: E402

from hgner import cli  # noqa: E402
from hgner.commands.serve import served_models  # noqa: E402
from hgner.crf.modelfiles import model_directory  # noqa: E402
from hgner.server.app import STATIC, create_app  # noqa: E402
from hgner.tagging.defaults import DEFAULT_DECODER, DEFAULT_MODEL  # noqa: E402

TEXTS = ["EU rejects German call to boycott British lamb .",
         "Peter Blackburn , the Commission spokesman , said in Brussels that Blackburn would not comment .",
         "Angela Merkel met Emmanuel Macron in Paris on Monday , Reuters reported ."]


@pytest.fixture(scope="module")
def client():
    # another model first: the default is the one of hgner tag, not the first or the alphabetically first
    models = {"en-3class": str(model_directory("en-3class")), DEFAULT_MODEL: str(model_directory(DEFAULT_MODEL))}
    with TestClient(create_app(settings(models=models))) as test_client:
        for _ in range(600):
            if test_client.get("/ready").status_code == 200:
                break
            time.sleep(0.1)
        yield test_client


def test_tag_without_a_model_is_hgner_tag_without_one(client, capsys):
    for text in TEXTS:
        answer = client.post("/v1/tag", json={"text": text}).json()
        assert (answer["model"], answer["decoder"], answer["graph"]) == (DEFAULT_MODEL, DEFAULT_DECODER, "chain")
        capsys.readouterr()
        assert cli.main(["tag", "--format", "jsonl", "--text", text]) == 0
        assert answer["entities"] == json.loads(capsys.readouterr().out)["entities"]


def test_compare_and_models_name_the_default(client):
    answer = client.post("/v1/compare", json={"text": TEXTS[0], "decoders": ["viterbi"]}).json()
    assert (answer["model"], answer["graph"]) == (DEFAULT_MODEL, "chain")
    assert client.get("/v1/models").json()["default"] == DEFAULT_MODEL


def test_the_page_starts_on_the_chain_and_the_default_model():
    page = (STATIC / "index.html").read_text()
    assert '<option value="chain" selected>' in page and '<option value="skip" selected>' not in page
    assert "select.value = models.default" in (STATIC / "app.js").read_text()


def test_serve_loads_the_default_and_what_is_named():
    assert list(served_models([])) == [DEFAULT_MODEL]
    assert list(served_models(["en-3class", DEFAULT_MODEL])) == [DEFAULT_MODEL, "en-3class"]
    every = served_models(["all"])
    assert next(iter(every)) == DEFAULT_MODEL and "en-3class" in every
