"""Results pages of the documentation site, rendered when it is built from the committed
``docs/results/*.json`` and ``models/*/{meta,skip}.json``. Nothing here holds a figure of hgner's:
every number is read from a committed file (the herded Gibbs paper's own Table 3 is quoted)."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "docs" / "results"
LOADED: set[str] = set()  # the results files the pages rendered so far read (the tests check all are)


def load(name: str) -> dict[str, Any]:
    """A committed result, ``docs/results/NAME.json``."""
    LOADED.add(f"{name}.json")
    return json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))


def grouped(report: dict[str, Any]) -> dict[str, dict[int | None, list[dict[str, Any]]]]:
    """Results by decoder, then by sweep count (None for decoders without sweeps), in run order."""
    groups: dict[str, dict[int | None, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for result in report["results"]:
        groups[result["decoder"]][result["sweeps"]].append(result)
    return groups


def mean(rows: list[dict[str, Any]], key: str) -> float:
    return statistics.mean(r[key] for r in rows)


def table3_cell(rows: list[dict[str, Any]]) -> str:
    """``F1 [s]``, or ``mean (sd) [mean s]`` over seeds: the Table 3 cell."""
    if len(rows) == 1:
        return f"{rows[0]['f1']:.2f} [{rows[0]['decode_seconds']:.2f} s]"
    return (f"{mean(rows, 'f1'):.2f} ({statistics.stdev(r['f1'] for r in rows):.2f}) "
            f"[{mean(rows, 'decode_seconds'):.2f} s]")


def table3_rows(report: dict[str, Any]) -> list[str]:
    groups = grouped(report)
    sweeps = sorted(s for s in groups["gibbs"])
    return [
        "| annealed Gibbs | " + " | ".join(table3_cell(groups["gibbs"][s]) for s in sweeps) + " |",
        "| herded Gibbs | " + " | ".join(table3_cell(groups["herded"][s]) for s in sweeps) + " |",
        f"| Viterbi | {table3_cell(groups['viterbi'][None])} |" + " |" * (len(sweeps) - 1),
        "| herded = Viterbi (sentences) | "
        + " | ".join(f"{groups['herded'][s][0]['viterbi_agreement']:.2%}" for s in sweeps) + " |",
    ]


def _command(report: dict[str, Any], decoders: str, extra: str = "") -> str:
    return f"hgner evaluate --model {report['model']} --corpus {report['corpus']} {decoders}{extra}"


def _header(title: str, sweeps: list[int]) -> list[str]:
    return [f"| {title} | " + " | ".join(f"{s} sweeps" if i == 0 else str(s) for i, s in enumerate(sweeps)) + " |",
            "| --- " * (len(sweeps) + 1) + "|"]


PAPER_TABLE3 = """\
| the paper (Stanford 3-class model, IEER; Java) | 100 | 400 | 800 |
| --- | --- | --- | --- |
| annealed Gibbs | 84.36 (0.16) [55.73 s] | 84.51 (0.10) [83.49 s] | 84.61 (0.05) [115.92 s] |
| herded Gibbs | 84.70 [59.08 s] | 84.75 [90.48 s] | 84.81 [132.00 s] |
| Viterbi | 84.81 [46.74 s] | | |
"""


def table3_page() -> str:
    lines = ["# Table 3: Viterbi, annealed and herded Gibbs", "",
             "The herded Gibbs paper's Table 3 on the linear chain: F1, annealed Gibbs as mean (sd) over 5",
             "seeds, decoding seconds for the whole corpus in brackets. Rendered from",
             "`docs/results/table3-ieer.json` and `table3-testb.json`, which `benchmarks/decoder_results.sh` writes",
             "with the commands below.", ""]
    for name, title in (("table3-ieer", "en-3class on IEER (the paper's setting)"),
                        ("table3-testb", "en-conll03 on eng.testb")):
        report = load(name)
        sweeps = sorted(s for s in grouped(report)["gibbs"])
        lines.extend([f"## {title}", "", "```bash",
                      _command(report, "--decoders viterbi,gibbs,herded --sweeps "
                               + ",".join(map(str, sweeps)) + " --seeds 5"),
                      "```", "", *_header(title, sweeps), *table3_rows(report), ""])
        herded = grouped(report)["herded"][max(sweeps)][0]
        viterbi = grouped(report)["viterbi"][None][0]
        lines.extend([f"End to end, herded at {max(sweeps)} sweeps took {herded['total_seconds']:.2f} s against "
                      f"{viterbi['total_seconds']:.2f} s for the Viterbi run "
                      f"({herded['total_seconds'] / viterbi['total_seconds']:.2f}x).", ""])
    lines.extend(["## The paper", "", PAPER_TABLE3,
                  "The paper's figures are quoted from its Table 3, for comparison.", "",
                  "![F1 against sweeps and seconds on IEER](../table3-ieer.png)", "",
                  "![F1 against sweeps and seconds on eng.testb](../table3-testb.png)", "",
                  "(`--plot FILE.png` of `hgner evaluate` draws these.)", ""])
    return "\n".join(lines)


def skip_rows(report: dict[str, Any]) -> list[str]:
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
        f"{exact['optimum_fraction']:.0%} ({certified} of {report['documents']} certified) | 0 | "
        f"{exact['decode_seconds']:.2f} |",
    ]


def _skip_table(name: str, title: str, decoders: str, extra: str = "") -> list[str]:
    report = load(name)
    return [f"### {title}", "", f"`docs/results/{name}.json`:", "", "```bash", _command(report, decoders, extra), "```", "",
            f"| {title} | F1 | consistency | = optimum | gap | seconds |", "| --- | --- | --- | --- | --- | --- |",
            *skip_rows(report), ""]


def skip_page() -> str:
    sweeps = " --sweeps 100,400,800 --seeds 5"
    lines = ["# Skip-chain graphs and `exact`", "",
             "Rendered from `docs/results/skip-*.json` (`benchmarks/decoder_results.sh`). Consistency: the report's",
             "`consistency_disagreement` (pairs of occurrences of a capitalised word in a document whose",
             "predicted types differ); = optimum: documents whose labelling scores the certified optimum of",
             "the skip graph; gap: mean score gap to it; gibbs: mean over 5 seeds. `viterbi` decodes the chain.",
             "", "## From the argmax start (the default)", "",
             *_skip_table("skip-testb", "en-conll03, eng.testb", "--graph skip --decoders viterbi,gibbs,herded,exact", sweeps),
             *_skip_table("skip-ieer", "en-3class, IEER", "--graph skip --decoders viterbi,gibbs,herded,exact", sweeps),
             "## From the chain's Viterbi labelling (`--set start=viterbi`)", "",
             *_skip_table("skip-start-testb", "en-conll03, eng.testb, `start=viterbi`",
                          "--graph skip --decoders gibbs,herded,exact", sweeps + " --set start=viterbi"),
             *_skip_table("skip-start-ieer", "en-3class, IEER, `start=viterbi`",
                          "--graph skip --decoders gibbs,herded,exact", sweeps + " --set start=viterbi")]
    return "\n".join(lines)


VARIANTS = "herded,herded-shared,dhg,rdhg,beg,min-gibbs,mgpmh,doublemin-gibbs,meanfield,exact"


def variants_rows(testb: dict[str, Any], ieer: dict[str, Any]) -> list[str]:
    a, b = grouped(testb), grouped(ieer)
    rows = []

    def weights(rows_: list[dict[str, Any]]) -> str:
        value = rows_[0].get("stats_mean", {}).get("weight_bytes")
        return f"{value / 1024:.0f}" if value else "-"

    for decoder in a:
        if decoder == "exact":
            (ea,), (eb,) = a[decoder][None], b[decoder][None]
            rows.append(f"| exact | {ea['f1']:.2f} | {ea['optimum_fraction']:.0%} | {ea['decode_seconds']:.2f} | "
                        f"{eb['f1']:.2f} | {eb['optimum_fraction']:.0%} | {eb['decode_seconds']:.2f} | - |")
            continue
        sa, sb = sorted(a[decoder]), sorted(b[decoder])
        wa, wb = weights(a[decoder][sa[-1]]), weights(b[decoder][sb[-1]])
        rows.append(
            f"| {decoder} | " + " / ".join(f"{mean(a[decoder][s], 'f1'):.2f}" for s in sa)
            + f" | {100 * mean(a[decoder][sa[-1]], 'optimum_fraction'):.1f}% | {mean(a[decoder][sa[-1]], 'decode_seconds'):.2f} | "
            + " / ".join(f"{mean(b[decoder][s], 'f1'):.2f}" for s in sb)
            + f" | {100 * mean(b[decoder][sb[-1]], 'optimum_fraction'):.1f}% | {mean(b[decoder][sb[-1]], 'decode_seconds'):.2f} | "
            + (f"{wa} / {wb} KiB" if wa != "-" else "-") + " |")
    return rows


def variants_page() -> str:
    testb, ieer = load("variants-testb"), load("variants-ieer")
    lines = ["# The herded-Gibbs family, minibatch Gibbs and mean field", "",
             "On the skip-chain graphs, stochastic decoders with seed 0; = optimum against `exact`'s",
             "certified optimum; weights: mean KiB of weight tables allocated per document. Rendered from",
             "`docs/results/variants-testb.json` and `variants-ieer.json` (`benchmarks/decoder_results.sh`):", "",
             "```bash", _command(testb, f"--graph skip --decoders {VARIANTS} --sweeps 100,800"),
             _command(ieer, f"--graph skip --decoders {VARIANTS} --sweeps 100,800"), "```", "",
             "| decoder | eng.testb F1 100 / 800 | = optimum at 800 | seconds at 800 | IEER F1 100 / 800 | "
             "= optimum at 800 | seconds at 800 | weights (testb / IEER) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |", *variants_rows(testb, ieer), "",
             "Seconds vary with the machine state. Small models with exact marginals",
             "(`python benchmarks/marginal_curves.py`): one-variable marginal error against sweeps for every",
             "decoder that gives marginals:", "", "![marginal error curves](../marginal_curves.png)", "",
             *denoise_section()]
    return "\n".join(lines)


def denoise_section() -> list[str]:
    """The herded Gibbs paper's image denoising (section 4.2, Table 2), from ``denoise.json``."""
    report = load("denoise")
    lines = ["## Image denoising", "",
             f"The paper's section 4.2 and Table 2: a {report['size']}x{report['size']} binary image of shapes (made",
             "procedurally; the paper's is not available), Ising prior J = "
             f"{report['J']:g} on the 4-neighbour lattice, Gaussian noise,",
             f"{report['copies']} noisy copies per sigma, {report['sweeps']} sweeps. Error: mean over pixels of",
             "(P(x = +1) - [x = +1])^2 x 1e3, mean (sd); the paper's figure in brackets (it does not define its",
             f"error exactly). Rendered from `docs/results/denoise.json`, written by `{report['command']} --json",
             "docs/results/denoise.json` from the repository root:", "",
             "| method | " + " | ".join(f"sigma = {s}" for s in report["sigmas"]) + " |",
             "| --- " * (len(report["sigmas"]) + 1) + "|"]
    for method in report["methods"]:
        paper = method["paper_l2"] or [None] * len(report["sigmas"])
        cells = [f"{mean_:.1f} ({sd:.1f})" + (f" [{theirs[0]:.2f}]" if theirs else "")
                 for (mean_, sd), theirs in zip(method["l2"], paper)]
        lines.append(f"| {method['method']} | " + " | ".join(cells) + " |")
    lines.extend(["", "![denoising](../denoise.png)", ""])
    return lines


