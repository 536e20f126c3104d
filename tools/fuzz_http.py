"""Fuzz ``hgner serve`` at the HTTP level, over raw sockets to 127.0.0.1 (issue 62).

Starts ``hgner serve --workers 2`` on a free port (or takes ``--port`` of a running one) and
sends ``--cases`` requests from 8 threads, drawn in turn from the kinds below, each bounded in
time; counts the answers by status and lists every 5xx other than 503/504 (the target: no 500).

* line: request lines (HTTP/0.9, unknown methods and versions, bytes that are not text);
* headers: a huge header, hundreds of headers, bad names, two Content-Lengths;
* chunks: chunk sizes up to 20 hex digits, bad hex, truncated chunked bodies;
* json: /v1/tag and /v1/compare bodies with lone surrogates (JSON escapes) anywhere, keys too;
* slow: header blocks sent a byte at a time (closed by the server's header deadline);
* signals: SIGHUP and SIGKILL to a worker during requests (the supervisor starts another).

At the end, SIGTERM to the supervisor: it must exit 0 and leave no process. Prints a JSON report.

    python tools/fuzz_http.py --cases 10000 --seed 1
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psutil

ANSWER_SECONDS = 20.0  # a case's answer must come within this (the server's --timeout is 5)
TEXT = "Angela Merkel visited Paris ."
SURROGATES = ["\\ud800", "\\udfff", "\\ud83d", "\\ude00"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def exchange(port: int, data: bytes, pause: float = 0.0) -> int | str:
    """The status the server answers to ``data`` (sent in pieces ``pause`` seconds apart when
    given), or ``closed`` / ``reset`` / ``no answer``."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=ANSWER_SECONDS) as connection:
            try:
                if pause:
                    for i in range(0, len(data), 8):
                        connection.sendall(data[i:i + 8])
                        time.sleep(pause)
                else:
                    connection.sendall(data)
            except OSError:
                pass  # the server may answer and close before the whole request is sent
            answer = b""
            while b"\r\n" not in answer:
                chunk = connection.recv(4096)
                if not chunk:
                    break
                answer += chunk
    except TimeoutError:
        return "no answer"
    except ConnectionError:
        return "reset"
    if not answer:
        return "closed"
    parts = answer.split(b" ", 2)
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else "garbled"


def request(method: str, path: str, body: bytes = b"", headers: list[str] | None = None) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close", *(headers or [])]
    if body and not any(h.lower().startswith(("content-length", "transfer-encoding")) for h in headers or []):
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def case_line(rng: random.Random) -> bytes:
    choices = [b"GET /\r\n\r\n", b"GET / HTTP/0.9\r\n\r\n", b"GET / HTTP/2.0\r\n\r\n", b"BREW /health HTTP/1.1\r\n\r\n",
               b"GET " + b"/" * rng.randint(1, 20_000) + b" HTTP/1.1\r\nHost: x\r\n\r\n",
               bytes(rng.randrange(256) for _ in range(rng.randint(1, 200))) + b"\r\n\r\n",
               b"GET /health?" + "é\u2028".encode() * 10 + b" HTTP/1.1\r\nHost: x\r\n\r\n", b"\r\n\r\n",
               b"POST /v1/tag HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n"]
    return rng.choice(choices)


def case_headers(rng: random.Random) -> bytes:
    kind = rng.randrange(4)
    if kind == 0:
        return request("GET", "/health", headers=["X-Big: " + "a" * rng.choice([10_000, 100_000, 1_000_000])])
    if kind == 1:
        return request("GET", "/ready", headers=[f"X-{i}: {i}" for i in range(rng.randint(50, 400))])
    if kind == 2:
        return request("GET", "/health", headers=[rng.choice(["Bad Name: 1", ": empty", "X: \x00", " folded: 1"])])
    body = json.dumps({"text": TEXT}).encode()
    return request("POST", "/v1/tag", body, ["Content-Type: application/json", f"Content-Length: {len(body)}",
                                               f"Content-Length: {len(body) + 1}"])


def case_chunks(rng: random.Random) -> bytes:
    size = rng.choice(["FFFFFFFFFFFFFFFFFFFF", "7FFFFFFF", "100000000", "zz", "-1", "5;ext=1", "0x10", "1" * 21])
    head = request("POST", "/v1/tag", headers=["Content-Type: application/json", "Transfer-Encoding: chunked"])
    return head + size.encode() + b"\r\n" + b'{"text": "' + b"a" * rng.randint(0, 100)


