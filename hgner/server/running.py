"""Running the application on uvicorn: one worker in this process, or a supervisor and its
worker processes (``--workers N``), stopped alike by SIGTERM, SIGINT and SIGHUP.

A signal stops the server taking connections, lets the requests in flight finish (up to the
timeout) and ends it with status 0. With workers, the supervisor stops them the same way and
removes their metrics folder; a worker whose supervisor dies (even of SIGKILL) gets SIGTERM,
drains and exits, and the last one removes the folder.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from typing import Any

import uvicorn
from uvicorn.supervisors.multiprocess import Multiprocess

from ..core.process import say
from .app import create_app
from .metrics import MULTIPROCESS_VARIABLE
from .protocol import MAX_HEADER_BYTES, PROTOCOL
from .settings import SETTINGS_VARIABLE, SUPERVISOR_VARIABLE, ServerSettings, check_address

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def serve(settings: ServerSettings) -> int:
    """Run the server until SIGTERM, SIGINT or SIGHUP; 0 once it has drained (1: it never started)."""
    check_address(settings.host, settings.port)
    others = [name for name in settings.models if name != settings.default_model]
    say(f"hgner serve: model {settings.default_model} (the default)" + (f", also {', '.join(others)}" if others else ""))
    options: dict[str, Any] = {"host": settings.host, "port": settings.port, "log_level": "info",
                               "timeout_graceful_shutdown": int(settings.timeout) + 5, "access_log": False,
                               "server_header": False, "lifespan": "on", "http": PROTOCOL,
                               "h11_max_incomplete_event_size": MAX_HEADER_BYTES}
    if settings.workers == 1:
        server = _Server(uvicorn.Config(create_app(settings), **options))
        server.run()
        return 0 if server.started else 1
    scratch = tempfile.mkdtemp(prefix="hgner-serve-metrics-")
    variables = {SETTINGS_VARIABLE: settings.to_environment(), MULTIPROCESS_VARIABLE: scratch,
                 SUPERVISOR_VARIABLE: str(os.getpid())}
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)  # (what the worker processes read)
    try:
        config = uvicorn.Config("hgner.server.app:app_from_environment", factory=True, workers=settings.workers,
                                **options)
        _Supervisor(config, sockets=[config.bind_socket()]).run()
        return 0
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(scratch, ignore_errors=True)


class _Server(uvicorn.Server):
    """uvicorn's server, except that SIGHUP stops it too, and a stop signal, once the requests in
    flight are answered, ends the process with status 0 (uvicorn raises the signal again after
    its shutdown)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in STOP_SIGNALS}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


class _Supervisor(Multiprocess):
    """uvicorn's supervisor of worker processes, except that SIGHUP stops it as SIGTERM does
    (uvicorn's restarts the workers)."""

    def handle_hup(self) -> None:
        self.handle_term()
