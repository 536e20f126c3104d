"""The models results page: each shipped model's scores from its ``meta.json``, the conditions
``docs/results/models.json`` records (skip-chain, case, raw text), and raw text against corpus
tokens from ``docs/results/rawtext.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from docs_results import RESULTS, _folder_mb, _model_folders, load

CONDITIONS = ("lowercased", "uppercased", "raw lines", "raw paragraph", "raw wrapped")


def scores_table(meta: dict[str, Any]) -> list[str]:
    """A model's dev and test figures (``meta.json``'s ``scores``), a column per entity type."""
    scores = meta.get("scores", {})
    types = sorted({t for kind in ("dev", "test") for f in scores.get(kind, {}).values() for t in f.get("per_type", {})})
    lines = ["| corpus | P | R | F1 | " + " | ".join(types) + " |", "| --- |" + " ---: |" * (3 + len(types))]
    rows = [(f"{corpus} ({kind})", f"**{figure['f1']:.2f}**", figure) for kind in ("dev", "test")
            for corpus, figure in scores.get(kind, {}).items()]
    rows += [(variant, f"{figure['f1']:.2f}", figure) for variant, figure in scores.get("robustness", {}).items()]
    for name, f1, figure in rows:
        per_type = " | ".join(f"{v:.2f}" if (v := figure.get("per_type", {}).get(t)) is not None else "-" for t in types)
        lines.append(f"| {name} | {figure['precision']:.2f} | {figure['recall']:.2f} | {f1} | {per_type} |")
    return lines


def conditions_table(summary: dict[str, Any]) -> list[str]:
    """F1 per corpus (a column each) under the conditions ``models.json`` records: the skip-chain
    graph decoded by ``exact``, lowercased and uppercased text, and raw text in three layouts."""
    corpora = [(f"{corpus} ({kind})", corpus, f1) for kind in ("dev", "test")
               for corpus, f1 in summary.get(kind, {}).items()]
    lines = ["| condition | " + " | ".join(name for name, _, _ in corpora) + " |", "| --- |" + " ---: |" * len(corpora),
             "| as scored above | " + " | ".join(f"{f1:.2f}" for _, _, f1 in corpora) + " |"]
    found = {"skip-chain graph, exact": summary.get("skip_exact", {}),
             **{c: {k.removesuffix(f" {c}"): v for k, v in summary.get("conditions", {}).items() if k.endswith(f" {c}")}
                for c in CONDITIONS}}
    for condition, figures in found.items():
        lines.append(f"| {condition} | " + " | ".join(f"{figures[corpus]:.2f}" if corpus in figures else "-"
                                                     for _, corpus, _ in corpora) + " |")
    return lines


def model_section(folder: Path, summary: dict[str, Any] | None) -> list[str]:
    """One model: what it is, its scores, and (from ``models.json``) its conditions and build command."""
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    types = ", ".join(sorted({label.split("-", 1)[-1] for label in meta["labels"] if label != "O"}))
    trained = meta.get("training", {}).get("corpus", "-")
    lines = [f"## `{meta['name']}`", "",
             f"{types}; language `{meta['language']}`; {_folder_mb(folder)}; trained on `{trained}`.", "",
             *scores_table(meta), ""]
    if summary is not None:
        lines += [f"F1 under other conditions (the skip-chain graph's skip weight: {summary['skip_weight']:g}):", "",
                  *conditions_table(summary), "",
                  '??? note "Features and build command"', "",
                  "    " + ", ".join(f"`{k}={v}`" for k, v in summary.get("features", {}).items()), "",
                  "    ```bash", f"    {summary['build_command']}", "    ```", ""]
    return lines


def models_page() -> str:
    lines = ["# The shipped models", "",
             "Viterbi, conlleval mode, on the corpus's own tokens, as each model's `meta.json` records them",
             "(`scores`, written when the model was built); size as `hgner models` gives it. The conditions",
             "come from `docs/results/models.json` (`tools/build_models.py`).", ""]
    summaries = {}
    if (RESULTS / "models.json").is_file():
        summaries = {entry["model"]: entry for entry in load("models")["models"]}
    for folder in _model_folders():
        lines += model_section(folder, summaries.get(folder.name))
    if (RESULTS / "rawtext.json").is_file():
        lines.extend(rawtext_section())
    return "\n".join(lines) + "\n"


def rawtext_section() -> list[str]:
    """Raw text against corpus tokens (``hgner evaluate --input raw``), from ``rawtext.json``."""
    raw = load("rawtext")
    lines = ["", "## Raw text", "",
             f"`{raw['model']}` with Viterbi on the corpus's own tokens and on its text rebuilt as people write it",
             "(`--input raw` and `--layout` of `hgner evaluate`; see [Scoring](../guide/scoring.md#raw-text-evaluation)),",
             "and the sentence ends hgner finds in each layout against the corpus's: recall, precision, and the",
             "share of sentences whose tokens hgner's tokenizer reproduces from the rebuilt text.",
             "Rendered from `docs/results/rawtext.json`, written by",
             "`python benchmarks/bench_rawtext.py --json docs/results/rawtext.json`:", "",
             "| corpus | corpus tokens | raw, lines | raw, paragraph | raw, wrapped |",
             "| --- | --- | --- | --- | --- |"]
    names = {"testa": "eng.testa", "wikigold": "Wikigold", "testb": "eng.testb"}
    for key, role in (("testa", "dev"), ("wikigold", "dev"), ("testb", "test")):
        if f"{key}_tokens" in raw:
            lines.append(f"| {names[key]} ({role}) | {raw[f'{key}_tokens']:.2f} | **{raw[f'{key}_raw_lines']:.2f}** | "
                         f"{raw[f'{key}_raw_paragraph']:.2f} | {raw[f'{key}_raw_wrapped']:.2f} |")
    joined = [(key, layout) for key in ("testa", "wikigold", "testb") for layout in ("paragraph", "wrapped")
              if f"{key}_raw_{layout}_joined" in raw]
    if joined:
        lines.extend(["", "Where the corpus ends a sentence inside a name (`... Billy Mayfair, Ken` / `Green, Jerry "
                      "Kelly ...`, a line break of the source text), its halves are two gold entities, which a "
                      "paragraph runs together. The same tagging scored with every such pair as one entity (an "
                      "entity ending a sentence and one of its type beginning the next). Not every pair is one name: "
                      "some are two entities in consecutive table rows or headings, so the last column bounds what "
                      "the breaks cost rather than measuring it:", "",
                      "| corpus, layout | pairs run together | raw F1 | with the pairs joined |", "| --- | --- | --- | --- |"])
        lines.extend(f"| {names[key]}, {layout} | {raw[f'{key}_raw_{layout}_joined']['pairs']} | "
                     f"{raw[f'{key}_raw_{layout}']:.2f} | {raw[f'{key}_raw_{layout}_joined']['f1']:.2f} |"
                     for key, layout in joined)
    boundaries = [(key.removeprefix("boundaries_").split("_"), figure) for key, figure in raw.items()
                  if key.startswith("boundaries_")]
    if boundaries:
        lines.extend(["", "| corpus, layout | sentence ends: recall | precision | same tokens |",
                      "| --- | --- | --- | --- |"])
        lines.extend(f"| {names[corpus]}, {layout} | {figure['recall']:.2f} | {figure['precision']:.2f} | "
                     f"{figure['agreement']:.2f}% |" for (corpus, layout), figure in boundaries)
    if "agreement_testb" in raw:
        lines.extend(["", f"On eng.testb one sentence per line, {raw['agreement_testb']:.2f}% of the sentences get the "
                      "corpus's tokens."])
    return [*lines, ""]