def case_json(rng: random.Random) -> bytes:
    surrogate = rng.choice(SURROGATES)
    bodies = [
        '{"text": "Paris .", "settings": {"%s": 1}}', '{"documents": [{"id": "%s", "text": "Paris ."}]}',
        '{"text": "Paris %s ."}', '{"text": "Paris .", "model": "%s"}', '{"text": "Paris .", "decoder": "%s"}',
        '{"%s": 1, "text": "Paris ."}', '{"text": "Paris .", "settings": {"time_limit": "%s"}}',
        '{"text": "Paris .", "settings": {"beta": "%s"}, "decoder": "gibbs"}',
    ]
    body = rng.choice(bodies).replace("%s", surrogate)
    path = "/v1/tag"
    if rng.random() < 0.3:
        path, body = "/v1/compare", '{"text": "Paris .", "decoders": ["viterbi", "%s"]}'.replace("%s", surrogate)
    if rng.random() < 0.2:  # plus valid requests, some slow: the deadline stops them
        body = json.dumps({"text": TEXT, "decoder": rng.choice(["viterbi", "gibbs", "herded", "crfsuite"]),
                           "sweeps": rng.choice([10, 100_000_000])})
        path = "/v1/tag"
    return request("POST", path, body.encode(), ["Content-Type: application/json"])


KINDS = {"line": case_line, "headers": case_headers, "chunks": case_chunks, "json": case_json}


def workers_of(supervisor: psutil.Process) -> list[psutil.Process]:
    workers = []
    for child in supervisor.children():
        try:
            if "resource_tracker" not in " ".join(child.cmdline()):
                workers.append(child)
        except psutil.Error:  # gone, or a zombie not yet reaped
            pass
    return workers


def disturb(supervisor: psutil.Process, stop: threading.Event, rng: random.Random, counts: collections.Counter) -> None:
    """Every few seconds, SIGHUP or SIGKILL to one worker (the supervisor replaces it)."""
    while not stop.wait(rng.uniform(3, 6)):
        workers = workers_of(supervisor)
        if workers:
            signum = rng.choice([signal.SIGHUP, signal.SIGKILL])
            try:
                rng.choice(workers).send_signal(signum)
                counts[f"worker {signal.Signals(signum).name}"] += 1
            except psutil.NoSuchProcess:
                pass


def start_server(port: int) -> subprocess.Popen:
    process = subprocess.Popen([sys.executable, "-m", "hgner.cli", "serve", "--port", str(port), "--workers", "2",
                                "--timeout", "5", "--max-queue", "256"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 600
    while exchange(port, request("GET", "/ready")) != 200:
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("hgner serve did not start")
        time.sleep(0.5)
    return process


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=1800, help="stop sending new cases after this long")
    parser.add_argument("--slow", type=int, default=20, help="slow header blocks sent beside the cases")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    port = free_port()
    server = start_server(port)
    supervisor = psutil.Process(server.pid)
    statuses: collections.Counter = collections.Counter()
    by_kind: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    events: collections.Counter = collections.Counter()
    failures: list[dict[str, Any]] = []
    lock = threading.Lock()
    started = time.monotonic()
    cases = [(kind := rng.choice(list(KINDS)), KINDS[kind](rng)) for _ in range(args.cases)]

    def run(case: tuple[str, bytes]) -> None:
        if time.monotonic() - started > args.seconds:
            return
        kind, data = case
        status = exchange(port, data)
        with lock:
            statuses[status] += 1
            by_kind[kind][status] += 1
            if isinstance(status, int) and status >= 500 and status not in (503, 504) and len(failures) < 20:
                failures.append({"kind": kind, "status": status, "request": data[:300].decode("latin-1")})

    stop = threading.Event()
    disturber = threading.Thread(target=disturb, args=(supervisor, stop, random.Random(args.seed), events))
    disturber.start()
    with ThreadPoolExecutor(8 + args.slow) as pool:
        slow = [pool.submit(exchange, port, request("GET", "/health"), 2.0) for _ in range(args.slow)]  # > 10 s
        list(pool.map(run, cases))
        slow_answers = collections.Counter(str(f.result()) for f in slow)
    stop.set()
    disturber.join()
    server.send_signal(signal.SIGTERM)
    exit_status = server.wait(120)
    time.sleep(2)
    left = [p.pid for p in psutil.process_iter() if _ours(p, port, server.pid)]
    report = {"cases": sum(statuses.values()), "seconds": round(time.monotonic() - started, 1),
              "statuses": {str(k): v for k, v in sorted(statuses.items(), key=str)},
              "by_kind": {k: {str(s): n for s, n in sorted(v.items(), key=str)} for k, v in by_kind.items()},
              "status_500": statuses[500], "server_errors": failures, "slow_header_blocks": dict(slow_answers),
              "signals": dict(events), "supervisor_exit": exit_status, "processes_left": left}
    print(json.dumps(report, indent=1))
    return 0 if not failures and exit_status == 0 and not left else 1


def _ours(process: psutil.Process, port: int, supervisor: int) -> bool:
    """Whether ``process`` is the server (its command line names the port) or one of its workers."""
    try:
        return process.pid != os.getpid() and (f"--port {port}" in " ".join(process.cmdline())
                                               or process.environ().get("HGNER_SERVE_SUPERVISOR") == str(supervisor))
    except psutil.Error:
        return False


if __name__ == "__main__":
    sys.exit(main())
