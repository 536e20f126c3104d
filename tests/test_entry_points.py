"""A third-party decoder through the ``hgner_decoders`` entry-point group: the fixture package
tests/fixtures/hgner_fixture_decoder (one module and its ``entry_points.txt``, as a package's
``pyproject.toml`` would declare it) is made into a wheel here, so no build backend or network is
needed, pip-installed into a temporary folder put on PYTHONPATH, and used from the CLI and the
spaCy component in fresh processes."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from tag_support import SENTENCE, subprocess_env, tag_model  # noqa: F401  (fixture)

PACKAGE = Path(__file__).parent / "fixtures" / "hgner_fixture_decoder"
NAME = "fixture-argmax"
DIST = "hgner_fixture_decoder-0.0.1"


def build_wheel(folder: Path) -> Path:
    """The fixture package as a pure-Python wheel in ``folder``."""
    info = f"{DIST}.dist-info"
    files = {
        "hgner_fixture_decoder.py": (PACKAGE / "hgner_fixture_decoder.py").read_bytes(),
        f"{info}/entry_points.txt": (PACKAGE / "entry_points.txt").read_bytes(),
        f"{info}/METADATA": b"Metadata-Version: 2.1\nName: hgner-fixture-decoder\nVersion: 0.0.1\n",
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: hgner-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = [f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}"
              for name, data in files.items()]
    files[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    wheel = folder / f"{DIST}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return wheel


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory) -> dict[str, str]:
    """The environment of a process that has the fixture package installed."""
    work = tmp_path_factory.mktemp("plugin")
    target = work / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--disable-pip-version-check",
         "--target", str(target), str(build_wheel(work))],
        capture_output=True, text=True, timeout=300,
    )
    if install.returncode:
        pytest.skip(f"pip cannot install a local wheel here: {install.stderr.strip().splitlines()[-1:]}")
    env = subprocess_env()
    env["PYTHONPATH"] = os.pathsep.join([str(target), env["PYTHONPATH"]])
    return env


def run_python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env, cwd="/")


def test_the_entry_point_is_registered(plugin_env):
    result = run_python("from hgner.core import registry; print(registry.names(registry.decoders))", plugin_env)
    assert result.returncode == 0, result.stderr
    assert NAME in result.stdout
    assert NAME not in run_python("from hgner.core import registry; print(registry.names(registry.decoders))",
                                  subprocess_env()).stdout  # only where the package is installed


def test_cli_and_spacy_use_the_entry_point_decoder(plugin_env, tag_model):
    tagged = subprocess.run([sys.executable, "-m", "hgner.cli", "tag", "--model", str(tag_model), "--decoder", NAME,
                             "--format", "jsonl", SENTENCE], capture_output=True, text=True, timeout=120, env=plugin_env)
    assert tagged.returncode == 0, tagged.stderr
    found = [(e["text"], e["label"], e["confidence"]) for e in json.loads(tagged.stdout)["entities"]]
    assert ("Angela Merkel", "PER", None) in found  # the unary argmax finds the plain names; no marginals
    code = (
        "import json, spacy\n"
        "from hgner.crf.model import CrfModel\n"
        f"outside = CrfModel.load({str(tag_model)!r}).labels.index('O')\n"
        "for settings in ({}, {'favourite': outside, 'bonus': 1e9}):\n"
        "    nlp = spacy.blank('en')\n"
        f"    nlp.add_pipe('hgner', config={{'model': {str(tag_model)!r}, 'decoder': {NAME!r}, 'decoder_settings': settings}})\n"
        f"    print(json.dumps([(e.text, e.label_) for e in nlp({SENTENCE!r}).ents]))\n"
    )
    result = run_python(code, plugin_env)
    assert result.returncode == 0, result.stderr
    plain, all_outside = (json.loads(line) for line in result.stdout.splitlines())
    assert ["Angela Merkel", "PER"] in plain and all_outside == []  # the settings reach the decoder
