"""The models table of the docs: docs/results/models.json, made from the figures that
``tools/build_models.py`` records in each shipped model's ``meta.json`` (nothing is measured
here, so the table always shows what the shipped files were measured at).

    python benchmarks/models_table.py [--out docs/results/models.json]

Per model: its dev and test F1 (Viterbi), skip-chain ``exact`` where recorded, the lowercased and
uppercased conditions, raw text one sentence per line / each document one paragraph / that
paragraph wrapped at 72 columns, Wikigold for the English models, the skip weight, the features
and resources it uses, its size, the speed of its tagging path and the ``hgner train`` command
that builds it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hgner.core.fileio import write_text  # noqa: E402
from hgner.crf.modelfiles import META_FILE  # noqa: E402


def row(meta: dict) -> dict:
    """One model's entry of the table, from its ``meta.json``."""
    scores = meta.get("scores", {})
    f1s = {name: figures["f1"] for part in ("dev", "test") for name, figures in scores.get(part, {}).items()}
    return {
        "model": meta["name"],
        "language": meta["language"],
        "labels": sorted({label.split("-", 1)[-1] for label in meta["labels"]} - {"O"}),
        "dev": {name: f1s[name] for name in scores.get("dev", {})},
        "test": {name: f1s[name] for name in scores.get("test", {})},
        "skip_exact": scores.get("skip_exact", {}),
        "skip_weight": meta.get("dev", {}).get("skip", {}).get("weight"),
        "conditions": scores.get("conditions", {}),
        "features": {key: value for key, value in meta["features"].items() if value},
        "resources": meta.get("resources", []),
        "training_corpus": meta["training"]["corpus"],
        "model_bytes": meta["model_bytes"],
        "features_unary_tokens_per_second": scores.get("features_unary_tokens_per_second"),
        "build_command": meta.get("build_command"),
    }


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "results" / "models.json")
    args = parser.parse_args(argv)
    models = sorted(path.parent for path in (ROOT / "models").glob(f"*/{META_FILE}"))
    table = {"source": "models/*/meta.json (tools/build_models.py)", "decoder": "viterbi", "mode": "conlleval",
             "models": [row(json.loads((model / META_FILE).read_text(encoding="utf-8"))) for model in models]}
    write_text(args.out, json.dumps(table, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main(sys.argv[1:])