def _model_folders() -> list[Path]:
    return sorted(p.parent for p in (ROOT / "models").glob("*/meta.json"))


def _folder_mb(folder: Path) -> str:
    return f"{sum(f.stat().st_size for f in folder.iterdir() if f.is_file()) / 1e6:.1f} MB"


def tuning_page() -> str:
    lines = ["# Tuning", "",
             "What was tuned on the development sets only, as the shipped models record it. The skip",
             "potential's weight (`skip.json`: `weight`, and the development F1 of `exact` at each weight of",
             "the grid) and the calibration factor (`meta.json`: `calibration`). The log of feature and",
             "regularisation choices is `docs/development/research-log.md` in the repository.", "",
             "The held-out check: the dev set's documents halved at random, the weight picked on one half",
             "and scored on the other; mean F1 gain over the chain, and pairs where it fell below the chain",
             "(`-`: the model's `skip.json` records no check; models built before it existed).", "",
             "| model | skip weight | tuned on | held-out gain (below chain) | calibration factor | fitted on |",
             "| --- | --- | --- | --- | --- | --- |"]
    grids = []
    for folder in _model_folders():
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        skip = json.loads((folder / "skip.json").read_text(encoding="utf-8")) if (folder / "skip.json").is_file() else {}
        info = skip.get("info", {})
        calibration = meta.get("calibration", {})
        held = info.get("held_out")
        check = f"{held['mean_gain']:+.2f} ({held['below_chain']} of {held['pairs']})" if held else "-"
        lines.append(f"| `{meta['name']}` | {skip.get('weight', '-')} | {info.get('tuned_on', '-')} | {check} | "
                     f"{calibration.get('factor', '-')} | {calibration.get('corpus', '-')} |")
        if info.get("tuning"):
            grids.append((meta["name"], info["tuning"]))
    for name, grid in grids:
        lines.extend(["", f"## `{name}`: skip-chain F1 (`exact`) by weight", "",
                      "| weight | " + " | ".join(f"{g['weight']:g}" for g in grid) + " |",
                      "| --- " * (len(grid) + 1) + "|",
                      "| F1 | " + " | ".join(f"{g['f1']:.2f}" for g in grid) + " |"])
    return "\n".join(lines) + "\n"


