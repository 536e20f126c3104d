"""The adapting results page: ``hgner select``'s learning curves on held-out parts of four
out-of-domain training files, training on the selected sentences alone (``docs/results/adapt.json``)
and adapting the shipped model to them (``docs/results/adapt-base.json``), and the screening run
that chose the default strategy (``docs/results/adapt-screen.json``), all written by
``benchmarks/bench_adapt.py``."""

from __future__ import annotations

import io
import statistics
from typing import Any

from docs_results import load

DOMAINS = {"wnut17": "WNUT-17", "re3d": "re3d", "gum": "GUM", "sec": "SEC"}
CURVES = {"margin": "`margin` (the default)", "random": "random (mean of seeds)",
          "random-tokens": "random, as many tokens as `margin`"}


def _row(name: str, figures: dict[str, Any]) -> str:
    per_domain = figures["per_domain"]
    return (f"| {name} | " + " | ".join(f"{per_domain[d]:.2f}" for d in DOMAINS) + f" | **{figures['mean']:.2f}** |")


def _header(first: str) -> list[str]:
    return [f"| {first} | " + " | ".join(DOMAINS.values()) + " | mean |", "| --- |" + " ---: |" * (len(DOMAINS) + 1)]


def screen_table(screen: dict[str, Any]) -> list[str]:
    """Every strategy at 100 sentences, a column per domain, with the shipped model untrained."""
    zero = {d: screen["domains"][d]["zero_shot_f1"] for d in DOMAINS}
    lines = [*_header("strategy, 100 sentences"),
             _row(f"{screen['model']} as shipped (no training)", {"per_domain": zero, "mean": sum(zero.values()) / 4})]
    for strategy, figures in sorted(screen["summary"]["100"].items(), key=lambda item: -item[1]["mean"]):
        lines.append(_row(f"`{strategy}`", figures))
    return lines


def curve_table(curve: dict[str, Any]) -> list[str]:
    """Mean held-out F1 over the domains by sentences selected, one column per curve."""
    lines = ["| sentences | " + " | ".join(CURVES.values()) + " | `margin` minus random | minus random at equal tokens |",
             "| ---: |" + " ---: |" * (len(CURVES) + 2)]
    for n, by_strategy in sorted(curve["summary"].items(), key=lambda item: int(item[0])):
        means = [by_strategy[s]["mean"] for s in CURVES]
        lines.append(f"| {n} | " + " | ".join(f"{m:.2f}" for m in means)
                     + f" | {means[0] - means[1]:+.2f} | {means[0] - means[2]:+.2f} |")
    return lines


def _zero_shot(record: dict[str, Any]) -> float:
    return statistics.mean(record["domains"][d]["zero_shot_f1"] for d in DOMAINS)


def base_table(base: dict[str, Any], alone: dict[str, Any]) -> list[str]:
    """Mean held-out F1 over the domains by sentences: the shipped model, trained on the sentences
    alone and adapted with ``--base``, ``margin`` and random; with the CPU minutes of a training."""
    lines = ["| sentences | as shipped | alone, `margin` | alone, random | `--base`, `margin` | `--base`, random "
             "| random seeds | `--base`: `margin` minus random | CPU minutes per `--base` training |",
             "| ---: |" + " ---: |" * 8]
    for n, by_strategy in sorted(base["summary"].items(), key=lambda item: int(item[0])):
        by_alone = alone["summary"].get(n, {})
        cells = [by_alone.get("margin"), by_alone.get("random"), by_strategy.get("margin"), by_strategy.get("random")]
        figures = [f"{c['mean']:.2f}" if c else "-" for c in cells]
        gain = f"{cells[2]['mean'] - cells[3]['mean']:+.2f}" if cells[2] and cells[3] else "-"
        runs = [r for d in base["domains"].values() for r in d["runs"] if str(r["n"]) == n]
        seeds = len({r["seed"] for r in runs if r["strategy"] == "random"})
        cpu = statistics.mean(r["train_cpu_seconds"] for r in runs) / 60
        lines.append(f"| {n} | {_zero_shot(base):.2f} | " + " | ".join(figures) + f" | {seeds} | {gain} | {cpu:.1f} |")
    return lines


