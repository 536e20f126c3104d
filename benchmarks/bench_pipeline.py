"""Throughput of each stage of decoding a corpus with a model: feature extraction, the unary
matrix (sparse attributes x weights), Viterbi, forward-backward, and crfsuite's own tagger.

    python benchmarks/bench_pipeline.py [--model en-conll03] [--corpus conll2003:testb] [--repeat 3]

Prints tokens/s per stage (best of --repeat runs, after one warm-up for numba's compile cache).
"""

from __future__ import annotations

import argparse
import time

from hgner.crf.model import CrfModel
from hgner.data.corpus import load_corpus
from hgner.decoders.chain import forward_backward, viterbi
from hgner.graph.factor_graph import FactorGraph


def best_time(function, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="en-conll03")
    parser.add_argument("--corpus", default="conll2003:testb")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    model = CrfModel.load(args.model)
    corpus = load_corpus(args.corpus)
    documents = [[s.tokens for s in d.sentences] for d in corpus.documents]
    tokens = corpus.n_tokens
    features = [model.features(d) for d in documents]
    graphs: list[FactorGraph] = [model.chain_graph(d) for d in documents]
    for graph in graphs[:2]:  # compile (or load from cache) the kernels
        viterbi(graph)
        forward_backward(graph)

    stages = {
        "features (attribute strings)": lambda: [model.features(d) for d in documents],
        "unary from strings (sparse x weights)": lambda: [model.unary(f) for f in features],
        "unary, tagging path (document_unary)": lambda: [model.document_unary(d) for d in documents],
        "graph (document_unary + edges)": lambda: [model.chain_graph(d) for d in documents],
        "viterbi": lambda: [viterbi(g) for g in graphs],
        "forward-backward": lambda: [forward_backward(g) for g in graphs],
        "crfsuite tagger (reference)": lambda: [model.crfsuite_tag(f) for f in features],
    }
    print(f"model {model.name} ({len(model.labels)} labels, {model.state_weights.shape[0]} attributes) "
          f"on {corpus.name}: {tokens} tokens, {len(documents)} documents")
    for name, stage in stages.items():
        seconds = best_time(stage, args.repeat)
        print(f"{name:<34} {seconds:8.3f} s {tokens / seconds:12,.0f} tokens/s")


if __name__ == "__main__":
    main()
