"""Binary image denoising with an Ising prior: Bornn et al. (herded Gibbs), section 4.2 and Table 2.

A procedural 100x100 image of simple shapes (the paper's image is not available; its size is not
stated), pixels x in {-1, +1} (labels 0 and 1), is corrupted by Gaussian noise y = x + N(0,
sigma^2) for sigma in {2, 4, 6, 8}, 10 seeded copies each. Each copy becomes a FactorGraph: the
unary of label x is the Gaussian log-likelihood -(y - x)^2 / (2 sigma^2) (equation 11, mu_x = x),
and every 4-neighbour lattice edge carries the Ising log-potential J x_i x_j with J = 1
(equation 8: one shared (2, 2) table [[J, -J], [-J, J]]; no chain edges). Every method runs 30
sweeps from its own start (samplers: the thresholded noisy image; mean field: q = softmax(unary)).

Reconstruction error. The paper reports an "L2 reconstruction error" without defining it; here it
is the mean over pixels of (P(x_i = +1) - [x_i = +1])^2, with P the method's marginal estimate
(sample frequencies over the 30 sweeps, or mean field's q), i.e. a quarter of the mean squared
error of the posterior-mean spin image. The fraction of pixels wrong after thresholding P at 1/2
is printed as well. Both are scaled by 1e3 like Table 2.

    python benchmarks/denoise.py [--size 100] [--copies 10] [--sweeps 30] [--seed 0] [--png docs/denoise.png]
                              [--json docs/results/denoise.json]

``--json`` writes the settings and, per method and sigma, the mean and sd of both errors (x 1e-3),
with the paper's figures, for the results page of the docs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hgner.decoders import make_decoder  # noqa: E402
from hgner.graph.factor_graph import FactorGraph  # noqa: E402

SIGMAS = (2, 4, 6, 8)
J = 1.0
# (row name, decoder, settings): the paper's five rows, then the shared-weight variants it does not run
METHODS = (
    ("Herded Gibbs", "herded", {}),
    ("Herded Gibbs - shared", "herded-shared", {}),
    ("Gibbs", "gibbs", {"schedule": "constant"}),
    ("Mean field (D=0.5)", "meanfield", {"damping": 0.5}),
    ("Mean field (D=1)", "meanfield", {"damping": 1.0}),
    ("DHG (B=15) [not in paper]", "dhg", {}),
    ("RDHG (B=15) [not in paper]", "rdhg", {}),
    ("BEG (B=15, c=1) [not in paper]", "beg", {}),
)
# Table 2 of Bornn et al.: mean (sd) x 1e-3 over 10 corrupted images, sigma = 2, 4, 6, 8
PAPER = {
    "Herded Gibbs": ((21.58, 0.26), (32.07, 0.98), (47.52, 1.64), (67.93, 2.78)),
    "Herded Gibbs - shared": ((22.24, 0.29), (31.40, 0.59), (42.62, 1.98), (58.49, 2.86)),
    "Gibbs": ((21.63, 0.28), (37.20, 1.23), (63.78, 2.41), (90.27, 3.48)),
    "Mean field (D=0.5)": ((15.52, 0.30), (41.76, 0.71), (76.24, 1.65), (104.08, 1.93)),
    "Mean field (D=1)": ((17.67, 0.40), (32.04, 0.76), (51.19, 1.44), (74.74, 2.21)),
}


def clean_image(size: int) -> np.ndarray:
    """(size, size) spins in {-1, +1}: a disc, a ring, a rectangle, a triangle and a bar on -1."""
    r, c = np.mgrid[0:size, 0:size] / size
    on = (r - 0.28) ** 2 + (c - 0.27) ** 2 < 0.17 ** 2
    on |= np.abs(np.hypot(r - 0.7, c - 0.7) - 0.18) < 0.05
    on |= (np.abs(r - 0.75) < 0.12) & (np.abs(c - 0.22) < 0.08)
    on |= (r > 0.12) & (r < 0.45) & (np.abs(c - 0.72) < (r - 0.12) * 0.6)
    on |= (np.abs(r - 0.52) < 0.025) & (c > 0.08) & (c < 0.92)
    return np.where(on, 1, -1).astype(np.int64)


def lattice_edges(rows: int, cols: int) -> np.ndarray:
    """(m, 2) horizontal then vertical 4-neighbour pairs of a row-major rows x cols grid."""
    index = np.arange(rows * cols).reshape(rows, cols)
    horizontal = np.stack([index[:, :-1].ravel(), index[:, 1:].ravel()], axis=1)
    vertical = np.stack([index[:-1].ravel(), index[1:].ravel()], axis=1)
    return np.concatenate([horizontal, vertical])


def ising_graph(noisy: np.ndarray, sigma: float, edges: np.ndarray) -> FactorGraph:
    """The posterior of equation 11 as a FactorGraph: labels 0, 1 are spins -1, +1."""
    y = noisy.ravel()[:, None]
    unary = -((y - np.array([-1.0, 1.0])) ** 2) / (2 * sigma ** 2)
    table = np.array([[J, -J], [-J, J]])
    return FactorGraph(unary, edges, table, n_chain_edges=0, labels=("-1", "+1"))


def errors(marginals: np.ndarray, clean: np.ndarray) -> tuple[float, float]:
    """(L2 error, wrong-pixel fraction) of P(x = +1) (n,) against the clean spins (n,)."""
    truth = (clean.ravel() == 1).astype(float)
    return float(np.mean((marginals - truth) ** 2)), float(np.mean((marginals > 0.5) != (truth == 1)))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--sweeps", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--png", type=Path, default=Path(__file__).resolve().parents[1] / "docs" / "denoise.png")
    parser.add_argument("--png-sigma", type=float, default=4)
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args(argv)
    clean = clean_image(args.size)
    edges = lattice_edges(args.size, args.size)
    start = time.perf_counter()
    l2 = np.zeros((len(METHODS), len(SIGMAS), args.copies))
    wrong = np.zeros_like(l2)
    shown: dict[str, np.ndarray] = {}
    for s, sigma in enumerate(SIGMAS):
        for copy in range(args.copies):
            rng = np.random.default_rng([args.seed, s, copy])
            noisy = clean + sigma * rng.normal(size=clean.shape)
            graph = ising_graph(noisy, sigma, edges)
            for m, (row, name, settings) in enumerate(METHODS):
                decoder = make_decoder(name, settings, shared={"sweeps": args.sweeps, "seed": args.seed + copy})
                marginals = decoder.decode(graph).marginals[:, 1]
                l2[m, s, copy], wrong[m, s, copy] = errors(marginals, clean)
                if sigma == args.png_sigma and copy == 0:
                    shown["noisy"] = noisy
                    shown[row] = marginals.reshape(clean.shape)
    print(f"{args.size}x{args.size} image, {np.mean(clean == 1):.1%} of pixels +1, J={J}, {args.sweeps} sweeps, "
          f"{args.copies} noisy copies per sigma ({time.perf_counter() - start:.1f} s)")
    for title, values, paper in (("L2 error: mean (P(x=+1) - [x=+1])^2", l2, PAPER),
                                 ("wrong pixels: fraction with P(x=+1) on the wrong side of 1/2", wrong, {})):
        print(f"\n{title}, x 1e-3, mean (sd) over copies" + ("; paper's Table 2 in brackets" if paper else ""))
        print(f"{'method':32}" + "".join(f"{'sigma=' + str(s):>27}" for s in SIGMAS))
        for m, (row, _, _) in enumerate(METHODS):
            cells = []
            for s in range(len(SIGMAS)):
                ours = f"{1e3 * values[m, s].mean():6.2f} ({1e3 * values[m, s].std(ddof=1):5.2f})"
                theirs = f" [{paper[row][s][0]:6.2f}]" if row in paper else " " * 9
                cells.append(f"{ours}{theirs}")
            print(f"{row:32}" + "".join(f"{c:>27}" for c in cells))
        best = [METHODS[int(np.argmin(values[:5, s].mean(axis=1)))][0] for s in range(len(SIGMAS))]
        print("best of the paper's five: " + ", ".join(f"sigma={s}: {b}" for s, b in zip(SIGMAS, best)))
    if args.json:
        write_json(args, l2, wrong)
    if args.png:
        save_figure(args.png, clean, shown, args.png_sigma, args.sweeps)
        print(f"\nsaved {args.png}")


def write_json(args: argparse.Namespace, l2: np.ndarray, wrong: np.ndarray) -> None:
    """The figures printed, as JSON: per method, mean and sd over copies (x 1e-3) for each sigma."""
    methods = [{"method": row, "decoder": name, "settings": settings,
                "l2": [[1e3 * l2[m, s].mean(), 1e3 * l2[m, s].std(ddof=1)] for s in range(len(SIGMAS))],
                "wrong": [[1e3 * wrong[m, s].mean(), 1e3 * wrong[m, s].std(ddof=1)]
                          for s in range(len(SIGMAS))],
                "paper_l2": [list(cell) for cell in PAPER[row]] if row in PAPER else None}
               for m, (row, name, settings) in enumerate(METHODS)]
    report = {"command": "python benchmarks/denoise.py", "size": args.size, "copies": args.copies, "sweeps": args.sweeps,
              "seed": args.seed, "J": J, "sigmas": list(SIGMAS), "methods": methods}
    args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


def save_figure(path: Path, clean: np.ndarray, shown: dict[str, np.ndarray], sigma: float, sweeps: int) -> None:
    """Original, noisy, and every method's P(x = +1) after ``sweeps`` sweeps, for one noisy copy."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [("original", clean, -1, 1), (f"noisy, sigma={sigma:g}", shown["noisy"], -3, 3)]
    panels += [(row, image, 0, 1) for row, image in shown.items() if row != "noisy"]
    cols = 5
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3 * cols, 3.5 * rows))
    for ax in axes.ravel():
        ax.axis("off")
    for ax, (title, image, low, high) in zip(axes.ravel(), panels):
        ax.imshow(image, cmap="gray", vmin=low, vmax=high, interpolation="nearest")
        ax.set_title(title, fontsize=9)
    fig.suptitle(f"Ising denoising (J=1): estimated P(x=+1) after {sweeps} sweeps")
    fig.tight_layout(h_pad=2.0)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)


if __name__ == "__main__":
    main()
