"""Raw text against corpus tokens: the figures behind the README's raw-text column and the
targets of the raw-text issue, measured by the code as it is.

* en-conll03 with Viterbi on eng.testb: corpus tokens, and raw text laid out one sentence per
  line, each document one paragraph on one line, and that paragraph hard-wrapped at 72 columns
  [lines within 0.2 of corpus tokens; paragraph and wrapped within 0.5 of lines];
* the same on the development sets, eng.testa and Wikigold (``--wikigold``, IOB1) [Wikigold's
  lines within 1.0 of its corpus tokens]; ``--dev`` measures these alone, for tuning without the test set;
* for the paragraph and wrapped layouts, how many gold entity pairs the layout runs together across a
  corpus sentence end (a name the corpus broke at a line end, ``Ken`` / ``Green``, or two entities of
  one type in consecutive table rows) and the F1 of the same tagging scored with each such pair as one
  entity (``hgner.text.rawtext.entities_joined_by_layout``): a bound on what those breaks cost the layout;
* tokenizer agreement on eng.testa and eng.testb, and on the development sets in each layout the
  share of the corpus's sentence boundaries found and of the found boundaries that are the
  corpus's (benchmarks/tokenizer_agreement.py) [agreement >= 98% on testb];
* with ``--baseline DIR`` (a checkout of an earlier hgner, e.g. ``git worktree add /tmp/base main``):
  CPU seconds of ``hgner tag --format jsonl`` on eng.testb's raw text, one file per document,
  this tree against the baseline, runs alternating [at most 10% more].

Usage: python benchmarks/bench_rawtext.py [--model en-conll03] [--wikigold NAME_OR_FILE] [--dev]
       [--baseline DIR] [--runs 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent
# the checkout this script is in, for the figures as for the speed runs (an older installed copy would
# score its own code), then benchmarks/ for the helpers
sys.path[:0] = [str(SOURCE), str(SOURCE / "benchmarks")]
from bench_tag import children_cpu  # noqa: E402
from tokenizer_agreement import agreement  # noqa: E402

from hgner.crf.model import CrfModel  # noqa: E402
from hgner.data.corpus import Corpus, load_corpus  # noqa: E402
from hgner.evaluation import EvaluateOptions, evaluate  # noqa: E402
from hgner.evaluation.evaluator import rebuilt_documents  # noqa: E402
from hgner.tagging.settings import TagSettings  # noqa: E402
from hgner.tagging.tagger import Tagger  # noqa: E402
from hgner.text.rawtext import LAYOUTS, entities_joined_by_layout, rebuild, score_spans  # noqa: E402


def f1(report: dict) -> float:
    return round(report.results[0].f1, 2)


def joined(model: CrfModel, corpus: Corpus, layout: str, expected_f1: float) -> dict[str, float]:
    """Viterbi's tagging of ``corpus`` rebuilt in ``layout``, as ``hgner evaluate --input raw`` tags it,
    scored against the gold with the pairs the layout runs together joined: the pairs and that F1.
    Scored against the corpus's gold the same tagging must give ``expected_f1``, evaluate's figure."""
    documents = rebuilt_documents(corpus, model, layout)
    tagger = Tagger(TagSettings(model.directory, "viterbi"), model)
    predicted = [[(e.start, e.end, e.label) for group in tagger.tag_sentences(d.text, list(tagger.sentences(d.text)))
                  for e in group.entities] for d in documents]
    gold = [entities_joined_by_layout(d, layout) for d in documents]
    as_corpus = round(score_spans((d.entities for d in documents), predicted, corpus.scheme).micro.f1, 2)
    if as_corpus != expected_f1:
        raise SystemExit(f"{layout}: this tagging scores {as_corpus} against the corpus's gold, evaluate {expected_f1}")
    return {"pairs": sum(len(d.entities) - len(g) for d, g in zip(documents, gold, strict=True)),
            "f1": round(score_spans(gold, predicted, corpus.scheme).micro.f1, 2)}


def tag_cpu_seconds(source: Path, model: str, files: list[str]) -> float:
    """CPU seconds of ``hgner tag`` imported from ``source`` (startup included)."""
    environment = {**os.environ, "PYTHONPATH": str(source)}
    before = children_cpu()
    subprocess.run([sys.executable, "-m", "hgner.cli", "tag", "--model", model, "--format", "jsonl", "--files", *files],
                   env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return children_cpu() - before


def speed(model: str, baseline: Path, runs: int) -> dict[str, float]:
    corpus = load_corpus("conll2003:testb")
    with tempfile.TemporaryDirectory(prefix="bench_rawtext-") as folder:
        files = []
        for i, document in enumerate(corpus.documents):
            path = Path(folder) / f"doc{i:04d}.txt"
            path.write_text(rebuild([s.tokens for s in document.sentences], [s.tags for s in document.sentences]).text,
                            encoding="utf-8")
            files.append(str(path))
        tag_cpu_seconds(SOURCE, model, files[:1])  # warm caches (numba, files)
        tag_cpu_seconds(baseline, model, files[:1])
        here, there = [], []
        for _ in range(runs):
            here.append(tag_cpu_seconds(SOURCE, model, files))
            there.append(tag_cpu_seconds(baseline, model, files))
    return {"cpu_seconds": round(statistics.median(here), 2), "baseline_cpu_seconds": round(statistics.median(there), 2),
            "change_percent": round(100 * (statistics.median(here) / statistics.median(there) - 1), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="en-conll03", help="model name or directory (default en-conll03)")
    parser.add_argument("--wikigold", default="wikigold", help="Wikigold: its catalogue name (default) or a CoNLL file")
    parser.add_argument("--dev", action="store_true", help="the development sets only (eng.testa, Wikigold): no test set")
    parser.add_argument("--baseline", type=Path, help="an earlier hgner checkout to compare tagging speed with")
    parser.add_argument("--runs", type=int, default=3, help="speed runs per version; medians reported (default 3)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()

    model = CrfModel.load(args.model)
    figures: dict = {"model": model.name}
    corpora = {"testa": load_corpus("conll2003:testa"), "wikigold": load_corpus(args.wikigold, "IOB1")}
    if not args.dev:
        corpora = {"testb": load_corpus("conll2003:testb"), **corpora}
    for key, corpus in corpora.items():
        figures[f"{key}_tokens"] = f1(evaluate(model, corpus, EvaluateOptions()))
        for layout in LAYOUTS:
            figures[f"{key}_raw_{layout}"] = f1(evaluate(model, corpus, EvaluateOptions(input="raw", layout=layout)))
            if layout != "lines":
                figures[f"{key}_raw_{layout}_joined"] = joined(model, corpus, layout, figures[f"{key}_raw_{layout}"])
    tokenizer = Tagger(TagSettings(args.model), model).tokenizer  # split as tagging splits
    for split in ("testa",) if args.dev else ("testa", "testb"):
        figures[f"agreement_{split}"] = round(agreement(f"conll2003:{split}", tokenizer, "lines", 0)["agreement"], 2)
    for key, name in (("testa", "conll2003:testa"), ("wikigold", args.wikigold)):
        for layout in LAYOUTS:
            found = agreement(name, tokenizer, layout, 0)
            figures[f"boundaries_{key}_{layout}"] = {"recall": round(found["boundary_recall"], 2),
                                                     "precision": round(found["boundary_precision"], 2),
                                                     "agreement": round(found["agreement"], 2)}
    if args.baseline:
        figures["tag_speed"] = speed(args.model, args.baseline, args.runs)
    for key, value in figures.items():
        print(f"{key:24s} {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
