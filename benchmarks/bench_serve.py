"""``hgner serve`` against the targets of issue 38, on 127.0.0.1 only, bounded in count and time.

Parts (``--only``, comma-separated; default latency,throughput,identical,fuzz):

* latency: one worker, warm, one CoNLL sentence (eng.testb's first of 8 tokens or more) from 8
  concurrent clients, each sending its next request when the last is answered [p50 <= 5 ms,
  p99 <= 25 ms]. The headline client is ``wrk`` (apt-get install wrk: in C, one thread, HTTP/1.1
  keep-alive, so it takes little of the shared CPU): the medians of 3 runs of 10 s, then 1 client; then the Python client httpx
  (whose own CPU is part of each latency) and ApacheBench (``ab``: HTTP/1.0, which uvicorn does
  not keep alive, so a new connection per request). With each: the server's CPU milliseconds per
  request (its process's CPU over the requests answered), which the other work on a shared machine
  disturbs less than the latencies.
* throughput: eng.testb's raw documents in batches of 16 through ``/v1/tag`` from 4 clients per
  worker, each request on a new connection (a burst of keep-alive connections can all be accepted
  by one worker), after 2 passes that warm the workers (they have seen the workload's word types,
  as a long-running server has), 12 timed seconds of the batches in turn sent by ``wrk`` (in C,
  so that the client takes little of the 2 CPUs; without wrk, 15 passes of the httpx client): tokens per CPU-second of
  the server's processes, against ``hgner tag --format jsonl`` on the same documents, as many times (its process's
  CPU, startup included and left out) [>= 80%]; and tokens per wall-clock second with
  ``--workers 2`` against one worker [>= 1.7x], with how many CPUs the workers and this (client)
  process kept busy.
* identical: the entities of ``/v1/tag`` equal ``hgner tag --format jsonl``'s on eng.testb's raw
  text, document by document, and the whole text as one document;
* fuzz: schemathesis against the live server's OpenAPI schema [0 server errors, 0 schema violations];
* memory: one worker's resident memory at start-up (ready, one request answered) and after
  20,000 requests of 10 random words each from 8 clients (every word new: the per-word caches and
  the word types fill) [within 25% of the start-up figure];
* soak (``--soak SECONDS``, 600 in the issue; or part ``soak``, 600 s): 16 clients, 10% hostile
  requests; counts the 500s and the dropped connections, and the server's resident memory after
  the first minute and at the end [0, 0, growth < 5%]. It needs no quiet machine.

The machine's load average is recorded with each figure: the CPU is shared. ``--json FILE``
merges the parts run into FILE: the parts not run keep their figures. For example, on a quiet
machine, only the speed figures:

    python benchmarks/bench_serve.py --only latency,throughput --json docs/results/serve.json

and, at any time, the others:

    nice -n 19 python benchmarks/bench_serve.py --only identical,fuzz,soak --json docs/results/serve.json

Needs HGNER_MIRROR (eng.testb) and the serve and test extras.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psutil

from hgner.data.corpus import load_corpus
from hgner.text.rawtext import rebuild

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_tag import children_cpu  # noqa: E402

MODEL = "en-conll03"
LATENCY_CLIENTS = 8
LATENCY_REQUESTS = 4000
WRK_SECONDS = 10
WRK_RUNS = 3  # timed runs at 8 clients: medians
BATCH = 16
CLIENTS_PER_WORKER = 4
THROUGHPUT_RUNS = 15  # timed passes of the httpx client (without wrk), and of hgner tag
THROUGHPUT_SECONDS = 12  # timed with wrk
WARM_RUNS = 2
SOAK_CLIENTS = 16


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def documents() -> list[str]:
    """eng.testb's documents as raw text, one sentence per line (as bench_rawtext rebuilds them)."""
    corpus = load_corpus("conll2003:testb")
    return [rebuild([s.tokens for s in d.sentences], [s.tags for s in d.sentences]).text for d in corpus.documents]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def server(*options: str) -> Iterator[tuple[str, psutil.Process]]:
    """``hgner serve`` on a free 127.0.0.1 port, ready; stopped with SIGTERM at the end."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "hgner.cli", "serve", "--port", str(port),  # the default model
                                *options], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(3000):
            try:
                if httpx.get(url + "/ready", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None:
                raise SystemExit(f"hgner serve exited with {process.returncode}")
            time.sleep(0.1)
        yield url, psutil.Process(process.pid)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(60)


def cpu_seconds(process: psutil.Process) -> float:
    """CPU seconds of ``process`` and its children (the workers)."""
    total = 0.0
    for p in [process, *process.children(recursive=True)]:
        try:
            times = p.cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            pass
    return total


def _worker_cpu(process: psutil.Process) -> dict[int, float]:
    """CPU seconds of each process of the server (the supervisor and its workers), by pid."""
    seconds = {}
    for p in [process, *process.children(recursive=True)]:
        try:
            times = p.cpu_times()
            seconds[p.pid] = times.user + times.system
        except psutil.NoSuchProcess:
            pass
    return seconds


def rss(process: psutil.Process) -> int:
    return sum(p.memory_info().rss for p in [process, *process.children(recursive=True)])


async def closed_loop(url: str, bodies: list[dict], clients: int, count: int,
                      keep_alive: bool = True) -> tuple[list[float], list[dict]]:
    """``count`` requests from ``clients`` concurrent clients, each sending its next when the last is
    answered: the latencies (seconds) and the answers. Without ``keep_alive``, each request on a
    connection of its own (which the worker free first accepts)."""
    latencies: list[float] = []
    answers: list[dict] = []
    queue = list(enumerate(bodies[i % len(bodies)] for i in range(count)))
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients if keep_alive else 0)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:
        async def one_client() -> None:
            while queue:
                _, body = queue.pop()
                started = time.perf_counter()
                response = await client.post("/v1/tag", json=body)
                latencies.append(time.perf_counter() - started)
                response.raise_for_status()
                answers.append(response.json())

        await asyncio.gather(*(one_client() for _ in range(clients)))
    return latencies, answers


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


@contextmanager
def measured(process: psutil.Process) -> Iterator[dict[str, Any]]:
    """A dict in which the block puts ``requests`` (the number answered in it), filled with the
    server's CPU milliseconds per request over the block (its processes' CPU), this process's (the
    client's, when it is Python) and the load average before and after."""
    figures: dict[str, Any] = {"load_before": load()}
    cpu, own = cpu_seconds(process), time.process_time()
    yield figures
    answered = max(1, figures["requests"])
    figures["server_cpu_seconds"] = round(cpu_seconds(process) - cpu, 3)
    figures["bench_process_cpu_seconds"] = round(time.process_time() - own, 3)
    figures["server_cpu_ms_per_request"] = round(1000 * figures["server_cpu_seconds"] / answered, 3)
    figures["bench_process_cpu_ms_per_request"] = round(1000 * figures["bench_process_cpu_seconds"] / answered, 3)
    figures["load_after"] = load()


