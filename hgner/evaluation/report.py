"""Views of an evaluation :class:`~hgner.evaluation.results.Report`: the results table with the
per-type scores, the herded Gibbs paper's Table 3 layout, F1 plots, and the JSON file. Nothing
here computes a score."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any, TextIO

from ..core.errors import HgnerError, named
from ..core.fileio import atomic_write, output_stream
from ..core.integrity import refuse_model_folder
from ..core.wording import counted, name_width
from .results import Report, RunResult


def format_report(report: Report, out: TextIO) -> None:
    """The results table: one row per run, then a mean (sd) row for decoders run with several
    seeds; the runs' F1 by entity type; against a certified optimum when one was found."""
    out.write(_heading(report))
    for note in report.notes:
        out.write(f"note: {note}\n")
    groups: dict[tuple[str, int | None], list[RunResult]] = {}
    for r in report.results:
        groups.setdefault((_shown_name(r, report), r.sweeps), []).append(r)
    width = name_width(decoder for decoder, _ in groups)
    out.write(f"{'decoder':<{width}} {'sweeps':>6} {'seed':>5} {'F1':>14} {'P':>6} {'R':>6} {'macro':>6} "
              f"{'decode s':>9} {'total s':>8} {'=viterbi':>8}\n")
    for (decoder, sweeps), rows in groups.items():
        for r in rows:
            out.write(f"{decoder:<{width}} {_blank(sweeps):>6} {_blank(r.seed):>5} {r.f1:14.2f} {r.precision:6.2f} "
                      f"{r.recall:6.2f} {r.macro_f1:6.2f} {r.decode_seconds:9.2f} {r.total_seconds:8.2f} "
                      f"{r.viterbi_agreement:8.2%}\n")
        if len(rows) > 1:
            f1s = [r.f1 for r in rows]
            mean = f"{statistics.mean(f1s):.2f} ({statistics.stdev(f1s):.2f})"
            seconds = statistics.mean(r.decode_seconds for r in rows)
            out.write(f"{decoder:<{width}} {_blank(sweeps):>6} {'mean':>5} {mean:>14} {'':>6} {'':>6} {'':>6} "
                      f"{seconds:9.2f}\n")
    if report.bootstrap is not None:
        _format_intervals(report, out, width)
    if any(r.graph != report.graph for r in report.results):
        out.write(f"note: decoders marked @chain cannot take skip edges: they decoded the chain graph "
                  f"(the linear-chain baseline), not the {report.graph} graph\n")
    if any(r.optimum_fraction is not None for r in report.results):
        _format_optimum(report, out)


def _format_intervals(report: Report, out: TextIO, width: int) -> None:
    """Each run's F1 with its bootstrap interval (:mod:`hgner.evaluation.interval`)."""
    given = report.bootstrap or {}
    out.write(f"\nF1 {given['level']:.0%} interval, bootstrap over the {counted(given['units'], 'document')} "
              f"({given['resamples']} resamples, seed {given['seed']}):\n")
    for r in report.results:
        low, high = r.f1_interval or (0.0, 0.0)
        out.write(f"{_shown_name(r, report):<{width}} {_blank(r.sweeps):>6} {_blank(r.seed):>5} {r.f1:14.2f}  "
                  f"[{low:.2f}, {high:.2f}]\n")


def _heading(report: Report) -> str:
    settings = " ".join(f"{k}={v}" for k, v in report.settings.items())
    return (f"model {report.model} on {report.corpus}: {counted(report.documents, 'document')}, "
            f"{counted(report.sentences, 'sentence')}, {counted(report.tokens, 'token')}; scheme {report.scheme}, "
            f"mode {report.mode}, graph {report.graph}"
            + (f", calibration {report.calibration:g}" if report.calibration is not None else "")  # older: none
            + (f"; {skip_heading(report.skip)}" if report.skip is not None else "")
            + (f"; input raw text ({report.layout})" if report.input == "raw" else "")
            + (f"; entity types {','.join(report.labels)} only" if report.labels else "")
            + (f"; decoder settings {settings}" if settings else "") + "\n")


