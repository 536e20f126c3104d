"""Views of an evaluate report: the herded Gibbs paper's Table 3 layout, and F1 plots."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from .errors import HgnerError
from .fileio import atomic_write


def counted(n: int, noun: str) -> str:
    """``n`` and the noun, plural unless ``n`` is 1: ``counted(1, "document")``, ``counted(3, "entity")``."""
    if n == 1:
        return f"{n} {noun}"
    return f"{n} {noun[:-1]}ies" if noun.endswith("y") else f"{n} {noun}s"


def name_width(names: Iterable[str], heading: str = "decoder") -> int:
    """Width of a table's first column: its longest name or its heading."""
    return max([len(heading), *map(len, names)])


def aligned(rows: list[tuple[str, ...]]) -> list[str]:
    """``rows`` as lines of left-aligned columns, two spaces apart."""
    widths = [max(map(len, column)) for column in zip(*rows)]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]


def _cell(rows: list[dict[str, Any]]) -> str:
    """``F1 [seconds]`` for one run, ``mean (sd) [mean seconds]`` over several seeds."""
    f1s = [r["f1"] for r in rows]
    seconds = statistics.mean(r["decode_seconds"] for r in rows)
    if len(rows) == 1:
        return f"{f1s[0]:.2f} [{seconds:.2f} s]"
    return f"{statistics.mean(f1s):.2f} ({statistics.stdev(f1s):.2f}) [{seconds:.2f} s]"


def grouped(report: dict[str, Any]) -> dict[str, dict[int | None, list[dict[str, Any]]]]:
    """Results by decoder, then by sweep count (None for decoders without sweeps), in run order."""
    groups: dict[str, dict[int | None, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for result in report["results"]:
        groups[result["decoder"]][result["sweeps"]].append(result)
    return groups


def format_table3(report: dict[str, Any], out: TextIO) -> None:
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
        raise HgnerError(f"--plot {path}: unknown image format {extension or '(no extension)'!r}; "
                         f"expected a file ending in one of: {', '.join(sorted(formats))}")
    return extension


def plot(report: dict[str, Any], path: str) -> None:
    """F1 against sweeps and against decoding seconds, one line per decoder (mean over seeds,
    error bars one sd); decoders without sweeps are drawn as horizontal reference lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (by_sweeps_axis, by_seconds_axis) = plt.subplots(1, 2, figsize=(11, 4.2))
    for index, (decoder, by_sweeps) in enumerate(grouped(report).items()):
        color = f"C{index}"
        if None in by_sweeps:
            f1 = statistics.mean(r["f1"] for r in by_sweeps[None])
            seconds = statistics.mean(r["decode_seconds"] for r in by_sweeps[None])
            by_sweeps_axis.axhline(f1, linestyle="--", linewidth=1, color=color, label=f"{decoder} ({f1:.2f})")
            by_seconds_axis.plot([seconds], [f1], marker="*", markersize=12, linestyle="", color=color, label=decoder)
            continue
        sweeps = sorted(by_sweeps)
        means = [statistics.mean(r["f1"] for r in by_sweeps[s]) for s in sweeps]
        sds = [statistics.stdev(r["f1"] for r in by_sweeps[s]) if len(by_sweeps[s]) > 1 else 0.0 for s in sweeps]
        seconds = [statistics.mean(r["decode_seconds"] for r in by_sweeps[s]) for s in sweeps]
        by_sweeps_axis.errorbar(sweeps, means, yerr=sds, marker="o", capsize=3, color=color, label=decoder)
        by_seconds_axis.errorbar(seconds, means, yerr=sds, marker="o", capsize=3, color=color, label=decoder)
    by_sweeps_axis.set(xscale="log", xlabel="sweeps", ylabel="entity F1 (%)", title="F1 against sweeps")
    by_seconds_axis.set(xscale="log", xlabel="decoding seconds (whole corpus)", ylabel="entity F1 (%)",
                        title="F1 against time")
    for axis in (by_sweeps_axis, by_seconds_axis):
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=8)
    figure.suptitle(f"{report['model']} on {report['corpus']} ({report.get('graph', 'chain')} graph)", fontsize=10)
    figure.tight_layout()
    with atomic_write(path, binary=True) as out:
        figure.savefig(out, dpi=120, format=check_plot_format(path))
    plt.close(figure)


def printable(text: object) -> str:
    """``text`` safe to print on a terminal: control characters (escape sequences, carriage
    returns, bidirectional overrides) and undecodable bytes shown as Python escapes."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))
