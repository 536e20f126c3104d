"""Silent wrong results in outputs (issue 40, item 6) and a clean error for a huge batch size (item 8)."""

import json
import os
import shutil

import pytest

from hgner.cli import main
from hgner.core.integrity import seal
from hgner.crf.modelfiles import META_FILE, SEALED_FILES


def test_o_naming_a_missing_folder_is_an_error(tmp_path, capsys):
    assert main(["tag", "Jim Smith", "-o", f"{tmp_path}/newdir/"]) == 2
    assert "no such folder" in capsys.readouterr().err
    assert not (tmp_path / "newdir").exists()


@pytest.mark.parametrize("output_format", ["jsonl", "html"])
def test_an_undecodable_file_name_gives_utf8_output(tmp_path, output_format):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / os.fsdecode(b"n\xff.txt")).write_text("Jim Smith went to Paris .\n")
    out = tmp_path / f"out.{output_format}"
    assert main(["tag", "--format", output_format, str(folder), "-o", str(out)]) == 0
    out.read_bytes().decode("utf-8")  # valid UTF-8 throughout


def test_models_info_escapes_terminal_sequences(tmp_path, tiny_model, capsys):
    model = tmp_path / "model"
    shutil.copytree(tiny_model.directory, model)
    meta = json.loads((model / META_FILE).read_text())
    meta["name"] = "evil\x1b]0;owned\x07\x1b[2J"
    (model / META_FILE).write_text(json.dumps(meta))
    seal(model, SEALED_FILES)
    code = main(["models", "info", str(model)])
    out = capsys.readouterr().out
    assert code == 0 and "\x1b" not in out and "\\x1b" in out


def test_a_huge_batch_size_is_one_clean_error(capsys):
    with _no_warnings():
        assert main(["tag", "--decoder", "mgpmh", "--set", "batch_size=1e308", "Jim Smith went to Paris ."]) == 2
    assert "batch_size must be a finite number in (0, 1000000000]" in capsys.readouterr().err


class _no_warnings:
    def __enter__(self):
        import warnings

        self.catcher = warnings.catch_warnings(record=True)
        self.caught = self.catcher.__enter__()
        warnings.simplefilter("always")

    def __exit__(self, *exc):
        self.catcher.__exit__(*exc)
        assert not [w for w in self.caught if issubclass(w.category, RuntimeWarning)]


def test_brat_never_writes_through_a_link_inside_its_folder(tmp_path):
    """Issue 40: a symlink already in -o DIR made the text copy replace a file outside DIR."""
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me")
    text = tmp_path / "doc.txt"
    text.write_text("Jim Smith went to Paris .\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "doc.txt").symlink_to(outside)
    (out / "doc.ann").symlink_to(outside)
    assert main(["tag", "--format", "brat", str(text), "-o", str(out)]) == 0
    assert outside.read_text() == "keep me"
    assert not (out / "doc.txt").is_symlink() and "Jim Smith" in (out / "doc.txt").read_text()
    assert "PER" in (out / "doc.ann").read_text()