def latency(sentence: str) -> dict[str, Any]:
    """One worker, warm: wrk (HTTP/1.1 keep-alive, in C) as the headline when installed, then the
    Python client (httpx) and ApacheBench, each with the server's CPU per request."""
    body = {"text": sentence}
    figures: dict[str, Any] = {"sentence": sentence}
    with server() as (url, process):
        asyncio.run(closed_loop(url, [body], LATENCY_CLIENTS, 400))  # warm
        compiled = wrk(url, process, sentence)
        if compiled is not None:
            figures.update(compiled)
        python_client: dict[str, Any] = {"client": "httpx (Python, asyncio; its own CPU is part of each latency)",
                                         "clients": LATENCY_CLIENTS, "requests": LATENCY_REQUESTS}
        with measured(process) as usage:
            usage["requests"] = LATENCY_REQUESTS
            started = time.perf_counter()
            latencies, _ = asyncio.run(closed_loop(url, [body], LATENCY_CLIENTS, LATENCY_REQUESTS))
            seconds = time.perf_counter() - started
        python_client.update(p50_ms=round(1000 * percentile(latencies, 50), 2),
                             p99_ms=round(1000 * percentile(latencies, 99), 2),
                             requests_per_second=round(LATENCY_REQUESTS / seconds, 1), **usage)
        single, _ = asyncio.run(closed_loop(url, [body], 1, 1000))
        python_client.update(one_client_p50_ms=round(1000 * percentile(single, 50), 2),
                             one_client_p99_ms=round(1000 * percentile(single, 99), 2))
        figures["httpx"] = python_client
        if compiled is None:  # the headline: the Python client's
            figures.update({k: python_client[k] for k in ("client", "clients", "requests", "p50_ms", "p99_ms")})
        figures["apache_bench"] = apache_bench(url, sentence)
    return figures


