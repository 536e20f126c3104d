"""Benchmark hgner's fixed costs (issue 39), optionally side by side with an earlier checkout in one run.

Inputs, written to a temporary folder that is removed afterwards: the raw text of CoNLL-2003
eng.train (tokens joined by spaces, one sentence per line, one file per document) repeated until
it holds 1M and 2M tokens; eng.testb's and IEER's raw text, one file each; and up to 3,000 of eng.train's
9-token sentences as separate texts. Figures (the issue's targets in brackets):

* one process, ``hgner tag --format jsonl --files ...`` on 1M and 2M tokens: CPU seconds. The
  steady state is the extra million tokens over the extra CPU seconds [>= 150,000 tokens/CPU-s],
  and the fixed cost of a process is the 1M run's CPU seconds minus 1M tokens at the steady
  state [<= 1.5 CPU-s]: each round's from its own two runs, the median of the rounds.
* ``hgner tag --cluster local:2`` on the 1M tokens: its wall time against the one-process run's
  [>= 1.7x] and its CPU seconds against the one-process run's [<= 1.15x], with identical entities.
* short texts: the 9-token texts through ``Tagger.pipe`` and through the spaCy component
  (``nlp.pipe``, hgner's tokenizer), warm (one pass, a full garbage collection, then the median of
  timed passes over at least 3 CPU-seconds; the best round's), in tokens per CPU-second [>= 80,000].
* eng.testb's raw text in one command (``hgner tag --format conll``), wall seconds [<= 1.6 s on
  a quiet machine].
* one sentence in one command (``hgner tag TEXT``): the fixed cost of a process measured directly,
  CPU and wall seconds (no target of its own).
* the accepted floor: the CPU seconds of a process that imports spaCy and numba and makes
  ``spacy.blank("en")``, which the fixed cost includes; and the same process calling one trivial
  numba kernel from numba's cache, as any process that runs a kernel does (the first call readies
  numba's compiler target and loads the kernel's machine code: numba's own cost, not hgner's). From
  it and the steady state, the most two workers could gain over one process on the 1M tokens if
  hgner cost nothing above the floor and Dask nothing at all (``cluster_speedup_bound``).
* with ``--baseline DIR`` (an earlier checkout of hgner, run from its folder with the same
  interpreter and its own copy of the models, ``DIR/models``; ``--baseline-is`` says what it is,
  for the results page): every figure for it too, and whether the outputs on eng.testb, IEER, the
  1M tokens and the one sentence are byte-identical.

Every process caches its bytecode in a temporary folder (``PYTHONPYCACHEPREFIX``), as an installed
package has it, and each version runs once before it is timed. Wall seconds depend on what else
runs on the machine: the script prints the load average before and after, and compares versions
within one run only.

Usage: python benchmarks/bench_fixed.py [--baseline DIR [--baseline-is TEXT]] [--runs 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_scale import load_average, raw_documents, write_repeated  # noqa: E402  (benchmarks/ is on the path when a script runs)

ROOT = Path(__file__).resolve().parent.parent

# runs ARGS and prints its wall seconds and CPU seconds (the command and its children)
_MEASURE = """
import resource, subprocess, sys, time
started = time.perf_counter()
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(time.perf_counter() - started, usage.ru_utime + usage.ru_stime, code)
"""

# tokens per CPU-second of 9-token texts through Tagger.pipe and the spaCy component, warm
_SHORT = """
import gc, json, statistics, sys, time
import spacy
import hgner
from hgner.text.tokenizer import make_tokenizer
texts, model = json.load(open(sys.argv[1], encoding="utf-8")), sys.argv[2]
tokens = 9 * len(texts)
TIMED_SECONDS = 3.0
def rate(pipe):
    list(pipe(texts))
    gc.collect()  # the objects of the model load are old by now: one pass of ~0.3 s is not timed with a full collection
    seconds = []
    while len(seconds) < 3 or sum(seconds) < TIMED_SECONDS:  # one pass is ~0.1 s: many, for a steady median
        started = time.process_time()
        list(pipe(texts))
        seconds.append(time.process_time() - started)
    return round(tokens / statistics.median(seconds))