def serve_section() -> list[str]:
    """``hgner serve`` on 127.0.0.1, from ``serve.json`` (``benchmarks/bench_serve.py --json``)."""
    serve = load("serve")
    throughput, latency, soak = serve["throughput"], serve["latency"], serve["soak"]
    lines = ["", "## Serving", "",
             "`hgner serve` on 127.0.0.1, from `docs/results/serve.json`, written by",
             "`python benchmarks/bench_serve.py --soak 600 --json docs/results/serve.json` (see [Serving](../serve.md)).", "",
             f"Throughput on eng.testb's {throughput['documents']} documents ({throughput['tokens']:,} tokens):", "",
             "| server | clients | tokens/s | tokens per CPU-second |", "| --- | --- | --- | --- |"]
    for key in sorted(k for k in throughput if k.startswith("workers_") and isinstance(throughput[k], dict)):
        run = throughput[key]
        lines.append(f"| {key.replace('_', ' ', 1)} | {run['clients']} | {run['tokens_per_second']:,} | "
                     f"{run['tokens_per_cpu_second']:,} |")
    lines.extend(["", f"Latency of one sentence, {latency['clients']} clients, {latency['requests']:,} requests "
                  f"({latency['client']}): p50 {latency['p50_ms']:.1f} ms, p99 {latency['p99_ms']:.1f} ms. "
                  f"Soak: {soak['seconds']:.0f} s, {soak['clients']} clients, {soak['status_500']} server errors, "
                  f"{soak['dropped_connections']} dropped connections, resident memory "
                  f"{soak['rss_after_first_minute_mb']:.0f} MB after the first minute and {soak['rss_end_mb']:.0f} MB at the end.", ""])
    return lines


