"""Structure-aware fuzzing of ``model.crfsuite``: damaged files, resealed, must never crash hgner.

Each case copies a small model, changes its ``model.crfsuite`` where crfsuite's reader looks (the
header's counts and offsets; FEAT records' types, sources, targets and weights, huge and
non-finite ones included; the LFRF/AFRF offset tables and feature lists; CQDB headers, table
references, buckets, string records and backward arrays; plus bit flips, truncation and padding,
with the header's size fixed up or not), reseals the model (so the seal passes and only the
structural checks stand between the bytes and crfsuite's C code), then in a forked child loads it
and uses it every way hgner does: our Viterbi and exact marginals, crfsuite's tagger (open, tag,
marginals, labels, info). Outcomes:

- ``accepted``: loaded and used (the change was harmless, e.g. a weight within range);
- ``refused``: a one-line :class:`~hgner.core.errors.HgnerError` (exit 2);
- ``error``: another Python exception (a bug, not a crash);
- ``crash``: the child died by a signal; ``hang``: it outlived ``--timeout``.

``--unchecked`` opens the damaged files with pycrfsuite directly, without our checks, to show that
the mutations reach crfsuite's unchecked reads (its crashes are expected there). Usage::

    python tools/fuzz_crfsuite.py -n 10000 [--seed 0] [--json docs/results/fuzz-crfsuite.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import struct
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "tag_train.conll"
SENTENCES = [["Angela", "Merkel", "visited", "Paris", "."], ["The", "United", "Nations", "met", "in", "Tokyo"]]
U32 = [0, 1, 2, 3, 4, 5, 7, 8, 12, 20, 47, 48, 255, 256, 2071, 2072, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF]
WEIGHTS = [float("nan"), float("inf"), -float("inf"), 1e200, 1e308, -1e308, 1e6, 1e6 + 1, -1e7, 700.0, 5.0, 0.0,
           5e-324]


def fields(data: bytes) -> list[tuple[int, str]]:
    """(position, kind) of every u32 (``u``) and f64 (``f``) field crfsuite reads, found by
    following the structures as a well-formed file lays them out."""
    out: list[tuple[int, str]] = [(at, "u") for at in range(4, 48, 4) if at != 8]
    (_, _, _, _, _, n_labels, n_attributes, features_at, labels_at, attributes_at, labelrefs_at,
     attrrefs_at) = struct.unpack_from("<4sI4sIIIIIIIII", data, 0)
    n_features = struct.unpack_from("<I", data, features_at + 8)[0]
    out += [(features_at + 4, "u"), (features_at + 8, "u")]
    for i in range(n_features):
        at = features_at + 12 + 20 * i
        out += [(at, "u"), (at + 4, "u"), (at + 8, "u"), (at + 12, "f")]
    for start, count in ((labelrefs_at, n_labels), (attrrefs_at, n_attributes)):
        out += [(start + 4, "u"), (start + 8, "u")]
        for i in range(count):
            offset = struct.unpack_from("<I", data, start + 12 + 4 * i)[0]
            out.append((start + 12 + 4 * i, "u"))
            n = struct.unpack_from("<I", data, offset)[0]
            out += [(offset + 4 * j, "u") for j in range(n + 1)]
    for start in (labels_at, attributes_at):
        out += [(start + at, "u") for at in (4, 8, 12, 16, 20)]
        for table in range(256):
            offset, n = struct.unpack_from("<II", data, start + 24 + 8 * table)
            out += [(start + 24 + 8 * table, "u"), (start + 28 + 8 * table, "u")]
            for bucket in range(n):
                out += [(start + offset + 8 * bucket, "u"), (start + offset + 8 * bucket + 4, "u")]
                record = struct.unpack_from("<I", data, start + offset + 8 * bucket + 4)[0]
                if record:
                    out += [(start + record, "u"), (start + record + 4, "u"), (start + record + 8, "s")]
        _, _, _, _, backward_size, backward_at = struct.unpack_from("<4sIIIII", data, start)
        out += [(start + backward_at + 4 * i, "u") for i in range(min(backward_size, n_attributes + n_labels))
                if start + backward_at + 4 * i + 4 <= len(data)]
    return out


def mutate(rng: random.Random, data: bytes, layout: list[tuple[int, str]]) -> tuple[bytes, str]:
    """``data`` with one to three structural changes; and a short description of them."""
    new = bytearray(data)
    done = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        how = rng.random()
        if how < 0.7:
            at, kind = rng.choice(layout)
            if kind == "u" and at + 4 <= len(new):
                old = struct.unpack_from("<I", new, at)[0]
                value = rng.choice([*U32, old + 1, old - 1 & 0xFFFFFFFF, old + 4, old * 2 & 0xFFFFFFFF,
                                    rng.randrange(len(new) + 64), rng.getrandbits(32), rng.choice(layout)[0]])
                struct.pack_into("<I", new, at, value)
                done.append(f"u32@{at}={value}")
            elif kind == "f" and at + 8 <= len(new):
                value = rng.choice(WEIGHTS)
                struct.pack_into("<d", new, at, value)
                done.append(f"f64@{at}={value}")
            elif kind == "s" and at < len(new):
                byte = rng.choice([0, 0xFF, 0x80, ord("x"), 0xC3])
                new[at + rng.randrange(4) if at + 4 < len(new) else at] = byte
                done.append(f"byte@{at}={byte}")
        elif how < 0.8:
            for _ in range(rng.choice([1, 2, 8])):
                at = rng.randrange(len(new))
                new[at] ^= 1 << rng.randrange(8)
            done.append("bit flips")
        elif how < 0.9:
            cut = rng.randrange(len(new))
            new = new[:cut] if rng.random() < 0.7 else new + bytes(rng.randrange(1, 64))
            done.append(f"resized to {len(new)}")
        else:  # copy one structure's bytes over another's
            (a, _), (b, _) = rng.choice(layout), rng.choice(layout)
            length = rng.choice([4, 8, 20, 64])
            new[b:b + length] = data[a:a + length]
            new = new[:len(data)] if len(new) > len(data) else new
            done.append(f"copied {length}@{a}->{b}")
    if len(new) >= 8 and rng.random() < 0.7:  # usually keep the header's size right: the checks must go deeper
        struct.pack_into("<I", new, 4, len(new))
    return bytes(new), "; ".join(done) or "none"


def exercise(directory: Path) -> None:
    """Load the model and use it as hgner does (raises what hgner raises)."""
    from hgner.crf.model import CrfModel
    from hgner.tagging.settings import TagSettings
    from hgner.tagging.tagger import Tagger

    model = CrfModel.load(directory)
    features = model.features(SENTENCES)
    model.crfsuite_tag(features)
    model.crfsuite_marginals(features[0])
    model._crfsuite.labels()
    model._crfsuite.info()
    for decoder in ("viterbi", "exact", "crfsuite"):
        tagger = Tagger(TagSettings(directory, decoder, "chain", seed=0), model)
        list(tagger.tag_text("Angela Merkel visited Paris. The United Nations met."))


def exercise_unchecked(path: Path) -> None:
    import pycrfsuite

    tagger = pycrfsuite.Tagger()
    tagger.open(str(path))
    tagger.tag([["w=Paris", "bias"], ["w=x", "bias"]])
    tagger.labels()


def run_case(directory: Path, timeout: float, unchecked: bool) -> tuple[str, str]:
    """(outcome, detail) of using ``directory``'s model in a forked child."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        code, detail = 0, ""
        try:
            os.setpgid(0, 0)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            if unchecked:
                exercise_unchecked(directory / "model.crfsuite")
            else:
                exercise(directory)
        except BaseException as error:  # noqa: BLE001
            from hgner.core.errors import HgnerError

            code = 2 if isinstance(error, (HgnerError, OSError)) else 3
            detail = f"{type(error).__name__}: {' '.join(str(error).split())[:300]}"
            if code == 3:
                detail += " | " + traceback.format_exc().splitlines()[-3].strip()
        os.write(write, detail.encode("utf-8", "replace")[:4000])
        os._exit(code)
    os.close(write)
    deadline = time.monotonic() + timeout
    status = None
    while status is None:
        done, value = os.waitpid(pid, os.WNOHANG)
        if done:
            status = value
        elif time.monotonic() > deadline:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read)
            return "hang", ""
        else:
            time.sleep(0.002)
    with os.fdopen(read, "rb") as stream:
        detail = stream.read().decode("utf-8", "replace")
    if os.WIFSIGNALED(status):
        return "crash", f"signal {os.WTERMSIG(status)}"
    return {0: "accepted", 2: "refused", 3: "error"}.get(os.WEXITSTATUS(status), "error"), detail


