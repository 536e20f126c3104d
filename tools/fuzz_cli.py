"""Throw N random hostile inputs at the ``hgner`` command and fail on any traceback, crash or hang.

Each case runs the CLI in its own process with a timeout: damaged model directories (truncated,
bit-flipped, missing, swapped or rewritten files), hostile corpora (random bytes, bad tags, empty
documents, invalid UTF-8), hostile arguments (NaN, negative and huge numbers, unknown names,
undecodable bytes), hostile output paths (missing folders, directories, /dev/full, /proc, the
inputs themselves, symlinks to them) and outputs among files hgner does not own (issue 62: into a
model folder, a shipped model's folder, the package, a folder whose meta.json is another
program's; each must be refused, leaving every file as it was). A case fails when

- the process dies by a signal (a segfault) or outlives its timeout (a hang);
- stderr holds a Python traceback, or the exit status is neither 0 nor 2 (1 is an internal error);
- exit status 2 comes without a one-line ``hgner ...: error: ...`` message;
- a damaged model file (its bytes changed, or a recorded file missing) loads with exit status 0;
- an input file (corpus, text, model file) changed.

By default each case is a fork of this process, which has imported every module the commands use
and compiled their kernels once (:func:`warm_up`), so a case costs a tenth of a second rather than
an interpreter start; the child runs the command as the console script does (its own standard
streams, folder, exit status; signals held until the command's handlers are set). Signals during a
fresh interpreter's start-up and imports run as fresh ``python -m hgner`` processes (``--exec``
runs every case so). ``-j N`` runs N cases at a time. ``--startup TRIES`` measures instead where a
SIGINT during ``hgner``'s start-up lands (CPython's floor, or hgner's one line). Usage::

    python tools/fuzz_cli.py -n 10000 [--seed 0] [--timeout 60] [--exec] [-j N] [--keep DIR] [--json FILE]
    python tools/fuzz_cli.py --startup 200 [--seed 0] [--script PATH] [--json FILE]

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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # fuzz_crfsuite's structural mutations

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
    signal_after: tuple[int, float] | None = None  # (signal, seconds): sent to the command while it runs
    closed: tuple[int, ...] = ()  # standard descriptors closed before the command starts
    check: Any = None  # check(work, code, stdout bytes) -> why the result is wrong, or None
    use_exec: bool = False  # run as a fresh `python -m hgner` (signals during imports)


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
    changed, what ``seal.json`` records changed (a lost final newline is no change) or a recorded
    file went missing (so loading must fail)."""
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
    if name == "seal.json":  # the record of the sealed files, not one of them: only a change of what it says must fail
        return recorded(new) != recorded(data)
    return name != "meta.json" and new != data


def recorded(seal: bytes) -> object:
    """What a ``seal.json`` says (its JSON value), or a marker of its own when it is not JSON."""
    try:
        return json.loads(seal)
    except ValueError:
        return ValueError


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


SIGNALS = [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)]
BEFORE_HGNER = "signals before hgner's first line"
TALLY: Counter = Counter()  # the last run's fresh processes and signals before hgner's first line (see before_hgner)
SILENT_PEER: list[int] = []  # the port of a listener that accepts and never answers (see fuzz)


def no_hidden_leftovers(work: Path) -> str | None:
    """Temporary ``.NAME.part`` files or folders left in the case's folder or below it."""
    left = [str(p) for p in work.rglob(".*") if p.name.endswith((".part", ".old"))]
    return f"temporary files left behind: {', '.join(left)}" if left else None


def utf8_outputs(work: Path) -> str | None:
    for path in work.glob("out*"):
        if path.is_file():
            try:
                path.read_bytes().decode("utf-8")
            except UnicodeDecodeError:
                return f"{path.name} is not UTF-8"
    return None


