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
SPANISH = ("El presidente del Gobierno dijo hoy que la reunión con los ministros de la Unión Europea fue muy "
           "difícil, pero que se ha llegado a un acuerdo para el año que viene en Madrid, según fuentes de su "
           "partido y de la oposición, que también estaban en la sala con otros. Cuando llegaron, nadie sabía si "
           "había sido una buena idea o si todo esto era solo para las cámaras, porque sus amigos no querían "
           "hablar más sobre ello.")  # hgner tag warns that it looks like 'es' (tagged with an English model)
ENGLISH = ("The minister said on Monday that he would not be in the city for the talks with them, but his office "
           "later told reporters that the trip to Madrid had been planned for weeks and could still go ahead if "
           "the union leaders agreed to meet again before the end of the month, when parliament returns from its "
           "summer break. Officials from both parties declined to comment on these reports yesterday .")
SPANISH_WARNING = ("the text looks like 'es' (of its 59 most frequent words, 71% are spaCy stop words of 'es' and "
                   "3% of 'en'), but model 'tag-model' is for 'en': for 'es' text use --model es-conll02")
COMMANDS = [[sys.executable, "-m", "hgner.cli"]] + ([[shutil.which("hgner")]] if shutil.which("hgner") else [])


@pytest.fixture(scope="session")
def tag_model(tmp_path_factory) -> Path:
    """The model directory (trained at most once per session, whichever test module asks first)."""
    from hgner.crf.modelfiles import META_FILE
    from hgner.data.corpus import load_corpus
    from hgner.training import TrainOptions
    from hgner.training.crf import train

    directory = tmp_path_factory.getbasetemp() / "tag-model"
    if not (directory / META_FILE).is_file():
        train(load_corpus(str(FIXTURE)), directory, TrainOptions(max_iterations=60))
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
