"""Request bodies without the web framework: strict JSON, and the field an error is about."""

from __future__ import annotations

import json

import pytest

from hgner.core.errors import HgnerError, UnknownNameError, named
from hgner.decoders import make_decoder
from hgner.server.bodies import field_at_fault, strict_json, strict_json_error


def test_strict_json_reads_json_and_refuses_what_rfc_8259_does_not_allow():
    assert strict_json(b'{"text": "Paris", "seed": 3, "x": [1.5, null]}') == {"text": "Paris", "seed": 3, "x": [1.5, None]}
    for raw, reason in ((b'{"a": NaN}', "NaN is not a JSON value"), (b'{"a": -Infinity}', "-Infinity is not a JSON value"),
                        (b'{"a": 1, "a": 2}', "key 'a' appears twice in one object"),
                        (b'{"a": ' + b"9" * 5000 + b"}", "an integer of more than 4300 digits")):
        with pytest.raises(ValueError) as error:
            strict_json(raw)
        assert not isinstance(error.value, json.JSONDecodeError) and strict_json_error(error.value) == reason
    with pytest.raises(UnicodeDecodeError):
        strict_json('{"a": 1}'.encode("utf-16"))
    with pytest.raises(json.JSONDecodeError):
        strict_json(b'{"a": 1,')


def test_the_field_an_error_is_about():
    assert field_at_fault(UnknownNameError("model", "nope", ["en"]), "/v1/tag") == "body.model"
    assert field_at_fault(UnknownNameError("decoder", "nope", ["viterbi"]), "/v1/tag") == "body.decoder"
    assert field_at_fault(UnknownNameError("decoder", "nope", ["viterbi"]), "/v1/compare") == "body.decoders"
    assert field_at_fault(UnknownNameError("gibbs setting", "foo", ["sweeps"]), "/v1/tag") == "body.settings.foo"
    with pytest.raises(HgnerError) as error:
        make_decoder("gibbs", {"sweeps": -5})
    assert field_at_fault(error.value, "/v1/tag") == "body.settings.sweeps"
    assert field_at_fault(HgnerError(f"{named('graph')} skip needs a skip potential"), "/v1/tag") == "body.graph"
    assert field_at_fault(HgnerError("no field named"), "/v1/tag") == "body"
