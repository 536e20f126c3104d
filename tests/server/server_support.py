"""Shared by the server tests: the settings of a test server and a browser to drive."""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx

from hgner.crf.modelfiles import model_directory
from hgner.server.settings import ServerSettings

MODEL = "en-conll03"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run"]


def settings(**changes) -> ServerSettings:
    """Settings for a test server with the shipped English model (its kernels compiled on demand)."""
    values = dict(models={MODEL: str(model_directory(MODEL))}, warm=False)
    values.update(changes)
    return ServerSettings(**values)


def chromium() -> str | None:
    """Debian's chromium, or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


@contextlib.contextmanager
def running_server(*options: str, ready_seconds: float = 300,
                   descriptors: int | None = None) -> Iterator[tuple[subprocess.Popen, str]]:
    """``hgner serve`` on a free 127.0.0.1 port in its own session, ready: (the process, its URL);
    with ``descriptors``, the most files it may open. Stopped (SIGTERM, then SIGKILL) at the end
    whatever happened."""
    port = free_port()
    command = [sys.executable, "-m", "hgner.cli", "serve", "--model", MODEL, "--port", str(port), *options]
    limit = None if descriptors is None else lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (descriptors, descriptors))
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                               preexec_fn=limit)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + ready_seconds
        while True:
            if process.poll() is not None:
                raise AssertionError(f"hgner serve exited with {process.returncode}: {process.stdout.read().decode()}")
            try:
                if httpx.get(url + "/ready", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError("hgner serve did not get ready")
            time.sleep(0.2)
        yield process, url
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        process.stdout.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def group_alive(pgid: int, grace: float = 10.0) -> bool:
    """Whether any process of the process group ``pgid`` is still there after ``grace`` seconds
    (multiprocessing's resource tracker ends by itself once the server has exited)."""
    deadline = time.monotonic() + grace
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        if time.monotonic() > deadline:
            return True
        time.sleep(0.1)