_FIXED_ROWS = [  # (figure, target, how to read it from one version's figures)
    ("fixed cost of one process, CPU-s (1M and 2M tokens)", "<= 1.5", lambda v: f"{v['fixed_cpu_seconds']:.2f}"),
    ("steady state, tokens per CPU-second", ">= 150,000", lambda v: f"{v['steady_tokens_per_cpu_second']:,}"),
    ("1M tokens, one process: CPU-s", "", lambda v: f"{v['one_process_1M']['cpu_seconds']:.2f}"),
    ("`--cluster local:2` against one process, wall", ">= 1.7x",
     lambda v: f"{v['cluster_local_2']['speedup_over_one_process']:.2f}x"),
    ("`--cluster local:2` against one process, CPU", "<= 1.15x",
     lambda v: f"{v['cluster_local_2']['cpu_over_one_process']:.2f}x"),
    ("`--cluster local:2` entities equal one process's", "yes",
     lambda v: "yes" if v["cluster_local_2"]["identical_entities"] else "no"),
    ("9-token texts, `Tagger.pipe`, tokens per CPU-second", ">= 80,000",
     lambda v: f"{v['short_texts_tokens_per_cpu_second']['tagger_pipe']:,}"),
    ("9-token texts, the spaCy component, tokens per CPU-second", ">= 80,000",
     lambda v: f"{v['short_texts_tokens_per_cpu_second']['spacy_pipe']:,}"),
    ("eng.testb's raw text in one command, wall seconds", "<= 1.6",
     lambda v: f"{v['testb_raw_one_command']['wall_seconds']:.2f}"),
    ("one sentence in one command (the fixed cost measured directly), CPU-s / wall seconds", "",
     lambda v: (f"{v['one_sentence_command']['cpu_seconds']:.2f} / {v['one_sentence_command']['wall_seconds']:.2f}"
                if "one_sentence_command" in v else "-")),
]


