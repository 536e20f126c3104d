"""``hgner serve`` against the targets of issue 38, on 127.0.0.1 only, bounded in count and time.

* latency: one worker, warm, one CoNLL sentence (eng.testb's first of 8 tokens or more) from 8
  concurrent clients, each sending its next request when the last is answered, with httpx and,
  when it is installed, with ApacheBench (``ab``: a client in C, which takes less of the shared CPU)
  [p50 <= 5 ms, p99 <= 25 ms];
* throughput: eng.testb's raw documents in batches of 16 through ``/v1/tag``, tokens per CPU-second
  of the server's processes, against ``hgner tag --format jsonl`` on the same documents (its
  process's CPU, startup included and left out) [>= 80%]; and tokens per wall-clock second with
  ``--workers 2`` against one worker [>= 1.7x];
* identical: the entities of ``/v1/tag`` equal ``hgner tag --format jsonl``'s on eng.testb's raw
  text, document by document, and the whole text as one document;
* fuzz: schemathesis against the live server's OpenAPI schema [0 server errors, 0 schema violations];
* soak (``--soak SECONDS``, 600 in the issue): 16 clients, 10% hostile requests; counts the 500s
  and the dropped connections, and the server's resident memory after the first minute and at the
  end [0, 0, growth < 5%].

The machine's load average is recorded with each figure: the CPU is shared.

Usage: python scripts/bench_serve.py [--only latency,throughput,identical,fuzz] [--examples 200] [--soak 600]
       [--json FILE]
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
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import httpx
import psutil

from hgner.corpus import load_corpus
from hgner.rawtext import rebuild

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_tag import children_cpu  # noqa: E402

MODEL = "en-conll03"
LATENCY_CLIENTS = 8
LATENCY_REQUESTS = 4000
BATCH = 16
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
    process = subprocess.Popen([sys.executable, "-m", "hgner.cli", "serve", "--model", MODEL, "--port", str(port),
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


def rss(process: psutil.Process) -> int:
    return sum(p.memory_info().rss for p in [process, *process.children(recursive=True)])


async def closed_loop(url: str, bodies: list[dict], clients: int, count: int) -> tuple[list[float], list[dict]]:
    """``count`` requests from ``clients`` concurrent clients, each sending its next when the last is
    answered: the latencies (seconds) and the answers."""
    latencies: list[float] = []
    answers: list[dict] = []
    queue = list(enumerate(bodies[i % len(bodies)] for i in range(count)))
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
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


def latency(sentence: str) -> dict[str, Any]:
    with server() as (url, _):
        asyncio.run(closed_loop(url, [{"text": sentence}], LATENCY_CLIENTS, 400))  # warm
        before = load()
        started = time.perf_counter()
        latencies, _ = asyncio.run(closed_loop(url, [{"text": sentence}], LATENCY_CLIENTS, LATENCY_REQUESTS))
        seconds = time.perf_counter() - started
        single, _ = asyncio.run(closed_loop(url, [{"text": sentence}], 1, 1000))
        compiled = apache_bench(url, sentence)
    return {"client": "httpx (Python, asyncio; its own CPU is part of each latency)","clients": LATENCY_CLIENTS, "requests": LATENCY_REQUESTS, "sentence": sentence,
            "p50_ms": round(1000 * percentile(latencies, 50), 2), "p99_ms": round(1000 * percentile(latencies, 99), 2),
            "requests_per_second": round(LATENCY_REQUESTS / seconds, 1),
            "one_client_p50_ms": round(1000 * percentile(single, 50), 2),
            "one_client_p99_ms": round(1000 * percentile(single, 99), 2),
            "load_before": before, "load_after": load(), "apache_bench": compiled}


def apache_bench(url: str, sentence: str) -> dict[str, Any] | None:
    """The same load from ApacheBench (``ab``, a client in C: apt-get install apache2-utils), keep-alive;
    None when it is not installed."""
    if shutil.which("ab") is None:
        return None
    figures: dict[str, Any] = {"client": "ab (ApacheBench, keep-alive)"}
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
            figures[f"clients_{clients}"] = {"requests": count, "p50_ms": percent[50], "p99_ms": percent[99],
                                             "requests_per_second": float(rate.group(1)) if rate else None,
                                             "failed": int(failed.group(1)) if failed else None,
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


def throughput(texts: list[str], tokens: int) -> dict[str, Any]:
    batches = [{"documents": [{"id": j, "text": t} for j, t in enumerate(texts[i:i + BATCH])]}
               for i in range(0, len(texts), BATCH)]
    figures: dict[str, Any] = {"documents": len(texts), "tokens": tokens, "batch": BATCH}
    for workers in (1, 2):
        with server("--workers", str(workers)) as (url, process):
            asyncio.run(closed_loop(url, batches[:4], 2 * workers, 8))  # warm every worker
            before, cpu, started = load(), cpu_seconds(process), time.perf_counter()
            runs = 2
            asyncio.run(closed_loop(url, batches, 2 * workers, runs * len(batches)))
            wall = time.perf_counter() - started
            cpu = cpu_seconds(process) - cpu
        figures[f"workers_{workers}"] = {"clients": 2 * workers, "tokens_per_second": round(runs * tokens / wall),
                                         "tokens_per_cpu_second": round(runs * tokens / cpu),
                                         "load_before": before, "load_after": load()}
    figures["workers_2_over_1"] = round(figures["workers_2"]["tokens_per_second"]
                                        / figures["workers_1"]["tokens_per_second"], 2)
    with tempfile.TemporaryDirectory(prefix="bench_serve-") as folder:
        files = write_documents(folder, texts)
        tag_cpu(files[:1])  # warm (numba cache, files)
        before = load()
        whole = statistics.median(tag_cpu(files) for _ in range(2))
        startup = statistics.median(tag_cpu(files[:1]) for _ in range(2))
    figures["hgner_tag"] = {"cpu_seconds": round(whole, 2), "one_document_cpu_seconds": round(startup, 2),
                            "tokens_per_cpu_second": round(tokens / whole),
                            "tokens_per_cpu_second_without_startup": round(tokens / max(whole - startup, 1e-9)),
                            "load_before": before, "load_after": load()}
    server_rate = figures["workers_1"]["tokens_per_cpu_second"]
    figures["server_over_hgner_tag"] = round(server_rate / figures["hgner_tag"]["tokens_per_cpu_second"], 2)
    figures["server_over_hgner_tag_without_startup"] = round(
        server_rate / figures["hgner_tag"]["tokens_per_cpu_second_without_startup"], 2)
    return figures


def identical(texts: list[str]) -> dict[str, Any]:
    """Entities of /v1/tag against hgner tag --format jsonl: per document, and the whole text."""
    whole = "".join(texts)
    with tempfile.TemporaryDirectory(prefix="bench_serve-") as folder:
        files = write_documents(folder, [*texts, whole])
        done = subprocess.run([sys.executable, "-m", "hgner.cli", "tag", "--model", MODEL, "--format", "jsonl",
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


def fuzz(examples: int) -> dict[str, Any]:
    """schemathesis on the live server's OpenAPI schema, valid and invalid requests: its checks for
    server errors, responses that differ from the schema, and undocumented status codes."""
    checks = "not_a_server_error,response_schema_conformance,status_code_conformance"
    with server("--max-chars", "5000", "--timeout", "10") as (url, _), tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run([str(Path(sys.executable).parent / "schemathesis"), "run", url + "/openapi.json",
                               "--checks", checks, "--mode", "all", "--max-examples", str(examples), "--seed", "0"],
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="latency,throughput,identical,fuzz",
                        help="comma-separated parts: latency, throughput, identical, fuzz (default all four)")
    parser.add_argument("--examples", type=int, default=200, help="schemathesis examples per operation (default 200)")
    parser.add_argument("--soak", type=float, metavar="SECONDS", help="also soak for this long (the issue: 600)")
    parser.add_argument("--json", metavar="FILE", help="merge the figures into this JSON file")
    args = parser.parse_args()
    texts = documents()
    sentence = next(line for text in texts for line in text.splitlines() if len(line.split()) >= 8)
    results: dict[str, Any] = {"cpus": os.cpu_count(), "load_at_start": load()}
    parts = [p for p in args.only.split(",") if p]
    if "latency" in parts:
        results["latency"] = latency(sentence)
        print(json.dumps(results["latency"]), flush=True)
    if "throughput" in parts:
        from hgner.tagging.settings import TagSettings
        from hgner.tagging.tagger import Tagger

        tagger = Tagger(TagSettings(MODEL))
        tokens = sum(len(s.tokens) for text in texts for s in tagger.sentences(text))
        results["throughput"] = throughput(texts, tokens)
        print(json.dumps(results["throughput"]), flush=True)
    if "identical" in parts:
        results["identical"] = identical(texts)
        print(json.dumps(results["identical"]), flush=True)
    if "fuzz" in parts:
        results["fuzz"] = fuzz(args.examples)
        print(json.dumps(results["fuzz"]), flush=True)
    if args.soak:
        sentences = [line for text in texts for line in text.splitlines() if line.strip()]
        with server("--timeout", "10") as (url, process):
            results["soak"] = asyncio.run(soak(url, process, args.soak, sentences))
        print(json.dumps(results["soak"]), flush=True)
    if args.json:
        path = Path(args.json)
        merged = json.loads(path.read_text()) if path.exists() else {}
        merged.update(results)
        path.write_text(json.dumps(merged, indent=1) + "\n")


if __name__ == "__main__":
    main()
