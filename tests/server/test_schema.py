"""Schema fuzzing: schemathesis sends requests generated from the OpenAPI schema; no answer may be
a server error (5xx other than the documented 503/504) or differ from the schema."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("fastapi", reason="hgner serve needs the serve extra (pip install 'hgner[serve]')")
schemathesis = pytest.importorskip("schemathesis", reason="schema fuzzing needs schemathesis")

from fastapi.testclient import TestClient  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.specs.openapi.checks import response_schema_conformance, status_code_conformance  # noqa: E402
from server_support import settings as server_settings  # noqa: E402

from hgner.server.app import create_app  # noqa: E402

app = create_app(server_settings(max_chars=2_000, max_documents=8, timeout=5))  # its 504 before the 10 s client timeout
schema = schemathesis.openapi.from_asgi("/openapi.json", app)
schema.config.generation.update(modes=list(schemathesis.GenerationMode))  # valid and invalid requests
# the documented limits (503: models not loaded; 504: past --timeout) are answers, not server errors
schema.config.checks.not_a_server_error.expected_statuses = ["2xx", "3xx", "4xx", "503", "504"]


@pytest.fixture(scope="module")
def client():
    with TestClient(app, raise_server_exceptions=False) as test_client:
        for _ in range(600):
            if test_client.get("/ready").status_code == 200:
                break
            time.sleep(0.1)
        yield test_client


@schema.parametrize()
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_schema(case, client):
    response = case.call(app=app)
    case.validate_response(response, checks=[not_a_server_error, response_schema_conformance,
                                             status_code_conformance])
