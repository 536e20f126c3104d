"""The selection defaults, apart so that ``hgner select``'s parser reads them without loading numpy."""

DEFAULT_STRATEGY = "margin"  # chosen by benchmarks/bench_adapt.py's rule (docs/guide/adapting.md; docs/results/adapt-screen.json)
DEFAULT_SWEEPS = 50  # sweeps of herded and annealed Gibbs when their labels are compared with Viterbi's
