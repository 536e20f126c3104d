"""Shared by the tagging tests: a tiny model trained once per session on tests/fixtures/tag_train.conll
(30 templated sentences, PER/LOC/ORG/MISC), and a helper that runs the ``hgner`` command."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "tag_train.conll"
SENTENCE = "Angela Merkel works for United Nations in Tokyo ."
COMMANDS = [[sys.executable, "-m", "hgner.cli"]] + ([[shutil.which("hgner")]] if shutil.which("hgner") else [])


@pytest.fixture(scope="session")
def tag_model(tmp_path_factory) -> Path:
    """The model directory (trained at most once per session, whichever test module asks first)."""
    from hgner.corpus import load_corpus
    from hgner.model import META_FILE, train

    directory = tmp_path_factory.getbasetemp() / "tag-model"
    if not (directory / META_FILE).is_file():
        train(load_corpus(str(FIXTURE)), directory, max_iterations=60)
    return directory


def subprocess_env() -> dict[str, str]:
    """The environment for child processes: they import the same hgner as the tests (the source
    tree or the installed copy), so a stale install cannot disagree with the model trained here."""
    import hgner

    source = str(Path(hgner.__file__).resolve().parent.parent)
    return {**os.environ, "PYTHONIOENCODING": "utf-8", "PYTHONPATH": os.pathsep.join(filter(None, [source, os.environ.get("PYTHONPATH")]))}


def run_hgner(args: list[str], command: list[str] = COMMANDS[0], **kwargs) -> subprocess.CompletedProcess:
    """``hgner ARGS`` in a fresh process, text mode, output captured."""
    return subprocess.run([*command, *args], capture_output=True, text=True, env=subprocess_env(), timeout=120, **kwargs)
