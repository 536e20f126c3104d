"""Benchmark ``hgner tag`` end to end and the spaCy component, on the raw text of CoNLL-2003 eng.testb.

The text is rebuilt from the corpus (tokens joined by spaces, sentences by newlines), one file per
document in a temporary folder that is removed afterwards. Figures (targets in brackets):

* ``hgner tag`` with viterbi on the chain, all documents in one command (and with ``--jobs 2``): tokens/s end to end,
  startup included, and after startup (the command's wall time minus the one-sentence time to
  first output) [>= 40,000 tokens/s]; CPU seconds of the command, since a shared machine inflates
  wall time.
* time to first output for a one-sentence input, from a cold start of the command [<= 2 s].
* the spaCy component, one process: blank English with hgner's tokenizer + hgner (the README's
  pipeline), and blank English + sentencizer + hgner [>= 20,000 tokens/s].

Usage: python benchmarks/bench_tag.py [--model DIR] [--runs 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hgner.data.corpus import load_corpus
from hgner.tagging.settings import DEFAULT_MODEL

# the hgner console script installed beside this interpreter, as a user runs it: not whatever `hgner` comes
# first on PATH (a pyenv shim adds about 0.2 CPU-s of shell and pyenv to every run, another environment's is
# other code)
_SCRIPT = Path(sys.executable).parent / "hgner"
COMMAND = [str(_SCRIPT)] if _SCRIPT.is_file() else [sys.executable, "-m", "hgner.cli"]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_command(args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of ``hgner ARGS`` (output discarded)."""
    cpu, started = children_cpu(), time.perf_counter()
    subprocess.run([*COMMAND, *args], stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started, children_cpu() - cpu


def first_output_seconds(model: str) -> float:
    """Seconds from starting ``hgner tag`` on one sentence to its first byte of output."""
    started = time.perf_counter()
    process = subprocess.Popen([*COMMAND, "tag", "--model", model, "Jim Smith flew to Paris on Monday."],
                               stdout=subprocess.PIPE)
    process.stdout.read(1)
    seconds = time.perf_counter() - started
    process.communicate()
    return seconds


def spacy_tokens_per_second(model: str, texts: list[str], sentencizer: bool = False) -> tuple[float, int]:
    """Tokens per second of the spaCy component in one process: blank English with hgner's
    tokenizer and the component (which then splits sentences by hgner tag's rules), as the README
    recommends; with ``sentencizer``, spaCy's default tokenizer and its sentencizer before it."""
    import spacy

    from hgner.text.tokenizer import make_tokenizer

    nlp = spacy.blank("en")
    if sentencizer:
        nlp.add_pipe("sentencizer")
    else:
        nlp.tokenizer = make_tokenizer(nlp)
    nlp.add_pipe("hgner", config={"model": model})
    nlp("Warm up the model.")
    started = time.perf_counter()
    tokens = sum(len(doc) for doc in nlp.pipe(texts))
    return tokens / (time.perf_counter() - started), tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=DEFAULT_MODEL, help=f"model name or directory (default {DEFAULT_MODEL})")
    parser.add_argument("--runs", type=int, default=3, help="repetitions; medians are reported (default 3)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()

    corpus = load_corpus("conll2003:testb")
    texts = ["\n".join(" ".join(s.tokens) for s in d.sentences) + "\n" for d in corpus.documents]
    with tempfile.TemporaryDirectory(prefix="bench_tag-") as folder:
        files = []
        for i, text in enumerate(texts):
            path = Path(folder) / f"doc{i:04d}.txt"
            path.write_text(text, encoding="utf-8")
            files.append(str(path))
        first_output_seconds(args.model)  # fills OS file caches and numba's cache: later starts are "cold" processes
        starts = [first_output_seconds(args.model) for _ in range(args.runs)]
        tagging = [time_command(["tag", "--model", args.model, "--format", "jsonl", "--files", *files])
                   for _ in range(args.runs)]
        two_jobs = [time_command(["tag", "--model", args.model, "--format", "jsonl", "--jobs", "2", "--files", *files])
                    for _ in range(args.runs)]
    wall = statistics.median(w for w, _ in tagging)
    wall_two_jobs = statistics.median(w for w, _ in two_jobs)
    cpu = statistics.median(c for _, c in tagging)
    startup = statistics.median(starts)
    spacy_rate, spacy_tokens = spacy_tokens_per_second(args.model, texts)
    sentencizer_rate, _ = spacy_tokens_per_second(args.model, texts, sentencizer=True)
    figures = {
        "model": args.model,
        "documents": len(texts),
        "corpus_tokens": corpus.n_tokens,
        "tag_wall_seconds": round(wall, 2),
        "tag_cpu_seconds": round(cpu, 2),
        "tag_tokens_per_second": round(corpus.n_tokens / wall),
        "tag_tokens_per_second_after_startup": round(corpus.n_tokens / max(wall - startup, 1e-9)),
        "tag_tokens_per_cpu_second": round(corpus.n_tokens / cpu),
        "tag_jobs2_wall_seconds": round(wall_two_jobs, 2),
        "tag_jobs2_tokens_per_second": round(corpus.n_tokens / wall_two_jobs),
        "tag_jobs2_tokens_per_second_after_startup": round(corpus.n_tokens / max(wall_two_jobs - startup, 1e-9)),
        "first_output_seconds": round(startup, 2),
        "first_output_seconds_runs": [round(s, 2) for s in starts],
        "spacy_tokens": spacy_tokens,
        "spacy_tokens_per_second": round(spacy_rate),
        "spacy_with_sentencizer_tokens_per_second": round(sentencizer_rate),
    }
    for key, value in figures.items():
        print(f"{key:40s} {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
