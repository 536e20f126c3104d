"""Connecting to a Dask cluster: the one module that talks to Dask's client and local cluster.
``spec`` is ``local`` (one worker process per core), ``local:N`` or ``tcp://HOST:PORT``."""

from __future__ import annotations

import logging
import os
import queue
import re
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..core import deadline
from ..core.deadline import call_within
from ..core.errors import HgnerError, named
from ..core.process import quiet_forks

if TYPE_CHECKING:
    from distributed import Client


_CLUSTER_SPEC = re.compile(r"local(?::(\d{1,9}))?|tcp://(?:[^\s/:\[\]]+|\[[0-9A-Fa-f:.]+\]):(\d{1,5})")


WORKERS_PER_CORE = 4  # local:N takes at most this many worker processes per core (each loads the model)


# How a local cluster starts its worker processes. Forked from this process, a worker starts with the
# interpreter and the modules already imported (numba, distributed) instead of starting them again
# (Dask's default, spawn): on the 1M-token benchmark, local:2 took 7.7 s wall against 9.0. Forking is
# Linux's own default; elsewhere (macOS, where system libraries are not fork-safe) Dask's default stays.
LOCAL_START_METHOD = "fork" if sys.platform.startswith("linux") else "spawn"

# Dask settings of a local cluster. Its workers' statistical profiler (a stack sample of the task
# thread every 10 ms) feeds only the dashboard, which a local cluster here does not have: off, it
# leaves the workers 5-15% of their CPU time on the 1M-token benchmark (benchmarks/bench_fixed.py).
# Dask's periodic checks wake every process of the cluster many times a second (the event loop's
# responsiveness tick every 20 ms, the system monitor every 0.5 s, the workers' memory check every
# 0.1 s), each wake taking the GIL from the task: measured idle, 0.02 CPU-s per second in each
# worker and 0.06 in this process. Once a second or two they cost a fifth of that, while a worker
# that runs out of memory is still paused or restarted within a second.
LOCAL_DASK_CONFIG = {"distributed.worker.multiprocessing-method": LOCAL_START_METHOD,
                     "distributed.worker.profile.enabled": False,
                     "distributed.admin.tick.interval": "1s",
                     "distributed.admin.system-monitor.interval": "2s",
                     "distributed.worker.memory.monitor-interval": "1s"}


def local_workers(spec: str) -> int | None:
    """The worker processes ``spec`` asks for on this machine (``None`` for a scheduler address);
    an :class:`HgnerError` for anything but ``local``, ``local:N`` (1 <= N <= :data:`WORKERS_PER_CORE`
    per core) or ``tcp://HOST:PORT`` (a port 1..65535)."""
    cores = os.cpu_count() or 1
    most = WORKERS_PER_CORE * cores
    match = _CLUSTER_SPEC.fullmatch(spec) if isinstance(spec, str) else None
    if match is not None:
        workers, port = match.group(1), match.group(2)
        if port is not None and 1 <= int(port) <= 65535:
            return None
        if port is None and (workers is None or 1 <= int(workers) <= most):
            return int(workers or cores)
    raise HgnerError(f"{named('cluster')}: expected local, local:N (N from 1 to {most}: {WORKERS_PER_CORE} per core) or "
                     f"tcp://HOST:PORT (port 1..65535), got {spec!r}")


