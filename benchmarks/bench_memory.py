"""Peak resident memory of ``hgner evaluate`` runs, measured from the outside (``os.wait4``'s
rusage of each child process), written to docs/results/memory.json.

    python benchmarks/bench_memory.py [--big 16] [--out docs/results/memory.json]

Runs: the README's Speed row (en-conll03 on eng.testb, viterbi and herded at 800 sweeps) and,
with ``--big N``, Viterbi on eng.train repeated N times (16 copies are 52 MB: issue 14's target
is a peak under 1 GB on a 50 MB corpus). Needs the CoNLL-2003 corpus (``conll2003:``).
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--big", type=int, default=0, help="also evaluate on eng.train repeated this many times")
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
    write_text(args.out, json.dumps({"runs": runs, "when": time.strftime("%Y-%m-%d %H:%M")}, indent=2) + "\n")


if __name__ == "__main__":
    main()