def base_section(base: dict[str, Any], alone: dict[str, Any]) -> list[str]:
    """The learning curves of ``hgner train --base``."""
    per_domain = [*_header("sentences, curve")]
    for n, by_strategy in sorted(base["summary"].items(), key=lambda item: int(item[0])):
        per_domain.extend(_row(f"{n}, {label}", by_strategy[s])
                          for s, label in (("margin", "`margin`"), ("random", "random")) if s in by_strategy)
    return ["## Adapting the shipped model", "",
            f"The same selections, each trained with `{base['training']} --train FILE --out my-model`",
            "(the default method, augment-weight: the news corpus and the selected sentences together)",
            "instead of on the sentences alone",
            "(`adapt-base.json`; random is the mean of as many seeds as the table says: one seed is a noisy",
            "figure, several points either way on one domain). The CPU minutes are one core's, the time a",
            "training takes on an idle machine.", "",
            *base_table(base, alone), "", *per_domain, ""]


def adapt_page() -> str:
    """The results page of adapting to your text."""
    screen, curve, base = load("adapt-screen"), load("adapt"), load("adapt-base")
    lines = ["# Adapting to your text", "",
             "`python benchmarks/bench_adapt.py` selects sentences from the training files of four other domains",
             "(posts, defence reports, wiki-style prose and interviews, loan agreements), trains a model on them",
             f"({curve['training']}) and scores it with Viterbi on held-out whole documents (up to "
             f"{curve['held_out_share']:.0%} of each file; the test splits are never read). See",
             "[Adapting to your text](../guide/adapting.md) for the strategies and the rule that chose the default.", "",
             "## Choosing the default strategy", "", "Held-out F1 at 100 sentences (`adapt-screen.json`):", "",
             *screen_table(screen), "",
             "## Learning curves", "",
             "Mean held-out F1 over the four domains (`adapt.json`). The third curve draws random sentences until",
             "they hold as many tokens as `margin`'s choice: the same labelling effort counted in tokens.", "",
             *curve_table(curve), "", "![held-out F1 against sentences selected](adapt-curve.png)", ""]
    per_domain = [*_header("sentences, curve")]
    for n, by_strategy in sorted(curve["summary"].items(), key=lambda item: int(item[0])):
        per_domain.extend(_row(f"{n}, {CURVES[s]}", by_strategy[s]) for s in CURVES)
    return "\n".join([*lines, "## Per domain", "", *per_domain, "", *base_section(base, curve)])


def adapt_curve_png() -> bytes:
    """The learning curves as a PNG: mean held-out F1 against sentences selected, per curve."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    summary, base = load("adapt")["summary"], load("adapt-base")
    sizes = sorted(int(n) for n in summary)
    figure, axes = plt.subplots(figsize=(6, 3.6), dpi=110)
    for strategy, label in CURVES.items():
        axes.plot(sizes, [summary[str(n)][strategy]["mean"] for n in sizes], marker="o", label=label.replace("`", ""))
    base_sizes = sorted(int(n) for n in base["summary"])
    for strategy in ("margin", "random"):
        have = [n for n in base_sizes if strategy in base["summary"][str(n)]]
        axes.plot(have, [base["summary"][str(n)][strategy]["mean"] for n in have], marker="s", linestyle="--",
                  label=f"--base en-conll03, {strategy}")
    axes.axhline(_zero_shot(base), color="grey", linewidth=1, label="en-conll03 as shipped")
    sizes = sorted(set(sizes) | set(base_sizes))
    axes.set_xscale("log")
    axes.set_xticks(sizes, [str(n) for n in sizes])
    axes.set_xticks([], minor=True)
    axes.set_xlabel("sentences selected and labelled")
    axes.set_ylabel("held-out F1, mean of 4 domains")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    out = io.BytesIO()
    figure.savefig(out, format="png")
    plt.close(figure)
    return out.getvalue()
