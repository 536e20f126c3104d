"""Outputs never overwrite what they do not own, and the seal holds (issues 61 and 62): an unrelated
folder with its own meta.json, a shipped model given as a path, the package folder, a model
folder as a tag output; a seal that lists a file twice, an unrecorded model file, a huge file in
place of a small one, a garbage skip potential resealed, Ctrl-C during a reseal."""

import json
import shutil
from pathlib import Path

import pytest

from hgner.cli import main
from hgner.core import integrity
from hgner.core.errors import HgnerError, ModelError
from hgner.core.fileio import output_stream, outputs_together, write_text
from hgner.core.integrity import SEAL_FILE
from hgner.crf.model import CrfModel
from hgner.crf.modelfiles import (
    META_FILE,
    MODEL_FILE,
    SEALED_FILES,
    check_model_target,
    model_target,
    read_metadata,
    shipped_models_dir,
)
from hgner.data.corpus import write_conll


@pytest.fixture()
def copy(tiny_model, tmp_path):
    target = tmp_path / "copy"
    shutil.copytree(tiny_model.directory, target)
    return target


@pytest.fixture()
def corpus_file(tmp_path, tiny_corpus):
    path = tmp_path / "gold.conll"
    with path.open("w") as out:
        write_conll(out, tiny_corpus, [s.tags for s in tiny_corpus.sentences])
    return path


def test_train_refuses_a_folder_whose_meta_json_is_not_an_hgner_models(tmp_path, corpus_file, capsys):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "meta.json").write_text('{"name": "my project", "version": 3}\n')
    code = main(["train", "--train", str(corpus_file), "--out", str(project), "--max-iterations", "5"])
    err = capsys.readouterr().err
    assert code == 2 and "not an hgner model folder" in err and len(err.strip().splitlines()) == 1
    assert (project / "meta.json").read_text() == '{"name": "my project", "version": 3}\n'
    assert sorted(p.name for p in project.iterdir()) == ["meta.json"]


def test_train_replaces_an_hgner_model_keeping_the_users_files(copy, corpus_file):
    (copy / "README").write_text("notes")
    assert main(["train", "--train", str(corpus_file), "--out", str(copy), "--max-iterations", "5"]) == 0
    assert (copy / "README").read_text() == "notes"
    CrfModel.load(copy)


def test_an_empty_folder_is_a_model_target(tmp_path):
    (tmp_path / "empty").mkdir()
    check_model_target(tmp_path / "empty")


@pytest.mark.parametrize("where", ["shipped", "models", "package"])
def test_a_model_is_never_written_into_the_package(where):
    root = shipped_models_dir()
    out = {"shipped": root / "en-3class", "models": root / "my-model",
           "package": Path(integrity.__file__).resolve().parents[1] / "mine"}[where]
    with pytest.raises(ModelError, match="refusing to write a model there .* my-model saves one"):
        model_target(str(out))


def test_a_shipped_model_given_as_a_relative_path_is_refused(monkeypatch):
    root = shipped_models_dir()
    monkeypatch.chdir(root.parent)
    with pytest.raises(ModelError, match="shipped models' folder"):
        model_target(f"{root.name}/../{root.name}/en-3class")


def test_tag_output_into_a_model_folder_is_refused(copy, tmp_path, capsys):
    before = {p.name: p.read_bytes() for p in copy.iterdir()}
    for target in (copy / META_FILE, copy / "tags.txt"):
        assert main(["tag", "Jim Smith went to Paris .", "-o", str(target)]) == 2
        assert "inside the model folder" in capsys.readouterr().err
    (tmp_path / "doc.txt").write_text("Jim Smith went to Paris .\n")
    assert main(["tag", "--format", "brat", str(tmp_path / "doc.txt"), "-o", str(copy)]) == 2
    assert "inside the model folder" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in copy.iterdir()} == before


def test_an_unsealed_hgner_model_folder_is_a_model_folder_too(copy):
    (copy / SEAL_FILE).unlink()
    assert integrity.is_model_folder(copy)
    with pytest.raises(HgnerError, match="inside the model folder"), output_stream(copy / "x.txt", refuse=integrity.refuse_model_folder):
        pass
    with pytest.raises(HgnerError, match="inside the model folder"), outputs_together(integrity.refuse_model_folder):
        write_text(copy / "y.txt", "y")
    assert not (copy / "x.txt").exists() and not (copy / "y.txt").exists()


def test_model_files_are_still_written_into_a_model_folder(copy):
    write_text(copy / "notes.txt", "a model's own writer is not a command's output")  # (outside outputs_together)
    assert (copy / "notes.txt").is_file()


