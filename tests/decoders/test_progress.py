"""A long decode shows its sweeps on a terminal (issue 40: --sweeps 100000000 ran 90 s without a word)."""

import os
import pty
import select
import signal
import subprocess
import sys
import time

import pytest


@pytest.mark.skipif(not hasattr(pty, "openpty"), reason="needs a pseudo-terminal")
def test_a_long_decode_shows_progress_on_a_terminal():
    import fcntl
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a terminal 100 columns wide
    process = subprocess.Popen([sys.executable, "-m", "hgner.cli", "tag", "--decoder", "gibbs", "--sweeps", "100000000",
                                "Jim Smith went home ."], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=follower, start_new_session=True)
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + 60
    try:
        while b"sweep" not in seen and time.monotonic() < deadline:
            if select.select([leader], [], [], 1.0)[0]:
                try:
                    seen += os.read(leader, 4096)
                except OSError:
                    break
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        os.close(leader)
    assert b"sweep" in seen
