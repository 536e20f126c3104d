"""uvicorn's HTTP/1.1 protocol (h11), held against slow and hostile clients (issue 62).

* A request's header block must arrive within :data:`HEADER_SECONDS` of its first byte (or of
  the connection, or of the last answer on a kept-alive connection): else the connection is closed.
  uvicorn closes an idle kept-alive connection, but never one that has sent part of a header block.
* A header block over :data:`MAX_HEADER_BYTES` is a 400 (h11 buffers no more; the Guard refuses more
  than :data:`MAX_HEADERS` headers with a 431). A request line h11 cannot read (HTTP/0.9) is a 400.
* A chunk of a chunked body announced larger than the largest body the server reads is a 413 at
  once, not a 408 once the body's time has run out.
* At most :func:`connection_limit` connections: one more closes the oldest connection that has
  no request in flight (a partial header block, or kept alive), so that the process never runs
  out of file descriptors and ``/health`` still answers.

uvicorn runs it by name (``PROTOCOL``), in each worker; :func:`set_body_limit` gives it the
largest body of the worker's settings.
"""

from __future__ import annotations

import asyncio
import json
import resource
from http import HTTPStatus
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

PROTOCOL = "hgner.server.protocol:GuardedH11"
HEADER_SECONDS = 10.0
MAX_HEADER_BYTES = 16 * 1024  # the request line and headers together
MAX_HEADERS = 100
MAX_CONNECTIONS = 1000  # per worker, at most the descriptors it may open less RESERVED_DESCRIPTORS
RESERVED_DESCRIPTORS = 64  # for everything else a worker opens (its logs, the listening socket, metrics files)


def connection_limit() -> int:
    """The connections one worker keeps open at most: :data:`MAX_CONNECTIONS`, fewer when the
    process may open fewer descriptors (``RLIMIT_NOFILE``) than that and :data:`RESERVED_DESCRIPTORS`."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(8, min(MAX_CONNECTIONS, soft - RESERVED_DESCRIPTORS))


def set_body_limit(limit: int) -> None:
    """The largest body this worker reads (the settings' ``max_body_bytes``)."""
    GuardedH11.body_limit = limit


class GuardedH11(H11Protocol):
    """:class:`H11Protocol` with a header deadline, a chunk-size check and a connection limit."""

    body_limit = 1 << 30
    limit: int | None = None  # connection_limit(), read once per process

    def __init__(self, *args: Any, **keywords: Any) -> None:
        super().__init__(*args, **keywords)
        self.header_timer: asyncio.TimerHandle | None = None
        self.opened = 0.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.opened = self.loop.time()
        self._arm()
        if GuardedH11.limit is None:
            GuardedH11.limit = connection_limit()
        if len(self.connections) > GuardedH11.limit:
            idle = [c for c in self.connections if isinstance(c, GuardedH11) and c is not self and c.idle()]
            if idle:
                min(idle, key=lambda c: c.opened).transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def idle(self) -> bool:
        """No request in flight: nothing sent yet, part of a header block, or kept alive."""
        return self.cycle is None or self.cycle.response_complete

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.transport.is_closing():
            return
        if self.conn.their_state is h11.IDLE:
            self._arm()  # a header block under way: from its first byte
        else:
            self._disarm()
            self._check_chunk()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._arm()

    def _arm(self) -> None:
        if self.header_timer is None:
            self.header_timer = self.loop.call_later(HEADER_SECONDS, self._too_slow)

    def _disarm(self) -> None:
        if self.header_timer is not None:
            self.header_timer.cancel()
            self.header_timer = None

    def _too_slow(self) -> None:
        self.header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()  # no request to answer yet: the header block never came

    def send_400_response(self, msg: str) -> None:
        """A request h11 cannot read (a request line or header block it refuses, one too large):
        a JSON error, as the application's, and the connection closed."""
        self._refuse(400, "bad_request", f"malformed HTTP request (HTTP/1.1 only; header block at most "
                                         f"{MAX_HEADER_BYTES} bytes)")

    def _check_chunk(self) -> None:
        """A 413 when the chunk being read is announced over the body limit (h11 knows its size)."""
        announced = getattr(self.conn._reader, "_bytes_in_chunk", 0)  # (h11's ChunkedReader; 0 otherwise)
        if announced <= self.body_limit or self.cycle is None or self.cycle.response_started:
            return
        self.cycle.response_started = self.cycle.response_complete = self.cycle.disconnected = True
        self._refuse(413, "too_large", f"a chunk of {announced} bytes; this server reads at most {self.body_limit}")
        self.cycle.message_event.set()  # the application, waiting for the body, sees the client gone

    def _refuse(self, status: int, code: str, message: str) -> None:
        """Answer ``status`` with a JSON error, then close the connection."""
        body = json.dumps({"error": {"status": status, "code": code, "message": message}}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                   (b"connection", b"close")]
        try:
            start = h11.Response(status_code=status, headers=headers, reason=HTTPStatus(status).phrase)
            for event in (start, h11.Data(data=body), h11.EndOfMessage()):
                self.transport.write(self.conn.send(event) or b"")
        except h11.LocalProtocolError:  # h11 cannot answer in this state (a response already under way)
            pass
        self.transport.close()
