"""``hgner serve`` as a user runs it: options refused before anything loads, and a real server on a
free 127.0.0.1 port that tags, drains the request in flight on SIGTERM, exits 0 and leaves nothing."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time

import pytest

pytest.importorskip("fastapi", reason="hgner serve needs the serve extra (pip install 'hgner[serve]')")

import httpx  # noqa: E402
from server_support import group_alive, running_server  # noqa: E402

from hgner import cli  # noqa: E402
from hgner.server.settings import ServerSettings  # noqa: E402


@pytest.mark.parametrize("arguments, message", [
    (["--host", "0.0.0.0"], "give --api-key"),
    (["--host", "0.0.0.0", "--api-key", "short"], "at least 16"),
    (["--model", "no-such-model"], "not a shipped model"),
    (["--port", "70000"], "--port"),
    (["--workers", "0"], "--workers"),
    (["--timeout", "0"], "--timeout"),
    (["--cors-origin", "example.org"], "--cors-origin"),
    (["--cors-origin", "https://example.org/"], "no path or trailing slash"),
    (["--timeout", "inf"], "--timeout"),
    (["--timeout", "nan"], "--timeout"),
    (["--api-key="], "--api-key"),  # an empty key is refused, never taken for "no key"
    (["--host", "999.1.1.1", "--insecure"], "--host 999.1.1.1 --port 8080: cannot listen there"),
    (["--host", "192.0.2.1", "--insecure"], "cannot listen there"),  # another machine's address
])
def test_bad_options_exit_2_before_serving(capsys, monkeypatch, arguments, message):
    monkeypatch.delenv("HGNER_API_KEY", raising=False)
    assert cli.main(["serve", *arguments]) == 2
    error = capsys.readouterr().err
    assert error.startswith("hgner serve: error:") and message in error


def test_an_empty_api_key_variable_is_refused(capsys, monkeypatch):
    monkeypatch.setenv("HGNER_API_KEY", "")
    assert cli.main(["serve", "--model", "en-conll03"]) == 2
    assert "HGNER_API_KEY" in capsys.readouterr().err


def test_a_port_in_use_is_one_error(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert cli.main(["serve", "--model", "en-conll03", "--port", str(port)]) == 2
    assert f"--port {port}: cannot listen there" in capsys.readouterr().err


def test_other_addresses_need_a_key_or_insecure():
    models = {"m": "/nowhere"}
    assert ServerSettings(models=models, host="0.0.0.0", api_key="x" * 16).api_key
    assert ServerSettings(models=models, host="0.0.0.0", insecure=True).insecure
    assert ServerSettings(models=models, host="::1").host == "::1"


def test_serve_tag_and_drain_on_sigterm():
    with running_server("--timeout", "20") as (process, url):
        answer = httpx.post(url + "/v1/tag", json={"text": "Angela Merkel visited Paris ."}, timeout=30)
        assert answer.status_code == 200
        assert [(e["text"], e["label"]) for e in answer.json()["entities"]] == [("Angela Merkel", "PER"),
                                                                               ("Paris", "LOC")]
        slow: list[httpx.Response] = []
        body = {"text": "Angela Merkel visited Paris .", "decoder": "herded", "sweeps": 100_000_000,
                "settings": {"time_limit": 1.5}}  # stops by itself after 1.5 s
        request = threading.Thread(target=lambda: slow.append(httpx.post(url + "/v1/tag", json=body, timeout=30)))
        request.start()
        for _ in range(200):  # until the server has taken it
            if "hgner_queue_depth 1.0" in httpx.get(url + "/metrics", timeout=10).text:
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the slow request never reached the server")
        os.killpg(process.pid, signal.SIGTERM)
        request.join(30)
        assert process.wait(30) == 0
        assert slow and slow[0].status_code == 200, "the request in flight was answered"
        assert not group_alive(process.pid), "a process of hgner serve is left running"
        with pytest.raises(httpx.TransportError):
            httpx.get(url + "/health", timeout=2)


def test_two_workers_serve_and_stop_on_sigterm():
    with running_server("--workers", "2") as (process, url):
        for _ in range(4):
            answer = httpx.post(url + "/v1/tag", json={"text": "Angela Merkel visited Paris ."}, timeout=30)
            assert answer.status_code == 200
        metrics = httpx.get(url + "/metrics", timeout=10).text  # every worker's figures, whichever answers
        assert 'hgner_requests_total{endpoint="/v1/tag",status="200"} 4.0' in metrics
        os.killpg(process.pid, signal.SIGTERM)
        assert process.wait(60) == 0
        assert not group_alive(process.pid), "a worker of hgner serve is left running"
