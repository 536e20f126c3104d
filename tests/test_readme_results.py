"""The README's result tables are rendered from the committed docs/results/*.json (written by
scripts/experiments.sh), so a figure in them cannot drift from what the code produced."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from hgner.evaluation import Report
from hgner.evaluation.report import grouped as grouped_results

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def load(name: str) -> dict:
    return json.loads((ROOT / "docs" / "results" / f"{name}.json").read_text(encoding="utf-8"))


def mean(rows: list[dict], key: str) -> float:
    return statistics.mean(r[key] for r in rows)


def cell(rows: list[dict]) -> str:
    """``F1 [s]``, or ``mean (sd) [mean s]`` over seeds: the Table 3 cell."""
    if len(rows) == 1:
        return f"{rows[0]['f1']:.2f} [{rows[0]['decode_seconds']:.2f} s]"
    return f"{mean(rows, 'f1'):.2f} ({statistics.stdev(r['f1'] for r in rows):.2f}) [{mean(rows, 'decode_seconds'):.2f} s]"


def grouped(report: dict) -> dict:
    """The committed report's results by decoder and sweeps (hgner's grouping), as JSON objects."""
    return {decoder: {sweeps: [r.to_json() for r in rows] for sweeps, rows in by_sweeps.items()}
            for decoder, by_sweeps in grouped_results(Report.from_json(report)).items()}


def table3_rows(report: dict) -> list[str]:
    groups = grouped(report)
    sweeps = sorted(s for s in groups["gibbs"])
    return [
        "| annealed Gibbs | " + " | ".join(cell(groups["gibbs"][s]) for s in sweeps) + " |",
        "| herded Gibbs | " + " | ".join(cell(groups["herded"][s]) for s in sweeps) + " |",
        f"| Viterbi | {cell(groups['viterbi'][None])} | | |",
        "| herded = Viterbi (sentences) | " + " | ".join(f"{groups['herded'][s][0]['viterbi_agreement']:.2%}" for s in sweeps) + " |",
    ]


def skip_rows(report: dict) -> list[str]:
    groups = grouped(report)

    def figures(decoder: str) -> list[str]:
        by_sweeps = groups[decoder]
        sweeps = sorted(by_sweeps)
        parts = [
            " / ".join(f"{mean(by_sweeps[s], 'f1'):.2f}" for s in sweeps),
            " / ".join(f"{mean(by_sweeps[s], 'consistency_disagreement'):.2f}" for s in sweeps) + "%",
            " / ".join(f"{100 * mean(by_sweeps[s], 'optimum_fraction'):.1f}" for s in sweeps) + "%",
            " / ".join(f"{mean(by_sweeps[s], 'mean_optimum_gap'):.2f}" for s in sweeps),
            " / ".join(f"{mean(by_sweeps[s], 'decode_seconds'):.2f}" for s in sweeps),
        ]
        return [f"{decoder} {' / '.join(map(str, sweeps))}", *parts]

    (exact,) = groups["exact"][None]
    certified = round(exact["certified_fraction"] * report["documents"])
    chain = ["| viterbi (chain) | " + " | ".join(figures("viterbi")[1:]) + " |"] if "viterbi" in groups else []
    return [
        *chain,
        "| " + " | ".join(figures("gibbs")) + " |",
        "| " + " | ".join(figures("herded")) + " |",
        f"| exact | **{exact['f1']:.2f}** | {exact['consistency_disagreement']:.2f}% | "
        f"{exact['optimum_fraction']:.0%} ({certified} of {report['documents']} certified) | 0 | {exact['decode_seconds']:.2f} |",
    ]


@pytest.mark.parametrize(("name", "heading"), [("table3-ieer", "| en-3class on IEER"), ("table3-testb", "| en-conll03 on eng.testb")])
def test_table3_matches_its_json(name, heading):
    table = README[README.index(heading):].split("\n\n")[0]
    for row in table3_rows(load(name)):
        assert row in table, f"README row differs from docs/results/{name}.json; expected:\n{row}"


@pytest.mark.parametrize(("name", "heading"), [("skip-testb", "| en-conll03, eng.testb |"), ("skip-ieer", "| en-3class, IEER |"),
                                              ("skip-start-testb", "| en-conll03, eng.testb, `start=viterbi` |"),
                                              ("skip-start-ieer", "| en-3class, IEER, `start=viterbi` |")])
def test_skip_table_matches_its_json(name, heading):
    table = README[README.index(heading):].split("\n\n")[0]
    for row in skip_rows(load(name)):
        assert row in table, f"README row differs from docs/results/{name}.json; expected:\n{row}"


def test_memory_rows_match_their_json():
    testb, big = load("memory")["runs"]
    assert f"| peak resident memory of that evaluation (`scripts/bench_memory.py`, `docs/results/memory.json`) | {testb['peak_rss_mb']:.0f} MB |" in README
    assert f"(50 MB; `scripts/bench_memory.py --big 16`) | {big['peak_rss_mb']:.0f} MB |" in README


@pytest.mark.parametrize("name", ["en-conll03", "en-3class", "es-conll02", "nl-conll02"])
def test_model_table_sizes_are_what_hgner_models_prints(name, capsys):
    from hgner.cli import main

    (row,) = [line for line in README.splitlines() if line.startswith(f"| `{name}` (")]
    assert main(["models"]) == 0
    (listed,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith(f"{name} ")]
    size = row.split(" | ")[-2]
    assert size.endswith(" MB") and f"  {size}  " in listed
