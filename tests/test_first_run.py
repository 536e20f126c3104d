"""The first run (issue 61): numba's compile is announced on a terminal, and the kernels' cache works
when the installed package's folder is not writable."""

from __future__ import annotations

import io
import os
import pty
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import numba

from hgner.core.jit import NOTE, announced

ROOT = Path(__file__).resolve().parent.parent


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _compile_two() -> None:
    numba.njit(lambda x: x + 1)(1)
    numba.njit(lambda x: x * 2)(2)


def test_the_first_compile_is_announced_once_on_a_terminal():
    stream = _Terminal()
    with announced("hgner tag", stream):
        _compile_two()
    assert stream.getvalue() == f"hgner tag: {NOTE}\n"


def test_no_note_off_a_terminal_or_outside_the_block():
    stream = io.StringIO()
    with announced("hgner tag", stream):
        _compile_two()
    terminal = _Terminal()
    with announced("hgner tag", terminal):
        pass
    _compile_two()
    assert stream.getvalue() == "" and terminal.getvalue() == ""


def _read_only_copy(tmp_path: Path) -> Path:
    """hgner copied into ``tmp_path/site``, every package folder unwritable to numba: read-only, and its
    ``__pycache__`` a plain file (so even root, whom permissions do not stop, cannot make the folder)."""
    site = tmp_path / "site"
    shutil.copytree(ROOT / "hgner", site / "hgner", ignore=shutil.ignore_patterns("__pycache__"))
    (site / "models").symlink_to(ROOT / "models")  # where a source tree's hgner finds the shipped models
    for folder in [site / "hgner", *(p for p in (site / "hgner").rglob("*") if p.is_dir())]:
        (folder / "__pycache__").write_text("")
        folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    return site


def _tag_on_a_terminal(site: Path, cache: Path) -> tuple[str, str]:
    """``python -m hgner tag`` from ``site``, standard error a terminal: (stdout, stderr)."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(PYTHONPATH=str(site), XDG_CACHE_HOME=str(cache), HGNER_DATA=str(cache / "data"))
    leader, follower = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "hgner", "tag", "Jim Smith flew to Paris."], cwd=cache,
                              env=env, stdout=subprocess.PIPE, stderr=follower, timeout=300, check=True)
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the terminal's other end is closed and read
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
    return done.stdout.decode(), b"".join(chunks).decode().replace("\r\n", "\n")


def test_an_unwritable_package_caches_in_the_user_cache_and_says_so_once(tmp_path):
    site, cache = _read_only_copy(tmp_path), tmp_path / "cache"
    cache.mkdir()
    try:
        out, err = _tag_on_a_terminal(site, cache)
        assert out == "[Jim Smith](PER) flew to [Paris](LOC).\n"
        assert err == f"hgner tag: {NOTE}\n"
        cached = list((cache / "numba").rglob("*.nbi"))
        assert any(p.name.startswith("chain._viterbi") for p in cached)
        assert not [p for p in (site / "hgner").rglob("*") if p.suffix in {".nbi", ".nbc"}]
        assert _tag_on_a_terminal(site, cache) == (out, "")  # loaded from the cache: nothing to announce
    finally:
        for folder in [site / "hgner", *(p for p in (site / "hgner").rglob("*") if p.is_dir())]:
            folder.chmod(stat.S_IRWXU)


def test_with_nowhere_to_cache_the_kernels_go_to_the_temporary_directory(tmp_path, monkeypatch):
    """A read-only install and home: numba would refuse to define the kernels ("no locator available")."""
    import tempfile

    from hgner.core.numba_cache import ensure_cache_dir

    blocked = tmp_path / "blocked"
    blocked.write_text("")  # a file where the folders would go: unwritable even for root
    monkeypatch.setenv("NUMBA_CACHE_DIR", "")  # (unset for numba; restored after the test)
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(numba.config, "CACHE_DIR", numba.config.CACHE_DIR)
    kernels = str(blocked / "decoders" / "__pycache__")
    folder = ensure_cache_dir(kernels)
    assert folder is not None and folder.startswith(str(tmp_path))
    assert os.environ["NUMBA_CACHE_DIR"] == folder and folder == numba.config.CACHE_DIR
    assert ensure_cache_dir(kernels) is None  # given (here by the first call): numba's to use


def test_numba_keeps_its_own_places_when_it_has_them(tmp_path, monkeypatch):
    from hgner.core.numba_cache import ensure_cache_dir

    monkeypatch.setenv("NUMBA_CACHE_DIR", "")
    blocked = tmp_path / "blocked"
    blocked.write_text("")
    assert ensure_cache_dir(str(tmp_path / "pkg" / "__pycache__")) is None  # the package's folder
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert ensure_cache_dir(str(blocked / "__pycache__")) is None  # numba's user-wide folder
    assert not os.environ["NUMBA_CACHE_DIR"]
