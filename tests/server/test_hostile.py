"""Slow and hostile clients (issue 62) against a real ``hgner serve`` on 127.0.0.1: unfinished
header blocks are closed, /health answers beside them, huge headers, chunk sizes and request
lines get a 4xx at once, and memory stays."""

from __future__ import annotations

import socket
import time

import psutil
import pytest

pytest.importorskip("fastapi", reason="hgner serve needs the serve extra (pip install 'hgner[serve]')")

from server_support import running_server  # noqa: E402

from hgner.server.protocol import HEADER_SECONDS  # noqa: E402


@pytest.fixture(scope="module")
def server():
    with running_server("--timeout", "30") as (process, url):
        yield process, int(url.rsplit(":", 1)[1])


def exchange(port: int, data: bytes, seconds: float = 5.0) -> bytes:
    """What the server answers to ``data`` before it closes the connection (or ``seconds`` pass)."""
    with socket.create_connection(("127.0.0.1", port)) as connection:
        connection.settimeout(seconds)
        try:
            connection.sendall(data)
        except OSError:  # the server closed while we sent (an answer may be there)
            pass
        answer = b""
        try:
            while chunk := connection.recv(65536):
                answer += chunk
        except (TimeoutError, ConnectionResetError):
            pass
        return answer


def status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0


def health_ms(port: int) -> float:
    started = time.perf_counter()
    assert status(exchange(port, b"GET /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")) == 200
    return 1000 * (time.perf_counter() - started)


@pytest.mark.parametrize("request_bytes, expected", [
    (b"GET /\r\n\r\n", {400}),  # HTTP/0.9
    (b"GET /health HTTP/1.1\r\nHost: t\r\nX-Big: " + b"a" * 1_000_000 + b"\r\n\r\n", {400, 431}),
    (b"GET /health HTTP/1.1\r\nHost: t\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(200)) + b"\r\n", {431}),
    (b"POST /v1/tag HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
     b"FFFFFFFFFFFF\r\n{", {400, 413}),
])
def test_hostile_requests_are_refused_at_once(server, request_bytes, expected):
    started = time.monotonic()
    answer = exchange(server[1], request_bytes)
    assert status(answer) in expected and b'"error"' in answer, answer[:300]
    assert time.monotonic() - started < 2


def test_a_megabyte_header_leaves_no_memory(server):
    process = psutil.Process(server[0].pid)
    before = process.memory_info().rss
    for _ in range(20):
        exchange(server[1], b"GET /health HTTP/1.1\r\nHost: t\r\nX-Big: " + b"a" * 1_000_000 + b"\r\n\r\n")
    assert process.memory_info().rss - before < 10 * 2**20


def test_unfinished_headers_are_closed_and_health_answers(server):
    hold_unfinished_headers(server[1], closed_within=HEADER_SECONDS + 5)


def test_under_256_descriptors_health_answers_beside_500_unfinished_headers():
    with running_server(descriptors=256) as (_, url):
        hold_unfinished_headers(int(url.rsplit(":", 1)[1]), closed_within=None)


def hold_unfinished_headers(port: int, closed_within: float | None) -> None:
    """500 connections that send part of a header block; /health answers meanwhile (median of
    20 within 100 ms) and, unless ``closed_within`` is None, the server closes each within that."""
    pending = []
    for _ in range(500):
        connection = socket.create_connection(("127.0.0.1", port))
        connection.sendall(b"GET /health HTTP/1.1\r\nHost: t\r\n")
        pending.append(connection)
    try:
        times = sorted(health_ms(port) for _ in range(20))
        assert times[10] <= 100, times
        deadline = time.monotonic() + (closed_within or 0)
        for connection in pending if closed_within else ():
            connection.settimeout(max(0.1, deadline - time.monotonic()))
            assert connection.recv(10) == b"", "a connection with an unfinished header block was kept open"
    finally:
        for connection in pending:
            connection.close()
