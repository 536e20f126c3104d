"""Schema fuzzing of the annotation API: schemathesis sends requests generated from the OpenAPI
schema to /v1/annotate and its decisions; no answer may be a server error or differ from the schema."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi", reason="hgner serve needs the serve extra (pip install 'hgner[serve]')")
schemathesis = pytest.importorskip("schemathesis", reason="schema fuzzing needs schemathesis")
from hypothesis import HealthCheck  # noqa: E402
from hypothesis import settings as fuzzing  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.specs.openapi.checks import response_schema_conformance, status_code_conformance  # noqa: E402
from server_support import settings  # noqa: E402
from test_annotate import SENTENCES, conll  # noqa: E402

from hgner.server.app import create_app  # noqa: E402

fuzzed = schemathesis.pytest.from_fixture("annotation_schema").include(path_regex="^/v1/annotate")


@pytest.fixture
def annotation_schema(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "queue.conll").write_text(conll(SENTENCES))
    app = create_app(settings(annotate=str(folder / "queue.conll"), annotations=str(folder / "out.conll")))
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    schema.config.generation.update(modes=list(schemathesis.GenerationMode))  # valid and invalid requests
    return schema


@fuzzed.parametrize()
@fuzzing(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_the_annotation_api_answers_as_its_schema_says(case):
    case.call_and_validate(checks=[not_a_server_error, response_schema_conformance, status_code_conformance])