def fixed_costs_section() -> list[str]:
    """Issue 39's figures, from ``fixed-costs.json`` (``benchmarks/bench_fixed.py --json``)."""
    fixed = load("fixed-costs")
    versions = [name for name in ("current", "baseline") if name in fixed]
    lines = ["", "## Fixed costs", "",
             "From `docs/results/fixed-costs.json`, written by `python benchmarks/bench_fixed.py --baseline DIR --json "
             "docs/results/fixed-costs.json`, DIR an earlier checkout of hgner with its own copy of the models "
             f"(here, {fixed.get('baseline_is', 'an earlier checkout')}), measured in the same run "
             + (f"of {fixed['runs']} rounds, each running every command once: the best round's figures, but the steady "
                "state and the fixed cost, each round's from its own 1M and 2M runs, are the rounds' medians "
                if "runs" in fixed else "")
             + f"(load average {fixed['load_average_before']} before, "
             f"{fixed['load_average_after']} after; {fixed['cpus']} cores). The fixed cost includes the accepted "
             f"floor, importing spaCy and numba and making `spacy.blank(\"en\")`: {fixed['floor_cpu_seconds']:.2f} CPU-s"
             + (f"; {fixed['floor_with_kernel_cpu_seconds']:.2f} CPU-s when the same process also calls one trivial "
                "numba kernel from numba's cache, as every process that runs a kernel must (numba readies its compiler "
                "target on the first call)" if "floor_with_kernel_cpu_seconds" in fixed else "") + "."
             + (f" With that floor and the steady state, `--cluster local:2` could be at most "
                f"{fixed['cluster_speedup_bound']:.2f}x one process on the 1M tokens, were everything above the floor free "
                "and the two workers perfectly parallel." if "cluster_speedup_bound" in fixed else ""), "",
             "| figure | target | " + " | ".join({"current": "now", "baseline": "before"}[v] for v in versions) + " |",
             "| --- | --- | " + " | ".join("---" for _ in versions) + " |"]
    for figure, target, read in _FIXED_ROWS:
        lines.append(f"| {figure} | {target} | " + " | ".join(read(fixed[v]) for v in versions) + " |")
    if "byte_identical_to_baseline" in fixed:
        same = fixed["byte_identical_to_baseline"]
        lines.extend(["", "Outputs byte-identical to the earlier checkout's: "
                      + ", ".join(f"{name} {'yes' if equal else 'no'}" for name, equal in same.items()) + "."])
    return lines


