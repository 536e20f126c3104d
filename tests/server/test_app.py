"""The JSON API through the framework's test client: answers, the same entities as ``hgner tag
--format jsonl``, and every error status as a JSON error."""

from __future__ import annotations

import json
import threading
import time

import pytest

pytest.importorskip("fastapi", reason="hgner serve needs the serve extra (pip install 'hgner[serve]')")

from fastapi.testclient import TestClient  # noqa: E402
from server_support import MODEL, settings  # noqa: E402

from hgner import cli  # noqa: E402
from hgner.server.app import create_app  # noqa: E402

TEXT = ("EU rejects German call to boycott British lamb .\n"
        "Peter Blackburn , the Commission spokesman , said in Brussels that Blackburn would not comment .\n")


def _ready(client: TestClient) -> TestClient:
    for _ in range(600):
        if client.get("/ready").status_code == 200:
            return client
        time.sleep(0.1)
    raise AssertionError(f"the server never got ready: {client.get('/ready').json()}")


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(settings(max_chars=200_000, max_documents=4))) as test_client:
        yield _ready(test_client)


@pytest.fixture(scope="module")
def strict():
    """A server with an API key, a queue of one, a short timeout and CORS for one origin."""
    app = create_app(settings(api_key="k" * 20, max_queue=1, timeout=0.5, cors_origins=("https://example.org",)))
    with TestClient(app, raise_server_exceptions=False, headers={"Authorization": "Bearer " + "k" * 20}) as test_client:
        _ready(test_client)
        for _ in range(100):  # the first tagger (spaCy's tokenizer) may take longer than the 0.5 s timeout
            if test_client.post("/v1/tag", json={"text": "Paris ."}).status_code == 200:
                break
            time.sleep(0.2)
        yield test_client


def hgner_tag_jsonl(capsys, text: str, *options: str) -> list[dict]:
    """The entities ``hgner tag --format jsonl`` writes for ``text``."""
    capsys.readouterr()
    assert cli.main(["tag", "--format", "jsonl", "--model", MODEL, *options, "--text", text]) == 0
    return json.loads(capsys.readouterr().out)["entities"]


def error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()["error"]
    assert body["status"] == status and body["code"] == code and body["message"]
    assert "Traceback" not in response.text
    return body


def test_health_and_ready(client):
    assert client.get("/health").json() == {"status": "ok"}
    assert client.get("/ready").json() == {"status": "ready", "models": [MODEL]}


@pytest.mark.parametrize("options", [(), ("--decoder", "gibbs", "--sweeps", "50", "--seed", "3"),
                                     ("--graph", "skip", "--min-confidence", "0.9"),
                                     ("--decoder", "meanfield", "--set", "damping=0.5")])
def test_tag_gives_the_entities_of_hgner_tag(client, capsys, options):
    body = {"text": TEXT}
    pairs = dict(zip(options[::2], options[1::2]))
    for option, field, kind in (("--decoder", "decoder", str), ("--sweeps", "sweeps", int), ("--seed", "seed", int),
                                ("--graph", "graph", str), ("--min-confidence", "min_confidence", float)):
        if option in pairs:
            body[field] = kind(pairs[option])
    if "--set" in pairs:
        name, _, value = pairs["--set"].partition("=")
        body["settings"] = {name: value}
    answer = client.post("/v1/tag", json=body).json()
    assert answer["entities"] == hgner_tag_jsonl(capsys, TEXT, *options)
    assert answer["entities"], "the text has entities"
    for entity in answer["entities"]:
        assert TEXT[entity["start"]:entity["end"]] == entity["text"]


