"""A model's seal covers every file, meta.json included; our own reader checks model.crfsuite's
structure (FEAT, LFRF/AFRF, CQDB) before crfsuite's C code reads it (issue 40, items 1 and 2)."""

import json
import os
import shutil
import struct
import subprocess
import sys

import pytest

from hgner.core.errors import ModelError
from hgner.core.integrity import SEAL_FILE
from hgner.crf import crfsuite_format
from hgner.crf.model import CrfModel
from hgner.crf.modelfiles import META_FILE, MODEL_FILE, builtin_models, refresh_files, shipped_models_dir


@pytest.fixture()
def copy(tiny_model, tmp_path):
    target = tmp_path / "copy"
    shutil.copytree(tiny_model.directory, target)
    return target


def header(data):
    return struct.unpack_from("<4sI4sIIIIIIIII", data, 0)


def use_with_crfsuite(directory):
    """Load the model and tag with crfsuite's own decoder in a child process: (exit status, stderr)."""
    code = ("import sys\nfrom hgner.tagging.tagger import Tagger\nfrom hgner.tagging.settings import TagSettings\n"
            "from hgner.core.errors import HgnerError\n"
            "try:\n    list(Tagger(TagSettings(sys.argv[1], 'crfsuite')).tag_text('Angela Merkel visited Paris .'))\n"
            "except HgnerError as e:\n    print(e, file=sys.stderr); sys.exit(2)\n")
    result = subprocess.run([sys.executable, "-c", code, str(directory)], capture_output=True, text=True, timeout=120)
    return result.returncode, result.stderr


def test_every_shipped_model_is_sealed_and_loads():
    for name in builtin_models():
        assert (shipped_models_dir() / name / SEAL_FILE).is_file()
        crfsuite_format.parse((shipped_models_dir() / name / MODEL_FILE).read_bytes())


@pytest.mark.parametrize("setting, value", [("window", 0), ("affixes", 0)])
def test_an_edited_feature_setting_is_refused(copy, setting, value):
    meta = json.loads((copy / META_FILE).read_text())
    meta["features"][setting] = value
    (copy / META_FILE).write_text(json.dumps(meta))
    with pytest.raises(ModelError, match="meta.json: damaged or edited after the model was sealed"):
        CrfModel.load(copy)


def test_a_model_without_a_seal_is_refused(copy):
    (copy / SEAL_FILE).unlink()
    with pytest.raises(ModelError, match="the model is not sealed"):
        CrfModel.load(copy)


def test_a_file_added_after_sealing_is_refused(copy):
    (copy / "skip.json").write_text("{}")
    with pytest.raises(ModelError, match="skip.json: added after the model was sealed"):
        CrfModel.load(copy)


def test_a_fifo_or_link_in_place_of_a_model_file_is_refused_without_blocking(copy, tmp_path):
    data = (copy / MODEL_FILE).read_bytes()
    (copy / MODEL_FILE).unlink()
    os.mkfifo(copy / MODEL_FILE)
    with pytest.raises(ModelError, match="not a regular file"):
        CrfModel.load(copy)
    (copy / MODEL_FILE).unlink()
    (tmp_path / "elsewhere").write_bytes(data)
    (copy / MODEL_FILE).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ModelError, match="symbolic link"):
        CrfModel.load(copy)


def test_huge_weights_are_refused_even_when_resealed(copy):
    data = bytearray((copy / MODEL_FILE).read_bytes())
    features_at = header(data)[7]
    struct.pack_into("<d", data, features_at + 12 + 12, 1e200)  # the first feature's weight
    (copy / MODEL_FILE).write_bytes(bytes(data))
    refresh_files(copy)
    with pytest.raises(ModelError, match="weights that are not finite or exceed"):
        CrfModel.load(copy)


def damage_label_reference(data):
    """Point label 0's transition list at a feature id far past the FEAT chunk."""
    labelrefs_at = header(data)[10]
    offset = struct.unpack_from("<I", data, labelrefs_at + 12)[0]
    struct.pack_into("<I", data, offset, 1)
    struct.pack_into("<I", data, offset + 4, 0x7FFFFFFF)


def damage_attribute_reference(data):
    attrrefs_at = header(data)[11]
    struct.pack_into("<I", data, attrrefs_at + 12, len(data) + 4096)


def damage_hash_table(data):
    """Fill an attribute hash table's buckets: crfsuite's lookup would probe forever."""
    attributes_at = header(data)[9]
    for table in range(256):
        offset, n = struct.unpack_from("<II", data, attributes_at + 24 + 8 * table)
        if n:
            for bucket in range(n):
                struct.pack_into("<I", data, attributes_at + offset + 8 * bucket + 4, 2072)
            return


def damage_backward_array(data):
    labels_at = header(data)[8]
    struct.pack_into("<I", data, labels_at + 20, 0x7FFFFFF0)


@pytest.mark.parametrize("damage", [damage_label_reference, damage_attribute_reference, damage_hash_table,
                                    damage_backward_array])
def test_resealed_structural_damage_is_one_error_never_a_crash(copy, damage):
    data = bytearray((copy / MODEL_FILE).read_bytes())
    damage(data)
    (copy / MODEL_FILE).write_bytes(bytes(data))
    refresh_files(copy)
    code, stderr = use_with_crfsuite(copy)
    assert code == 2, stderr
    assert MODEL_FILE in stderr and "Traceback" not in stderr


