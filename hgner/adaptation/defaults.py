"""The selection defaults, apart so that ``hgner select``'s parser reads them without loading numpy."""

DEFAULT_STRATEGY = "diverse"  # decided by benchmarks/bench_adapt.py (docs/guide/adapting.md gives the rule)
DEFAULT_SWEEPS = 50  # sweeps of herded and annealed Gibbs when their labels are compared with Viterbi's
