"""Refusals with an HTTP status, the admission queue (429) and request deadlines (504). No web
framework here: :mod:`hgner.server.app` turns a :class:`Refused` into a JSON error."""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field

from ..core.errors import HgnerError


class Refused(HgnerError):
    """A request the server will not answer: ``status`` (an HTTP status), ``code`` (a word for
    programs), optional ``headers`` (such as ``Retry-After``)."""

    status = 400
    code = "bad_request"

    def __init__(self, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.headers = headers or {}


class TooLarge(Refused):
    status, code = 413, "too_large"


class Overloaded(Refused):
    status, code = 429, "overloaded"


class TimedOut(Refused):
    status, code = 504, "timeout"


class NotReady(Refused):
    status, code = 503, "not_ready"


@dataclass
class Admission:
    """The requests a worker has taken and not yet answered (waiting or decoding): at most
    ``limit``; one more is :class:`Overloaded` with a ``Retry-After`` of about the time the queue
    takes to drain (``seconds``: the last answers' mean duration), at least one second."""

    limit: int
    taken: int = 0
    seconds: float = 0.01
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def enter(self) -> None:
        with self._lock:
            if self.taken >= self.limit:
                wait = max(1, math.ceil(self.taken * self.seconds))
                raise Overloaded(f"the server has {self.taken} requests in its queue (--max-queue {self.limit}); "
                                 f"retry in {wait} s", {"Retry-After": str(wait)})
            self.taken += 1

    def leave(self, seconds: float) -> None:
        with self._lock:
            self.taken -= 1
            self.seconds = 0.9 * self.seconds + 0.1 * seconds


@dataclass(frozen=True)
class Deadline:
    """The moment (``time.monotonic``) by which a request must be answered."""

    at: float
    timeout: float

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(time.monotonic() + seconds, seconds)

    def remaining(self) -> float:
        return self.at - time.monotonic()

    def check(self) -> None:
        """:class:`TimedOut` once the deadline has passed (called between pieces of work)."""
        if self.remaining() <= 0:
            raise self.error()

    def error(self) -> TimedOut:
        return TimedOut(f"the request took longer than the server's timeout of {self.timeout:g} s (--timeout)")
