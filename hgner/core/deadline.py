"""Waits with a deadline: a network peer that accepts a connection and never answers (or stops
answering) is an error after a while, never a hang. Used by the Dask adapter for every wait on
the scheduler: connecting, and each call after it."""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from .errors import HgnerError

T = TypeVar("T")

CONNECT_SECONDS = 15.0  # connecting and the handshake
CALL_SECONDS = 30.0  # one request to the scheduler (its identity: a liveness probe)


def call_within(seconds: float, failure: str, function: Callable[..., T], *args: Any, **keywords: Any) -> T:
    """``function(*args, **keywords)``, run in a daemon thread; an :class:`HgnerError` ``failure``
    when it has not returned after ``seconds`` (the thread is left to the process's exit), and its
    exception re-raised when it raised one."""
    result: list[Any] = []
    error: list[BaseException] = []

    def run() -> None:
        try:
            result.append(function(*args, **keywords))
        except BaseException as raised:  # noqa: BLE001  (handed to the waiting thread)
            error.append(raised)

    thread = threading.Thread(target=run, name="hgner-deadline", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise HgnerError(failure)
    if error:
        raise error[0]
    return result[0]


_stop: contextvars.ContextVar[tuple[float, Callable[[], BaseException]] | None] = contextvars.ContextVar(
    "hgner_stop", default=None)


@contextmanager
def stopping_at(moment: float, error: Callable[[], BaseException]) -> Iterator[None]:
    """Within the block (in this thread or task), :func:`check_stop` raises ``error()`` once
    ``time.monotonic()`` reaches ``moment``."""
    token = _stop.set((moment, error))
    try:
        yield
    finally:
        _stop.reset(token)


def check_stop() -> None:
    """The error of the enclosing :func:`stopping_at` once its moment has passed; else nothing."""
    given = _stop.get()
    if given is not None and time.monotonic() >= given[0]:
        raise given[1]()
