"""No 500s (issue 62): lone surrogates anywhere in a request, a served model's files changed on
disk after start-up, and model damage found after start-up (a 503 naming the cause, no server path)."""

from __future__ import annotations

import json
import shutil
import time

import pytest

pytest.importorskip("fastapi", reason="hgner serve needs the serve extra (pip install 'hgner[serve]')")

from fastapi.testclient import TestClient  # noqa: E402
from server_support import MODEL, settings  # noqa: E402

from hgner.core.errors import ModelError  # noqa: E402
from hgner.crf.modelfiles import model_directory  # noqa: E402
from hgner.server.app import create_app  # noqa: E402


def ready(client: TestClient) -> TestClient:
    for _ in range(600):
        if client.get("/ready").status_code == 200:
            return client
        time.sleep(0.1)
    raise AssertionError("never ready")


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(settings()), raise_server_exceptions=False) as test_client:
        yield ready(test_client)


@pytest.mark.parametrize("path, body, field", [
    ("/v1/tag", '{"text": "Paris .", "settings": {"\\ud800": 1}}', "body.settings.\\ud800"),
    ("/v1/tag", '{"documents": [{"id": "\\ud800", "text": "Paris ."}]}', "body.documents.0.id"),
    ("/v1/tag", '{"text": "Paris .", "model": "\\udfff"}', "body.model"),
    ("/v1/tag", '{"text": "Paris .", "decoder": "x\\ud800"}', "body.decoder"),
    ("/v1/tag", '{"text": "Paris .", "settings": {"time_limit": "\\ud800"}}', "body.settings.time_limit"),
    ("/v1/compare", '{"text": "Paris .", "decoders": ["\\ud800"]}', "body.decoders.0"),
    ("/v1/tag", '{"\\ud800": 1}', "body.\\ud800"),
])
def test_a_lone_surrogate_anywhere_is_a_422_naming_its_field(client, path, body, field):
    response = client.post(path, content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["details"][0]["field"] == field and "Unicode" in error["message"]


def test_damage_found_after_start_up_is_a_503_without_server_paths(client, monkeypatch):
    def damaged(*args, **keywords):
        raise ModelError("/srv/hgner/models/en-conll03/model.crfsuite: crfsuite: bad hash table")

    monkeypatch.setattr(client.app.state.service.engine, "tag_requests", damaged)
    response = client.post("/v1/tag", json={"text": "Paris ."})
    assert response.status_code == 503, response.text
    error = response.json()["error"]
    assert error["code"] == "model_damaged" and "model.crfsuite: crfsuite: bad hash table" in error["message"]
    assert "/srv" not in response.text


def test_files_changed_on_disk_after_start_up_are_not_served(tmp_path):
    served = tmp_path / "model"
    shutil.copytree(model_directory(MODEL), served)
    with TestClient(create_app(settings(models={MODEL: str(served)})), raise_server_exceptions=False) as client:
        ready(client)
        before = client.get("/v1/models").json()
        expected = client.post("/v1/tag", json={"text": "Angela Merkel visited Paris ."}).json()["entities"]
        shutil.copy(model_directory("en-3class") / "model.crfsuite", served / "model.crfsuite")  # retrained
        meta = json.loads((served / "meta.json").read_text())
        meta["labels"] = ["XYZ"]
        (served / "meta.json").write_text(json.dumps(meta))
        answer = client.post("/v1/tag", json={"text": "Angela Merkel visited Paris .", "decoder": "crfsuite"})
        assert answer.status_code == 200, answer.text
        assert answer.json()["entities"] == [{**e, "confidence": None} for e in expected]
        assert client.get("/v1/models").json() == before
