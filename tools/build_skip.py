"""Rebuild only the skip potential of an existing model (``hgner train --dev`` builds it with the model).

    python tools/build_skip.py MODEL --train CORPUS --dev CORPUS [--english-words]

A thin caller of :func:`hgner.training.skip.build`: the table is estimated from the training corpus, the
function words learned there for the model's language (``--english-words``: the 87 English words
of the first models instead), and the weight tuned on the dev corpus with ``exact`` (0 when skip
edges do not beat the chain, or when a weight chosen on half of its documents does not beat it on
the other half: :func:`hgner.training.skip.tune`). Each corpus is grouped into documents as the model's ``meta.json``
says for it (``documents``, ``dev.documents``). The model's ``meta.json`` gets the new skip weight and dev F1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hgner.crf import skip  # noqa: E402
from hgner.crf.model import CrfModel  # noqa: E402
from hgner.crf.modelfiles import model_language, write_metadata  # noqa: E402
from hgner.data.reading import read_tagged  # noqa: E402
from hgner.training import skip as skip_training  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="model name or directory")
    parser.add_argument("--train", required=True, help="corpus the table is estimated from (the model's training corpus)")
    parser.add_argument("--dev", required=True, help="corpus the weight is tuned on")
    parser.add_argument("--english-words", action="store_true", help="use the 87 English function words")
    args = parser.parse_args()
    model = CrfModel.load(args.model)
    documents = model.metadata.get("documents", "corpus")
    dev_documents = model.metadata.get("dev", {}).get("documents", documents)
    train = read_tagged(args.train, documents=documents)[0]
    dev = read_tagged(args.dev, documents=dev_documents)[0]
    tuned = skip_training.build(model, train, dev, model_language(model.metadata),
                       words=skip.FUNCTION_WORDS if args.english_words else None, progress=sys.stderr.isatty())
    if "dev" in model.metadata:  # the dev figures hgner train recorded
        model.metadata["dev"]["skip"] = skip_training.dev_record(tuned)
        write_metadata(model.directory, model.metadata)
    for row in tuned.info["tuning"]:
        print(f"weight {row['weight']:5.2f}: F1 {row['f1']:.2f} on {args.dev} (certified {row['certified']:.2%})")
    print(f"{skip_training.tuning_summary(tuned)}; wrote {model.directory / skip.SKIP_ARRAYS} and "
          f"{model.directory / skip.SKIP_META}")


if __name__ == "__main__":
    main()
