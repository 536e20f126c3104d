"""Atomic outputs and the refusal to overwrite inputs."""

from __future__ import annotations

import os

import pytest

from hgner.errors import HgnerError
from hgner.fileio import atomic_write, refuse_inputs, write_text


def test_atomic_write_replaces_only_when_complete(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("previous")
    with pytest.raises(RuntimeError):
        with atomic_write(target) as out:
            out.write("half")
            raise RuntimeError("interrupted")
    assert target.read_text() == "previous"
    assert os.listdir(tmp_path) == ["out.txt"]  # no partial file left behind
    write_text(target, "new")
    assert target.read_text() == "new"


def test_atomic_write_keeps_permissions(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("x")
    target.chmod(0o640)
    write_text(target, "y")
    assert target.stat().st_mode & 0o777 == 0o640


@pytest.mark.parametrize("where, message", [("missing/out.txt", "does not exist"), (".", "is a directory")])
def test_unwritable_paths_are_one_line_errors(tmp_path, where, message):
    with pytest.raises(HgnerError, match=message):
        write_text(tmp_path / where, "x")


def test_refuse_inputs_sees_through_links(tmp_path):
    source = tmp_path / "a.txt"
    source.write_text("text")
    link = tmp_path / "link.txt"
    link.symlink_to(source)
    with pytest.raises(HgnerError, match="is also an input"):
        refuse_inputs(link, [source], "-o")
    refuse_inputs(tmp_path / "other.txt", [source], "-o")  # a new file is fine
    assert source.read_text() == "text"
