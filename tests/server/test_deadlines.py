"""Deadlines that stop work (issue 62): a request past its deadline stops its own decode, and the
next request is not kept waiting behind it."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("fastapi", reason="hgner serve needs the serve extra (pip install 'hgner[serve]')")

from fastapi.testclient import TestClient  # noqa: E402
from server_support import settings  # noqa: E402

from hgner.server.app import create_app  # noqa: E402

TEXT = "Angela Merkel visited Paris ."


@pytest.mark.parametrize("path, body", [
    ("/v1/tag", {"text": TEXT, "decoder": "gibbs", "sweeps": 100_000_000}),
    ("/v1/compare", {"text": TEXT, "decoders": ["gibbs"], "sweeps": 100_000_000})])
def test_after_a_504_a_trivial_request_is_answered_within_a_second(path, body):
    with TestClient(create_app(settings(timeout=2.0))) as client:
        while client.get("/ready").status_code != 200:
            time.sleep(0.1)
        for warm in ({"text": "Paris ."}, {**body, "sweeps": 10}):  # tokenizer and kernels ready
            assert client.post(path, json=warm).status_code == 200
        started = time.monotonic()
        assert client.post(path, json=body).status_code == 504
        timed_out = time.monotonic()
        assert timed_out - started < 3
        assert client.post("/v1/tag", json={"text": "Paris ."}).status_code == 200
        assert time.monotonic() - timed_out < 1.0, "the slow decode went on after its 504"