tagger = hgner.load(model)
nlp = spacy.blank("en")
nlp.tokenizer = make_tokenizer(nlp)
nlp.add_pipe("hgner", config={"model": model})
print(json.dumps({"tagger_pipe": rate(tagger.pipe), "spacy_pipe": rate(nlp.pipe)}))
"""


# the accepted floor (issue 39): importing spaCy and numba and making a blank English pipeline; and
# the same with the first call of a cached numba kernel (FLOOR_KERNEL, a module in the floor's folder)
FLOORS = {"imports": "import spacy, numba; spacy.blank('en')",
          "imports_and_kernel": "import spacy, numba; spacy.blank('en'); import floor_kernel; floor_kernel.first(1)"}
FLOOR_KERNEL = "import numba\n\n\n@numba.njit(cache=True)\ndef first(x):\n    return x + 1\n"


def environment(bytecode: Path, **more: str) -> dict[str, str]:
    """This environment with Python's bytecode cached under ``bytecode`` (as an installed package
    runs: a machine with PYTHONDONTWRITEBYTECODE would otherwise compile every module each time)."""
    variables = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    return {**variables, "PYTHONPYCACHEPREFIX": str(bytecode), **more}


ONE_SENTENCE = "Maria Lopez joined Siemens in Munich last year ."  # a cold command's fixed cost, measured directly


def floor_cpu_seconds(folder: Path, bytecode: Path) -> dict[str, float]:
    """CPU seconds of each of the :data:`FLOORS` processes, run in ``folder`` (which holds the
    kernel module; its first run compiles and caches the kernel)."""
    (folder / "floor_kernel.py").write_text(FLOOR_KERNEL, encoding="utf-8")
    return {name: float(subprocess.run([sys.executable, "-c", _MEASURE, sys.executable, "-c", code], capture_output=True,
                                       text=True, check=True, env=environment(bytecode), cwd=folder).stdout.split()[1])
            for name, code in FLOORS.items()}


class Version:
    """One checkout of hgner, run as ``python -m hgner.cli`` with its folder first on the path."""

    def __init__(self, name: str, root: Path, bytecode: Path) -> None:
        self.name, self.root = name, root
        self.environment = environment(bytecode, PYTHONPATH=str(root))
        self.model = str(root / "models" / "en-conll03")  # its own copy (an installed hgner's would win by name)

    def measure(self, args: list[str]) -> tuple[float, float]:
        """Wall and CPU seconds of ``hgner ARGS --model`` its en-conll03 (output discarded)."""
        command = [sys.executable, "-c", _MEASURE, sys.executable, "-m", "hgner.cli", *args, "--model", self.model]
        # run from its folder: ``python -m`` puts the working folder ahead of PYTHONPATH
        output = subprocess.run(command, capture_output=True, text=True, check=True, env=self.environment,
                                cwd=self.root).stdout.split()
        if output[2] != "0":
            raise SystemExit(f"{self.name}: hgner {' '.join(args[:3])} ... failed with status {output[2]}")
        return float(output[0]), float(output[1])

    def short_texts(self, texts: Path) -> dict[str, int]:
        output = subprocess.run([sys.executable, "-c", _SHORT, str(texts), self.model], capture_output=True, text=True,
                                check=True, env=self.environment, cwd=self.root).stdout
        return json.loads(output)


def best(timings: list[tuple[float, float]]) -> dict[str, float]:
    """The fewest wall and CPU seconds of a command's rounds (as ``timeit`` reports: on a shared
    machine other work only ever adds time, and a difference of two medians moved by a second)."""
    return {"wall_seconds": round(min(t[0] for t in timings), 2), "cpu_seconds": round(min(t[1] for t in timings), 2)}


def part_entities(folder: Path) -> list[list[dict]]:
    return [json.loads(line)["entities"] for part in sorted(folder.glob("part-*.jsonl"))
            for line in part.read_text(encoding="utf-8").splitlines()]


def commands(version: Version, work: Path, inputs: dict) -> dict[str, list[str]]:
    """The timed commands of ``version``, by name (outputs in its own folder)."""
    out = work / version.name
    return {size: ["tag", "--format", "jsonl", "-o", str(out / f"{size}.jsonl"), "--files", *inputs[size]]
            for size in ("1M", "2M")} | {
        "cluster": ["tag", "--cluster", "local:2", str(work / "1M"), "--out", str(out / "cluster")],
        "testb": ["tag", "--format", "conll", "-o", str(out / "testb.conll"), inputs["testb"][0]],
        "sentence": ["tag", "-o", str(out / "sentence.txt"), ONE_SENTENCE]}


def side_by_side(versions: list[Version], work: Path, inputs: dict, runs: int, bytecode: Path) -> dict:
    """Every version's figures and the floors, their commands interleaved (each round runs the
    floors, then each command once for every version, the versions in turn first; the best of
    ``runs`` rounds), since this machine's speed drifts within minutes."""
    timings: dict[str, dict[str, list]] = {v.name: {} for v in versions}
    for version in versions:
        (work / version.name).mkdir()
        version.measure(["tag", "Warm up in Paris ."])  # the bytecode cached, the kernels compiled (or loaded) once
        version.measure(["tag", "--format", "conll", "-o", str(work / version.name / "ieer.conll"), inputs["ieer"][0]])
    floors: dict[str, list[float]] = {}
    rates: dict[str, list[dict[str, int]]] = {}  # short texts' tokens per CPU-second, by version, each round
    (work / "floor").mkdir()
    floor_cpu_seconds(work / "floor", bytecode)  # the bytecode and the kernel cached
    for round_ in range(runs):
        for name, seconds in floor_cpu_seconds(work / "floor", bytecode).items():
            floors.setdefault(name, []).append(seconds)
        order = versions if round_ % 2 == 0 else versions[::-1]  # neither always runs first
        for name in commands(versions[0], work, inputs):
            for version in order:
                if name == "cluster":
                    shutil.rmtree(work / version.name / "cluster", ignore_errors=True)
                timings[version.name].setdefault(name, []).append(version.measure(commands(version, work, inputs)[name]))
        for version in order:
            rates.setdefault(version.name, []).append(version.short_texts(work / "short.json"))
    return {"floor_cpu_seconds": round(min(floors["imports"]), 2),
            "floor_with_kernel_cpu_seconds": round(min(floors["imports_and_kernel"]), 2),
            **{v.name: {**summary(v, work, inputs, timings[v.name]),
                        "short_texts_tokens_per_cpu_second": {key: max(r[key] for r in rates[v.name])
                                                              for key in rates[v.name][0]}}
               for v in versions}}