def new_families(rng: random.Random, work: Path, model: Path, text_file: Path) -> Case:
    """The families of issue 40's campaign: resealed structural damage, edited but unsealed
    models, FIFOs where files are read or written, silent peers, closed streams, signals at
    random moments (during imports too), symlinks inside output and model folders, globs,
    calibrations, batch sizes, undecodable file names, escape sequences, ``-o newdir/``."""
    from hgner.core.integrity import seal
    from hgner.crf.modelfiles import META_FILE, MODEL_FILE, SEALED_FILES

    family = rng.choice(["resealed", "resealed", "edited", "fifo", "closed", "signal", "signal", "links", "glob",
                         "numbers", "names", "peer"])
    if family in ("resealed", "edited", "links", "names"):
        damaged_dir = work / "model"
        shutil.copytree(model, damaged_dir)
        if family == "resealed":
            import fuzz_crfsuite

            data = (damaged_dir / MODEL_FILE).read_bytes()
            new, _ = fuzz_crfsuite.mutate(rng, data, fuzz_crfsuite.fields(data))
            (damaged_dir / MODEL_FILE).write_bytes(new)
            from hgner.crf.modelfiles import refresh_files

            refresh_files(damaged_dir)
            decoder = rng.choice(["crfsuite", "crfsuite", "viterbi", "exact", "gibbs"])
            if rng.random() < 0.3:
                return Case(family, ["evaluate", "--model", str(damaged_dir), "--corpus", str(FIXTURE),
                                     "--decoders", decoder])
            return Case(family, ["tag", "--model", str(damaged_dir), "--decoder", decoder, TEXT])
        if family == "edited":  # meta.json (or another file) changed after sealing: must be refused
            meta = json.loads((damaged_dir / META_FILE).read_text())
            meta["features"][rng.choice(["window", "affixes"])] = rng.choice([0, 1, 3])
            if rng.random() < 0.5:
                (damaged_dir / META_FILE).write_text(json.dumps(meta))
            else:
                import struct

                data = bytearray((damaged_dir / MODEL_FILE).read_bytes())
                struct.pack_into("<d", data, struct.unpack_from("<I", data, 28)[0] + 24, rng.choice([1e200, 1e308, 3.5]))
                (damaged_dir / MODEL_FILE).write_bytes(bytes(data))
            return Case(family, ["tag", "--model", str(damaged_dir), TEXT], damaged=True)
        if family == "links":
            victim = work / "victim.txt"
            victim.write_text("outside the model folder\n")
            name = rng.choice(sorted(p.name for p in damaged_dir.iterdir()))
            (damaged_dir / name).unlink()
            (damaged_dir / name).symlink_to(rng.choice([victim, Path("/dev/zero"), model / name]))
            if rng.random() < 0.5:
                return Case(family, ["tag", "--model", str(damaged_dir), TEXT], damaged=True, watched=[victim])
            out = work / "brat"
            out.mkdir()
            (out / "input.txt").symlink_to(victim)
            (out / "input.ann").symlink_to(victim)
            return Case(family, ["tag", "--format", "brat", str(text_file), "-o", str(out)], watched=[victim])
        meta = json.loads((damaged_dir / META_FILE).read_text())  # names: escape sequences in models info
        meta["name"] = rng.choice(["evil\x1b]0;owned\x07", "x\x1b[2J\x1b[H", "\u202eRTL", "ok\rfake"])
        (damaged_dir / META_FILE).write_text(json.dumps(meta))
        seal(damaged_dir, SEALED_FILES)

        def no_escapes(work: Path, code: int, stdout: bytes) -> str | None:
            return "a terminal escape printed raw" if b"\x1b" in stdout or b"\r" in stdout else None

        return Case(family, ["models", "info", str(damaged_dir)], check=no_escapes)
    if family == "fifo":
        fifo = work / rng.choice(["out.txt", "c.conll", "input.fifo"])
        os.mkfifo(fifo)
        where = rng.choice(["output", "input", "corpus", "model"])
        if where == "output":
            return Case(family, ["tag", "-o", str(fifo), TEXT])
        if where == "input":
            return Case(family, ["tag", str(fifo)])
        if where == "corpus":
            return Case(family, ["evaluate", "--model", str(model), "--corpus", str(fifo)])
        damaged_dir = work / "model"
        shutil.copytree(model, damaged_dir)
        name = rng.choice([MODEL_FILE, META_FILE, "skip.json"])
        (damaged_dir / name).unlink()
        os.mkfifo(damaged_dir / name)
        return Case(family, ["tag", "--model", str(damaged_dir), TEXT], damaged=True)
    if family == "closed":
        closed = rng.choice([(1,), (2,), (1, 2), (0,)])
        models = rng.choice([[], ["--model", str(model)]])  # the shipped default, or the tiny model (quicker)
        argv = rng.choice([["tag", *models, TEXT], ["tag", *models, "-o", str(work / "out.txt"), TEXT],
                           ["tag", "--decoder", "FOO", TEXT]])
        return Case(family, argv, closed=closed)
    if family == "signal":
        signum, _ = rng.choice(SIGNALS)
        command = rng.choice(["tag", "train", "evaluate"])
        if command == "tag":
            argv = ["tag", "--model", str(model), "--decoder", rng.choice(["gibbs", "herded"]), "--sweeps", "10000000",
                    "-o", str(work / "out.txt"), TEXT]
        elif command == "train":
            argv = ["train", "--train", str(FIXTURE), "--out", str(work / "trained"), "--max-iterations", "300",
                    "--features", "baseline"]
        else:
            argv = ["evaluate", "--model", str(model), "--corpus", str(FIXTURE), "--decoders", "gibbs",
                    "--json", str(work / "out.json")]
        exec_ = rng.random() < 0.15  # a fresh interpreter: the signal may arrive during start-up and imports
        # half the signals within the first moments (a fresh interpreter's start-up and hgner's imports; a
        # forked case's argument parsing, model loading and first writes), the rest at any time
        early = rng.random() < 0.5
        delay = rng.uniform(0.0, (0.15 if exec_ else 0.3) if early else (2.5 if exec_ else 1.5))
        return Case(family, argv, signal_after=(signum, delay),
                    check=lambda work, code, stdout: no_hidden_leftovers(work), use_exec=exec_)
    if family == "glob":
        folder = work / "in"
        (folder / "sub").mkdir(parents=True)
        (folder / "a.txt").write_text(TEXT + "\n")
        (folder / "sub" / os.fsdecode(b"b\xff.txt")).write_text(TEXT + "\n")
        pattern = rng.choice(["**.txt", "**/*.txt", "*.txt", "sub/**", "a**b", "[", "**", "*/**.txt", "", "../*.txt"])
        fmt = rng.choice(["jsonl", "html", "conll", "inline"])
        return Case(family, ["tag", "--glob", pattern, "--format", fmt, "-o", str(work / f"out.{fmt}"), str(folder)],
                    check=lambda work, code, stdout: utf8_outputs(work))
    if family == "numbers":
        if rng.random() < 0.5:
            value = rng.choice(["70", "99.9", "100", "100.0001", "1e-300", "69.9"])
            return Case(family, ["evaluate", "--model", str(model), "--corpus", str(FIXTURE), "--calibration", value,
                                 "--decoders", rng.choice(["viterbi", "exact", "gibbs"])])
        value = rng.choice(["1e308", "1e9", "1e10", "inf", "1e-300", "0", "32"])
        return Case(family, ["tag", "--model", str(model), "--decoder", rng.choice(["mgpmh", "doublemin"]), "--set",
                             f"{rng.choice(['batch_size', 'accept_batch_size'])}={value}", TEXT])
    # peer: a silent Dask scheduler (its deadline shortened in the child, see run_forked)
    (work / "in.txt").write_text(TEXT + "\n")
    port = SILENT_PEER[0] if SILENT_PEER else 9
    return Case("peer", ["tag", "--cluster", f"tcp://127.0.0.1:{port}", str(work / "in.txt"), "--out",
                         str(work / "parts")])


