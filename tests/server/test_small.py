"""Small ones (issue 62): --cors-origin normalised as a browser sends Origin or refused in one
line, and HEAD without a key is a 401 without a body."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi", reason="hgner serve needs the serve extra (pip install 'hgner[serve]')")

from fastapi.testclient import TestClient  # noqa: E402
from server_support import settings  # noqa: E402

from hgner import cli  # noqa: E402
from hgner.server.app import create_app  # noqa: E402


@pytest.mark.parametrize("given, normal", [("https://c.example:443", "https://c.example"),
                                           ("HTTPS://C.Example", "https://c.example"),
                                           ("http://c.example:80", "http://c.example"),
                                           ("http://c.example:8080", "http://c.example:8080")])
def test_origins_are_written_as_browsers_send_them(given, normal):
    assert settings(cors_origins=(given,)).cors_origins == (normal,)


@pytest.mark.parametrize("origin", ["https://c.example .org", "https://*.example.org", "https://example.org:0",
                                    " https://example.org", "https://example.org:"])
def test_bad_origins_are_one_line(capsys, origin):
    assert cli.main(["serve", "--cors-origin", origin]) == 2
    error = capsys.readouterr().err
    assert error.startswith("hgner serve: error: --cors-origin") and error.count("\n") == 1


def test_a_normalised_origin_matches_and_head_without_a_key_has_no_body():
    app = create_app(settings(cors_origins=("HTTPS://C.Example:443",), api_key="k" * 20))
    with TestClient(app) as client:
        preflight = client.options("/v1/tag", headers={"Origin": "https://c.example", "Access-Control-Request-Method":
                                                       "POST", "Access-Control-Request-Headers": "content-type"})
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == "https://c.example"
        head, get = client.head("/ready"), client.get("/ready")
        assert head.status_code == get.status_code == 401 and head.content == b""
        assert head.headers["content-type"] == "application/json" and get.json()["error"]["code"] == "unauthorized"