def speed_page() -> str:
    memory = load("memory")
    lines = ["# Speed and memory", "",
             "Speed and memory targets are met in benchmarks (`benchmarks/bench_*.py`), never in timed tests.",
             "Timings vary with the machine state, so compare figures of one run only.", "",
             "## Memory", "", "`python benchmarks/bench_memory.py` (`--big 16` for the second row, `--long-line 200`",
             "for the third) writes `docs/results/memory.json` (`eng.train-x16` is eng.train repeated 16 times,",
             "50 MB, and `line-200mb.txt` one line of 200 MB of words, both written by the script):", "",
             "| command | peak resident memory | over the input | seconds |", "| --- | --- | --- | --- |"]
    for run in memory["runs"]:  # the commands as the script ran them (eng.train-x16: a file it writes)
        ratio = f"{run['peak_over_input']:.1f} times" if "peak_over_input" in run else "-"
        lines.append(f"| {run['command']} | {run['peak_rss_mb']:.0f} MB | {ratio} | {run['seconds']:.0f} |")
    lines.extend(["", "## Decoding time", "",
                  "From the Table 3 runs (`docs/results/table3-*.json`): seconds for the whole corpus, the",
                  "graphs built once (build) and each decoder warmed up once, so numba compilation is not counted.", "",
                  "| corpus | tokens | build s | decoder | sweeps | decode s | total s |",
                  "| --- | --- | --- | --- | --- | --- | --- |"])
    for name in ("table3-testb", "table3-ieer"):
        report = load(name)
        for decoder, by_sweeps in grouped(report).items():
            for sweeps, rows in by_sweeps.items():
                lines.append(f"| {report['corpus']} | {report['tokens']:,} | {report['build_seconds']:.2f} | {decoder} | "
                             f"{sweeps or '-'} | {mean(rows, 'decode_seconds'):.2f} | {mean(rows, 'total_seconds'):.2f} |")
    if (RESULTS / "fixed-costs.json").is_file():
        lines.extend(fixed_costs_section())
    if (RESULTS / "serve.json").is_file():
        lines.extend(serve_section())
    if (RESULTS / "first-run.json").is_file():
        lines.extend(first_run_section())
    for path in sorted(RESULTS.glob("bench-*.json")):
        lines.extend(["", f"## `{path.name}`", "", "```json",
                      json.dumps(json.loads(path.read_text(encoding="utf-8")), indent=2), "```"])
    lines.extend(["", "## Measuring", "",
                  "| script | what it measures |", "| --- | --- |",
                  "| `benchmarks/bench_samplers.py` | updates per second of each sampler on random chains shaped like eng.testb |",
                  "| `benchmarks/bench_pipeline.py` | features, unary matrix, Viterbi, forward-backward and crfsuite's tagger, tokens/s |",
                  "| `benchmarks/bench_tag.py --json FILE` | `hgner tag` end to end on eng.testb's raw text, first output, the spaCy component |",
                  "| `benchmarks/bench_scale.py --json FILE` | 1M tokens in one process and on `--cluster local:2`, Dask's overhead |",
                  "| `benchmarks/bench_fixed.py --baseline DIR --json FILE` | fixed costs: a process, a short text, a Dask worker |",
                  "| `benchmarks/bench_memory.py` | peak resident memory of `hgner evaluate` |",
                  "| `benchmarks/bench_first_run.py --json FILE` | `hgner tag` just after a fresh install: numba's one-off compile |",
                  "| `benchmarks/bench_rawtext.py` | the raw-text figures, and tagging speed against an earlier checkout |", ""])
    return "\n".join(lines)


def first_run_section() -> list[str]:
    """The first ``hgner tag`` after a fresh install against the second, from ``first-run.json``."""
    run = load("first-run")
    terminal, pipe = run["terminal"], run["pipe"]
    return ["", "## The first run after an install", "",
            "`python benchmarks/bench_first_run.py --json docs/results/first-run.json` installs this checkout as a",
            "wheel into a fresh virtual environment, numba's caches empty, and times `hgner tag` on one sentence:",
            "the first call compiles hgner's numba kernels, once; the second loads them from numba's cache. On a",
            "terminal the first call prints a line saying so. Wall seconds on "
            f"{run['cpus']} cores (load average {run['load_average_before']} before, {run['load_average_after']} after):", "",
            "| standard error | first call | its line on stderr after | second call | first / second |",
            "| --- | ---: | ---: | ---: | ---: |",
            f"| a terminal | {terminal['first']['wall_seconds']:.1f} s | {terminal['first']['first_stderr_line_seconds']:.1f} s | "
            f"{terminal['second']['wall_seconds']:.1f} s | "
            f"{terminal['first']['wall_seconds'] / terminal['second']['wall_seconds']:.1f} |",
            f"| a pipe | {pipe['first_wall_seconds']:.1f} s | - | {pipe['second_wall_seconds']:.1f} s | {pipe['ratio']:.1f} |",
            "", "The line it printed:", "", "```text", terminal["first"]["stderr"], "```", ""]


FUZZ_RUNS = ("fuzz-crfsuite", "fuzz-crfsuite-seed2", "fuzz-crfsuite-rerun", "fuzz-crfsuite-unchecked")