def refused(work: Path, code: int, stdout: bytes) -> str | None:
    return None if code == 2 else f"exit status {code}: an output among files it does not own was not refused"


def owned_outputs(rng: random.Random, work: Path, model: Path, text_file: Path) -> Case:
    """Issue 62's outputs that must be refused, leaving every file as it was: ``tag -o`` (any
    format) or brat's folder inside a model folder; ``train --out`` a folder whose meta.json is
    another program's, a shipped model's folder (through a link, so that a regression replaces the
    link, never the shipped model), a new folder among the shipped models or in the package."""
    from hgner.crf.modelfiles import META_FILE, shipped_models_dir

    family = rng.choice(["tag-into-model", "brat-into-model", "unrelated-meta", "shipped", "package"])
    if family in ("tag-into-model", "brat-into-model"):
        target = work / "model"
        shutil.copytree(model, target)
        watched = sorted(target.iterdir())
        if family == "brat-into-model":
            argv = ["tag", "--model", str(model), "--format", "brat", str(text_file), "-o", str(target)]
        else:
            name = rng.choice([META_FILE, "seal.json", "model.crfsuite", "out.txt", "skip.json", "README"])
            argv = ["tag", "--model", rng.choice([str(model), str(target)]), "--format",
                    rng.choice(["inline", "html", "jsonl", "conll"]), "-o", str(target / name), TEXT]

        def nothing_added(work: Path, code: int, stdout: bytes) -> str | None:
            added = sorted({p.name for p in target.iterdir()} - {p.name for p in watched})
            return refused(work, code, stdout) or (f"files added to the model folder: {added}" if added else None)

        return Case("owned", argv, watched=watched, check=nothing_added)
    train = ["train", "--train", str(FIXTURE), "--max-iterations", "3", "--features", "baseline", "--out"]
    if family == "unrelated-meta":
        project = work / "proj"
        project.mkdir()
        (project / META_FILE).write_text(rng.choice(['{"name": "my project"}\n', "{}", "[1]", "not json", ""]))
        if rng.random() < 0.5:
            (project / "notes.txt").write_text("mine\n")
        return Case("owned", [*train, str(project)], watched=sorted(project.iterdir()), check=refused)
    shipped = shipped_models_dir()
    if family == "shipped":
        link = work / "shipped"
        link.symlink_to(shipped / rng.choice(sorted(p.name for p in shipped.iterdir() if (p / META_FILE).is_file())))
        return Case("owned", [*train, str(link)], watched=sorted(link.resolve().iterdir()), check=refused)
    root = rng.choice([shipped, Path(__file__).resolve().parents[1] / "hgner"])
    out = root / f"fuzz-{rng.randrange(10**9)}"

    def none_made(work: Path, code: int, stdout: bytes) -> str | None:
        if out.exists():
            shutil.rmtree(out, ignore_errors=True)
            return f"a model was written into {root}"
        return refused(work, code, stdout)

    return Case("owned", [*train, str(out)], check=none_made)


