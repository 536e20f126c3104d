"""Benchmark hgner at corpus scale: one process against a local Dask cluster, on 1M tokens of news.

The input is the raw text of CoNLL-2003 eng.train (tokens joined by spaces, one sentence per
line), one file per document, repeated until it holds ``--tokens`` tokens (default 1,000,000), in
a temporary folder that is removed afterwards. Figures (the issue's targets in brackets):

* ``hgner tag --format jsonl --files ...`` in one process: tokens per CPU-second of the whole
  command, startup included [>= 100,000], wall seconds and peak RSS.
* ``hgner tag --cluster local:N DIR --out OUT`` (N = ``--workers``, default 2): wall seconds,
  throughput against the one-process run [>= 1.7x with 2 workers], peak RSS of the largest process
  (a worker), and whether every document's entities equal the one-process output.
* eng.testb's raw text as one file, ``hgner tag --format conll``, end to end [<= 1.2 s].
* first output for one sentence, cold command [<= 0.8 s].
* the spaCy component in one process, with hgner's tokenizer (the README's pipeline) and with
  spaCy's tokenizer + sentencizer [>= 50,000 tokens/s]: on the first 300 documents of eng.train
  (every word new to the caches) and on the whole input (``nlp.pipe`` over every document).
* Dask's coordination overhead on a local cluster: per task (no-op tasks) and per part (tiny
  parts through ``tag_to_folder`` against the same documents in one part), and from these and the
  measured per-core throughput an estimate of the hours to tag 10^8 tokens on C cores.

Wall seconds depend on what else runs on the machine: the script prints the load average before
and after, and CPU-seconds where they mean something.

Usage: python benchmarks/bench_scale.py [--model en-conll03] [--tokens 1000000] [--workers 2] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_tag import COMMAND, first_output_seconds, spacy_tokens_per_second  # noqa: E402  (benchmarks/ is on the path when a script runs)

from hgner.data.corpus import load_corpus
from hgner.distributed.inputs import PART_BYTES
from hgner.tagging.settings import DEFAULT_MODEL

# runs a command and prints its wall seconds, CPU seconds and the peak RSS (KiB) of its largest process
_MEASURE = """
import resource, subprocess, sys, time
started = time.perf_counter()
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(time.perf_counter() - started, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, code)
"""


def measure(args: list[str]) -> dict[str, float]:
    """Wall and CPU seconds and peak RSS (MiB, largest process of its tree) of ``hgner ARGS``."""
    output = subprocess.run([sys.executable, "-c", _MEASURE, *COMMAND, *args], capture_output=True, text=True,
                            check=True).stdout.split()
    wall, cpu, rss, code = float(output[0]), float(output[1]), int(output[2]), int(output[3])
    if code != 0:
        raise SystemExit(f"hgner {' '.join(args[:3])} ... failed with status {code}")
    return {"wall_seconds": round(wall, 2), "cpu_seconds": round(cpu, 2), "peak_rss_mib": round(rss / 1024)}


def raw_documents(corpus_name: str) -> list[tuple[str, int]]:
    """(text, tokens) of each document of a corpus, as raw text."""
    corpus = load_corpus(corpus_name)
    return [("\n".join(" ".join(s.tokens) for s in d.sentences) + "\n", sum(len(s.tokens) for s in d.sentences))
            for d in corpus.documents]


def write_repeated(folder: Path, documents: list[tuple[str, int]], tokens: int) -> tuple[list[str], int]:
    """Files of ``documents`` in order, repeated until they hold ``tokens`` tokens."""
    folder.mkdir()
    paths, total = [], 0
    while total < tokens:
        for text, count in documents:
            if total >= tokens:
                break
            paths.append(str(folder / f"doc{len(paths):06d}.txt"))
            Path(paths[-1]).write_text(text, encoding="utf-8")
            total += count
    return paths, total


def jsonl_entities(path: Path) -> list[list[dict]]:
    return [json.loads(line)["entities"] for line in path.read_text(encoding="utf-8").splitlines()]


def part_entities(folder: Path) -> list[list[dict]]:
    return [json.loads(line)["entities"] for part in sorted(folder.glob("part-*.jsonl"))
            for line in part.read_text(encoding="utf-8").splitlines()]


def coordination_overhead(model: str, workers: int, folder: Path) -> dict[str, float]:
    """Seconds per no-op task, and per part of ``tag_to_folder`` beyond its documents' tagging."""
    from hgner.distributed.connect import connect
    from hgner.distributed.jobs import tag_to_folder
    from hgner.tagging.settings import TagSettings

    settings = TagSettings(model)
    sentence = "Jim Smith flew to Paris on Monday .\n"
    files = []
    (folder / "tiny").mkdir()
    for i in range(200):
        files.append(folder / "tiny" / f"s{i:03d}.txt")
        files[-1].write_text(sentence, encoding="utf-8")
    with connect(f"local:{workers}") as client:
        client.submit(sum, [1], pure=False).result()
        started = time.perf_counter()
        futures = client.map(abs, range(2000), pure=False)
        client.gather(futures)
        per_task = (time.perf_counter() - started) / 2000
        tag_to_folder(client, [str(folder / "tiny")], folder / "warm", settings)  # loads the model on the workers
        timings = {}
        # one part per worker, then one part per file: the difference is the cost of the extra parts
        per_worker = -(-len(files) // workers) * len(sentence)
        for name, part_bytes in (("few", per_worker), ("many", 1)):
            started = time.perf_counter()
            tag_to_folder(client, [str(folder / "tiny")], folder / name, settings, part_bytes=part_bytes)
            timings[name] = time.perf_counter() - started
    per_part = (timings["many"] - timings["few"]) * workers / (len(files) - workers)
    return {"per_task_seconds": per_task, "per_part_seconds": max(per_part, 0.0)}


def load_average() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=DEFAULT_MODEL, help=f"model name or directory (default {DEFAULT_MODEL})")
    parser.add_argument("--tokens", type=int, default=1_000_000, help="tokens of input (default 1,000,000)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes of the local cluster (default 2)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()

    figures: dict[str, object] = {"model": args.model, "cpus": os.cpu_count(), "load_average_before": load_average()}
    train = raw_documents("conll2003:train")
    testb = raw_documents("conll2003:testb")
    with tempfile.TemporaryDirectory(prefix="bench_scale-") as temporary:
        folder = Path(temporary)
        paths, tokens = write_repeated(folder / "in", train, args.tokens)
        input_bytes = sum(Path(path).stat().st_size for path in paths)
        figures.update(documents=len(paths), tokens=tokens)
        (folder / "testb.txt").write_text("\n".join(text for text, _ in testb), encoding="utf-8")
        testb_tokens = sum(count for _, count in testb)

        first_output_seconds(args.model)  # fills the OS file cache and numba's cache
        figures["first_output_seconds"] = round(min(first_output_seconds(args.model) for _ in range(3)), 2)
        testb = measure(["tag", "--model", args.model, "--format", "conll", str(folder / "testb.txt")])
        figures["testb_end_to_end"] = {**testb, "tokens": testb_tokens}

        one = measure(["tag", "--model", args.model, "--format", "jsonl", "-o", str(folder / "one.jsonl"),
                       "--files", *paths])
        one["tokens_per_cpu_second"] = round(tokens / one["cpu_seconds"])
        one["tokens_per_second"] = round(tokens / one["wall_seconds"])
        figures["one_process"] = one

        cluster = measure(["tag", "--model", args.model, "--cluster", f"local:{args.workers}", str(folder / "in"),
                           "--out", str(folder / "out")])
        cluster["tokens_per_second"] = round(tokens / cluster["wall_seconds"])
        cluster["speedup_over_one_process"] = round(one["wall_seconds"] / cluster["wall_seconds"], 2)
        cluster["identical_output"] = part_entities(folder / "out") == jsonl_entities(folder / "one.jsonl")
        cluster["parts"] = json.loads((folder / "out" / "manifest.json").read_text())["counts"]["parts"]
        figures[f"cluster_local_{args.workers}"] = cluster

        sample = [t for t, _ in train[:300]]
        texts = [Path(path).read_text(encoding="utf-8") for path in paths]
        for name, documents in (("first_300_documents", sample), ("whole_input", texts)):
            figures[f"spacy_tokens_per_second_{name}"] = {
                "hgner_tokenizer": round(spacy_tokens_per_second(args.model, documents)[0]),
                "spacy_tokenizer_and_sentencizer": round(spacy_tokens_per_second(args.model, documents, sentencizer=True)[0])}
        overhead = coordination_overhead(args.model, args.workers, folder)
        figures["overhead"] = {k: round(v, 4) for k, v in overhead.items()}

    per_core = one["tokens_per_cpu_second"]
    corpus, part_tokens = 10**8, PART_BYTES * tokens / input_bytes  # tokens a part of this text holds
    figures["part_tokens"] = round(part_tokens)
    figures["estimate_1e8_tokens_hours"] = {
        str(cores): round((corpus / (per_core * cores) + corpus / part_tokens * overhead["per_part_seconds"] / cores)
                          / 3600, 2)
        for cores in (1, 2, 16, 64, 256)
    }
    figures["load_average_after"] = load_average()
    print(json.dumps(figures, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