@contextmanager
def connect(spec: str, prepare: Callable[[], object] | None = None) -> Iterator[Client]:
    """A Dask client for ``local`` (one worker process per core), ``local:N`` (N worker processes,
    one thread each, bound to 127.0.0.1) or ``tcp://HOST:PORT`` (a running scheduler); a local
    cluster is shut down when the block ends. ``prepare`` runs in this process before a local
    cluster's workers start: forked, they begin with what it loaded (a model and its warm kernels)."""
    workers = local_workers(spec)
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError:
        raise HgnerError(f"{named('cluster')} needs Dask: pip install 'hgner[dask]'") from None
    if workers is None:
        try:  # a peer that accepts and never answers: an error after deadline.CONNECT_SECONDS, not a hang
            client = call_within(deadline.CONNECT_SECONDS, f"{named('cluster')} {spec}: no answer from a Dask scheduler within "
                                 f"{deadline.CONNECT_SECONDS:g} s", Client, spec, timeout="10s")
        except (OSError, ValueError, TypeError, MemoryError) as error:  # unreachable, garbage, or a bad address
            raise HgnerError(f"{named('cluster')} {spec}: cannot reach a Dask scheduler ({type(error).__name__}: "
                             f"{' '.join(str(error).split())[:120]})") from None
        try:
            yield client
        finally:
            close(client)
        return
    # no dashboard; the scheduler's HTTP endpoints on a free port of 127.0.0.1, not on *:8787. Task
    # errors reach the client as exceptions; Dask's own log lines (heartbeats failing while a loaded
    # machine shuts the cluster down) are not the user's business
    http = {"dashboard": False, "dashboard_address": "127.0.0.1:0"}
    if prepare is not None and LOCAL_START_METHOD == "fork":
        prepare()
    with quiet_forks(), dask.config.set(LOCAL_DASK_CONFIG), \
            LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                         scheduler_kwargs=http, silence_logs=logging.CRITICAL) as cluster, Client(cluster) as client:
        yield client


def answered(client: Client, completed: Iterator[Any]) -> Iterator[Any]:
    """The futures ``completed`` yields, while the scheduler answers: between two of them it is
    asked who it is at least every :data:`~hgner.core.deadline.CALL_SECONDS`, and one that does not
    answer in that time is an :class:`HgnerError` (a silent peer, not a hang)."""
    results: queue.Queue = queue.Queue()

    def pump() -> None:
        try:
            for future in completed:
                results.put(("future", future))
        except BaseException as error:  # noqa: BLE001  (handed to the waiting thread)
            results.put(("error", error))
        results.put(("done", None))

    threading.Thread(target=pump, name="hgner-completed", daemon=True).start()
    while True:
        try:
            kind, value = results.get(timeout=deadline.CALL_SECONDS)
        except queue.Empty:
            alive(client)
            continue
        if kind == "done":
            return
        if kind == "error":
            raise value
        yield value


def result(client: Client, future: Any) -> Any:
    """``future.result()``, the scheduler asked who it is every :data:`~hgner.core.deadline.CALL_SECONDS`
    while it waits (see :func:`answered`)."""
    from distributed import TimeoutError as DaskTimeout  # (Dask: loaded with the client already)

    while True:
        try:
            return future.result(timeout=deadline.CALL_SECONDS)
        except (DaskTimeout, TimeoutError):
            alive(client)


def alive(client: Client) -> None:
    """An :class:`HgnerError` unless the scheduler answers a request within
    :data:`~hgner.core.deadline.CALL_SECONDS`."""
    call_within(deadline.CALL_SECONDS, f"the Dask scheduler at {client.scheduler.address} stopped answering (no reply "
                f"within {deadline.CALL_SECONDS:g} s)", client.sync, client.scheduler.identity)


def scheduler_workers(client: Client) -> int:
    """How many workers the scheduler has (at least 1), asked within :data:`~hgner.core.deadline.CALL_SECONDS`."""
    seconds = deadline.CALL_SECONDS
    info = call_within(seconds, f"the Dask scheduler stopped answering (no reply within {seconds:g} s)",
                       client.scheduler_info)
    return max(1, len(info["workers"]))


def close(client: Client, cancel: list[Any] | None = None) -> None:
    """Cancel ``cancel`` and close ``client``, each waiting at most :data:`~hgner.core.deadline.CALL_SECONDS`."""
    try:
        if cancel:
            call_within(deadline.CALL_SECONDS, "cancel", client.cancel, cancel)
        elif cancel is None:
            call_within(deadline.CALL_SECONDS, "close", client.close)
    except HgnerError:
        pass
