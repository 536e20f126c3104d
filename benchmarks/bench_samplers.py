"""Time the sampling decoders on random K=9 chain graphs the size of the CoNLL-2003 test set.

About 46,435 tokens in documents of 50-350 tokens (mean ~200), sentences of 1 + Poisson(13), one
FactorGraph per document, drawn with a seeded generator, in two regimes:

- ``crf-like``: 83% of tokens have true label 0 ("O"); the true label's unary leads by 8 +
  Gamma(2, 4) on 92% of tokens and by Gamma(2, 1.5) on the rest, so the mean exact max-marginal
  is ~0.97 (a CRF trained on CoNLL-2003 gives 0.98 on its test set).
- ``flat``: unaries N(0, 2) with +2 on label 0 (mean max-marginal ~0.6): many more blanket
  configurations per variable, a stress test for herded's table.
- ``hub``: ``crf-like`` plus, in every document, skip edges (one shared N(0, 1) table) from its
  first token to every other one: a node of degree 50-350, where the minibatch decoders subsample.

Transitions are N(0, 1). Each decoder is warmed up first, so numba compilation and building the
graphs' adjacency lists are not timed. Prints seconds, variable updates per second, herded's
largest weight table (any decoder that keeps weights) and the minibatch decoders' mean batch (factor draws per minibatch), then
the peak RSS of the process.

    python benchmarks/bench_samplers.py [--tokens 46435] [--sweeps 100 400 800] [--seed 0] [--decoders NAME ...]

``--decoders`` picks any registered decoders (default: the five above); weight columns show for
every decoder that reports ``weight_vectors`` / ``weight_bytes`` (herded, herded-shared, dhg, ...).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hgner.decoders import available_decoders, make_decoder  # noqa: E402
from hgner.decoders.chain import forward_backward  # noqa: E402
from hgner.graph.factor_graph import FactorGraph  # noqa: E402

K = 9
REGIMES = ("crf-like", "flat", "hub")
DECODERS = ("herded", "gibbs", "min-gibbs", "mgpmh", "doublemin-gibbs")


def random_unary(size: int, regime: str, rng: np.random.Generator) -> np.ndarray:
    """(size, K) unary log-potentials of one document (see the module docstring)."""
    if regime == "flat":
        unary = rng.normal(0.0, 2.0, (size, K))
        unary[:, 0] += 2.0
        return unary
    truth = np.where(rng.random(size) < 0.83, 0, rng.integers(1, K, size))
    margin = np.where(rng.random(size) < 0.92, 8.0 + rng.gamma(2.0, 4.0, size), rng.gamma(2.0, 1.5, size))
    unary = rng.normal(0.0, 1.0, (size, K))
    unary[np.arange(size), truth] += margin
    return unary


def random_corpus(tokens: int, regime: str, rng: np.random.Generator) -> list[FactorGraph]:
    """Chain graphs, one per document, totalling ``tokens`` variables."""
    transitions = rng.normal(0.0, 1.0, (K, K))
    skip = rng.normal(0.0, 1.0, (K, K))
    graphs = []
    left = tokens
    while left > 0:
        size = min(left, int(rng.integers(50, 351)))
        left -= size
        lengths: list[int] = []
        while sum(lengths) < size:
            lengths.append(min(size - sum(lengths), 1 + int(rng.poisson(13))))
        graph = FactorGraph.chain(random_unary(size, regime, rng), transitions, lengths)
        if regime == "hub":
            graph = graph.with_edges(np.stack([np.zeros(size - 2, np.int64), np.arange(2, size)], axis=1), skip)
        graph.adjacency  # noqa: B018 - build the cached neighbour lists outside the timings
        graphs.append(graph)
    return graphs


def run(name: str, graphs: list[FactorGraph], sweeps: int, seed: int) -> tuple[float, int, int, int, float]:
    """Seconds to decode every graph, total updates, total weight vectors, largest weight table
    (bytes), mean minibatch size (0 when the decoder has none)."""
    decoder = make_decoder(name, shared={"sweeps": sweeps, "seed": seed})
    start = time.perf_counter()
    decodings = [decoder.decode(graph) for graph in graphs]
    seconds = time.perf_counter() - start
    updates = sum(int(d.stats["updates"]) for d in decodings)
    vectors = sum(int(d.stats.get("weight_vectors", 0)) for d in decodings)
    weight_bytes = max(int(d.stats.get("weight_bytes", 0)) for d in decodings)
    batch = float(np.mean([d.stats.get("mean_batch", 0.0) for d in decodings]))
    return seconds, updates, vectors, weight_bytes, batch


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=46435)
    parser.add_argument("--sweeps", type=int, nargs="+", default=[100, 400, 800])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--regimes", nargs="+", choices=REGIMES, default=list(REGIMES))
    parser.add_argument("--decoders", nargs="+", choices=available_decoders(), default=list(DECODERS))
    args = parser.parse_args(argv)
    for regime in args.regimes:
        graphs = random_corpus(args.tokens, regime, np.random.default_rng(args.seed))
        n = sum(g.n_variables for g in graphs)
        sharpness = (f"{np.concatenate([forward_backward(g)[0].max(axis=1) for g in graphs]).mean():.3f}"
                     if all(g.is_chain for g in graphs) else "- (not chains)")
        degree = max(int(np.diff(g.adjacency.ptr).max()) for g in graphs)
        print(f"\n{regime}: {len(graphs)} documents, {n} variables, K={K}, mean max-marginal {sharpness}, "
              f"max degree {degree}")
        for name in args.decoders:
            run(name, graphs[:2], 2, args.seed)  # warm-up: numba compiles (or loads its cache)
        print(f"{'decoder':15} {'sweeps':>6} {'seconds':>8} {'updates/s':>12} {'vectors/var':>11} "
              f"{'max table bytes/doc':>20} {'mean batch':>10}")
        for sweeps in args.sweeps:
            for name in args.decoders:
                seconds, updates, vectors, weight_bytes, batch = run(name, graphs, sweeps, args.seed)
                per_var = f"{vectors / n:.2f}" if vectors else "-"
                shown = f"{weight_bytes:,}" if weight_bytes else "-"
                batch_shown = f"{batch:.1f}" if batch else "-"
                print(f"{name:15} {sweeps:6d} {seconds:8.3f} {updates / seconds:12,.0f} {per_var:>11} {shown:>20} "
                      f"{batch_shown:>10}")
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(f"\npeak RSS {peak_kib / 1024:.1f} MiB")


if __name__ == "__main__":
    main()