def test_a_seal_listing_a_file_twice_is_refused(copy):
    text = (copy / SEAL_FILE).read_text()
    entry = json.dumps({"size": 1, "sha256": "0" * 64})
    (copy / SEAL_FILE).write_text(text.replace('"files": {', f'"files": {{"{MODEL_FILE}": {entry},', 1))
    with pytest.raises(ModelError, match="model.crfsuite' appears twice"):
        CrfModel.load(copy)


def test_an_unrecorded_model_file_is_refused_even_reading_meta_json_alone(copy):
    (copy / "skip.npz").write_bytes(b"not recorded")
    with pytest.raises(ModelError, match="skip.npz: added after the model was sealed"):
        read_metadata(copy, every_file=False)


def test_a_huge_file_in_place_of_a_small_one_is_refused_before_it_is_read(copy, monkeypatch):
    with (copy / MODEL_FILE).open("r+b") as stream:
        stream.truncate(3 * 2**30)  # sparse: 3 GB on paper, nothing on disk
    read = []
    real = integrity.stream_sha256
    monkeypatch.setattr(integrity, "stream_sha256", lambda stream: read.append(stream.name) or real(stream))
    with pytest.raises(ModelError, match="model.crfsuite: damaged or edited"):
        CrfModel.load(copy)
    assert all(not str(name).endswith(MODEL_FILE) for name in read)


def test_reseal_refuses_a_garbage_skip_potential_and_keeps_the_old_seal(copy, capsys):
    from hgner.reseal import main as reseal

    seal, meta = (copy / SEAL_FILE).read_bytes(), (copy / META_FILE).read_bytes()
    (copy / "skip.npz").write_bytes(b"garbage")
    shutil.copy(shipped_models_dir() / "en-3class" / "skip.json", copy / "skip.json")
    assert reseal([str(copy)]) == 2
    err = capsys.readouterr().err
    assert f"{copy / 'skip.npz'}" in err and len(err.strip().splitlines()) == 1  # (the folder's, not the trial copy's)
    assert (copy / SEAL_FILE).read_bytes() == seal and (copy / META_FILE).read_bytes() == meta


def test_ctrl_c_during_a_reseal_keeps_the_old_seal(copy, monkeypatch, capsys):
    import hgner.reseal

    seal, meta = (copy / SEAL_FILE).read_bytes(), (copy / META_FILE).read_bytes()

    def interrupted(directory):
        raise KeyboardInterrupt

    monkeypatch.setattr(hgner.reseal, "load_fully", interrupted)
    assert hgner.reseal.main([str(copy)]) == 130
    assert capsys.readouterr().err.strip() == f"hgner.reseal: interrupted; {copy} left as it was"
    assert (copy / SEAL_FILE).read_bytes() == seal and (copy / META_FILE).read_bytes() == meta


def test_reseal_seals_what_loads(copy):
    from hgner.reseal import main as reseal

    meta = json.loads((copy / META_FILE).read_text())
    meta["notes"] = "edited by hand"
    (copy / META_FILE).write_text(json.dumps(meta))
    with pytest.raises(ModelError):
        CrfModel.load(copy)
    assert reseal([str(copy)]) == 0
    assert CrfModel.load(copy).metadata["notes"] == "edited by hand"
    assert sorted(json.loads((copy / SEAL_FILE).read_text())["files"]) == sorted(
        name for name in SEALED_FILES if (copy / name).exists())


@pytest.mark.parametrize("delay", [0.5, 2.0])
def test_sigint_to_python_m_hgner_reseal_is_one_line_and_keeps_the_seal(tmp_path, delay):
    import signal
    import subprocess
    import sys
    import time

    model = tmp_path / "en-3class"
    shutil.copytree(shipped_models_dir() / "en-3class", model)
    seal, meta = (model / SEAL_FILE).read_bytes(), (model / META_FILE).read_bytes()
    child = subprocess.Popen([sys.executable, "-m", "hgner.reseal", str(model)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    time.sleep(delay)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=120)
    assert "Traceback" not in err
    if out.startswith("sealed"):  # on a quiet machine the work can end before the signal comes: no harm then
        assert child.returncode in (0, -signal.SIGINT) and err == ""
        CrfModel.load(model)
        return
    assert child.returncode == 130, (out, err)
    assert len(err.strip().splitlines()) == 1 and "interrupted" in err
    assert (model / SEAL_FILE).read_bytes() == seal and (model / META_FILE).read_bytes() == meta


@pytest.mark.parametrize("what", ["missing", "file"])
def test_reseal_of_what_is_no_folder_is_one_line(tmp_path, capsys, what):
    from hgner.reseal import main as reseal

    target = tmp_path / "x"
    if what == "file":
        target.write_text("x")
    assert reseal([str(target)]) == 2
    err = capsys.readouterr().err
    assert err == f"hgner.reseal: error: {target}: not a model folder ({'not a directory' if what == 'file' else 'no such directory'})\n"
