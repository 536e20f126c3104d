"""The small silences of ``hgner tag`` (issue 61): standard input on a terminal says how to end
it, brat says what it wrote, the skip graph's chunking is a note rather than a warning, and a
cluster job of many small files is cut so that every worker gets work."""

from __future__ import annotations

import logging
import os
import pty
import shutil
import subprocess
import warnings

from tag_support import COMMANDS, SENTENCE, run_hgner, subprocess_env, tag_model  # noqa: F401  (fixture)

from hgner.distributed.inputs import MIN_PARTS, plan_parts
from hgner.tagging.settings import TagSettings
from hgner.tagging.tagger import Tagger


def test_standard_input_on_a_terminal_says_how_to_end_it(tag_model):
    controller, terminal = pty.openpty()
    try:
        process = subprocess.Popen([*COMMANDS[0], "tag", "--model", str(tag_model)], stdin=terminal,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=subprocess_env())
        os.write(controller, f"{SENTENCE}\n".encode() + b"\x04")  # Ctrl-D on a new line ends the input
        out, err = process.communicate(timeout=120)
    finally:
        os.close(controller)
        os.close(terminal)
    assert process.returncode == 0, err
    assert "hgner tag: reading standard input; end it with Ctrl-D on a new line" in err
    assert "[Angela Merkel](PER)" in out
    piped = run_hgner(["tag", "--model", str(tag_model)], input=SENTENCE)
    assert "reading standard input" not in piped.stderr


def test_brat_says_what_it_wrote(tag_model, tmp_path):
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text(SENTENCE, encoding="utf-8")
    beside = run_hgner(["tag", "--model", str(tag_model), "--format", "brat", str(tmp_path / "a.txt"),
                        str(tmp_path / "b.txt")])
    assert beside.returncode == 0 and beside.stderr == "hgner tag: wrote 2 .ann files beside the input files\n"
    folder = run_hgner(["tag", "--model", str(tag_model), "--format", "brat", "-o", str(tmp_path / "out"), SENTENCE])
    assert folder.stderr == (f"hgner tag: wrote 1 .ann file and the text they annotate (NAME.txt) in "
                             f"{tmp_path / 'out'}\n")


def test_skip_chunks_are_a_note_not_a_warning(tag_model, tmp_path, caplog):
    from tag_support import FIXTURE

    from hgner.crf import skip
    from hgner.crf.model import CrfModel
    from hgner.data.corpus import load_corpus
    from hgner.training import skip as skip_training

    directory = tmp_path / "with-skip"
    shutil.copytree(tag_model, directory)
    skip.save(skip_training.estimate(load_corpus(str(FIXTURE)), CrfModel.load(directory)), directory)
    tagger = Tagger(TagSettings(directory, decoder="gibbs", graph="skip", seed=0))
    tagger.group_tokens = 12  # (SKIP_MAX_TOKENS in small)
    with warnings.catch_warnings(), caplog.at_level(logging.INFO, logger="hgner"):
        warnings.simplefilter("error")
        entities = tagger.tag(" ".join([SENTENCE] * 4))
    assert len(entities) == 12
    assert [r.levelno for r in caplog.records] == [logging.INFO]
    assert "is tagged in chunks of that size" in caplog.records[0].getMessage()


def test_many_small_files_make_a_part_for_every_worker(tmp_path):
    paths = []
    for i in range(1000):
        paths.append(str(tmp_path / f"{i:04d}.txt"))
        (tmp_path / f"{i:04d}.txt").write_text(f"Jim Smith flew to Paris on day {i} .\n", encoding="utf-8")
    parts = plan_parts(paths, "text")
    assert MIN_PARTS <= len(parts) <= MIN_PARTS + 2
    assert [piece.path for part in parts for piece in part] == paths
    assert plan_parts(paths[:3], "text") == [[p] for p in plan_parts(paths[:3], "text") for p in p]
    assert len(plan_parts(paths[:3], "text")) == 3
