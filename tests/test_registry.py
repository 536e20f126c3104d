"""The decoder registry: built-ins always present whatever was imported, registration and
lookup errors, entry points, and settings and capabilities declared by every decoder."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import EntryPoint

import catalogue
import numpy as np
import pytest

from hgner.commands.arguments import assignments as parse_assignments
from hgner.core import registry
from hgner.core.errors import HgnerError, UnknownNameError
from hgner.decoders import (
    Decoder,
    Decoding,
    Setting,
    SettingError,
    available_decoders,
    decoder_class,
    decoder_settings,
    make_decoder,
    register,
)
from hgner.graph.factor_graph import FactorGraph

BUILT_IN = {"beg", "crfsuite", "dhg", "doublemin-gibbs", "exact", "gibbs", "herded", "herded-shared", "meanfield",
            "mgpmh", "min-gibbs", "rdhg", "viterbi"}


@pytest.fixture
def scratch_names():
    """Names registered by a test, removed from the catalogue afterwards."""
    names: list[str] = []
    yield names
    for name in names:
        catalogue._remove(("hgner", "decoders", name))


def test_built_ins_registered_in_a_fresh_interpreter_without_importing_the_pipeline():
    code = ("import sys; from hgner.core import registry; names = registry.names(registry.decoders); "
            "print(','.join(names)); print('hgner.crf.pipeline' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert set(out[0].split(",")) >= BUILT_IN
    assert out[1] == "False"


def test_looking_up_a_decoder_in_a_fresh_interpreter_imports_no_other_decoder_module():
    code = ("import sys; from hgner.decoders import decoder_class; decoder_class('viterbi'); "
            "print('hgner.decoders.herding' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_available_decoders_is_the_registry():
    assert available_decoders() == registry.names(registry.decoders)
    assert set(available_decoders()) >= BUILT_IN
    for name in available_decoders():
        assert decoder_class(name).name == name


def test_unknown_decoder_lists_the_registered_names():
    with pytest.raises(UnknownNameError, match="unknown decoder 'vitterbi'; expected one of: .*viterbi") as error:
        decoder_class("vitterbi")
    assert set(error.value.available) >= BUILT_IN


class Constant(Decoder):
    """Labels every variable 0; for registry tests."""

    def __init__(self, *, label: int = 0) -> None:
        self.label = label

    def decode(self, graph: FactorGraph) -> Decoding:
        return Decoding(np.full(graph.n_variables, self.label, np.int64))


def test_register_and_use_a_new_decoder(scratch_names):
    scratch_names.append("constant-test")
    register("constant-test")(Constant)
    assert "constant-test" in available_decoders()
    decoder = make_decoder("constant-test", label=1)
    assert decoder.decode(FactorGraph(np.zeros((3, 2)))).labels.tolist() == [1, 1, 1]
    assert list(decoder_settings("constant-test")) == ["label"]
    register("constant-test")(Constant)  # registering the same class again is harmless
    with pytest.raises(ValueError, match="already registered by Constant"):
        register("constant-test")(type("Other", (Constant,), {}))


def test_a_registered_object_that_is_not_a_decoder_is_refused(scratch_names):
    scratch_names.append("not-a-decoder")
    registry.decoders.register("not-a-decoder", func=lambda graph: None)
    with pytest.raises(HgnerError, match="not a Decoder subclass"):
        decoder_class("not-a-decoder")


def test_entry_point_decoders_are_found(monkeypatch):
    point = EntryPoint("constant-ep", f"{__name__}:Constant", "hgner_decoders")
    monkeypatch.setattr(registry.decoders, "_get_entry_points", lambda: [point])
    assert "constant-ep" in available_decoders()
    assert decoder_class("constant-ep") is Constant
    assert make_decoder("constant-ep").decode(FactorGraph(np.zeros((2, 2)))).labels.tolist() == [0, 0]


def test_a_decoder_setting_needs_an_annotation_and_a_default():
    with pytest.raises(TypeError, match="needs a type annotation and a default"):
        type("Bad", (Constant,), {"__init__": lambda self, *, sweeps=3: None})


# ----------------------------------------------------------------------------- settings


@pytest.mark.parametrize("name", sorted(BUILT_IN))
def test_every_setting_is_declared_and_its_default_parses_back(name):
    settings = decoder_settings(name)
    decoder = make_decoder(name)  # the defaults are valid
    for key, setting in settings.items():
        assert isinstance(setting, Setting) and setting.name == key
        assert getattr(decoder, key) == setting.default
        assert setting.parse(str(setting.default)) == setting.default
        assert getattr(make_decoder(name, parse_assignments([f"{key}={setting.default}"])), key) == setting.default


@pytest.mark.parametrize("name", sorted(BUILT_IN))
def test_capabilities_are_declared(name):
    cls = decoder_class(name)
    decoder = make_decoder(name)
    for capability in (cls.certifies, cls.exact, cls.searches_map, cls.chain_only, decoder.gives_marginals):
        assert isinstance(capability, bool)


def test_unknown_settings_are_errors_listing_the_valid_ones():
    with pytest.raises(UnknownNameError, match="unknown beg setting 'threshhold'; expected one of: bins, seed, "
                                               "start, sweeps, threshold, time_limit"):
        make_decoder("beg", threshhold=5)
    with pytest.raises(UnknownNameError, match="unknown herded setting 'seed'"):
        make_decoder("herded", seed=1)
    with pytest.raises(UnknownNameError, match="unknown gibbs setting 'foo'"):
        make_decoder("gibbs", parse_assignments(["foo=1"]))


def test_shared_options_reach_only_the_decoders_that_take_them():
    assert make_decoder("herded", shared={"sweeps": 7, "seed": 3}).sweeps == 7
    assert make_decoder("exact", shared={"sweeps": 7, "seed": 3}).iterations == 300
    gibbs = make_decoder("gibbs", {"schedule": "constant"}, shared={"sweeps": 7, "seed": None})
    assert (gibbs.sweeps, gibbs.seed, gibbs.schedule) == (7, 0, "constant")
    assert make_decoder("gibbs", shared={"sweeps": 7}, sweeps=9).sweeps == 9  # the decoder's own setting wins


@pytest.mark.parametrize("pairs, expected", [
    (["sweeps=20", "schedule=constant"], {"sweeps": 20, "schedule": "constant"}),
    (["initial_temperature=2", "time_limit=none"], {"initial_temperature": 2.0, "time_limit": None}),
    ([" seed = 4 "], {"seed": 4}),
])
def test_assignments_are_parsed_by_the_annotations(pairs, expected):
    decoder = make_decoder("gibbs", parse_assignments(pairs))
    assert {key: getattr(decoder, key) for key in expected} == expected


@pytest.mark.parametrize("pairs, message", [
    (["sweeps"], "--set 'sweeps': expected NAME=VALUE, e.g. --set damping=0.5"),
    (["sweeps=1", "sweeps=2"], "--set 'sweeps=2': sweeps is already set to '1'"),
])
def test_malformed_assignments(pairs, message):
    with pytest.raises(HgnerError) as error:
        parse_assignments(pairs)
    assert str(error.value) == message


@pytest.mark.parametrize("name, pair, message", [
    ("gibbs", "sweeps=ten", "sweeps must be an integer in [1, 100000000], got 'ten'"),
    ("gibbs", "sweeps=1e9", "sweeps must be an integer in [1, 100000000], got '1e9'"),
    ("gibbs", "sweeps=1_0", "sweeps must be an integer in [1, 100000000], got '1_0'"),
    ("gibbs", "sweeps=\u0661\u0660", "sweeps must be an integer in [1, 100000000], got '\u0661\u0660'"),
    ("beg", "threshold=1_0.5", "threshold must be a number >= 0, got '1_0.5'"),
    ("gibbs", "schedule=cosine", "schedule must be one of linear, exponential, constant, got 'cosine'"),
    ("gibbs", "time_limit=-1", "time_limit must be a finite number > 0 or None, got -1.0"),
    ("viterbi", "marginals=maybe", "marginals must be true or false, got 'maybe'"),
    ("meanfield", "damping=nan", "damping must be a finite number in (0, 1], got nan"),
    ("beg", "threshold=-1", "threshold must be a number >= 0, got -1.0"),
])
def test_bad_values_say_what_was_expected(name, pair, message):
    with pytest.raises(SettingError) as error:
        make_decoder(name, parse_assignments([pair]))
    assert str(error.value) == f"decoder {name!r}: {message}"


def test_values_are_converted_to_the_declared_type():
    decoder = make_decoder("beg", threshold=np.int64(2), bins=np.int32(4))
    assert type(decoder.threshold) is float and type(decoder.bins) is int
    assert make_decoder("viterbi", parse_assignments(["marginals=yes"])).marginals is True
    assert make_decoder("beg", parse_assignments(["threshold=inf"])).threshold == float("inf")
