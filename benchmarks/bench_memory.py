"""Peak resident memory of ``hgner evaluate`` and ``hgner tag`` runs, measured from the outside
(``os.wait4``'s rusage of each child process), written to docs/results/memory.json.

    python benchmarks/bench_memory.py [--big 16] [--long-line 200] [--out docs/results/memory.json]

Runs: the README's Speed row (en-conll03 on eng.testb, viterbi and herded at 800 sweeps) and,
with ``--big N``, Viterbi on eng.train repeated N times (16 copies are 52 MB: issue 14's target
is a peak under 1 GB on a 50 MB corpus); with ``--long-line MB``, ``hgner tag`` on one line of
MB megabytes (issue 62's target: a peak within 10 times the input): the words of eng.train and
Wikigold joined by spaces, again and again, a fifth of them varied at random each time (a number
added, a letter changed), so that new words keep coming. Needs the CoNLL-2003 corpus
(``conll2003:``) and, for ``--long-line``, Wikigold (``wikigold``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def peak(argv: list[str]) -> dict:
    """Run ``hgner ARGV``; its peak resident set size (MB) and wall-clock seconds."""
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "hgner.cli", *argv], stdout=subprocess.DEVNULL, cwd=ROOT)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"hgner {' '.join(argv)} failed with exit status {process.returncode}")
    return {"command": "hgner " + " ".join(argv), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
            "seconds": round(time.perf_counter() - started, 1)}


def varied(word: str, rng: random.Random) -> str:
    """``word``, or one time in ten a number added to it, one in ten a letter of it changed."""
    chance = rng.random()
    if chance < 0.1:
        return f"{word}{rng.randrange(100_000)}"
    if chance < 0.2 and len(word) > 3:
        i = rng.randrange(len(word))
        return word[:i] + rng.choice(string.ascii_letters) + word[i + 1:]
    return word


def write_long_line(path: Path, megabytes: int, seed: int = 0) -> None:
    """One line of ``megabytes`` MB (2**20 bytes) at ``path``: the words of eng.train and Wikigold,
    over and over, varied (:func:`varied`)."""
    from hgner.data.corpus import load_corpus

    words = [t for name in ("conll2003:train", "wikigold") for s in load_corpus(name).sentences for t in s.tokens]
    rng = random.Random(seed)
    left = megabytes * 2**20 - 1
    with path.open("w", encoding="utf-8") as out:
        while left > 0:
            piece = (" ".join(varied(word, rng) for word in words) + " ").encode("utf-8")[:left]
            out.write(piece.decode("utf-8", errors="ignore"))
            left -= len(piece)
        out.write("\n")


def long_line_run(megabytes: int) -> dict:
    """``hgner tag`` (inline output) on one line of ``megabytes`` MB: its peak and that peak over the input's size."""
    with tempfile.TemporaryDirectory() as folder:
        line = Path(folder) / f"line-{megabytes}mb.txt"
        write_long_line(line, megabytes)
        size = line.stat().st_size / 2**20
        run = peak(["tag", "--model", "en-conll03", str(line)])
    run["command"] = run["command"].replace(str(line), line.name)
    return {**run, "input_mb": round(size, 1), "peak_over_input": round(run["peak_rss_mb"] / size, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--big", type=int, default=0, help="also evaluate on eng.train repeated this many times")
    parser.add_argument("--long-line", type=int, default=0, metavar="MB",
                        help="also tag one line of this many MB (new words all along)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "results" / "memory.json")
    args = parser.parse_args()
    from hgner.core.fileio import write_text
    from hgner.data.catalog import resolve
    from hgner.data.datahome import ensure

    runs = [peak(["evaluate", "--model", "en-conll03", "--corpus", "conll2003:testb", "--decoders", "viterbi,herded",
                  "--sweeps", "800"])]
    print(runs[-1], flush=True)
    if args.big:
        train = Path(ensure(*resolve("conll2003:train"))).read_bytes()
        with tempfile.TemporaryDirectory() as folder:
            corpus = Path(folder) / f"eng.train.x{args.big}"
            corpus.write_bytes(train * args.big)
            runs.append({**peak(["evaluate", "--model", "en-conll03", "--corpus", str(corpus)]),
                         "corpus_mb": round(corpus.stat().st_size / 2**20, 1)})
            runs[-1]["command"] = runs[-1]["command"].replace(str(corpus), f"eng.train-x{args.big}")
        print(runs[-1], flush=True)
    if args.long_line:
        runs.append(long_line_run(args.long_line))
        print(runs[-1], flush=True)
    write_text(args.out, json.dumps({"runs": runs, "when": time.strftime("%Y-%m-%d %H:%M")}, indent=2) + "\n")


if __name__ == "__main__":
    main()
