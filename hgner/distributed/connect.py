"""Connecting to a Dask cluster: the one module that talks to Dask's client and local cluster.
``spec`` is ``local`` (one worker process per core), ``local:N`` or ``tcp://HOST:PORT``."""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..errors import HgnerError, named

if TYPE_CHECKING:
    from distributed import Client


_CLUSTER_SPEC = re.compile(r"local(?::(\d{1,9}))?|tcp://(?:[^\s/:\[\]]+|\[[0-9A-Fa-f:.]+\]):(\d{1,5})")


WORKERS_PER_CORE = 4  # local:N takes at most this many worker processes per core (each loads the model)


# How a local cluster starts its worker processes. Forked from this process, a worker starts with the
# interpreter and the modules already imported (numba, distributed) instead of starting them again
# (Dask's default, spawn): on the 1M-token benchmark, local:2 took 7.7 s wall against 9.0. Forking is
# Linux's own default; elsewhere (macOS, where system libraries are not fork-safe) Dask's default stays.
LOCAL_START_METHOD = "fork" if sys.platform.startswith("linux") else "spawn"


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
def connect(spec: str) -> Iterator[Client]:
    """A Dask client for ``local`` (one worker process per core), ``local:N`` (N worker processes,
    one thread each, bound to 127.0.0.1) or ``tcp://HOST:PORT`` (a running scheduler); a local
    cluster is shut down when the block ends."""
    workers = local_workers(spec)
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError:
        raise HgnerError(f"{named('cluster')} needs Dask: pip install 'hgner[dask]'") from None
    if workers is None:
        try:
            client = Client(spec, timeout="10s")
        except (OSError, ValueError) as error:  # unreachable, or an address Dask cannot parse
            raise HgnerError(f"{named('cluster')} {spec}: cannot reach the scheduler ({error})") from None
        with client:
            yield client
        return
    # no dashboard; the scheduler's HTTP endpoints on a free port of 127.0.0.1, not on *:8787. Task
    # errors reach the client as exceptions; Dask's own log lines (heartbeats failing while a loaded
    # machine shuts the cluster down) are not the user's business
    http = {"dashboard": False, "dashboard_address": "127.0.0.1:0"}
    with dask.config.set({"distributed.worker.multiprocessing-method": LOCAL_START_METHOD}), \
            LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                         scheduler_kwargs=http, silence_logs=logging.CRITICAL) as cluster, Client(cluster) as client:
        yield client

