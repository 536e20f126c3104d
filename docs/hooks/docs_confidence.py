"""The entity confidence section of the models results page: how often an entity of a given confidence is right, before and after
each shipped model's confidence map, on its dev set (the map of each half of the documents applied
to the other half) and on eng.testb (held out), from ``docs/results/confidence.json``
(``benchmarks/confidence_calibration.py --json``), with the reliability curve."""

from __future__ import annotations

import io
from typing import Any

from docs_results import load

CURVE_ENTITIES = 20  # a bin of the curve with fewer entities is not drawn (its share right is noise)


def _held_out(record: dict[str, Any]) -> bool:
    return "cross-fitted" not in record["map"]


def _summary_table(records: list[dict[str, Any]]) -> list[str]:
    lines = ["| model | corpus | after: the map | entities | right | mean confidence before, after "
             "| ECE before | ECE after | ECE, 10 bins, before, after |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in records:
        b, a = r["before"], r["after"]
        lines.append(f"| {r['model']} | {r['corpus']} | {'fitted on the dev set' if _held_out(r) else 'cross-fitted'} "
                     f"| {r['entities']} | {b['right']:.3f} | {b['mean_confidence']:.3f}, {a['mean_confidence']:.3f} "
                     f"| {b['expected_calibration_error']:.3f} | **{a['expected_calibration_error']:.3f}** "
                     f"| {b['curve_calibration_error']:.3f}, {a['curve_calibration_error']:.3f} |")
    return lines


def _bins_table(record: dict[str, Any]) -> list[str]:
    lines = ["| confidence | entities before | mean before | right before | entities after | mean after | right after |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    before, after = record["before"]["bins"], record["after"]["bins"]
    for name in sorted(set(before) | set(after), key=lambda n: float(n[1:].split(",")[0])):
        cells = []
        for rows in (before, after):
            row = rows.get(name)
            cells += [f"{row['entities']}", f"{row['mean_confidence']:.3f}", f"{row['right']:.3f}"] if row else ["0", "-", "-"]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def _groups_table(records: list[dict[str, Any]]) -> list[str]:
    lines = ["| model | corpus | group | entities | right | mean confidence before, after | ECE before | ECE after |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in records:
        for name, g in r["groups"].items():
            lines.append(f"| {r['model']} | {r['corpus']} | {name} | {g['entities']} | {g['right']:.3f} "
                         f"| {g['before_mean_confidence']:.3f}, {g['after_mean_confidence']:.3f} "
                         f"| {g['before_ece']:.3f} | {g['after_ece']:.3f} |")
    return lines


def confidence_section() -> str:
    """The section of entity confidences (of the models results page)."""
    records = [r for r in load("confidence") if "after" in r]
    held = [r for r in records if _held_out(r)]
    lines = ["## Entity confidence", "",
             "How often an entity that `hgner tag` reports with a given confidence is right (same span and type",
             "as the gold), before and after the model's confidence map (`entity_confidence` in its `meta.json`,",
             "see [Models](../guide/models.md#calibration)). Entities are tagged with `viterbi` on the corpus's",
             "own tokens. ECE is the entity-weighted mean gap between mean confidence and share right over the",
             "bins below; \"10 bins\" uses ten equal bins, the curve's. On the dev sets the map was fitted on,",
             "\"after\" is cross-fitted: each half of the documents under the map fitted on the other half.",
             "eng.testb is held out: no choice was made on it. From `confidence.json`, written by",
             "`python benchmarks/confidence_calibration.py MODEL CORPUS --json docs/results/confidence.json`",
             "(`--cross-fit` on a dev set).", "",
             *_summary_table(records), "",
             "![share right against mean confidence, ten bins](confidence-curve.png)", "",
             f"The curve: share right against mean confidence in each of ten equal bins with at least {CURVE_ENTITIES}",
             "entities; on the grey diagonal an entity's confidence is the chance that it is right.", ""]
    for record in held:
        lines += [f"### {record['model']} on {record['corpus']}, by confidence", "", *_bins_table(record), ""]
    lines += ["### By group", "",
              "The map has two parts, fitted separately: one for entities whose every token is a word of the",
              "model's training corpus (known), one for the others (new names), which are right less often at",
              "the same raw confidence.", "",
              *_groups_table(records), ""]
    return "\n".join(lines)


def confidence_curve_png() -> bytes:
    """The reliability curves as a PNG: share right against mean confidence per ten-bin (of at least
    :data:`CURVE_ENTITIES` entities), before and after the map, for the held-out runs and
    en-conll03's dev set."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    records = [r for r in load("confidence") if "after" in r and (_held_out(r) or r["model"] == "en-conll03")]
    figure, axes = plt.subplots(1, len(records), figsize=(3.4 * len(records), 3.4), dpi=110, squeeze=False)
    for axis, record in zip(axes[0], records):
        axis.plot([0, 1], [0, 1], color="grey", linewidth=1)
        for when, style in (("before", "o--"), ("after", "s-")):
            rows = [r for r in record[when]["curve"].values() if r["entities"] >= CURVE_ENTITIES]
            axis.plot([r["mean_confidence"] for r in rows], [r["right"] for r in rows], style,
                      label=f"{when} (ECE {record[when]['curve_calibration_error']:.3f})")
        axis.set_title(f"{record['model']}, {record['corpus'].split(':')[-1]}"
                       + ("" if _held_out(record) else " (cross-fitted)"), fontsize=9)
        axis.set_xlabel("mean confidence")
        axis.set_xlim(0, 1)
        axis.set_ylim(0, 1)
        axis.grid(alpha=0.3)
        axis.legend(fontsize=7, loc="upper left")
    axes[0][0].set_ylabel("share right")
    figure.tight_layout()
    out = io.BytesIO()
    figure.savefig(out, format="png")
    plt.close(figure)
    return out.getvalue()
