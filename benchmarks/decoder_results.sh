#!/usr/bin/env bash
# Every figure and table of the README's decoder sections, one hgner evaluate command each.
# Writes docs/results/*.json, *.txt (the printed tables) and docs/*.png, or all of them into the
# folder given as the one argument (to compare with the committed ones). About 15 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/results}
plots=${1:-docs}
mkdir -p "$out"
run() {  # name, then hgner evaluate arguments
    local name=$1; shift
    echo "== $name: hgner evaluate $*" >&2
    hgner evaluate "$@" --json "$out/$name.json" | tee "$out/$name.txt"
}
VARIANTS=herded,herded-shared,dhg,rdhg,beg,min-gibbs,mgpmh,doublemin-gibbs,meanfield,exact

# Issue 4: the herded Gibbs paper's Table 3 (linear chain)
run table3-ieer --model en-3class --corpus nltk:ieer --decoders viterbi,gibbs,herded --sweeps 100,400,800 --seeds 5 --plot "$plots/table3-ieer.png"
run table3-testb --model en-conll03 --corpus conll2003:testb --decoders viterbi,gibbs,herded --sweeps 100,400,800 --seeds 5 --plot "$plots/table3-testb.png"
# Issue 5: skip-chain graphs against the certified optimum
run skip-testb --model en-conll03 --corpus conll2003:testb --graph skip --decoders viterbi,gibbs,herded,exact --sweeps 100,400,800 --seeds 5
run skip-ieer --model en-3class --corpus nltk:ieer --graph skip --decoders viterbi,gibbs,herded,exact --sweeps 100,400,800 --seeds 5
# the samplers started from the chains' Viterbi labelling (Finkel et al. 2005; Stanford NER's default)
run skip-start-testb --model en-conll03 --corpus conll2003:testb --graph skip --decoders gibbs,herded,exact --sweeps 100,400,800 --seeds 5 --set start=viterbi
run skip-start-ieer --model en-3class --corpus nltk:ieer --graph skip --decoders gibbs,herded,exact --sweeps 100,400,800 --seeds 5 --set start=viterbi
# Issue 7: the herded-Gibbs family, minibatch Gibbs and mean field on skip-chain graphs
run variants-testb --model en-conll03 --corpus conll2003:testb --graph skip --decoders $VARIANTS --sweeps 100,800
run variants-ieer --model en-3class --corpus nltk:ieer --graph skip --decoders $VARIANTS --sweeps 100,800
