"""Atomic outputs and the refusal to overwrite inputs."""

from __future__ import annotations

import os

import pytest

from hgner.core.errors import HgnerError
from hgner.core.fileio import atomic_write, decode_utf8, outputs_together, refuse_inputs, write_text


def test_atomic_write_replaces_only_when_complete(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("previous")
    with pytest.raises(RuntimeError), atomic_write(target) as out:
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


def test_devices_are_written_not_replaced(tmp_path):
    import stat as stat_module

    from hgner.core.fileio import write_text

    write_text("/dev/null", "nothing")
    assert stat_module.S_ISCHR(os.stat("/dev/null").st_mode)
    with pytest.raises(HgnerError, match="/dev/full: cannot write"):
        write_text("/dev/full", "x" * 100_000)
    assert stat_module.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_symlinked_output_replaces_the_file_and_keeps_the_link(tmp_path):
    from hgner.core.fileio import write_text

    (tmp_path / "real.txt").write_text("old")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    write_text(tmp_path / "link.txt", "new")
    assert (tmp_path / "link.txt").is_symlink() and (tmp_path / "real.txt").read_text() == "new"


@pytest.mark.parametrize(("raw", "expected"), [
    (b"\xef\xbb\xbfcaf\xc3\xa9\r\n", "café\r\n"),  # a byte-order mark is dropped, line ends are kept
    (b"", ""),
])
def test_decode_utf8(raw, expected):
    assert decode_utf8(raw, "f.txt") == expected


@pytest.mark.parametrize(("raw", "expected"), [
    (b"\xff", "f.txt:1: not UTF-8 (byte 0xff at column 1)"),
    (b"\xef\xbb\xbfone\ntwo M\xfcnchen\n", "f.txt:2: not UTF-8 (byte 0xfc at column 6)"),
    (b"a\r\nb\n\xe9t\xe9", "f.txt:3: not UTF-8 (byte 0xe9 at column 1)"),
])
def test_bytes_that_are_not_utf8_are_named_by_line_and_column(raw, expected):
    with pytest.raises(HgnerError) as error:
        decode_utf8(raw, "f.txt")
    assert str(error.value) == expected


def test_a_fifo_that_no_one_reads_is_an_error_not_a_hang(tmp_path):
    """Issue 40: `-o FIFO` waited forever for a reader."""
    import os

    import pytest

    from hgner.core.errors import HgnerError
    from hgner.core.fileio import atomic_write, read_input

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(HgnerError, match="a FIFO that no process is reading"), atomic_write(fifo) as out:
        out.write("x")
    assert read_input(fifo) == b""  # no writer: read as empty, at once
    with pytest.raises(HgnerError, match="a device or socket"):
        read_input("/dev/zero")


def test_a_signal_just_after_the_temporary_file_is_made_leaves_nothing_behind(tmp_path, monkeypatch):
    """The 10,000-case run: SIGTERM between mkstemp and the block that removes its file left a
    hidden .part file beside the output."""
    import signal
    import tempfile

    from hgner.core import fileio

    real = tempfile.mkstemp

    def then_interrupted(*args, **kwargs):
        made = real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)  # (its KeyboardInterrupt would come at the next line of Python)
        return made

    monkeypatch.setattr(fileio.tempfile, "mkstemp", then_interrupted)
    with pytest.raises(KeyboardInterrupt), atomic_write(tmp_path / "out.txt") as out:
        out.write("x")
    assert os.listdir(tmp_path) == []


def test_outputs_together_replace_all_at_the_end_or_none(tmp_path):
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    first.write_text("old")
    with pytest.raises(RuntimeError), outputs_together():
        write_text(first, "new")
        assert first.read_text() == "old"  # complete, but not yet in place
        raise RuntimeError("the second output failed")
    assert first.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["first.txt"]
    with outputs_together():
        write_text(first, "new")
        write_text(second, "two")
        assert first.read_text() == "old" and not second.exists()
    assert first.read_text() == "new" and second.read_text() == "two"
    write_text(first, "alone")  # outside the block: in place at once
    assert first.read_text() == "alone"