def test_long_document_split_as_hgner_tag_splits_it(client, capsys):
    from hgner.tagging.tagger import BLOCK_CHARS

    text = (TEXT * (BLOCK_CHARS // len(TEXT) + 40))[: BLOCK_CHARS + 5_000]
    answer = client.post("/v1/tag", json={"text": text}).json()
    assert len(answer["entities"]) > 1000
    assert answer["entities"] == hgner_tag_jsonl(capsys, text)


def test_batch_with_ids_and_tokens(client):
    documents = [{"id": "b", "text": "Angela Merkel visited Paris ."}, {"id": 7, "text": ""},
                 {"id": "a", "text": TEXT}]
    answer = client.post("/v1/tag", json={"documents": documents, "tokens": True}).json()
    assert [d["id"] for d in answer["documents"]] == ["b", 7, "a"]
    assert answer["documents"][1] == {"id": 7, "entities": [], "tokens": []}
    first = answer["documents"][0]
    assert [t["text"] for t in first["tokens"]] == ["Angela", "Merkel", "visited", "Paris", "."]
    for token in first["tokens"]:
        assert sum(token["marginals"].values()) == pytest.approx(1.0)
        assert max(token["marginals"], key=token["marginals"].get) == token["tag"]
    single = client.post("/v1/tag", json={"text": TEXT}).json()
    assert answer["documents"][2]["entities"] == single["entities"]


def test_split_lines_tags_each_line_as_its_own_document(client):
    """``split: lines`` (as hgner tag --split lines): each line's entities are those of the line
    sent alone, at offsets into the whole text; the default keeps the text one document."""
    lines = ["Angela Merkel visited Paris .", "", "Google opened an office in Berlin ."]
    text = "\n".join(lines)
    split = client.post("/v1/tag", json={"text": text, "split": "lines"}).json()["entities"]
    expected, offset = [], 0
    for line in lines:
        for entity in client.post("/v1/tag", json={"text": line}).json()["entities"]:
            expected.append({**entity, "start": entity["start"] + offset, "end": entity["end"] + offset})
        offset += len(line) + 1
    assert [(e["start"], e["end"], e["label"]) for e in split] == [(e["start"], e["end"], e["label"]) for e in expected]
    assert client.post("/v1/tag", json={"text": text, "split": "words"}).status_code == 422


def test_compare_decoders_on_the_skip_graph(client):
    answer = client.post("/v1/compare", json={"text": TEXT, "graph": "skip", "sweeps": 100, "seed": 0,
                                              "decoders": ["viterbi", "exact", "gibbs", "herded"]}).json()
    results = {r["decoder"]: r for r in answer["results"]}
    assert list(results) == ["viterbi", "exact", "gibbs", "herded"]
    assert answer["optimum"]["certified"] is True
    assert results["exact"]["optimum_reached"] is True
    assert results["exact"]["score"] == pytest.approx(answer["optimum"]["score"])
    assert results["viterbi"]["graph"] == "chain" and results["exact"]["graph"] == "skip"
    assert results["viterbi"]["agreement_with_viterbi"] == 1.0
    assert all(r["score"] <= answer["optimum"]["score"] + 1e-6 for r in results.values())
    n, k = len(answer["tokens"]), len(answer["labels"])
    assert len(results["viterbi"]["marginals"]) == n and len(results["viterbi"]["marginals"][0]) == k
    assert results["exact"]["marginals"] is None
    assert all(len(r["tags"]) == n and r["seconds"] >= 0 for r in results.values())
    chain = client.post("/v1/tag", json={"text": TEXT}).json()
    assert results["viterbi"]["entities"] == chain["entities"]


def test_listings_schema_and_metrics(client):
    models = client.get("/v1/models").json()["models"]
    assert [m["name"] for m in models] == [MODEL] and "PER" in models[0]["labels"]
    decoders = {d["name"]: d for d in client.get("/v1/decoders").json()["decoders"]}
    assert decoders["viterbi"]["capabilities"]["chain_only"] is True
    assert "time_limit" in [s["name"] for s in decoders["herded"]["settings"]]
    schema = client.get("/openapi.json").json()
    assert {"/v1/tag", "/v1/compare", "/v1/models", "/v1/decoders", "/health", "/ready", "/metrics"} <= set(schema["paths"])
    client.post("/v1/tag", json={"text": TEXT, "tokens": True})
    metrics = client.get("/metrics").text
    for name in ("hgner_requests_total", "hgner_request_seconds_bucket", "hgner_tokens_total", "hgner_queue_depth"):
        assert name in metrics
    assert 'hgner_requests_total{endpoint="/v1/tag",status="200"}' in metrics


def test_the_schema_says_what_the_server_takes(client):
    requests = client.get("/openapi.json").json()["components"]["schemas"]
    assert requests["TagRequest"]["properties"]["seed"]["anyOf"][0]["maximum"] == 2**63 - 1  # an integer, not 2.0**63
    assert [branch["required"] for branch in requests["TagRequest"]["oneOf"]] == [["text"], ["documents"]]


def test_page_and_its_assets(client):
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert "script-src 'self'" in page.headers["content-security-policy"]
    for asset in ("/static/app.js", "/static/style.css"):
        answer = client.get(asset)
        assert answer.status_code == 200
        assert "http:" not in answer.text and "https:" not in answer.text and "//" not in answer.text.replace("// ", ""), \
            f"{asset} names an outside asset"
    assert "href" not in client.get("/static/favicon.svg").text
    assert "http:" not in page.text and "https:" not in page.text
    assert "innerHTML" not in client.get("/static/app.js").text


@pytest.mark.parametrize("body, field", [
    (b'{"text": "x",', "body"),
    (b'{"text": "x", "colour": "red"}', "colour"),
    (b'{"text": "x", "documents": [{"id": 1, "text": "y"}]}', "text or documents"),
    (b'{"documents": [{"id": 1, "text": "y"}, {"id": 1, "text": "z"}]}', "unique"),
    (b'{"text": "x", "graph": "tree"}', "graph"),
    (b'{"text": "x", "sweeps": 0}', "sweeps"),
    (b'{"text": "x", "min_confidence": 2}', "min_confidence"),
    (b'{"text": "x", "decoder": "gibbs", "settings": {"sweeps": "many"}}', "sweeps must be an integer"),
    (b'{"text": "x", "decoder": "gibbs", "settings": {"damping": 0.5}}', "unknown gibbs setting 'damping'"),
    (b'{"text": "x", "settings": {"marginals": [1]}}', "settings"),
    (b'{"text": "x", "decoder": "nope"}', "expected one of: beg, crfsuite"),
    (b'{"text": "x", "model": "/etc/passwd"}', "expected one of: en-conll03"),
    (b'{"text": "x", "decoder": "viterbi", "graph": "skip"}', "decodes chains only"),
    (b'{"text": "\\ud800"}', "not valid Unicode"),
    (b'{"text": "x", "model": ""}', "body.model"),
    (b'{"text": "x", "decoder": ""}', "body.decoder"),
])
def test_bad_requests_are_422(client, body, field):
    answer = error(client.post("/v1/tag", content=body, headers={"content-type": "application/json"}), 422, "invalid")
    assert field in json.dumps(answer)


def test_bad_compare_requests_are_422(client):
    answer = error(client.post("/v1/compare", json={"text": "x", "decoders": ["viterbi", "nope"]}), 422, "invalid")
    assert answer["message"].startswith("body.decoders: unknown decoder 'nope'")
    assert answer["details"] == [{"field": "body.decoders", "message": answer["message"].removeprefix("body.decoders: ")}]
    assert client.post("/v1/compare", json={"text": "x", "settings": {"marginals": None}}).status_code == 200  # as /v1/tag
    error(client.post("/v1/compare", json={"text": "x", "decoders": []}), 422, "invalid")
    body = error(client.post("/v1/compare", json={"text": "x", "settings": {"damping": "x"}}), 422, "invalid")
    assert "setting 'damping'" in body["message"]


def test_over_the_limits_is_413(client):
    error(client.post("/v1/tag", json={"text": "a " * 100_001}), 413, "too_large")
    error(client.post("/v1/compare", json={"text": "a " * 100_001}), 413, "too_large")
    error(client.post("/v1/tag", json={"documents": [{"id": i, "text": "x"} for i in range(5)]}), 413, "too_large")
    huge = b'{"text": "' + b"a" * 1_400_000 + b'"}'
    error(client.post("/v1/tag", content=huge, headers={"content-type": "application/json"}), 413, "too_large")
    chunks = (b"x" * 65536 for _ in range(40))  # no Content-Length: counted as it arrives
    error(client.post("/v1/tag", content=chunks, headers={"content-type": "application/json"}), 413, "too_large")


def test_a_text_within_the_limit_is_read_however_json_escapes_it():
    """Python's json.dumps escapes a character outside the BMP as 12 bytes (a surrogate pair)."""
    with TestClient(create_app(settings(max_chars=1000, max_documents=4))) as small:
        text = "\U0001F600" * 1000
        assert _ready(small).post("/v1/tag", content=json.dumps({"text": text}),
                                  headers={"content-type": "application/json"}).status_code == 200
        error(small.post("/v1/tag", json={"text": text + "!"}), 413, "too_large")


def test_unknown_paths_and_methods_are_json(client):
    error(client.get("/v2/tag"), 404, "not_found")
    error(client.get("/v1/tag"), 405, "method_not_allowed")
    for path in ("/health", "/", "/v1/models", "/openapi.json"):
        assert client.put(path).headers["Allow"] == "GET, HEAD"
    for path in ("/v1/tag/", "/static"):  # no redirect (whose Location would follow the client's Host header)
        error(client.post(path, json={"text": "x"}, follow_redirects=False), 404, "not_found")


def test_api_key_needed_everywhere_but_health(strict):
    bare = {"Authorization": ""}
    assert strict.get("/health", headers=bare).status_code == 200
    for path in ("/", "/ready", "/metrics", "/v1/models", "/openapi.json", "/static/app.js"):
        answer = error(strict.get(path, headers=bare), 401, "unauthorized")
        assert "Bearer" in answer["message"]
    error(strict.post("/v1/tag", json={"text": "x"}, headers={"Authorization": "Bearer wrong"}), 401, "unauthorized")
    assert strict.get("/v1/models").status_code == 200


def test_cors_only_for_the_origin_given(client, strict):
    origin = {"Origin": "https://example.org"}
    assert "access-control-allow-origin" not in client.get("/health", headers=origin).headers
    assert strict.get("/health", headers=origin).headers["access-control-allow-origin"] == "https://example.org"
    assert "access-control-allow-origin" not in strict.get("/health", headers={"Origin": "https://evil.test"}).headers


def test_a_refused_cors_preflight_is_json(strict):
    preflight = {"Origin": "https://example.org", "Access-Control-Request-Method": "POST"}
    answer = strict.options("/v1/tag", headers=preflight)
    assert answer.status_code == 200 and answer.headers["access-control-allow-origin"] == "https://example.org"
    body = error(strict.options("/v1/tag", headers={**preflight, "Origin": "https://evil.test"}), 400, "cors_refused")
    assert "origin" in body["message"] and "--cors-origin" in body["message"]
    body = error(strict.options("/v1/tag", headers={**preflight, "Access-Control-Request-Method": "DELETE"}), 400,
                 "cors_refused")
    assert "method" in body["message"]


def test_full_queue_is_429_with_retry_after(strict):
    admission = strict.app.state.service.admission
    admission.taken = admission.limit  # the queue is full (as with --max-queue requests in flight)
    try:
        answer = strict.post("/v1/tag", json={"text": "y"})
    finally:
        admission.taken = 0
    error(answer, 429, "overloaded")
    assert int(answer.headers["retry-after"]) >= 1
    assert strict.post("/v1/tag", json={"text": "y"}).status_code == 200


def test_waiting_past_the_timeout_is_504(strict):
    release = threading.Event()
    strict.app.state.service.executor.submit(release.wait, 10)  # the decoding thread is busy
    try:
        answer = strict.post("/v1/tag", json={"text": "x"})
    finally:
        release.set()
    error(answer, 504, "timeout")


def test_past_the_timeout_is_504(strict):
    started = time.monotonic()
    answer = strict.post("/v1/tag", json={"text": TEXT, "decoder": "herded", "sweeps": 100_000_000})
    body = error(answer, 504, "timeout")
    assert "--timeout" in body["message"]
    time.sleep(0.2)  # herded got time_limit: the decoding thread is free again soon after
    assert strict.post("/v1/tag", json={"text": "Paris ."}).status_code == 200
    assert time.monotonic() - started < 5


def test_a_bug_is_a_json_500_without_traceback(strict, monkeypatch):
    def broken() -> None:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(strict.app.state.service.engine, "model_infos", broken)
    answer = error(strict.get("/v1/models"), 500, "internal")
    assert "secret" not in answer["message"]


def test_a_model_that_fails_to_load_is_503(tmp_path):
    (tmp_path / "meta.json").write_text("{}")
    with TestClient(create_app(settings(models={"broken": str(tmp_path)}))) as broken:
        for _ in range(100):
            if broken.app.state.service.loading.done():
                break
            time.sleep(0.05)
        error(broken.get("/ready"), 503, "not_ready")
        error(broken.post("/v1/tag", json={"text": "x"}), 503, "not_ready")
        assert broken.get("/health").status_code == 200


@pytest.mark.parametrize("body, field, words", [
    (b'{"documents": [{"id": 1, "text": "fine"}, {"id": 2, "text": "\\ud800"}]}', "body.documents.1.text",
     "not valid Unicode"),
    (b'{"text": "x", "min_confidence": true}', "body.min_confidence", "valid number"),
    (b'{"text": "x", "min_confidence": "0.5"}', "body.min_confidence", "valid number"),
    (b'{"text": "x",', "body", "malformed JSON at character 13"),
    (b'{"text": "x", "settings": {"a": ' + b"[" * 5000 + b"]" * 5000 + b"}}", "body", "nested too deeply"),
    (b'{"text": "x", "seed": ' + b"9" * 5000 + b"}", "body", "an integer of more than"),
    (b'{"text": "x", "settings": {"threshold": Infinity}}', "body", "Infinity is not a JSON value"),
    (b'{"text": "x", "min_confidence": NaN}', "body", "NaN is not a JSON value"),
    (b'{"text": "x", "text": "y"}', "body", "key 'text' appears twice"),
    ('{"text": "x"}'.encode("utf-16"), "body", "not UTF-8"),
    (b'{"text": "x", "decoder": "nope"}', "body.decoder", "unknown decoder 'nope'"),
    (b'{"text": "x", "model": "nope"}', "body.model", "unknown model 'nope'"),
    (b'{"text": "x", "settings": {"foo": 1}}', "body.settings.foo", "unknown viterbi setting 'foo'"),
    (b'{"text": "x", "decoder": "gibbs", "settings": {"sweeps": -5}}', "body.settings.sweeps", "got -5"),
    (b'{"text": "x", "decoder": "viterbi", "graph": "skip"}', "body.decoder", "decodes chains only"),
])
def test_bad_requests_name_the_field(client, body, field, words):
    answer = error(client.post("/v1/tag", content=body, headers={"content-type": "application/json"}), 422, "invalid")
    assert answer["details"][0]["field"] == field if "details" in answer else field == "body"
    assert answer["message"].startswith(field + ":") and words in answer["message"]


def test_a_body_that_is_not_json_says_so(client):
    for content_type in ("text/plain", "application/x-www-form-urlencoded"):
        answer = error(client.post("/v1/tag", content=b'{"text": "x"}', headers={"content-type": content_type}),
                       422, "invalid")
        assert "expected Content-Type: application/json" in answer["message"] and content_type in answer["message"]


def test_unknown_paths_and_methods_say_what_exists(client):
    assert "/openapi.json" in error(client.get("/v2/tag"), 404, "not_found")["message"]
    assert "takes POST" in error(client.get("/v1/compare"), 405, "method_not_allowed")["message"]


def test_a_body_that_never_arrives_is_408():
    """A client that sends its headers and then holds the connection is answered within --timeout."""
    import asyncio

    from hgner.server.app import Guard
    from hgner.server.metrics import Metrics

    async def application(scope, receive, send):
        raise AssertionError("the application is not reached")

    async def receive():
        await asyncio.sleep(3600)

    sent = []

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/v1/tag", "headers": [(b"content-type", b"application/json")]}
    started = time.monotonic()
    asyncio.run(Guard(application, settings(timeout=0.2), Metrics())(scope, receive, send))
    assert time.monotonic() - started < 2
    assert sent[0]["status"] == 408
    body = json.loads(sent[1]["body"])["error"]
    assert body["code"] == "request_timeout" and "--timeout" in body["message"]


def test_the_decoder_listing_is_built_once(client):
    from hgner.server.engine import decoder_infos

    assert client.get("/v1/decoders").json()["decoders"] == decoder_infos()
    assert decoder_infos() is decoder_infos()  # not 20 ms of registry lookups on the event loop per request


@pytest.mark.parametrize("path", ["/v1/tag", "/v1/compare"])
def test_a_time_limit_in_the_request_cannot_pass_the_timeout(strict, path):
    """time_limit 1e308 from a client would keep the decoding thread (and every later request) busy."""
    body = {"text": TEXT, "sweeps": 100_000_000, "settings": {"time_limit": 1e308}}
    body.update({"decoder": "herded"} if path == "/v1/tag" else {"decoders": ["herded"]})
    started = time.monotonic()
    answer = strict.post(path, json=body)
    assert answer.status_code in (200, 504), answer.text
    time.sleep(0.3)
    assert strict.post("/v1/tag", json={"text": "Paris ."}).status_code == 200
    assert time.monotonic() - started < 5


def test_bounded_time_limit():
    from hgner.decoders import decoder_settings
    from hgner.server.engine import bounded_time_limit

    setting = decoder_settings("herded")["time_limit"]
    assert bounded_time_limit(setting, None, 30.0) == 30.0
    assert bounded_time_limit(setting, "none", 30.0) == 30.0
    assert bounded_time_limit(setting, 1e308, 30.0) == 30.0
    assert bounded_time_limit(setting, "2.5", 30.0) == 2.5
    assert bounded_time_limit(setting, -1, 30.0) == -1  # refused by the decoder, with its message


def test_head_is_get_without_the_body(client, strict):
    for path in ("/health", "/ready", "/"):
        got, head = client.get(path), client.head(path)
        assert head.status_code == got.status_code == 200 and head.content == b""
        assert head.headers["content-length"] == got.headers["content-length"]
    assert strict.head("/health", headers={"Authorization": ""}).status_code == 200
    refused = client.head("/v1/tag")
    assert refused.status_code == 405 and refused.headers["allow"] == "POST" and refused.content == b""


def test_the_options_warning_comes_with_every_request(client):
    """The settings of an option set are built once; their warning is still every request's."""
    for _ in range(3):
        answer = client.post("/v1/tag", json={"text": TEXT, "graph": "skip"}).json()
        assert any("decodes chains only" in w for w in answer["warnings"]), answer["warnings"]
    assert not client.post("/v1/tag", json={"text": TEXT}).json()["warnings"]


def test_a_client_gone_before_its_body_is_not_a_server_error():
    """The body stops arriving (the client disconnected): not an internal error (as FastAPI reads a body)."""
    import asyncio

    app = create_app(settings())
    messages = [{"type": "http.request", "body": b'{"text": "x', "more_body": True}, {"type": "http.disconnect"}]

    async def receive():
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    sent = []

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/v1/tag", "headers": [(b"content-type", b"application/json")],
             "query_string": b"", "root_path": "", "http_version": "1.1", "scheme": "http"}
    asyncio.run(app(scope, receive, send))
    assert sent[0]["status"] != 500
    assert "internal" not in app.state.service.metrics.exposition().decode()
