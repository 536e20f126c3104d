"""hgner: named-entity recognition with CRFs, decoded by Viterbi, annealed Gibbs and herded Gibbs."""

__version__ = "0.1.0"