def skip_heading(skip: dict[str, Any]) -> str:
    """A report's skip potential in words (:meth:`hgner.crf.skip.SkipModel.describe`)."""
    if not skip["weight"]:
        return "skip weight 0 (the skip graph is the chain)"
    joined = "its previous occurrence" if skip["previous"] == 1 else f"its {skip['previous']} previous occurrences"
    where = "in its document" if skip["cross_sentence"] else "in its sentence"
    return (f"skip weight {skip['weight']:g}, each name joined to {joined} {where} "
            f"({skip['function_words']} function words never joined)")


def format_per_type(report: Report, out: TextIO) -> None:
    """Each run's F1 by entity type (percent), with each type's gold entities."""
    types = sorted({t for r in report.results for t in r.per_type})
    if not types:
        return
    width = name_width(r.decoder for r in report.results)
    cell = max(6, *map(len, types))
    out.write(f"\nF1 by entity type (gold entities in the last row):\n"
              f"{'decoder':<{width}} {'sweeps':>6} {'seed':>5}" + "".join(f" {t:>{cell}}" for t in types) + "\n")
    for r in report.results:
        scores = "".join(f" {r.per_type[t]['f1']:{cell}.2f}" if t in r.per_type else f" {'':>{cell}}" for t in types)
        out.write(f"{r.decoder:<{width}} {_blank(r.sweeps):>6} {_blank(r.seed):>5}{scores}\n")
    support = {t: next(int(r.per_type[t]["support"]) for r in report.results if t in r.per_type) for t in types}
    out.write(f"{'gold':<{width}} {'':>6} {'':>5}" + "".join(f" {support[t]:>{cell}}" for t in types) + "\n")


def _format_optimum(report: Report, out: TextIO) -> None:
    """Per run: label-consistency disagreement, share of certified documents at the optimum,
    mean optimum gap, and the largest per-document weight table (herded)."""
    certified = next(r.certified_fraction for r in report.results if r.certified_fraction is not None)
    out.write(f"\nagainst the certified optimum of the {report.graph} graph "
              f"(exact certified {certified:.2%} of documents):\n")
    width = name_width(r.decoder for r in report.results)
    out.write(f"{'decoder':<{width}} {'sweeps':>6} {'seed':>5} {'consist.':>8} {'=optimum':>8} {'mean gap':>10} "
              f"{'max weights':>12}\n")
    for r in report.results:
        weights = r.stats_max.get("weight_bytes")
        out.write(f"{r.decoder:<{width}} {_blank(r.sweeps):>6} {_blank(r.seed):>5} {r.consistency_disagreement:7.2f}% "
                  f"{r.optimum_fraction:8.2%} {r.mean_optimum_gap:10.4f} "
                  f"{'' if weights is None else f'{weights / 2**20:.2f} MiB':>12}\n")


def _shown_name(result: RunResult, report: Report) -> str:
    """The decoder's name, marked ``@chain`` when it decoded the chain instead of the report's graph."""
    return result.decoder if result.graph == report.graph else f"{result.decoder}@{result.graph}"


def _blank(value: Any) -> str:
    return "" if value is None else str(value)


def write_json(report: Report, path: str) -> None:
    """The report as JSON to ``path`` (``-``: standard output)."""
    with output_stream(path, refuse=refuse_model_folder) as out:
        out.write(json.dumps(report.to_json(), indent=2) + "\n")


def _cell(rows: list[RunResult]) -> str:
    """``F1 [seconds]`` for one run, ``mean (sd) [mean seconds]`` over several seeds."""
    f1s = [r.f1 for r in rows]
    seconds = statistics.mean(r.decode_seconds for r in rows)
    if len(rows) == 1:
        return f"{f1s[0]:.2f} [{seconds:.2f} s]"
    return f"{statistics.mean(f1s):.2f} ({statistics.stdev(f1s):.2f}) [{seconds:.2f} s]"


def grouped(report: Report) -> dict[str, dict[int | None, list[RunResult]]]:
    """Results by decoder, then by sweep count (None for decoders without sweeps), in run order."""
    groups: dict[str, dict[int | None, list[RunResult]]] = defaultdict(lambda: defaultdict(list))
    for result in report.results:
        groups[result.decoder][result.sweeps].append(result)
    return groups


