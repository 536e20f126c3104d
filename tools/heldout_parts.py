"""Held-out parts of a model's training corpus: a check of a model choice on text its dev set is not.

    python tools/heldout_parts.py MODEL [--parts 3] [--also "--model-scheme BIOES"] [--work DIR] [--json FILE]

A dev set that every earlier choice was made on can under- or overstate the next one (docs/development/research-log.md:
ned.testa gave BIOES +0.20 on the chain, held-out parts of ned.train +0.74). Here the shipped MODEL's
training corpus (its ``build_command``'s ``--train``, in the documents its ``--documents`` makes) is
split by document, document i in part i mod PARTS. For each part, a model is trained on the other
parts with MODEL's ``build_command`` (the same flags and dev corpus, so the same case copies, skip
weight tuning and calibration), ``--also`` appended (a later flag overrides an earlier one), and
scored on the part: Viterbi on the chain and ``exact`` on the skip-chain graph at the weight its
training chose. A corpus without ``-DOCSTART-`` (esp.train) is written without it, so training regroups
each part into the same documents, and a part is scored in ``hgner evaluate``'s default groups.

Prints each part's F1 and the means; ``--json FILE`` appends them as one line. The runs are
sequential: a part took 2 minutes for nl-conll02 and 3-5 for the models trained on case copies
(es-conll02, the English ones) on the 2-core development machine.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hgner.cli import build_parser  # noqa: E402
from hgner.cli import main as hgner  # noqa: E402
from hgner.crf.model import CrfModel  # noqa: E402
from hgner.data.corpus import Corpus, Document, write_conll  # noqa: E402
from hgner.data.reading import read_tagged  # noqa: E402


def write_part(path: Path, corpus: Corpus, documents: list[Document]) -> None:
    """``documents`` of ``corpus`` as a CoNLL file (``token gold gold``: training reads the last
    column), with ``-DOCSTART-`` lines only when the corpus marks its own documents."""
    with path.open("w", encoding="utf-8") as out:
        write_conll(out, replace(corpus, documents=documents), [s.tags or [] for d in documents for s in d.sentences],
                    document_starts=corpus.marked)


def split(corpus: Corpus, parts: int, work: Path) -> list[tuple[Path, Path]]:
    """(training file, held-out file) of each part: document i is held out in part i mod ``parts``."""
    files = []
    for k in range(parts):
        train, held = work / f"train{k}.conll", work / f"held{k}.conll"
        write_part(train, corpus, [d for i, d in enumerate(corpus.documents) if i % parts != k])
        write_part(held, corpus, corpus.documents[k::parts])
        files.append((train, held))
    return files


def report(model: Path, corpus: Path, documents: list[str], graph: str, decoder: str, out: Path) -> dict:
    """``hgner evaluate``'s report of one decoder, as JSON."""
    if hgner(["evaluate", "--model", str(model), "--corpus", str(corpus), *documents, "--graph", graph,
              "--decoders", decoder, "--json", str(out)]) != 0:
        raise SystemExit(f"hgner evaluate failed on {corpus}")
    return json.loads(out.read_text(encoding="utf-8"))


def run(name: str, parts: int, also: list[str], work: Path) -> dict:
    command = shlex.split(CrfModel.load(name).metadata["build_command"])[1:]  # "train", then its flags
    args = build_parser().parse_args(command)
    corpus, _ = read_tagged(args.train, documents=args.documents, announce=False)
    documents = ["--documents", "corpus"] if corpus.marked else []  # unmarked: evaluate's default groups
    rows = []
    for k, (train, held) in enumerate(split(corpus, parts, work)):
        out = work / f"model{k}"
        words = [*command, *also]
        words[words.index("--train") + 1] = str(train)
        words[words.index("--out") + 1] = str(out)
        if hgner(words) != 0:
            raise SystemExit(f"hgner train failed on part {k}")
        chain = report(out, held, documents, "chain", "viterbi", work / f"chain{k}.json")
        skip = report(out, held, documents, "skip", "exact", work / f"skip{k}.json")
        rows.append({"part": k, "documents": len(corpus.documents[k::parts]),
                     "tokens": chain["tokens"], "chain": round(chain["results"][0]["f1"], 2),
                     "skip": round(skip["results"][0]["f1"], 2), "weight": skip["skip"]["weight"]})
        print(f"part {k}: chain {rows[-1]['chain']:.2f}, skip exact {rows[-1]['skip']:.2f} "
              f"(weight {rows[-1]['weight']:g})", flush=True)
    means = {key: round(sum(r[key] for r in rows) / len(rows), 2) for key in ("chain", "skip")}
    print(f"mean: chain {means['chain']:.2f}, skip exact {means['skip']:.2f}")
    return {"model": name, "also": also, "parts": parts, "rows": rows, "mean": means}


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="a shipped model (its meta.json records the build command)")
    parser.add_argument("--parts", type=int, default=3, help="parts of the training corpus (default 3)")
    parser.add_argument("--also", default="", help="hgner train flags appended to the build command, e.g. "
                                                   "\"--model-scheme BIOES\"")
    parser.add_argument("--work", type=Path, default=Path("heldout-parts"), help="folder for the parts and models")
    parser.add_argument("--json", type=Path, help="append the results as one JSON line to this file")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    result = run(args.model, args.parts, shlex.split(args.also), args.work)
    if args.json:
        with args.json.open("a", encoding="utf-8") as out:
            out.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    cli()