WRK_SCRIPT = """wrk.method = "POST"
wrk.body = {body}
wrk.headers["Content-Type"] = "application/json"
"""


def wrk(url: str, process: psutil.Process, sentence: str) -> dict[str, Any] | None:
    """``wrk`` (apt-get install wrk: a load generator in C, one thread, HTTP/1.1 keep-alive: each
    client sends its next request when the last is answered) at 8 clients, WRK_RUNS runs of
    WRK_SECONDS (the headline: each figure's median over the runs, since this machine's speed
    swings from minute to minute), then one run at 1 client; None when it is not installed."""
    if shutil.which("wrk") is None:
        return None
    figures: dict[str, Any] = {"client": f"wrk (C, one thread, HTTP/1.1 keep-alive, {WRK_SECONDS} s a run)"}
    with tempfile.TemporaryDirectory(prefix="bench_serve-") as folder:
        script = Path(folder) / "post.lua"
        script.write_text(WRK_SCRIPT.format(body=json.dumps(json.dumps({"text": sentence}))))
        for clients in (LATENCY_CLIENTS, 1):
            command = ["wrk", "-t1", f"-c{clients}", "--latency", "-s", str(script), url + "/v1/tag"]
            subprocess.run([*command, "-d2s"], capture_output=True, check=True)  # warm
            runs = [_wrk_run(command, process, clients) for _ in range(WRK_RUNS if clients == LATENCY_CLIENTS else 1)]
            if clients == LATENCY_CLIENTS:
                figures.update({key: statistics.median(run[key] for run in runs)
                                for key in ("p50_ms", "p99_ms", "requests_per_second", "server_cpu_ms_per_request")})
                figures.update(clients=clients, requests=sum(run["requests"] for run in runs),
                               failed=sum(run["failed"] for run in runs), runs=runs)
            else:
                figures["one_client"] = runs[0]
    return figures


def _wrk_run(command: list[str], process: psutil.Process, clients: int) -> dict[str, Any]:
    """One timed run of wrk ``command``: its percentiles, rate and failures, and the server's CPU."""
    with measured(process) as usage:
        out = subprocess.run([*command, f"-d{WRK_SECONDS}s"], capture_output=True, text=True, check=True).stdout
        usage["requests"] = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    percent = {int(q): _milliseconds(v) for q, v in re.findall(r"^\s+(\d+)%\s+(\S+)\s*$", out, re.M)}
    errors = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    return {"clients": clients, "p50_ms": percent[50], "p99_ms": percent[99],
            "requests_per_second": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),  # type: ignore[union-attr]
            "failed": int(errors.group(1)) if errors else 0, **usage}


def _milliseconds(text: str) -> float:
    """wrk's ``812.00us``, ``3.76ms`` or ``1.02s`` in milliseconds."""
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text).groups()  # type: ignore[union-attr]
    return round(float(number) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}[unit], 3)


def apache_bench(url: str, sentence: str) -> dict[str, Any] | None:
    """The same load from ApacheBench (``ab``, a client in C: apt-get install apache2-utils), asking
    for keep-alive; None when it is not installed. ab speaks HTTP/1.0, whose connections uvicorn
    does not keep alive: each request opens a connection (a cost of its own, on both sides)."""
    if shutil.which("ab") is None:
        return None
    figures: dict[str, Any] = {"client": "ab (ApacheBench, HTTP/1.0: a new connection per request)"}
    with tempfile.TemporaryDirectory(prefix="bench_serve-") as folder:
        body, table = Path(folder) / "body.json", Path(folder) / "percentiles.csv"
        body.write_text(json.dumps({"text": sentence}))
        for clients, count in ((LATENCY_CLIENTS, LATENCY_REQUESTS), (1, 1000)):
            command = ["ab", "-q", "-k", "-n", str(count), "-c", str(clients), "-p", str(body), "-T", "application/json",
                       "-e", str(table), url + "/v1/tag"]
            subprocess.run(command[:5] + ["-n", "500"] + command[7:], capture_output=True, check=True)  # warm
            before = load()
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            percent = {int(float(a)): float(b) for a, b in (line.split(",") for line in table.read_text().splitlines()[1:])}
            rate = re.search(r"Requests per second:\s+([\d.]+)", done.stdout)
            failed = re.search(r"Failed requests:\s+(\d+)", done.stdout)
            kept = re.search(r"Keep-Alive requests:\s+(\d+)", done.stdout)
            figures[f"clients_{clients}"] = {"requests": count, "p50_ms": percent[50], "p99_ms": percent[99],
                                             "requests_per_second": float(rate.group(1)) if rate else None,
                                             "failed": int(failed.group(1)) if failed else None,
                                             "keep_alive_requests": int(kept.group(1)) if kept else None,
                                             "load_before": before, "load_after": load()}
    return figures