def build_model(root: Path) -> Path:
    from hgner.data.corpus import load_corpus
    from hgner.training import TrainOptions
    from hgner.training.crf import train

    model = train(load_corpus(str(FIXTURE)), root / "model", TrainOptions(max_iterations=30))
    exercise(model.directory)  # compile the kernels and import everything once, before forking
    return model.directory


def fuzz(n: int, seed: int, timeout: float, unchecked: bool = False, progress: bool = True,
         model: Path | None = None, only: list[int] | None = None) -> dict:
    from hgner.crf.modelfiles import MODEL_FILE, refresh_files

    root = Path(tempfile.mkdtemp(prefix="hgner-fuzz-crfsuite-"))
    try:
        source = build_model(root) if model is None else model
        original = (source / MODEL_FILE).read_bytes()
        layout = fields(original)
        outcomes: Counter = Counter()
        refusals: Counter = Counter()
        examples: dict[str, list[str]] = {}
        started = time.monotonic()
        for number in (range(n) if only is None else only):
            rng = random.Random(f"{seed}-{number}")
            work = root / f"case{number}"
            shutil.copytree(source, work)
            data, how = mutate(rng, original, layout)
            (work / MODEL_FILE).write_bytes(data)
            refresh_files(work)  # resealed: only the structural checks stand in the way
            outcome, detail = run_case(work, timeout, unchecked)
            outcomes[outcome] += 1
            if outcome == "refused":
                refusals[detail.split(":")[0] + ": " + detail.split(": ", 2)[-1][:60]] += 1
            if outcome not in ("accepted", "refused") and len(examples.setdefault(outcome, [])) < 20:
                examples[outcome].append(f"case {number}: {how}: {detail}")
                if progress:
                    print(f"case {number} {outcome}: {how}: {detail}", file=sys.stderr, flush=True)
            shutil.rmtree(work, ignore_errors=True)
            if progress and (number + 1) % 500 == 0:
                print(f"{number + 1}/{n}: {dict(outcomes)} {time.monotonic() - started:.0f}s", file=sys.stderr,
                      flush=True)
        return {"cases": n if only is None else len(only), "seed": seed, "unchecked": unchecked,
                "seconds": round(time.monotonic() - started, 1),
                "fields": len(layout), "outcomes": dict(sorted(outcomes.items())), "examples": examples,
                "most_common_refusals": refusals.most_common(15)}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=1000, help="number of cases (default 1000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds before a case counts as a hang")
    parser.add_argument("--unchecked", action="store_true", help="open with pycrfsuite directly, without our checks")
    parser.add_argument("--model", type=Path, help="fuzz this model's file (default: a small model trained here)")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--cases", type=lambda text: [int(v) for v in text.split(",")],
                        help="run only these case numbers (comma-separated), e.g. to check failures again")
    args = parser.parse_args()
    results = fuzz(args.n, args.seed, args.timeout, args.unchecked, model=args.model, only=args.cases)
    print(json.dumps({k: v for k, v in results.items() if k != "examples"}, indent=1))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    bad = sum(results["outcomes"].get(k, 0) for k in ("crash", "hang", "error"))
    return 1 if bad and not args.unchecked else 0


if __name__ == "__main__":
    sys.exit(main())