def format_table3(report: Report, out: TextIO) -> None:
    """Decoders as rows, sweep counts as columns: F1, mean (sd) over seeds where there are
    several, decoding seconds for the whole corpus in brackets."""
    groups = grouped(report)
    sweep_counts = sorted({s for by_sweeps in groups.values() for s in by_sweeps if s is not None})
    columns = [str(s) for s in sweep_counts] or ["F1"]
    cells = {
        decoder: [_cell(by_sweeps[s]) if s in by_sweeps else "" for s in sweep_counts]
        if None not in by_sweeps else [_cell(by_sweeps[None])] + [""] * (len(columns) - 1)
        for decoder, by_sweeps in groups.items()
    }
    width = max([len(c) for row in cells.values() for c in row] + [len(c) for c in columns])
    first = name_width(cells, "method")
    out.write(f"{'method':<{first}}" + "".join(f" | {c:<{width}}" for c in columns) + "\n")
    out.write("-" * first + "".join("-+-" + "-" * width for _ in columns) + "\n")
    for decoder, row in cells.items():
        out.write(f"{decoder:<{first}}" + "".join(f" | {c:<{width}}" for c in row) + "\n")


def check_plot_format(path: str) -> str:
    """The image format of ``path`` from its extension (``png``, ``pdf``, ``svg``, ...), or an
    :class:`HgnerError` listing the formats matplotlib can write."""
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    extension = Path(path).suffix.lstrip(".").lower()
    if extension not in formats:
        raise HgnerError(f"{named('plot')} {path}: unknown image format {extension or '(no extension)'!r}; "
                         f"expected a file ending in one of: {', '.join(sorted(formats))}")
    return extension


def plot(report: Report, path: str) -> None:
    """F1 against sweeps and against decoding seconds, one line per decoder (mean over seeds,
    error bars one sd); decoders without sweeps are drawn as horizontal reference lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (by_sweeps_axis, by_seconds_axis) = plt.subplots(1, 2, figsize=(11, 4.2))
    for index, (decoder, by_sweeps) in enumerate(grouped(report).items()):
        color = f"C{index}"
        if None in by_sweeps:
            f1 = statistics.mean(r.f1 for r in by_sweeps[None])
            seconds = statistics.mean(r.decode_seconds for r in by_sweeps[None])
            by_sweeps_axis.axhline(f1, linestyle="--", linewidth=1, color=color, label=f"{decoder} ({f1:.2f})")
            by_seconds_axis.plot([seconds], [f1], marker="*", markersize=12, linestyle="", color=color, label=decoder)
            continue
        sweeps = sorted(s for s in by_sweeps if s is not None)
        means = [statistics.mean(r.f1 for r in by_sweeps[s]) for s in sweeps]
        sds = [statistics.stdev(r.f1 for r in by_sweeps[s]) if len(by_sweeps[s]) > 1 else 0.0 for s in sweeps]
        run_seconds = [statistics.mean(r.decode_seconds for r in by_sweeps[s]) for s in sweeps]
        by_sweeps_axis.errorbar(sweeps, means, yerr=sds, marker="o", capsize=3, color=color, label=decoder)
        by_seconds_axis.errorbar(run_seconds, means, yerr=sds, marker="o", capsize=3, color=color, label=decoder)
    by_sweeps_axis.set(xscale="log", xlabel="sweeps", ylabel="entity F1 (%)", title="F1 against sweeps")
    by_seconds_axis.set(xscale="log", xlabel="decoding seconds (whole corpus)", ylabel="entity F1 (%)",
                        title="F1 against time")
    for axis in (by_sweeps_axis, by_seconds_axis):
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=8)
    figure.suptitle(f"{report.model} on {report.corpus} ({report.graph} graph)", fontsize=10)
    figure.tight_layout()
    with atomic_write(path, binary=True) as out:
        figure.savefig(out, dpi=120, format=check_plot_format(path))
    plt.close(figure)