def tag_cpu(files: list[str]) -> float:
    """CPU seconds of ``hgner tag --format jsonl`` on ``files`` (its whole process)."""
    before = children_cpu()
    subprocess.run([sys.executable, "-m", "hgner.cli", "tag", "--model", MODEL, "--format", "jsonl", "--files", *files],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return children_cpu() - before


def write_documents(folder: str, texts: list[str]) -> list[str]:
    """Each text as a file ``docNNNN.txt`` in ``folder``: their paths."""
    files = []
    for i, text in enumerate(texts):
        path = Path(folder) / f"doc{i:04d}.txt"
        path.write_text(text, encoding="utf-8")
        files.append(str(path))
    return files


WRK_THROUGHPUT_SCRIPT = """local bodies = {{{bodies}}}
local i = 0
request = function()
  i = i % #bodies + 1
  return wrk.format("POST", "/v1/tag", {{["Content-Type"] = "application/json", ["Connection"] = "close"}}, bodies[i])
end
"""


def timed_passes(url: str, batches: list[dict], batch_tokens: list[int], clients: int) -> tuple[int, int, float]:
    """The timed requests of the throughput part: requests answered, tokens tagged and wall seconds.
    With wrk (in C: it takes less of the 2 CPUs than a Python client), THROUGHPUT_SECONDS of the
    batches in turn, each on a new connection ("Connection: close"); without it, the httpx client's
    THROUGHPUT_RUNS passes."""
    if shutil.which("wrk") is None:
        count = THROUGHPUT_RUNS * len(batches)
        started = time.perf_counter()
        asyncio.run(closed_loop(url, batches, clients, count, keep_alive=False))
        return count, THROUGHPUT_RUNS * sum(batch_tokens), time.perf_counter() - started
    with tempfile.TemporaryDirectory(prefix="bench_serve-") as folder:
        script = Path(folder) / "batches.lua"
        script.write_text(WRK_THROUGHPUT_SCRIPT.format(bodies=", ".join(json.dumps(json.dumps(b)) for b in batches)))
        out = subprocess.run(["wrk", "-t1", f"-c{clients}", f"-d{THROUGHPUT_SECONDS}s", "-s", str(script), url],
                             capture_output=True, text=True, check=True).stdout
    done = re.search(r"(\d+) requests in ([\d.]+)s", out)
    answered, wall = int(done.group(1)), float(done.group(2))  # type: ignore[union-attr]
    errors = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    if errors or "Socket errors" in out:
        raise SystemExit(f"throughput: wrk saw errors:\n{out}")
    # wrk sends the batches in turn from one thread: the first `answered` of that cycle were answered
    # (give or take the `clients` in flight when the time was up, out of thousands)
    whole, rest = divmod(answered, len(batches))
    return answered, whole * sum(batch_tokens) + sum(batch_tokens[:rest]), wall


def throughput(texts: list[str], text_tokens: list[int]) -> dict[str, Any]:
    batches = [{"documents": [{"id": j, "text": t} for j, t in enumerate(texts[i:i + BATCH])]}
               for i in range(0, len(texts), BATCH)]
    batch_tokens = [sum(text_tokens[i:i + BATCH]) for i in range(0, len(texts), BATCH)]
    figures: dict[str, Any] = {"documents": len(texts), "tokens": sum(text_tokens), "batch": BATCH,
                               "client": "wrk" if shutil.which("wrk") else "httpx"}
    for workers in (1, 2):
        clients = CLIENTS_PER_WORKER * workers
        with server("--workers", str(workers)) as (url, process):
            # each request on a new connection: the workers accept the connections of a burst of
            # keep-alive clients unevenly (all of them by one worker, seen), a new one goes to the
            # worker free first. WARM_RUNS passes first, so that the workers have seen the
            # workload's word types, as a long-running server has; then the timed ones
            asyncio.run(closed_loop(url, batches, clients, WARM_RUNS * len(batches), keep_alive=False))
            workers_before = _worker_cpu(process)
            with measured(process) as usage:
                usage["requests"], tagged, wall = timed_passes(url, batches, batch_tokens, clients)
            per_worker = {pid: cpu - workers_before.get(pid, 0.0) for pid, cpu in _worker_cpu(process).items()}
        cpu = usage["server_cpu_seconds"]
        figures[f"workers_{workers}"] = {
            "clients": clients, "requests": usage["requests"], "tokens_tagged": tagged, "seconds": round(wall, 2),
            "tokens_per_second": round(tagged / wall), "tokens_per_cpu_second": round(tagged / cpu),
            "server_cpus_busy": round(cpu / wall, 2),
            "worker_cpus_busy": sorted((round(c / wall, 2) for c in per_worker.values() if c > 0.05), reverse=True),
            "client_cpus_busy": round(usage["bench_process_cpu_seconds"] / wall, 2),
            "load_before": usage["load_before"], "load_after": usage["load_after"]}
    figures["workers_2_over_1"] = round(figures["workers_2"]["tokens_per_second"]
                                        / figures["workers_1"]["tokens_per_second"], 2)
    with tempfile.TemporaryDirectory(prefix="bench_serve-") as folder:
        # the documents as many times as the server tagged them while timed: the process's work
        # without its startup is then seconds, not a difference of two noisy process times
        files = write_documents(folder, texts * THROUGHPUT_RUNS)
        tag_cpu(files[:1])  # warm (numba cache, files)
        before = load()
        whole = statistics.median(tag_cpu(files) for _ in range(2))
        startup = statistics.median(tag_cpu(files[:1]) for _ in range(2))
    tagged = THROUGHPUT_RUNS * sum(text_tokens)
    figures["hgner_tag"] = {"tokens": tagged, "cpu_seconds": round(whole, 2), "one_document_cpu_seconds": round(startup, 2),
                            "tokens_per_cpu_second": round(tagged / whole),
                            "tokens_per_cpu_second_without_startup": round(tagged / max(whole - startup, 1e-9)),
                            "load_before": before, "load_after": load()}
    server_rate = figures["workers_1"]["tokens_per_cpu_second"]
    figures["server_over_hgner_tag"] = round(server_rate / figures["hgner_tag"]["tokens_per_cpu_second"], 2)
    figures["server_over_hgner_tag_without_startup"] = round(
        server_rate / figures["hgner_tag"]["tokens_per_cpu_second_without_startup"], 2)
    return figures


def identical(texts: list[str]) -> dict[str, Any]:
    """Entities of /v1/tag against hgner tag --format jsonl, neither naming a model (issue 61: one
    default): per document, and the whole text."""
    whole = "".join(texts)
    with tempfile.TemporaryDirectory(prefix="bench_serve-") as folder:
        files = write_documents(folder, [*texts, whole])
        done = subprocess.run([sys.executable, "-m", "hgner.cli", "tag", "--format", "jsonl",
                               "--files", *files], capture_output=True, text=True, check=True)
    expected = [json.loads(line)["entities"] for line in done.stdout.splitlines()]
    with server("--max-chars", str(len(whole) + 1), "--timeout", "600") as (url, _):
        served = []
        for i in range(0, len(texts), BATCH):
            body = {"documents": [{"id": j, "text": t} for j, t in enumerate(texts[i:i + BATCH])]}
            served += [d["entities"] for d in httpx.post(url + "/v1/tag", json=body, timeout=600).json()["documents"]]
        served.append(httpx.post(url + "/v1/tag", json={"text": whole}, timeout=600).json()["entities"])
    differing = [i for i, (a, b) in enumerate(zip(served, expected)) if a != b]
    return {"documents": len(texts), "entities": sum(len(e) for e in expected[:-1]),
            "whole_text_characters": len(whole), "whole_text_entities": len(expected[-1]),
            "documents_differing": len([i for i in differing if i < len(texts)]),
            "whole_text_identical": len(texts) not in differing, "identical": not differing}


FUZZ_CONFIG = """[checks.not_a_server_error]
expected-statuses = ["2xx", "3xx", "4xx", "503", "504"]
"""


def fuzz(examples: int) -> dict[str, Any]:
    """schemathesis on the live server's OpenAPI schema, valid and invalid requests: its checks for
    server errors, responses that differ from the schema, and undocumented status codes."""
    checks = "not_a_server_error,response_schema_conformance,status_code_conformance"
    with server("--max-chars", "5000", "--timeout", "10") as (url, _), tempfile.TemporaryDirectory() as scratch:
        # 503 (models not loaded) and 504 (the request passed --timeout: a compare of 33,554,431 sweeps)
        # are the documented limits, not server errors; the client waits past the server's timeout
        (Path(scratch) / "schemathesis.toml").write_text(FUZZ_CONFIG, encoding="utf-8")
        done = subprocess.run([str(Path(sys.executable).parent / "schemathesis"), "run", url + "/openapi.json",
                               "--checks", checks, "--mode", "all", "--max-examples", str(examples), "--seed", "0",
                               "--request-timeout", "30"],
                              capture_output=True, text=True, cwd=scratch)  # its .schemathesis folder goes there
    summary = [line.strip() for line in done.stdout.splitlines() if re.search(r"\b(passed|failed|errors?|cases|"
                                                                              r"Operations|Test cases)\b", line)]
    return {"checks": checks.split(","), "max_examples": examples, "exit_code": done.returncode,
            "failures": done.returncode != 0, "summary": summary[-6:]}


HOSTILE = [
    (b'{"text": "unfinished', "application/json"),
    (b'{"text": "x", "unknown": 1}', "application/json"),
    (b'{"text": "x", "decoder": "no-such-decoder"}', "application/json"),
    (b'{"text": "x", "model": "../../etc/passwd"}', "application/json"),
    (b'{"text": "x", "decoder": "gibbs", "settings": {"sweeps": -1}}', "application/json"),
    (b'{"text": "\\ud800"}', "application/json"),
    (b'\xff\xfe\x00garbage', "application/json"),
    (b'{"text": "' + b"a " * 60_000 + b'"}', "application/json"),
    (b'{"documents": [' + b",".join(b'{"id": %d, "text": "x"}' % i for i in range(300)) + b']}', "application/json"),
    (b'[1, 2, 3]', "application/json"),
    (b'{"text": "x"}', "text/plain"),
]


async def soak(url: str, process: psutil.Process, seconds: float, sentences: list[str]) -> dict[str, Any]:
    statuses: dict[str, int] = {}
    dropped = 0
    memory: list[tuple[float, int]] = []
    started = time.monotonic()
    rng = random.Random(0)
    limits = httpx.Limits(max_connections=SOAK_CLIENTS, max_keepalive_connections=SOAK_CLIENTS)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
        async def one_client() -> None:
            nonlocal dropped
            while time.monotonic() - started < seconds:
                try:
                    if rng.random() < 0.1:
                        body, kind = rng.choice(HOSTILE)
                        response = await client.post("/v1/tag", content=body, headers={"content-type": kind})
                    elif rng.random() < 0.1:
                        response = await client.post("/v1/compare", json={"text": rng.choice(sentences), "graph": "skip",
                                                                          "sweeps": 50})
                    else:
                        count = rng.choice((1, 1, 1, 4))
                        body = {"documents": [{"id": i, "text": rng.choice(sentences)} for i in range(count)]}
                        response = await client.post("/v1/tag", json=body)
                    statuses[str(response.status_code)] = statuses.get(str(response.status_code), 0) + 1
                except httpx.TransportError:
                    dropped += 1

        async def watch() -> None:
            while time.monotonic() - started < seconds:
                memory.append((time.monotonic() - started, rss(process)))
                await asyncio.sleep(5)

        await asyncio.gather(watch(), *(one_client() for _ in range(SOAK_CLIENTS)))
    after_minute = next((m for t, m in memory if t >= 60), memory[0][1])
    end = memory[-1][1]
    return {"seconds": seconds, "clients": SOAK_CLIENTS, "hostile_share": 0.1, "statuses": statuses,
            "status_500": statuses.get("500", 0), "dropped_connections": dropped,
            "rss_after_first_minute_mb": round(after_minute / 2**20, 1), "rss_end_mb": round(end / 2**20, 1),
            "rss_growth_percent": round(100 * (end / after_minute - 1), 2), "load_after": load()}


PARTS = ("latency", "throughput", "identical", "fuzz", "soak", "memory")
MEMORY_REQUESTS = 20_000
MEMORY_CLIENTS = 8


def random_words(rng: random.Random) -> str:
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return " ".join("".join(rng.choice(letters) for _ in range(rng.randint(3, 10))) for _ in range(10)) + " ."


async def memory_growth(url: str, process: psutil.Process) -> dict[str, Any]:
    """Resident memory of the server at start-up and after :data:`MEMORY_REQUESTS` of random words."""
    rng = random.Random(0)
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        assert (await client.post("/v1/tag", json={"text": "Warm up in London ."})).status_code == 200
        start = process.memory_info().rss
        left, failed, samples = MEMORY_REQUESTS, 0, []

        async def one_client() -> None:
            nonlocal left, failed
            while left > 0:
                left -= 1
                if (await client.post("/v1/tag", json={"text": random_words(rng)})).status_code != 200:
                    failed += 1
                if left % 2000 == 0:
                    samples.append(round(process.memory_info().rss / 2**20))

        started = time.monotonic()
        await asyncio.gather(*(one_client() for _ in range(MEMORY_CLIENTS)))
    end = process.memory_info().rss
    return {"requests": MEMORY_REQUESTS, "failed": failed, "start_mib": round(start / 2**20),
            "end_mib": round(end / 2**20), "growth": round(end / start - 1, 3), "samples_mib": samples,
            "seconds": round(time.monotonic() - started, 1), "within_25_percent": end <= 1.25 * start, "load": load()}
SOAK_SECONDS = 600.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="latency,throughput,identical,fuzz",
                        help=f"comma-separated parts among {', '.join(PARTS)} (default: all but soak)")
    parser.add_argument("--examples", type=int, default=200, help="schemathesis examples per operation (default 200)")
    parser.add_argument("--soak", type=float, metavar="SECONDS",
                        help=f"also soak for this long (the issue: 600; part soak alone: {SOAK_SECONDS:g})")
    parser.add_argument("--json", metavar="FILE", help="merge the figures of the parts run into this JSON file")
    args = parser.parse_args()
    parts = [p for p in args.only.split(",") if p]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        parser.error(f"--only: expected parts among {', '.join(PARTS)}, got {', '.join(unknown)}")
    if args.soak and "soak" not in parts:
        parts.append("soak")
    texts = documents()
    sentence = next(line for text in texts for line in text.splitlines() if len(line.split()) >= 8)
    results: dict[str, Any] = {"cpus": os.cpu_count(), "load_at_start": load()}
    if "latency" in parts:
        results["latency"] = latency(sentence)
        print(json.dumps(results["latency"]), flush=True)
    if "throughput" in parts:
        from hgner.tagging.settings import TagSettings
        from hgner.tagging.tagger import Tagger

        tagger = Tagger(TagSettings(MODEL))
        text_tokens = [sum(len(s.tokens) for s in tagger.sentences(text)) for text in texts]
        results["throughput"] = throughput(texts, text_tokens)
        print(json.dumps(results["throughput"]), flush=True)
    if "identical" in parts:
        results["identical"] = identical(texts)
        print(json.dumps(results["identical"]), flush=True)
    if "fuzz" in parts:
        results["fuzz"] = fuzz(args.examples)
        print(json.dumps(results["fuzz"]), flush=True)
    if "soak" in parts:
        sentences = [line for text in texts for line in text.splitlines() if line.strip()]
        with server("--timeout", "10") as (url, process):
            results["soak"] = asyncio.run(soak(url, process, args.soak or SOAK_SECONDS, sentences))
        print(json.dumps(results["soak"]), flush=True)
    if "memory" in parts:
        with server() as (url, process):
            results["memory"] = asyncio.run(memory_growth(url, process))
        print(json.dumps(results["memory"]), flush=True)
    if args.json:
        path = Path(args.json)
        merged = json.loads(path.read_text()) if path.exists() else {}
        merged.update(results)
        scratch = path.with_name(path.name + ".tmp")  # written whole, then moved over the file
        scratch.write_text(json.dumps(merged, indent=1) + "\n")
        scratch.replace(path)


if __name__ == "__main__":
    main()
