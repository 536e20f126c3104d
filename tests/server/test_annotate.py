"""The annotation loop's API (``hgner serve --annotate QUEUE --annotations FILE``): the queue's
sentences with their entities, accepted ones saved as CoNLL IOB2 that ``hgner train`` reads and not
shown again after a restart, every bad input one clear error that loses no earlier annotation, and
no accepted sentence lost when the server is killed."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

pytest.importorskip("fastapi", reason="hgner serve needs the serve extra (pip install 'hgner[serve]')")

import httpx  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402
from server_support import running_server, settings  # noqa: E402

from hgner import cli  # noqa: E402
from hgner.adaptation.annotations_store import MARK, type_keys  # noqa: E402
from hgner.data.corpus import read_conll  # noqa: E402
from hgner.data.reading import read_tagged  # noqa: E402
from hgner.server.app import create_app  # noqa: E402

SENTENCES = [  # IOB1 in the queue (as a model may write it): the page gets IOB2
    [("Peter", "I-PER"), ("Blackburn", "I-PER"), ("went", "O"), ("to", "O"), ("Paris", "I-LOC"), (".", "O")],
    [("EU", "I-ORG"), ("rejects", "O"), ("German", "I-MISC"), ("call", "O"), (".", "O")],
    [("John", "O"), ("Smith", "O"), ("works", "O"), ("for", "O"), ("IBM", "O"), (".", "O")],
    [("Angela", "I-PER"), ("Merkel", "I-PER"), ("visited", "O"), ("Rome", "I-LOC"), (".", "O")],
]


def conll(sentences) -> str:
    return "-DOCSTART- -X- -X- O\n\n" + "".join(
        "".join(f"{token} NNP I-NP {tag}\n" for token, tag in sentence) + "\n" for sentence in sentences)


@pytest.fixture
def queue(tmp_path):
    path = tmp_path / "queue.conll"
    path.write_text(conll(SENTENCES + SENTENCES[:1]))  # a sentence twice is shown once
    return path


def client(queue, annotations) -> TestClient:
    return TestClient(create_app(settings(annotate=str(queue), annotations=str(annotations))),
                      raise_server_exceptions=False)


def tokens(sentence) -> list[str]:
    return [token for token, _ in sentence]


def error(response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()["error"]
    assert body["status"] == status and body["code"] == code
    return body["message"]


def test_accepted_sentences_are_saved_for_training_and_not_shown_again(capfd, queue, tmp_path):
    saved = tmp_path / "annotations.conll"
    with client(queue, saved) as api:
        assert f"annotation page at /annotate: 4 of 4 sentences of {queue} to go" in capfd.readouterr().err
        state = api.get("/v1/annotate").json()
        assert [t["type"] for t in state["types"]] == ["PER", "LOC", "ORG", "MISC"]
        assert state["types"][0]["keys"] == ["1", "p"]
        assert state["sentence"] == {"id": 0, "tokens": tokens(SENTENCES[0]),
                                     "tags": ["B-PER", "I-PER", "O", "O", "B-LOC", "O"]}
        assert [s["id"] for s in state["upcoming"]] == [1, 2, 3]
        assert state["progress"] == {"position": 1, "total": 4, "before": 0, "accepted": 0, "skipped": 0,
                                     "remaining": 4, "saved": 0}
        corrected = ["B-PER", "I-PER", "O", "O", "B-ORG", "O"]
        state = api.post("/v1/annotate/accept", json={"id": 0, "tags": corrected}).json()
        assert state["sentence"]["id"] == 1 and state["progress"]["accepted"] == 1
        state = api.post("/v1/annotate/skip", json={"id": 1}).json()
        assert state["sentence"]["id"] == 2 and state["progress"]["skipped"] == 1
        state = api.post("/v1/annotate/accept", json={"id": 2, "tags": ["B-PER", "I-PER", "O", "O", "B-ORG", "O"]}).json()
        assert state["sentence"]["id"] == 3 and state["progress"]["saved"] == 2
    corpus, _ = read_tagged(str(saved))  # as hgner train --train reads it: IOB2, a document per sentence
    assert corpus.scheme == "IOB2" and len(corpus.documents) == 2
    assert [s.tokens for s in corpus.sentences] == [tokens(SENTENCES[0]), tokens(SENTENCES[2])]
    assert corpus.sentences[0].tags == corrected
    assert saved.read_text().startswith(MARK + "\n")
    with client(queue, saved) as api:  # a restart: the skipped sentence comes back, the accepted ones do not
        state = api.get("/v1/annotate").json()
        assert state["sentence"]["id"] == 1 and [s["id"] for s in state["upcoming"]] == [3]
        assert state["progress"] == {"position": 3, "total": 4, "before": 2, "accepted": 0, "skipped": 0,
                                     "remaining": 2, "saved": 2}
        assert api.get("/annotate").headers["content-type"].startswith("text/html")


def test_undo_takes_back_an_accept_and_a_skip(queue, tmp_path):
    saved = tmp_path / "annotations.conll"
    with client(queue, saved) as api:
        assert "nothing to undo" in error(api.post("/v1/annotate/undo"), 409, "conflict")
        edited = ["O", "O", "O", "O", "B-LOC", "O"]
        assert api.post("/v1/annotate/accept", json={"id": 0, "tags": edited}).json()["last"] == {
            "decision": "accept", "id": 0, "tokens": tokens(SENTENCES[0]), "tags": edited}
        assert api.post("/v1/annotate/skip", json={"id": 1}).json()["last"]["decision"] == "skip"
        assert api.post("/v1/annotate/undo").json()["sentence"]["id"] == 1
        state = api.post("/v1/annotate/undo").json()
        assert state["sentence"] == {"id": 0, "tokens": tokens(SENTENCES[0]), "tags": edited}  # as it was accepted
        assert state["progress"]["saved"] == 0 and not saved.read_text().strip() and state["last"] is None


def test_bad_decisions_are_one_clear_error_and_lose_nothing(queue, tmp_path):
    saved = tmp_path / "annotations.conll"
    with client(queue, saved) as api:
        api.post("/v1/annotate/accept", json={"id": 0, "tags": ["O"] * 6})
        before = saved.read_bytes()
        bad = [
            ({"id": 1, "tags": ["B-FOO", "O", "O", "O", "O"]}, 422, "invalid", "body.tags", "'B-FOO' is not O or B-/I-"),
            ({"id": 1, "tags": ["O"]}, 422, "invalid", "body.tags", "expected 5 tags"),
            ({"id": 1, "tags": ["O", "I-PER", "O", "O", "O"]}, 422, "invalid", "body.tags", "IOB2 chunks start with B-"),
            ({"id": 1, "tags": ["O"] * 5, "extra": 1}, 422, "invalid", "body.extra", "Extra inputs"),
            ({"id": "1", "tags": ["O"] * 5}, 422, "invalid", "body.id", "integer"),
            ({"id": 0, "tags": ["O"] * 6}, 409, "conflict", None, "sentence 0 is not the one to annotate"),
        ]
        for body, status, code, field, message in bad:
            response = api.post("/v1/annotate/accept", json=body)
            assert message in error(response, status, code)
            if field:
                assert response.json()["error"]["details"][0]["field"] == field
        assert saved.read_bytes() == before
        assert api.get("/v1/annotate").json()["sentence"]["id"] == 1


def test_a_plain_text_queue_is_tagged_with_the_default_model(tmp_path):
    queue = tmp_path / "queue.txt"
    queue.write_text("Angela Merkel visited Paris .\n\n  John Smith works for IBM in London .  \n")
    with client(queue, tmp_path / "out.conll") as api:
        for _ in range(300):  # the model loads in the background
            response = api.get("/v1/annotate")
            if response.status_code == 200:
                break
            time.sleep(0.2)
        state = response.json()
        assert state["progress"]["total"] == 2
        assert state["sentence"]["tokens"] == ["Angela", "Merkel", "visited", "Paris", "."]
        assert state["sentence"]["tags"] == ["B-PER", "I-PER", "O", "B-LOC", "O"]
        assert state["upcoming"][0]["tokens"][:2] == ["John", "Smith"]


@pytest.mark.parametrize("queue_text, name, message", [
    ('{"text": "not CoNLL"}\n', "queue.conll", "--annotate: "),
    ("Peter B-PER\nBlackburn X-PER\n", "queue.conll", "queue.conll:2: malformed tag 'X-PER'"),
    ("\n\n", "queue.conll", "holds no sentence to annotate"),
    ("Paris .\n", "queue.conll", "plain text in a file named *.txt"),
    (b"\xff\xfe".decode("latin-1"), "queue.txt", "queue.txt:1: not UTF-8"),
    (None, "missing.conll", "cannot read"),
])
def test_a_queue_that_is_not_one_exits_2(capsys, tmp_path, queue_text, name, message):
    queue = tmp_path / name
    if queue_text is not None:
        queue.write_bytes(queue_text.encode("latin-1") if name.endswith(".txt") else queue_text.encode())
    assert cli.main(["serve", "--port", "0", "--annotate", str(queue), "--annotations", str(tmp_path / "a.conll")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hgner serve: error: --annotate") and message in lines[0]
    assert not (tmp_path / "a.conll").exists()


@pytest.mark.parametrize("content, message", [
    ("Peter B-PER\n\n", "not an annotations file of hgner serve"),  # a training corpus, say
    (f"{MARK}\n\nPeter B-PER\nBlackburn I-LOC\n\n", "IOB2"),  # ours, broken by hand
    ("queue", "is also an input"),
])
def test_an_annotations_file_that_is_not_ours_is_left_as_it_is(capsys, queue, tmp_path, content, message):
    saved = queue if content == "queue" else tmp_path / "corpus.conll"
    if content != "queue":
        saved.write_text(content)
    before = saved.read_bytes()
    assert cli.main(["serve", "--port", "0", "--annotate", str(queue), "--annotations", str(saved)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "--annotations" in lines[0] and message in lines[0]
    assert saved.read_bytes() == before


@pytest.mark.parametrize("name, message", [("no-folder/a.conll", "does not exist"), (".", "is a directory")])
def test_an_annotations_file_that_cannot_be_written_exits_2(capsys, queue, tmp_path, name, message):
    assert cli.main(["serve", "--port", "0", "--annotate", str(queue), "--annotations", str(tmp_path / name)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "--annotations" in lines[0] and message in lines[0]


@pytest.mark.parametrize("arguments", [["--annotate", "q.conll"], ["--annotations", "a.conll"],
                                       ["--annotate", "q.conll", "--annotations", "a.conll", "--workers", "2"]])
def test_annotate_and_annotations_go_together_with_one_worker(capsys, arguments):
    assert cli.main(["serve", "--port", "0", *arguments]) == 2
    assert "--annotate QUEUE and --annotations FILE go together" in capsys.readouterr().err


def test_type_keys_are_digits_and_free_first_letters():
    assert type_keys(["PER", "LOC", "ORG", "MISC"]) == {"PER": ["1", "p"], "LOC": ["2", "l"], "ORG": ["3", "o"],
                                                        "MISC": ["4", "m"]}
    # s and u skip and undo; a letter two types share is neither's
    assert type_keys(["SHIP", "UNIT", "PER", "PLACE"]) == {"SHIP": ["1"], "UNIT": ["2"], "PER": ["3"], "PLACE": ["4"]}


def test_a_killed_server_loses_no_accepted_sentence(tmp_path):
    queue = tmp_path / "queue.conll"
    queue.write_text(conll([[(f"Word{n}", "O"), ("Paris", "I-LOC")] for n in range(400)]))
    saved = tmp_path / "annotations.conll"
    acknowledged: list[int] = []
    with running_server("--annotate", str(queue), "--annotations", str(saved)) as (process, url):
        def accept_all() -> None:
            with httpx.Client(base_url=url, timeout=10) as http:
                for n in range(400):
                    try:
                        if http.post("/v1/annotate/accept", json={"id": n, "tags": ["O", "B-LOC"]}).status_code == 200:
                            acknowledged.append(n)
                    except httpx.TransportError:
                        return

        sender = threading.Thread(target=accept_all)
        sender.start()
        while len(acknowledged) < 40:
            time.sleep(0.005)
        os.killpg(process.pid, signal.SIGKILL)  # in the middle of the stream of accepts
        process.wait()
        sender.join()
    kept = read_conll(saved).sentences  # a whole file, never half of one
    print(f"SIGKILL after {len(acknowledged)} acknowledged accepts: {len(kept)} sentences in the file")
    assert len(kept) >= len(acknowledged) and len(kept) < 400
    assert [s.tokens[0] for s in kept] == [f"Word{n}" for n in range(len(kept))]
    assert all(s.tags == ["O", "B-LOC"] for s in kept)
    with client(queue, saved) as api:
        assert api.get("/v1/annotate").json()["sentence"]["tokens"][0] == f"Word{len(kept)}"


def test_a_file_that_cannot_be_written_is_a_507_and_the_sentence_stays(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    queue, saved = tmp_path / "queue.conll", folder / "annotations.conll"
    queue.write_text(conll(SENTENCES))
    with client(queue, saved) as api:
        api.post("/v1/annotate/accept", json={"id": 0, "tags": ["O"] * 6})
        before = saved.read_bytes()
        folder.rename(tmp_path / "moved")  # its folder gone (as a full disk, a write that fails)
        message = error(api.post("/v1/annotate/accept", json={"id": 1, "tags": ["O"] * 5}), 507, "not_saved")
        assert "the decision is not saved" in message
        assert api.get("/v1/annotate").json()["sentence"]["id"] == 1
        (tmp_path / "moved").rename(folder)
        assert saved.read_bytes() == before
        assert api.post("/v1/annotate/accept", json={"id": 1, "tags": ["O"] * 5}).status_code == 200


def test_the_schema_documents_the_annotation_api(queue, tmp_path):
    with client(queue, tmp_path / "out.conll") as api:
        schema = api.get("/openapi.json").json()
    for path in ("/v1/annotate", "/v1/annotate/accept", "/v1/annotate/skip", "/v1/annotate/undo"):
        operation = next(iter(schema["paths"][path].values()))
        assert operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/AnnotationState")
        assert "409" in operation["responses"] and "507" in operation["responses"]
    assert "/annotate" not in schema["paths"]