def summary(version: Version, work: Path, inputs: dict, rounds: dict[str, list[tuple[float, float]]]) -> dict:
    """A version's figures from its timings, (wall, CPU) seconds of each command in each round: the
    best of the rounds, except the steady state and the fixed cost, which each round's own 1M and
    2M runs give (a minute apart) and whose medians over the rounds are reported."""
    out = work / version.name
    timed = {name: best(timings) for name, timings in rounds.items()}
    one, cluster = timed["1M"], timed["cluster"]
    extra = [two[1] - first[1] for first, two in zip(rounds["1M"], rounds["2M"], strict=True)]  # CPU-s of the second million
    steady = inputs["tokens_1M"] / statistics.median(extra)
    fixed = statistics.median(first[1] - more for first, more in zip(rounds["1M"], extra, strict=True))
    one_entities = [json.loads(line)["entities"] for line in (out / "1M.jsonl").read_text(encoding="utf-8").splitlines()]
    return {
        "one_process_1M": one, "one_process_2M": timed["2M"],
        "steady_tokens_per_cpu_second": round(steady),
        "fixed_cpu_seconds": round(fixed, 2),
        "cluster_local_2": {**cluster, "speedup_over_one_process": round(one["wall_seconds"] / cluster["wall_seconds"], 2),
                            "cpu_over_one_process": round(cluster["cpu_seconds"] / one["cpu_seconds"], 2),
                            "identical_entities": part_entities(out / "cluster") == one_entities},
        "testb_raw_one_command": timed["testb"],
        "one_sentence_command": timed["sentence"],
    }


def speedup_bound(floor: float, steady: float, tokens: int, workers: int = 2) -> float:
    """The most ``--cluster local:WORKERS`` could gain over one process on ``tokens`` tokens if
    hgner cost nothing beyond the floor (``floor`` CPU-s, paid once before the workers fork) and
    the workers shared the tokens perfectly at the ``steady`` rate (tokens per CPU-second)."""
    work = tokens / steady
    return round((floor + work) / (floor + work / workers), 2)


def write_inputs(work: Path) -> dict:
    documents = raw_documents("conll2003:train")
    paths_1m, tokens_1m = write_repeated(work / "1M", documents, 1_000_000)
    paths_2m, _ = write_repeated(work / "2M", documents, 2_000_000)
    inputs: dict = {"1M": paths_1m, "2M": paths_2m, "tokens_1M": tokens_1m}
    for name, corpus in (("testb", "conll2003:testb"), ("ieer", "nltk:ieer")):
        path = work / f"{name}.txt"
        path.write_text("\n".join(text for text, _ in raw_documents(corpus)), encoding="utf-8")
        inputs[name] = [str(path)]
    sentences = [text.split("\n") for text, _ in documents]
    nine = [line for lines in sentences for line in lines if len(line.split()) == 9][:3000]
    (work / "short.json").write_text(json.dumps(nine), encoding="utf-8")
    return inputs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", type=Path, help="an earlier checkout of hgner to measure side by side")
    parser.add_argument("--baseline-is", metavar="TEXT", default="an earlier checkout",
                        help="what the baseline is, as the results page says it (e.g. 'the code before ...')")
    parser.add_argument("--runs", type=int, default=3, help="rounds of every timed command; the best is reported (default 3)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    report: dict = {"cpus": os.cpu_count(), "runs": args.runs, "load_average_before": load_average()}
    with tempfile.TemporaryDirectory(prefix="hgner-bench-fixed-") as folder:
        work = Path(folder)
        bytecode = work / "bytecode"
        versions = [Version("current", ROOT, bytecode)] + (
            [Version("baseline", args.baseline.resolve(), bytecode)] if args.baseline else [])
        inputs = write_inputs(work)
        report["tokens_1M"] = inputs["tokens_1M"]
        report.update(side_by_side(versions, work, inputs, args.runs, bytecode))
        report["cluster_speedup_bound"] = speedup_bound(report["floor_with_kernel_cpu_seconds"],
                                                        report["current"]["steady_tokens_per_cpu_second"],
                                                        inputs["tokens_1M"])
        if args.baseline:
            report["baseline_is"] = args.baseline_is
            report["byte_identical_to_baseline"] = {
                name: filecmp.cmp(work / "current" / name, work / "baseline" / name, shallow=False)
                for name in ("testb.conll", "ieer.conll", "1M.jsonl", "sentence.txt")}
    report["load_average_after"] = load_average()
    print(json.dumps(report, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
