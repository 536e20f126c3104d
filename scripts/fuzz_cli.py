"""Throw N random hostile inputs at the ``hgner`` command and fail on any traceback, crash or hang.

Each case runs the CLI in its own process with a timeout: damaged model directories (truncated,
bit-flipped, missing, swapped or rewritten files), hostile corpora (random bytes, bad tags, empty
documents, invalid UTF-8), hostile arguments (NaN, negative and huge numbers, unknown names,
undecodable bytes) and hostile output paths (missing folders, directories, /dev/full, /proc, the
inputs themselves, symlinks to them). A case fails when

- the process dies by a signal (a segfault) or outlives its timeout (a hang);
- stderr holds a Python traceback, or the exit status is neither 0 nor 2 (1 is an internal error);
- exit status 2 comes without a one-line ``hgner ...: error: ...`` message;
- a damaged model file (its bytes changed, or a recorded file missing) loads with exit status 0;
- an input file (corpus, text, model file) changed.

By default each case is a fork of this process, which has imported hgner and compiled its kernels
once, so a case costs milliseconds rather than an interpreter start (``--exec`` runs
``python -m hgner.cli`` instead). Usage::

    python scripts/fuzz_cli.py -n 10000 [--seed 0] [--timeout 60] [--exec] [--keep DIR]

Prints one line per failure and a summary; exits 1 when any case failed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "tag_train.conll"
TEXT = "Angela Merkel works for United Nations in Tokyo ."
HOSTILE_NUMBERS = ["nan", "-nan", "inf", "-inf", "-1", "0", "1e308", "1e400", "10000000000000", "-0", "1.5", "0x10",
                   "", " ", "1,2", "99999999999999999999999", "\udcff"]
HOSTILE_NAMES = ["FOO", "", "viterbi,viterbi", "../../etc", "\udcff\udcfe", "I-<img src=x onerror=alert(1)>", "a" * 300,
                 "exact", "gibbs", "herded", "crfsuite", "meanfield", "chain", "skip", "IOB2", "BIOES", "io"]
SCHEMES = ["IO", "IOB1", "IOB2", "BIO", "BIOES", "FOO", "", "iob2"]


@dataclass
class Case:
    kind: str
    argv: list[str]
    stdin: bytes = b""
    timeout: float = 60.0
    damaged: bool = False  # a model file's bytes changed: exit 0 would be a silent load
    watched: list[Path] = field(default_factory=list)  # inputs that must not change


def digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


# ---- generators -----------------------------------------------------------------------------

def random_text(rng: random.Random, n: int) -> str:
    alphabet = "abcXYZ éü中\t\n .,-_/<>&\"'\u200b\u202e\U0001f600\x00"
    return "".join(rng.choice(alphabet) for _ in range(n))


def random_corpus(rng: random.Random) -> bytes:
    """CoNLL-ish bytes: mostly well-formed lines with the odd hostile one."""
    choice = rng.random()
    if choice < 0.1:
        return bytes(rng.getrandbits(8) for _ in range(rng.randrange(200)))
    if choice < 0.15:
        return rng.choice([b"", b"\n\n\n", b"-DOCSTART- -X- O O\n", b"-DOCSTART- -X- O O\n\n-DOCSTART- -X- O O\n",
                           b"\xef\xbb\xbf", b"x O\n" * 3, b"x\n", b"\x00\x00 O\n"])
    tags = ["O", "O", "O", "B-PER", "I-PER", "B-LOC", "I-LOC", "I-ORG", "E-MISC", "S-X", "B-", "I--PER", "X-PER", "o",
            "B-<b>", "I-\u00e9t\u00e9", "B-" + "T" * 70]
    lines = []
    for _ in range(rng.randrange(1, 60)):
        roll = rng.random()
        if roll < 0.1:
            lines.append("")
        elif roll < 0.13:
            lines.append("-DOCSTART- -X- O O")
        elif roll < 0.15:
            lines.append(random_text(rng, rng.randrange(20)))
        else:
            word = rng.choice(["Paris", "John", "Smith", "the", "Acme", "x", "\u00c9cole", "NASA", "."])
            columns = [word] + rng.choice([[], ["NNP"], ["NNP", "I-NP"]]) + [rng.choice(tags)]
            lines.append(" ".join(columns))
    data = ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")
    if rng.random() < 0.05:
        data += b"\xff\xfe bad\n"
    return data


def damage_model(rng: random.Random, source: Path, target: Path) -> bool:
    """Copy the model ``source`` to ``target`` and damage it; True when a model file's bytes
    changed or a recorded file went missing (so loading must fail)."""
    shutil.copytree(source, target)
    files = sorted(p.name for p in target.iterdir())
    name = rng.choice(files)
    path = target / name
    data = path.read_bytes()
    how = rng.choice(["truncate", "flip", "flip", "delete", "empty", "garbage", "meta"] if name == "meta.json"
                     else ["truncate", "flip", "flip", "flip", "delete", "empty", "garbage", "swap"])
    if how == "truncate":
        new = data[:rng.randrange(len(data))] if data else b""
    elif how == "flip":
        new = bytearray(data)
        for _ in range(rng.choice([1, 1, 1, 2, 8])):
            if new:
                new[rng.randrange(len(new))] ^= 1 << rng.randrange(8)
        new = bytes(new)
    elif how == "delete":
        path.unlink()
        return name != "meta.json"
    elif how == "empty":
        new = b""
    elif how == "garbage":
        new = bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 4096)))
    elif how == "swap":  # another model file's bytes under this name
        other = rng.choice([f for f in files if f != name])
        new = (target / other).read_bytes()
    else:
        new = mutate_meta(rng, json.loads(data))
    path.write_bytes(new)
    return name != "meta.json" and new != data


def mutate_meta(rng: random.Random, meta: dict) -> bytes:
    values = [None, [], {}, "x", 1e12, 10**12, -1, 2.5, True, "NaN", float("inf"), [[[[]]]], {"a": None}]
    roll = rng.random()
    if roll < 0.1:
        return json.dumps(rng.choice([None, [], "x", 1, [meta]])).encode()
    if roll < 0.15:
        depth = rng.choice([100, 10_000, 100_000])
        return ("[" * depth + "]" * depth).encode()
    if roll < 0.2:
        return json.dumps(meta).replace("0.05", "NaN", 1).encode()
    key = rng.choice(sorted(meta))
    if isinstance(meta[key], dict) and meta[key] and rng.random() < 0.7:
        inner = rng.choice(sorted(meta[key]))
        meta[key][inner] = rng.choice(values)
    elif key == "labels" and rng.random() < 0.5:
        meta[key] = [*meta[key][:-1], rng.choice(HOSTILE_NAMES)]
    else:
        meta[key] = rng.choice(values)
    return json.dumps(meta).encode()


def output_path(rng: random.Random, work: Path, inputs: list[Path], suffix: str) -> str:
    choice = rng.random()
    if choice < 0.3:
        return str(work / f"out{suffix}")
    options = [
        str(work / "missing-folder" / f"out{suffix}"), str(work), "/dev/full", "/proc/version", f"/proc/self/x{suffix}",
        str(work / f"out.\udcff{suffix}"), str(work / "out.unknownext"), str(work / "out"), "",
    ]
    if inputs:
        source = rng.choice(inputs)
        link = work / f"link{suffix}"
        if not link.exists():
            os.symlink(source, link)
        options += [str(source), str(link)]
    return rng.choice(options)


def make_case(rng: random.Random, work: Path, model: Path) -> Case:
    kind = rng.choice(["model", "model", "model", "corpus", "train", "arguments", "outputs"])
    text_file = work / "input.txt"
    text_file.write_text(TEXT + "\n", encoding="utf-8")
    if kind == "model":
        damaged_dir = work / "model"
        damaged = damage_model(rng, model, damaged_dir)
        command = rng.choice(["tag", "tag", "evaluate", "tag-skip"])
        if command == "evaluate":
            corpus = work / "gold.conll"
            shutil.copy(FIXTURE, corpus)
            argv = ["evaluate", "--model", str(damaged_dir), "--corpus", str(corpus)]
        elif command == "tag-skip":
            argv = ["tag", "--model", str(damaged_dir), "--graph", "skip", "--decoder", "exact", TEXT]
        else:
            argv = ["tag", "--model", str(damaged_dir), TEXT]
        return Case(kind, argv, damaged=damaged)
    if kind in ("corpus", "train"):
        corpus = work / rng.choice(["c.conll", "c.txt", "c"])
        corpus.write_bytes(random_corpus(rng))
        if kind == "corpus":
            argv = ["evaluate", "--model", str(model), "--corpus", str(corpus)]
            argv += rng.choice([[], ["--scheme", rng.choice(SCHEMES)], ["--mode", "strict"], ["--decoders", "exact,viterbi"]])
        else:
            argv = ["train", "--train", str(corpus), "--out", str(work / "trained"), "--max-iterations", "3",
                    "--features", "baseline"]
            argv += rng.choice([[], ["--scheme", rng.choice(SCHEMES)], ["--drop-type", rng.choice(["PER", "LOC", "X"])],
                                ["--model-scheme", rng.choice(SCHEMES)]])
        return Case(kind, argv, watched=[corpus])
    if kind == "arguments":
        lists = work / "lists.json"  # a gazetteer for train --gazetteer: valid, empty, ill-typed or not JSON
        lists.write_bytes(rng.choice([b'{"LOC": ["Paris", "New  York"]}', b"{}", b'{"LOC": [1]}', b'{"LOC": ["will"]}',
                                      bytes(rng.randrange(256) for _ in range(40))]))
        clusters = work / rng.choice(["paths", "clusters.json"])  # for --word-clusters: a paths file or JSON, or junk
        clusters.write_bytes(rng.choice([b"0110\tParis\t3\n0111\tLondon\n", b"0110\tParis\n0\tParis\n", b"012\tx\n",
                                         b'{"01": ["Paris"]}', b'{"01\\n": ["Paris"]}', b'{"01": ["\\ud800"]}', b"",
                                         bytes(rng.randrange(256) for _ in range(40))]))
        option, value = rng.choice([
            ("--sweeps", rng.choice(HOSTILE_NUMBERS)), ("--seed", rng.choice(HOSTILE_NUMBERS)),
            ("--decoder", rng.choice(HOSTILE_NAMES)), ("--model", rng.choice(HOSTILE_NAMES)),
            ("--graph", rng.choice(HOSTILE_NAMES)), ("--format", rng.choice(HOSTILE_NAMES + ["html", "jsonl", "conll"])),
            ("-j", rng.choice(HOSTILE_NUMBERS)), ("--c1", rng.choice(HOSTILE_NUMBERS)), ("--c2", rng.choice(HOSTILE_NUMBERS)),
            ("--max-iterations", rng.choice(HOSTILE_NUMBERS)), ("--scheme", rng.choice(SCHEMES + HOSTILE_NAMES)),
            ("--model-scheme", rng.choice(SCHEMES + HOSTILE_NAMES)), ("--seeds", rng.choice(HOSTILE_NUMBERS)),
            ("--decoders", rng.choice(HOSTILE_NAMES)), ("--calibration", rng.choice(HOSTILE_NUMBERS)),
            ("--text", None), ("--files", None),
            ("--gazetteer", rng.choice([*HOSTILE_NAMES, str(lists), str(model)])),
            ("--word-clusters", rng.choice([*HOSTILE_NAMES, str(clusters), str(model), "es-conll02"])),
        ])
        if option in ("--c1", "--c2", "--max-iterations", "--model-scheme", "--gazetteer", "--word-clusters"):
            argv = ["train", "--train", str(FIXTURE), "--out", str(work / "trained"), "--features", "baseline", option, value]
            if option != "--max-iterations":
                argv += ["--max-iterations", "3"]
        elif option in ("--seeds", "--decoders", "--calibration"):
            argv = ["evaluate", "--model", str(model), "--corpus", str(FIXTURE), option, value]
        else:
            text = rng.choice([TEXT, random_text(rng, rng.randrange(1, 80)), "\udcff\udcfe Paris", str(text_file),
                               "missing/file.txt", "-", ""])
            argv = ["tag", "--model", str(model), *( [option] if value is None else [option, value]), text]
            if option in ("--sweeps", "--seed"):
                argv += ["--decoder", rng.choice(["gibbs", "herded", "viterbi"])]
        stdin = random_text(rng, 50).encode("utf-8", "surrogatepass") if rng.random() < 0.5 else b"\xff\xfe"
        return Case(kind, argv, stdin=stdin, watched=[text_file, lists, clusters])
    corpus = work / "gold.conll"
    shutil.copy(FIXTURE, corpus)
    model_files = sorted(model.iterdir())
    if rng.random() < 0.5:
        target = output_path(rng, work, [text_file, *model_files], rng.choice([".txt", ".html", ".jsonl"]))
        source = rng.choice([str(text_file), TEXT, "-"])
        argv = ["tag", "--model", str(model), "--format", rng.choice(["inline", "html", "jsonl", "conll"]), "-o", target, source]
        watched = [*model_files, *([text_file] if source == str(text_file) else [])]
        return Case("outputs", argv, stdin=text_file.read_bytes(), watched=watched)
    option = rng.choice(["--json", "--plot", "--predictions"])
    suffix = {"--json": ".json", "--plot": rng.choice([".png", ".svg", ".xyz", ""]), "--predictions": ".conll"}[option]
    argv = ["evaluate", "--model", str(model), "--corpus", str(corpus), option,
            output_path(rng, work, [corpus, *model_files], suffix)]
    return Case("outputs", argv, watched=[corpus, *model_files])


# ---- running ------------------------------------------------------------------------------

def run_forked(argv: list[str], stdin: bytes, work: Path, timeout: float) -> tuple[int | None, str]:
    """Run ``hgner.cli.main(argv)`` in a forked child; (exit status or -signal, stderr); None on timeout."""
    (work / "stdin").write_bytes(stdin)
    out_path, err_path = work / "stdout", work / "stderr"
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child
        code = 1
        try:
            os.setpgid(0, 0)
            signal.signal(signal.SIGINT, signal.default_int_handler)  # the CLI's own Ctrl-C handling
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            for fd, path, flags in ((0, work / "stdin", os.O_RDONLY), (1, out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                                    (2, err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
                os.dup2(os.open(path, flags, 0o644), fd)
            sys.stdin = open(0, encoding="utf-8", closefd=False)  # not a test runner's capture objects
            sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
            sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False, buffering=1)
            os.chdir(work)
            from hgner.cli import main

            try:
                code = main(argv)
            except SystemExit as exit_:
                code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 2)
            try:
                sys.stdout.flush()
            except Exception:  # noqa: BLE001  (what the interpreter's exit would print)
                import traceback

                traceback.print_exc()
                code = 120
        except BaseException:  # noqa: BLE001  (escaped the CLI's boundary: a traceback, as the real exit would)
            import traceback

            traceback.print_exc()
            code = 1
        finally:
            try:
                sys.stderr.flush()
            finally:
                os._exit(code)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None, err_path.read_text(errors="replace")
        time.sleep(0.005)
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    return code, err_path.read_text(errors="replace")


def run_exec(argv: list[str], stdin: bytes, work: Path, timeout: float) -> tuple[int | None, str]:
    """Run ``python -m hgner.cli ARGV`` as a fresh process."""
    try:
        result = subprocess.run([sys.executable, "-m", "hgner.cli", *[os.fsencode(a) for a in argv]], input=stdin,
                                capture_output=True, timeout=timeout, cwd=work)
    except subprocess.TimeoutExpired:
        return None, ""
    return result.returncode, result.stderr.decode("utf-8", "replace")


def judge(case: Case, code: int | None, stderr: str, before: dict[Path, str | None]) -> str | None:
    """Why the case failed, or None."""
    if code is None:
        return "hang (timeout)"
    if code < 0:
        return f"crash (signal {-code})"
    if "Traceback" in stderr:
        return "traceback"
    if code not in (0, 2):
        return f"exit status {code}"
    lines = [line for line in stderr.splitlines() if line.strip() and ": warning:" not in line and not line.startswith("training on")]
    if code == 2 and not (lines and lines[-1].startswith("hgner") and ": error: " in lines[-1]):
        return "exit 2 without a one-line error"
    if code == 2 and len([line for line in lines if ": error: " in line]) != 1:
        return "more than one error line"
    if case.damaged and code == 0:
        return "damaged model loaded silently"
    changed = [str(p) for p, h in before.items() if digest(p) != h]
    if changed:
        return f"input changed: {', '.join(changed)}"
    return None


def build_model(work: Path) -> Path:
    """A tiny model with a skip potential, trained on the tagging fixture."""
    from hgner import skip
    from hgner.corpus import load_corpus
    from hgner.training import skip as skip_training
    from hgner.model import CrfModel
    from hgner.training.crf import train
    from hgner.training import TrainOptions

    corpus = load_corpus(str(FIXTURE))
    model = train(corpus, work / "tiny-model", TrainOptions(max_iterations=30))
    skip.save(skip_training.estimate(corpus, model), model.directory)
    model = CrfModel.load(model.directory)
    from hgner.tagging.tagger import Tagger
    from hgner.tagging.settings import TagSettings

    for decoder in ("viterbi", "exact", "gibbs", "herded"):  # compile the kernels once, before forking
        list(Tagger(TagSettings(model.directory, decoder, "skip" if decoder == "exact" else "chain", seed=0)).tag_text(TEXT))
    return model.directory


def fuzz(n: int, seed: int, timeout: float, use_exec: bool, keep: Path | None,
         progress: bool = True) -> tuple[Counter, list[str]]:
    """Run ``n`` cases; returns the case kinds counted and one line per failure."""
    root = Path(tempfile.mkdtemp(prefix="hgner-fuzz-"))
    stopped: list[int] = []  # SIGTERM or SIGINT: finish the current case, then report what ran
    previous = {signum: signal.signal(signum, lambda number, frame: stopped.append(number))
                for signum in (signal.SIGTERM, signal.SIGINT)}
    try:
        model = build_model(root)
        kinds: Counter = Counter()
        failures: list[str] = []
        started = time.monotonic()
        for number in range(n):
            if stopped:
                break
            rng = random.Random(f"{seed}-{number}")
            work = root / f"case{number}"
            work.mkdir()
            case = make_case(rng, work, model)
            kinds[case.kind] += 1
            before = {p: digest(p) for p in case.watched}
            code, stderr = (run_exec if use_exec else run_forked)(case.argv, case.stdin, work, timeout)
            why = judge(case, code, stderr, before)
            if why:
                line = f"case {number} ({case.kind}): {why}: hgner {' '.join(map(repr, case.argv))}\n    " + \
                       "\n    ".join(stderr.strip().splitlines()[-6:])
                failures.append(line)
                print(line, flush=True)
                if keep:
                    shutil.copytree(work, keep / f"case{number}", symlinks=True, dirs_exist_ok=True)
            shutil.rmtree(work, ignore_errors=True)
            if progress and (number + 1) % 100 == 0:
                print(f"{number + 1}/{n} cases, {len(failures)} failures, {time.monotonic() - started:.0f}s",
                      file=sys.stderr, flush=True)
        return kinds, failures
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=200, help="number of cases (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the case generator (default 0)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds before a case counts as a hang (default 60)")
    parser.add_argument("--exec", dest="use_exec", action="store_true",
                        help="run each case as a fresh `python -m hgner.cli` (slow) instead of a fork")
    parser.add_argument("--keep", type=Path, help="copy the folders of failing cases here")
    args = parser.parse_args()
    started = time.monotonic()
    kinds, failures = fuzz(args.n, args.seed, args.timeout, args.use_exec, args.keep)
    print(f"{sum(kinds.values())} of {args.n} cases ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}) in "
          f"{time.monotonic() - started:.0f}s: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