def test_the_reader_agrees_with_crfsuite_on_a_sound_model(tiny_model):
    parsed = crfsuite_format.parse((tiny_model.directory / MODEL_FILE).read_bytes())
    assert sorted(parsed.labels) == sorted(tiny_model.labels)
    assert len(parsed.attributes) == len(tiny_model.attribute_index)


def test_reseal_seals_a_model_that_loads_and_refuses_one_that_does_not(copy, capsys):
    from hgner.reseal import main

    meta = json.loads((copy / META_FILE).read_text())
    meta["features"]["window"] = 1
    (copy / META_FILE).write_text(json.dumps(meta))
    assert main([str(copy)]) == 0
    assert CrfModel.load(copy).feature_config.window == 1
    sealed = (copy / SEAL_FILE).read_bytes()
    (copy / MODEL_FILE).write_bytes((copy / MODEL_FILE).read_bytes()[:-8])
    assert main([str(copy)]) == 2
    assert "truncated" in capsys.readouterr().err
    assert (copy / SEAL_FILE).read_bytes() == sealed  # the old seal kept (it refuses the damaged file)


def test_each_model_file_is_hashed_once_per_load(copy, monkeypatch):
    from hgner.core import fileio, integrity

    hashed = []
    real = fileio.stream_sha256

    def counting(stream):
        hashed.append(os.path.basename(os.readlink(f"/proc/self/fd/{stream.fileno()}")))
        return real(stream)

    monkeypatch.setattr(integrity, "stream_sha256", counting)
    monkeypatch.setattr(fileio, "stream_sha256", counting)
    CrfModel.load(copy)
    sealed = json.loads((copy / SEAL_FILE).read_text())["files"]
    # each file once, meta.json too (the type cache's key, a digest of meta.json's figures, is no file)
    assert sorted(hashed) == sorted(sealed)


def test_a_files_map_that_disagrees_with_the_seal_is_refused(copy):
    from hgner.core.integrity import seal
    from hgner.crf.modelfiles import SEALED_FILES

    meta = json.loads((copy / META_FILE).read_text())
    right = dict(meta["files"][MODEL_FILE])
    meta["files"][MODEL_FILE]["sha256"] = "0" * 64
    (copy / META_FILE).write_text(json.dumps(meta))
    seal(copy, SEALED_FILES)  # meta.json resealed as edited: the seal holds, the map is wrong
    with pytest.raises(ModelError, match=f"{MODEL_FILE}: damaged: meta.json records a size or sha256 other than"):
        CrfModel.load(copy)
    meta["files"][MODEL_FILE] = right
    meta["files"]["skip.json"] = meta["files"][MODEL_FILE]  # a file the folder lacks (and the seal does not record)
    assert not (copy / "skip.json").exists()
    (copy / META_FILE).write_text(json.dumps(meta))
    seal(copy, SEALED_FILES)
    with pytest.raises(ModelError, match="skip.json: meta.json records it but seal.json does not"):
        CrfModel.load(copy)


def test_hashlittle_gives_lookup3s_published_values():
    import numpy as np

    for text, value in [(b"", 0xDEADBEEF), (b"Four score and seven years ago", 0x17770551)]:
        assert crfsuite_format.hashlittle(np.frombuffer(text + b"\0", dtype=np.uint8), 0, len(text)) == value


def swap_attribute_buckets(data):
    """Swap the records of two used buckets of one attribute hash table (hashes kept): each string's
    lookup then meets the other's record, so crfsuite would not find either attribute."""
    attributes_at = header(data)[9]
    for table in range(256):
        offset, n = struct.unpack_from("<II", data, attributes_at + 24 + 8 * table)
        used = [b for b in range(n) if struct.unpack_from("<I", data, attributes_at + offset + 8 * b + 4)[0]]
        if len(used) >= 2:
            first, second = (attributes_at + offset + 8 * b + 4 for b in used[:2])
            records = struct.unpack_from("<I", data, first)[0], struct.unpack_from("<I", data, second)[0]
            struct.pack_into("<I", data, first, records[1])
            struct.pack_into("<I", data, second, records[0])
            return
    raise AssertionError("no hash table with two attributes")


def test_an_attribute_crfsuite_would_not_find_by_its_hash_is_refused_even_when_resealed(copy):
    data = bytearray((copy / MODEL_FILE).read_bytes())
    swap_attribute_buckets(data)
    crfsuite_format.parse((copy / MODEL_FILE).read_bytes())  # (the sound file parses)
    with pytest.raises(ValueError, match="crfsuite's hash lookup does not find it as attribute"):
        crfsuite_format.parse(bytes(data))
    (copy / MODEL_FILE).write_bytes(bytes(data))
    refresh_files(copy)
    with pytest.raises(ModelError, match=f"{MODEL_FILE}: attribute .*crfsuite's hash lookup does not find it"):
        CrfModel.load(copy)


def test_read_metadata_without_every_file_checks_meta_json_only(copy):
    """What a model's meta.json says (its language for the language check's advice) is read with
    meta.json checked against the seal, and the model's other files left unread."""
    from hgner.crf.modelfiles import read_metadata

    data = bytearray((copy / MODEL_FILE).read_bytes())
    data[-1] ^= 1
    (copy / MODEL_FILE).write_bytes(bytes(data))
    assert read_metadata(copy, every_file=False)["labels"]
    with pytest.raises(ModelError, match="damaged or edited"):
        read_metadata(copy)
    meta = json.loads((copy / META_FILE).read_text())
    meta["language"] = "nl"
    (copy / META_FILE).write_text(json.dumps(meta))
    with pytest.raises(ModelError, match=f"{META_FILE}: damaged or edited"):
        read_metadata(copy, every_file=False)