def startup_section(run: dict[str, Any]) -> list[str]:
    """Where a SIGINT during ``hgner``'s start-up lands (``tools/fuzz_cli.py --startup``)."""
    times = run["times"] or {}
    lines = ["## Signals during start-up", "",
             f"`python tools/fuzz_cli.py --startup {run['tries']} --seed {run['seed']}` (`startup-signals.json`) "
             "sends SIGINT to "
             f"{run['tries']} fresh `hgner tag` processes (the console script `{run['script']}`, bytecode cached) at "
             "random moments in their first 150 ms. From hgner's first line on (`hgner/__init__.py` holds SIGINT, "
             "SIGTERM and SIGHUP when the process is the `hgner` command, until the command's handlers are set) "
             "every signal ends the command with one line; before it is CPython's own start-up (its core, `site` "
             "and the `.pth` files of site-packages, the console script's `import re`), which no code of hgner's "
             "can handle: the floor.", "",
             "| outcome | tries | delays (ms) |", "| --- | --- | --- |"]
    for outcome, found in run["outcomes"].items():
        low, high = found["delay_ms"]
        lines.append(f"| {outcome} | {found['tries']} | {low:g}-{high:g} |")
    if times.get("first_line_ms") is not None:
        lines.extend(["", f"Median of {times['runs']} runs of `hgner --version` under `strace`: hgner's first line "
                      f"{times['first_line_ms']:g} ms after `execve` (the floor), the command's handlers set at "
                      f"{times['handlers_ms']:g} ms."])
    return [*lines, ""]


def reliability_page() -> str:
    """The fuzzers' counts, from ``fuzz-*.json`` (``tools/fuzz_crfsuite.py`` and ``tools/fuzz_cli.py``)."""
    lines = ["# Reliability", "",
             "Two fuzzers look for inputs that crash, hang or mislead hgner. `tools/fuzz_crfsuite.py` damages",
             "the structure of a `model.crfsuite` (every field crfsuite reads), reseals the model and loads it",
             "in a child process; `--unchecked` opens the same bytes with crfsuite directly, without hgner's",
             "structural reader, to show that the mutations reach crfsuite's unchecked reads.", "",
             "| run | results | cases | seed | outcomes | seconds |", "| --- | --- | --- | --- | --- | --- |"]
    for name in FUZZ_RUNS:
        run = load(name)
        flag = " --unchecked" if run["unchecked"] else ""
        outcomes = ", ".join(f"{count:,} {outcome}" for outcome, count in sorted(run["outcomes"].items()))
        lines.append(f"| `fuzz_crfsuite.py -n {run['cases']} --seed {run['seed']}{flag}` | `{name}.json` | {run['cases']:,} | "
                     f"{run['seed']} | {outcomes} | {run['seconds']:.0f} |")
    cli = load("fuzz-cli")
    families = ", ".join(f"{kind} {count:,}" for kind, count in cli["kinds"].items())
    lines.extend(["", "`tools/fuzz_cli.py` runs the `hgner` command on generated hostile cases (files, FIFOs, links,",
                  "closed streams, signals at random moments, damaged and resealed models, silent Dask peers) and",
                  "counts tracebacks, internal errors, crashes, hangs, wrong results and data loss. A case is a fork",
                  "of the fuzzer, which has imported hgner and compiled its kernels once, running the command as",
                  "the console script does (its own standard streams, folder and exit status, signals held until",
                  "the command's handlers are set); signals during a fresh interpreter's start-up and imports run",
                  "in fresh processes. A signal that reaches a fresh process before hgner's first line runs",
                  "(CPython's own start-up: see below) is counted apart, not as a failure.", "",
                  "| run | results | cases asked | cases run | fresh processes | signals before hgner's first line | "
                  "failures | seconds |", "| --- | --- | --- | --- | --- | --- | --- | --- |",
                  f"| `fuzz_cli.py -n {cli['cases_requested']} --seed {cli['seed']} -j {cli['jobs']}` | `fuzz-cli.json` | "
                  f"{cli['cases_requested']:,} | {cli['cases_run']:,} | {cli['fresh_processes']:,} | "
                  f"{cli['signals_before_hgner']:,} | {cli['failures']} | {cli['seconds']:,} |", "",
                  f"Cases by family: {families}.", ""])
    lines.extend(startup_section(load("startup-signals")))
    return "\n".join(lines)
