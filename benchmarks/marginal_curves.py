"""Error of one-variable marginals against sweeps for every registered sampling decoder.

Four small models whose exact marginals come from enumeration (``hgner.graph.toy``):

- ``two-variable``: Table 1 of Bornn et al. (herded Gibbs), P(x1, x2) = [[1/4 - eps, eps],
  [eps, 3/4 - eps]], eps = 0.01, as one table of log-probabilities;
- ``fully connected``: a Boltzmann machine on 8 binary variables, every pair joined, biases and
  couplings uniform in [-0.5, 0.5] (the weight-sharing paper's Fig. 8 model);
- ``chain``: 8 variables, K = 3, N(0, 1) unaries and transitions;
- ``skip-chain``: two 4-variable sentences, K = 3, N(0, 1) potentials, 3 skip edges.

For every decoder among CANDIDATES that is registered when the script runs (those that give
marginals; ``gibbs`` with the constant schedule, i.e. plain Gibbs) and every sweep count T of a log grid (T up to
``--max-sweeps`` for deterministic decoders, ``--max-stochastic`` for those that take a seed,
whose errors are averaged over ``--seeds`` seeds), the error is the mean absolute difference
between the decoder's marginals after T sweeps and the exact ones, over all (variable, label)
entries. Plots the curves log-log, one panel per model, to docs/marginal_curves.png and prints
the error at each decoder's largest T. Took 20 minutes on a 2-core machine shared with other jobs.

    python benchmarks/marginal_curves.py [--max-sweeps 1000000] [--max-stochastic 200000] [--seeds 4]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from hgner.decoders import available_decoders, decoder_settings, make_decoder  # noqa: E402
from hgner.graph.factor_graph import FactorGraph  # noqa: E402
from hgner.graph.toy import brute_marginals, fully_connected, random_graph, two_variable_model  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

# name shown -> (registered decoder, settings); the herding family solid, the minibatch family dashed
CANDIDATES: dict[str, tuple[str, dict[str, Any]]] = {
    "gibbs": ("gibbs", {"schedule": "constant"}),
    "herded": ("herded", {}),
    "herded-shared": ("herded-shared", {}),
    "dhg": ("dhg", {}),
    "rdhg": ("rdhg", {}),
    "beg": ("beg", {}),
    "meanfield": ("meanfield", {}),
    "min-gibbs": ("min-gibbs", {}),
    "mgpmh": ("mgpmh", {}),
    "mgpmh (batch 2)": ("mgpmh", {"batch_size": 2.0}),
    "doublemin-gibbs": ("doublemin-gibbs", {}),
}


def models() -> dict[str, FactorGraph]:
    return {
        "two-variable (Bornn et al. Table 1, eps=0.01)": two_variable_model(0.01),
        "fully connected (8 binary, U(-0.5, 0.5))": fully_connected(np.random.default_rng(0)),
        "chain (8 variables, K=3)": random_graph(np.random.default_rng(1), 8, 3),
        "skip-chain (2x4 variables, K=3, 3 skips)": random_graph(np.random.default_rng(2), 8, 3, [4, 4], n_skip=3),
    }


def curve(name: str, settings: dict[str, Any], graph: FactorGraph, exact: np.ndarray, grid: np.ndarray,
          seeds: int) -> np.ndarray:
    """(len(grid),) mean absolute marginal error after each sweep count in ``grid``, averaged
    over ``seeds`` seeds when the decoder takes one."""
    seeded = "seed" in decoder_settings(name)
    errors = np.zeros(len(grid))
    for seed in range(seeds if seeded else 1):
        for g, sweeps in enumerate(grid):
            decoder = make_decoder(name, settings, shared={"sweeps": int(sweeps), "seed": seed})
            marginals = decoder.decode(graph).marginals
            errors[g] += np.abs(marginals - exact).mean()
    return errors / (seeds if seeded else 1)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-sweeps", type=int, default=1_000_000)
    parser.add_argument("--max-stochastic", type=int, default=200_000)
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "marginal_curves.png")
    args = parser.parse_args(argv)
    grid = np.unique(np.round(np.logspace(0, np.log10(args.max_sweeps), 25)).astype(int))
    present = {shown: spec for shown, spec in CANDIDATES.items() if spec[0] in available_decoders()}
    start = time.perf_counter()
    results: dict[str, dict[str, np.ndarray]] = {}
    for title, graph in models().items():
        exact = brute_marginals(graph)
        results[title] = {}
        for shown, (name, settings) in present.items():
            sweeps = grid[grid <= args.max_stochastic] if "seed" in decoder_settings(name) else grid
            results[title][shown] = (sweeps, curve(name, settings, graph, exact, sweeps, args.seeds))
    fig, axes = plt.subplots(2, 2, figsize=(13, 10), sharex=True)
    palette = plt.get_cmap("tab20").colors
    colours = palette[::2] + palette[1::2]  # the ten strong colours first
    for ax, (title, curves) in zip(axes.flat, results.items()):
        for c, (shown, (sweeps, errors)) in enumerate(curves.items()):
            minibatch = present[shown][0] in ("min-gibbs", "mgpmh", "doublemin-gibbs")
            style = "--" if minibatch else ":" if shown == "herded-shared" else "-"
            ax.loglog(sweeps, np.maximum(errors, 1e-8), label=shown, color=colours[c % 20], linestyle=style,
                      linewidth=2.6 if shown in ("gibbs", "herded") else 1.2)
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.set_ylabel("mean |marginal error|")
    for ax in axes[-1]:
        ax.set_xlabel("sweeps T")
    axes.flat[0].legend(fontsize=8, ncol=2)
    fig.suptitle(f"One-variable marginal error vs sweeps (decoders with a seed: mean over {args.seeds} seeds; "
                 "minibatch decoders dashed)")
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out} in {time.perf_counter() - start:.0f} s; mean |marginal error| at the largest T:")
    short = {title: title.split(" (")[0] for title in results}
    print(f"{'decoder':18}{'T':>9}" + "".join(f"{short[t]:>17}" for t in results))
    for shown in present:
        largest = results[next(iter(results))][shown][0][-1]
        print(f"{shown:18}{largest:9d}" + "".join(f"{results[t][shown][1][-1]:17.2e}" for t in results))


if __name__ == "__main__":
    main()