def make_case(rng: random.Random, work: Path, model: Path) -> Case:
    kind = rng.choice(["model", "model", "model", "corpus", "train", "arguments", "outputs", "owned", "new", "new", "new"])
    if kind == "owned":
        text_file = work / "input.txt"
        text_file.write_text(TEXT + "\n", encoding="utf-8")
        return owned_outputs(rng, work, model, text_file)
    if kind == "new":
        text_file = work / "input.txt"
        text_file.write_text(TEXT + "\n", encoding="utf-8")
        return new_families(rng, work, model, text_file)
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

def run_forked(case: Case, work: Path, timeout: float) -> tuple[int | None, str, bytes]:
    """Run ``hgner.cli.main(argv)`` in a forked child, as the ``hgner`` entry runs it (signals held
    back from the start, as ``hgner/__init__.py`` holds them, until :func:`hgner.core.process.run` has
    installed its handlers; closed descriptors closed); (exit status or -signal, stderr, stdout);
    None on timeout."""
    (work / "stdin").write_bytes(case.stdin)
    out_path, err_path = work / "stdout", work / "stderr"
    sys.stdout.flush()
    sys.stderr.flush()
    held = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, held)  # the child starts as `hgner` after its first line
    pid = os.fork()
    if pid:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        try:
            os.setpgid(pid, pid)  # (as the child does: no signal sent to the group before it exists)
        except OSError:
            pass
    if pid == 0:  # the child
        code = 1
        try:
            os.setpgid(0, 0)
            for fd, path, flags in ((0, work / "stdin", os.O_RDONLY),  # what the shell sets up before `hgner`
                                    (1, out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                                    (2, err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
                opened = os.open(path, flags, 0o644)
                os.dup2(opened, fd)
                os.close(opened)
            # the child's own streams for its lifetime (not a test runner's capture objects): no context manager
            sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
            sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
            sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False, buffering=1)  # noqa: SIM115
            for fd in case.closed:
                os.close(fd)
                setattr(sys, ("stdin", "stdout", "stderr")[fd], None)  # as the interpreter starts with it closed
            os.chdir(work)
            from hgner.core import deadline, process

            def load():
                deadline.CONNECT_SECONDS = deadline.CALL_SECONDS = 0.5  # (a silent peer: quicker, same path)
                from hgner.cli import main

                return lambda: main(case.argv, keep_handlers=True)

            try:
                code = process.run(load)  # what `hgner` runs (hgner.entry): handlers, then the held signals
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

            try:
                traceback.print_exc()
            except Exception:  # noqa: BLE001
                pass
            code = 1
        finally:
            try:
                sys.stderr.flush()
            except Exception:  # noqa: BLE001
                pass
            os._exit(code)
    return _wait(pid, case, timeout, err_path, out_path)


def _wait(pid: int, case: Case, timeout: float, err_path: Path, out_path: Path,
          process: subprocess.Popen | None = None) -> tuple[int | None, str, bytes]:
    started = time.monotonic()
    deadline = started + timeout
    sent = False
    while True:
        if process is not None:
            status = process.poll()
            done = status is not None
        else:
            done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if case.signal_after and not sent and time.monotonic() - started >= case.signal_after[1]:
            try:
                os.killpg(pid, case.signal_after[0])
            except ProcessLookupError:
                pass
            sent = True
        if time.monotonic() > deadline:
            os.killpg(pid, signal.SIGKILL)
            process.wait() if process is not None else os.waitpid(pid, 0)
            return None, err_path.read_text(errors="replace"), b""
        time.sleep(0.005)
    if process is not None:
        code = status
    else:
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    stdout = out_path.read_bytes() if out_path.exists() else b""
    return code, err_path.read_text(errors="replace") if err_path.exists() else "", stdout


def run_exec(case: Case, work: Path, timeout: float) -> tuple[int | None, str, bytes]:
    """Run ``python -m hgner ARGV`` as a fresh process (closed descriptors closed in it)."""
    (work / "stdin").write_bytes(case.stdin)
    out_path, err_path = work / "stdout", work / "stderr"
    closed = case.closed

    def prepare() -> None:
        for fd in closed:
            os.close(fd)

    with open(work / "stdin", "rb") as stdin, open(out_path, "wb") as stdout, open(err_path, "wb") as stderr:
        arguments = [os.fsencode(a).split(b"\0")[0] for a in case.argv]  # (a process's arguments end at a NUL)
        process = subprocess.Popen([sys.executable, "-m", "hgner", *arguments], stdin=stdin,
                                   stdout=stdout, stderr=stderr, cwd=work, start_new_session=True,
                                   preexec_fn=prepare if closed else None)
        return _wait(process.pid, case, timeout, err_path, out_path, process)


def before_hgner(case: Case, code: int | None, stderr: str) -> bool:
    """Whether a fresh interpreter got the case's signal before the first line of hgner ran: it died
    of it (SIGTERM's and SIGHUP's default action, or SIGINT before CPython set its handler) or printed
    CPython's ``KeyboardInterrupt`` traceback from its own start-up (``site``, the console script's
    imports), with no frame of hgner's. Nothing of hgner's can handle those (CPython's floor)."""
    if not (case.signal_after and case.use_exec) or code is None:
        return False
    if code < 0:
        return -code == case.signal_after[0]
    return "Traceback" in stderr and stderr.rstrip().endswith("KeyboardInterrupt") and "/hgner/" not in stderr


def judge(case: Case, code: int | None, stderr: str, before: dict[Path, str | None], work: Path | None = None,
          stdout: bytes = b"") -> str | None:
    """Why the case failed, or None."""
    if code is None:
        return "hang (timeout)"
    if before_hgner(case, code, stderr):
        return None
    if code < 0:
        return f"crash (signal {-code})"
    if "Traceback" in stderr:
        return "traceback"
    stopped = dict(SIGNALS).get(case.signal_after[0]) if case.signal_after else None
    if code not in (0, 2) and code != stopped:
        return f"exit status {code}"
    if case.check is not None and work is not None:
        why = case.check(work, code, stdout)
        if why:
            return why
    changed = [str(p) for p, h in before.items() if digest(p) != h]
    if changed:
        return f"input changed: {', '.join(changed)}"
    if 2 in case.closed:
        return None  # no messages to judge
    lines = [line for line in stderr.splitlines()
             if line.strip() and ": warning:" not in line and not line.startswith("training on")]
    if code == stopped:  # notes before it are fine; the end is one line naming the signal
        words = ("interrupted", "terminated", "hung up")
        final = [line for line in lines if line.startswith("hgner") and line.endswith(words)]
        return None if lines and lines[-1] in final and len(final) == 1 and not any(": error: " in line for line in lines) \
            else "not one line on a signal"
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
    from hgner.crf import skip
    from hgner.crf.model import CrfModel
    from hgner.data.corpus import load_corpus
    from hgner.training import TrainOptions
    from hgner.training import skip as skip_training
    from hgner.training.crf import train

    corpus = load_corpus(str(FIXTURE))
    model = train(corpus, work / "tiny-model", TrainOptions(max_iterations=30))
    skip.save(skip_training.estimate(corpus, model), model.directory)
    model = CrfModel.load(model.directory)
    from hgner.tagging.settings import TagSettings
    from hgner.tagging.tagger import Tagger

    for decoder in ("viterbi", "exact", "gibbs", "herded"):  # compile the kernels once, before forking
        list(Tagger(TagSettings(model.directory, decoder, "skip" if decoder == "exact" else "chain", seed=0)).tag_text(TEXT))
    return model.directory


def warm_up(work: Path, model: Path) -> None:
    """Run each kind of command the cases run once in this process, output discarded, so that a
    forked case finds every module imported (matplotlib, Dask's client, the trainer, the spaCy
    tokenizer) and every numba kernel compiled (log-space forward-backward, the minibatch samplers)
    instead of paying seconds for them. Nothing is kept but modules, compiled code and pure
    per-word caches: each case loads its model, reads its files and parses its arguments afresh.
    No thread may be left running (a fork copies only the calling thread)."""
    import contextlib
    import io
    import threading

    from hgner.cli import main

    work.mkdir()
    folder = work / "in"
    folder.mkdir()
    (folder / "a.txt").write_text(TEXT + "\n")
    tiny = ["--model", str(model)]
    evaluate = ["evaluate", *tiny, "--corpus", str(FIXTURE)]
    commands = [
        evaluate, [*evaluate, "--decoders", "crfsuite"], [*evaluate, "--mode", "strict", "--scheme", "BIOES"],
        *([*evaluate, "--decoders", decoder, "--calibration", "99.9"] for decoder in ("viterbi", "exact", "gibbs")),
        [*evaluate, "--decoders", "exact,viterbi", "--json", str(work / "o.json"), "--predictions", str(work / "o.conll"),
         "--plot", str(work / "o.png")], [*evaluate, "--plot", str(work / "o.svg")],
        ["train", "--train", str(FIXTURE), "--out", str(work / "t1"), "--max-iterations", "3", "--features", "baseline"],
        ["train", "--train", str(FIXTURE), "--out", str(work / "t2"), "--max-iterations", "3", "--features", "baseline",
         "--model-scheme", "BIOES", "--c2", "1e308"],
        *(["tag", *tiny, "--format", fmt, "-o", str(work / f"o{n}.{fmt}"), TEXT]
          for n, fmt in enumerate(("html", "jsonl", "conll", "inline"))),
        ["tag", "--format", "brat", str(folder / "a.txt"), "-o", str(work / "brat")], ["tag", TEXT],
        *(["tag", *tiny, "--decoder", decoder, "--set", "batch_size=32", TEXT] for decoder in ("mgpmh", "doublemin")),
        ["tag", *tiny, "--decoder", "crfsuite", TEXT], ["tag", *tiny, "--graph", "skip", "--decoder", "exact", TEXT],
        ["tag", "--glob", "*.txt", "--format", "jsonl", "-o", str(work / "g.jsonl"), str(folder)],
        ["models", "info", str(model)], ["models", "info", "en-conll03"],
    ]
    for argv in commands:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            main(argv)
    import distributed  # noqa: F401  (a silent peer's client; importing it starts no thread)
    from tqdm import tqdm

    if tqdm.monitor is not None:  # a progress bar's monitor thread: stopped, as if no bar had been shown
        tqdm.monitor.exit()
        tqdm.monitor = None
    if threading.active_count() != 1:
        raise SystemExit(f"warm-up left threads running ({threading.enumerate()}): forking would not be safe")
    shutil.rmtree(work)


def run_cases(numbers: range, seed: int, root: Path, model: Path, timeout: float, use_exec: bool, keep: Path | None,
              stopped: list[int], progress: str | None) -> tuple[Counter, Counter, list[str]]:
    """Run the cases ``numbers``: (kinds counted, tallies of fresh processes and signals before
    hgner's first line, one line per failure)."""
    kinds: Counter = Counter()
    tally: Counter = Counter()
    failures: list[str] = []
    started = time.monotonic()
    for done, number in enumerate(numbers, 1):
        if stopped:
            break
        rng = random.Random(f"{seed}-{number}")
        work = root / f"case{number}"
        work.mkdir()
        case = make_case(rng, work, model)
        kinds[case.kind] += 1
        before = {p: digest(p) for p in case.watched}
        fresh = use_exec or case.use_exec
        code, stderr, stdout = (run_exec if fresh else run_forked)(case, work, timeout)
        why = judge(case, code, stderr, before, work, stdout)
        tally["fresh processes"] += fresh
        tally[BEFORE_HGNER] += before_hgner(case, code, stderr)
        if why:
            line = f"case {number} ({case.kind}): {why}: hgner {' '.join(map(repr, case.argv))}\n    " + \
                   "\n    ".join(stderr.strip().splitlines()[-6:])
            failures.append(line)
            print(line, flush=True)
            if keep:
                shutil.copytree(work, keep / f"case{number}", symlinks=True, dirs_exist_ok=True)
        shutil.rmtree(work, ignore_errors=True)
        if progress is not None and done % 100 == 0:
            print(f"{progress}{done}/{len(numbers)} cases, {len(failures)} failures, {time.monotonic() - started:.0f}s",
                  file=sys.stderr, flush=True)
    return kinds, tally, failures


def fuzz(n: int, seed: int, timeout: float, use_exec: bool, keep: Path | None,
         progress: bool = True, jobs: int = 1) -> tuple[Counter, list[str]]:
    """Run ``n`` cases (``jobs`` at a time: forks of this process after the warm-up, each running
    every ``jobs``-th case); returns the case kinds counted and one line per failure (:data:`TALLY`:
    fresh processes and signals before hgner's first line)."""
    root = Path(tempfile.mkdtemp(prefix="hgner-fuzz-"))
    stopped: list[int] = []  # SIGTERM or SIGINT: finish the current case, then report what ran
    previous = {signum: signal.signal(signum, lambda number, frame: stopped.append(number))
                for signum in (signal.SIGTERM, signal.SIGINT)}
    import socket

    peer = socket.socket()  # a "scheduler" that accepts and never answers
    peer.bind(("127.0.0.1", 0))
    peer.listen(1000)
    SILENT_PEER[:] = [peer.getsockname()[1]]
    workers: dict[int, Path] = {}
    try:
        model = build_model(root)
        if not use_exec:
            warm_up(root / "warm-up", model)
        kinds: Counter = Counter()
        failures: list[str] = []
        TALLY.clear()
        if jobs <= 1:
            kinds, tally, failures = run_cases(range(n), seed, root, model, timeout, use_exec, keep, stopped,
                                               "" if progress else None)
            TALLY.update(tally)
            return kinds, failures
        for job in range(jobs):
            result = root / f"job{job}.json"
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                status = 1
                try:
                    shard = run_cases(range(job, n, jobs), seed, root, model, timeout, use_exec, keep, stopped,
                                      f"[job {job}] " if progress else None)
                    result.write_text(json.dumps([dict(shard[0]), dict(shard[1]), shard[2]]))
                    status = 0
                except BaseException:  # noqa: BLE001  (the job's own error, shown before it ends)
                    import traceback

                    traceback.print_exc()
                finally:
                    os._exit(status)
            workers[pid] = result

        def forward(signum: int, frame: Any) -> None:  # each job finishes its case, then reports what ran
            stopped.append(signum)
            for worker in workers:
                os.kill(worker, signum)

        for signum in previous:
            signal.signal(signum, forward)
        while workers:
            try:
                pid, status = os.waitpid(-1, 0)
            except InterruptedError:
                continue
            except ChildProcessError:
                break
            result = workers.pop(pid, None)
            if result is None:
                continue
            if status != 0 or not result.exists():
                failures.append(f"fuzzer job {pid}: died (status {status})")
                print(failures[-1], flush=True)
                continue
            shard_kinds, shard_tally, shard_failures = json.loads(result.read_text())
            kinds.update(shard_kinds)
            TALLY.update(shard_tally)
            failures.extend(shard_failures)
        return kinds, failures
    finally:
        for pid in workers:
            try:
                os.kill(pid, signal.SIGTERM)
                os.waitpid(pid, 0)
            except OSError:
                pass
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        shutil.rmtree(root, ignore_errors=True)
        peer.close()


# ---- signals during start-up ------------------------------------------------------------------

def startup_outcome(code: int, stderr: str, script: Path) -> str:
    """What a SIGINT during start-up did: handled by hgner (one line, 130), or CPython's floor (the
    process killed before CPython set its handler, or CPython's traceback from its own start-up:
    ``site`` and its ``.pth`` files, the console script's ``import re``, the import system finding
    hgner), or a traceback through hgner's code (ours: must not happen)."""
    import re

    lines = stderr.strip().splitlines()
    if code == -signal.SIGINT:
        return "floor: killed before CPython's SIGINT handler"
    if "Traceback" not in stderr:
        if code == 130 and len(lines) == 1 and lines[0].startswith("hgner") and lines[0].endswith(": interrupted"):
            return "hgner: one line, exit 130"
        return f"other: exit {code}, {len(lines)} lines"
    if "/hgner/" in stderr:
        return "ours: traceback through hgner's code"
    frames = re.findall(r'File "([^"]+)", line \d+, in [^\n]*\n(?:\s+([^\n]*))?', stderr)
    if any(name in ("<frozen site>",) or name.endswith("site.py") for name, _ in frames):
        where = "the editable install's .pth finder" if "__editable__" in stderr else "site-packages' .pth files"
        return f"floor: site ({where})"
    if "Fatal Python error" in stderr:
        return "floor: CPython's core start-up (standard streams, encodings)"
    if frames and frames[0][0] == str(script):
        return f"floor: the console script's `{frames[0][1].strip()}`"
    return "floor: CPython's start-up"


def startup_signals(tries: int, script: Path, seed: int, max_delay: float = 0.15) -> dict[str, Any]:
    """Send SIGINT to ``tries`` fresh ``hgner tag`` processes (the console ``script``) after random
    delays in [0, ``max_delay``) seconds; the outcomes counted, with the range of delays (ms) of each.
    Bytecode is cached (in a temporary folder) as an installed package's is."""
    rng = random.Random(seed)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    outcomes: dict[str, list[float]] = {}
    examples: dict[str, str] = {}  # (outcomes that are neither hgner's line nor the floor: the stderr of one)
    with tempfile.TemporaryDirectory(prefix="hgner-startup-") as folder:
        env["PYTHONPYCACHEPREFIX"] = str(Path(folder) / "pycache")
        argv = [str(script), "tag", "--decoder", "gibbs", "--sweeps", "10000000", TEXT]
        for _ in range(2):  # fill the bytecode cache
            subprocess.run([str(script), "--version"], env=env, capture_output=True, check=False)
        for _ in range(tries):
            delay = rng.uniform(0.0, max_delay)
            with subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=folder) as child:
                time.sleep(delay)
                child.send_signal(signal.SIGINT)
                try:
                    _, err = child.communicate(timeout=60)
                except subprocess.TimeoutExpired:
                    child.kill()
                    _, err = child.communicate()
            outcome = startup_outcome(child.returncode, err.decode("utf-8", "replace"), script)
            outcomes.setdefault(outcome, []).append(delay * 1000)
            if not outcome.startswith(("floor", "hgner")):
                examples.setdefault(outcome, err.decode("utf-8", "replace")[-600:])
    return {outcome: {"tries": len(delays), "delay_ms": [round(min(delays), 1), round(max(delays), 1)],
                      **({"example": examples[outcome]} if outcome in examples else {})}
            for outcome, delays in sorted(outcomes.items())}


def startup_times(runs: int, script: Path) -> dict[str, float] | None:
    """Median milliseconds from ``execve`` to hgner's first line (``hgner/__init__.py`` holding the
    signals: CPython's start-up, the floor) and to the command's handlers (its SIGTERM handler set),
    by ``strace -ttt`` on ``runs`` runs of ``script --version``; None without strace."""
    import re
    import statistics

    if shutil.which("strace") is None:
        return None
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    first, handlers = [], []
    with tempfile.TemporaryDirectory(prefix="hgner-startup-") as folder:
        env["PYTHONPYCACHEPREFIX"] = str(Path(folder) / "pycache")
        subprocess.run([str(script), "--version"], env=env, capture_output=True, check=False)
        for _ in range(runs):
            trace = subprocess.run(["strace", "-ttt", "-e", "trace=execve,rt_sigprocmask,rt_sigaction", str(script),
                                    "--version"], env=env, capture_output=True, text=True, check=False).stderr
            stamps = {}
            for line in trace.splitlines():
                found = re.match(r"(\d+\.\d+) (.*)", line)
                if not found:
                    continue
                moment, call = float(found.group(1)), found.group(2)
                if call.startswith("execve("):
                    stamps.setdefault("start", moment)
                elif call.startswith("rt_sigprocmask(SIG_BLOCK, [HUP INT TERM]"):
                    stamps.setdefault("first line", moment)
                elif call.startswith("rt_sigaction(SIGTERM, {sa_handler=0x"):
                    stamps.setdefault("handlers", moment)
            if "first line" in stamps:
                first.append(1000 * (stamps["first line"] - stamps["start"]))
            if "handlers" in stamps:
                handlers.append(1000 * (stamps["handlers"] - stamps["start"]))
    return {"runs": runs, "first_line_ms": round(statistics.median(first), 1) if first else None,
            "handlers_ms": round(statistics.median(handlers), 1) if handlers else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=200, help="number of cases (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the case generator (default 0)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds before a case counts as a hang (default 60)")
    parser.add_argument("--exec", dest="use_exec", action="store_true",
                        help="run each case as a fresh `python -m hgner` (slow) instead of a fork")
    parser.add_argument("--keep", type=Path, help="copy the folders of failing cases here")
    parser.add_argument("--json", type=Path, help="write the counts and failures here")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="cases run at a time (default 1)")
    parser.add_argument("--startup", type=int, metavar="TRIES",
                        help="instead of cases: SIGINT to TRIES fresh `hgner tag` processes at random moments in their "
                             "first 150 ms, and the start-up's times (strace); the outcomes split into CPython's floor "
                             "and hgner's")
    parser.add_argument("--script", type=Path, default=Path(sys.executable).parent / "hgner",
                        help="the console script --startup runs (default: the one beside this Python)")
    args = parser.parse_args()
    if args.startup:
        found = {"script": args.script.name, "tries": args.startup, "seed": args.seed,
                 "outcomes": startup_signals(args.startup, args.script, args.seed),
                 "times": startup_times(20, args.script)}
        print(json.dumps(found, indent=1))
        if args.json:
            args.json.write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
        return 1 if any(outcome.startswith("ours") for outcome in found["outcomes"]) else 0
    started = time.monotonic()
    kinds, failures = fuzz(args.n, args.seed, args.timeout, args.use_exec, args.keep, jobs=args.jobs)
    seconds = time.monotonic() - started
    print(f"{sum(kinds.values())} of {args.n} cases ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}) in "
          f"{seconds:.0f}s: {len(failures)} failures; {TALLY['fresh processes']} fresh processes, "
          f"{TALLY[BEFORE_HGNER]} signals before hgner's first line")
    if args.json:
        args.json.write_text(json.dumps({"cases_requested": args.n, "cases_run": sum(kinds.values()), "seed": args.seed,
                                         "jobs": args.jobs, "seconds": round(seconds),
                                         "kinds": dict(sorted(kinds.items())),
                                         "fresh_processes": TALLY["fresh processes"],
                                         "signals_before_hgner": TALLY[BEFORE_HGNER],
                                         "failures": len(failures), "failure_lines": failures[:50]}, indent=1) + "\n",
                             encoding="utf-8")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
