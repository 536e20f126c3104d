"""Signals and workers (issue 62): SIGHUP stops ``hgner serve`` as SIGTERM does; with workers, a
signal to the supervisor alone stops every worker, workers stop when their supervisor is killed,
and no process or metrics folder is left."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import psutil
import pytest

pytest.importorskip("fastapi", reason="hgner serve needs the serve extra (pip install 'hgner[serve]')")

from server_support import group_alive, running_server  # noqa: E402

from hgner.server.metrics import MULTIPROCESS_VARIABLE  # noqa: E402


def metrics_folder(process: psutil.Process) -> Path:
    return next(Path(child.environ()[MULTIPROCESS_VARIABLE]) for child in process.children()
                if MULTIPROCESS_VARIABLE in child.environ())


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGTERM])
def test_one_worker_stops_on_the_signal(signum):
    with running_server() as (process, _):
        os.kill(process.pid, signum)
        assert process.wait(30) == 0
        output = process.stdout.read().decode()
        assert "Traceback" not in output and "Terminated" not in output, output
        assert not group_alive(process.pid)


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGTERM, signal.SIGKILL])
def test_workers_stop_with_their_supervisor(signum):
    with running_server("--workers", "2") as (process, _):
        supervisor = psutil.Process(process.pid)
        workers = supervisor.children()
        folder = metrics_folder(supervisor)
        assert folder.is_dir()
        os.kill(process.pid, signum)  # the supervisor alone, not its process group
        status = process.wait(60)
        assert status == (-signal.SIGKILL if signum == signal.SIGKILL else 0)
        gone, alive = psutil.wait_procs(workers, timeout=60)  # (the resource tracker too)
        assert not alive, f"workers left running after {signal.Signals(signum).name} to the supervisor"
        deadline = time.monotonic() + 10
        while folder.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not folder.exists(), "the metrics folder is left behind"
        assert not group_alive(process.pid)
