"""The minibatch Gibbs decoders (min-gibbs, mgpmh, doublemin-gibbs): unbiased marginals on small
chain, skip-chain and fully connected graphs and on a subsampled hub, MGPMH tending to plain
Gibbs as the batch grows, batch sizes, reproducibility and settings validation."""

from __future__ import annotations

import re

import numpy as np
import pytest

from hgner.core.errors import HgnerError
from hgner.decoders import make_decoder
from hgner.decoders.minibatch import DoubleMinGibbs, MinGibbs, MinibatchGibbsProposalMH
from hgner.graph.factor_graph import FactorGraph
from hgner.graph.toy import brute_marginals, fully_connected, random_graph

MINIBATCH = ["min-gibbs", "mgpmh", "doublemin-gibbs"]


GRAPHS = {
    "chain": lambda: random_graph(np.random.default_rng(3), 6, 3),
    "skip-chain": lambda: random_graph(np.random.default_rng(4), 6, 3, [3, 3], n_skip=2),
    "fully-connected": lambda: fully_connected(np.random.default_rng(5), 6),
}


def star(seed: int, degree: int = 120, k: int = 3, scale: float = 0.05) -> tuple[FactorGraph, np.ndarray]:
    """A hub (variable 0) joined to ``degree`` leaves by one shared N(0, scale^2) table, and its exact
    marginals (degree + 1, K): given the hub the leaves are independent."""
    rng = np.random.default_rng(seed)
    unary = rng.normal(size=(degree + 1, k))
    table = rng.normal(scale=scale, size=(k, k))
    edges = np.stack([np.zeros(degree, np.int64), np.arange(1, degree + 1)], axis=1)
    conditional = np.exp(unary[1:, None, :] + table[None])  # (leaf, hub label, leaf label)
    log_hub = unary[0] + np.log(conditional.sum(axis=2)).sum(axis=0)
    hub = np.exp(log_hub - log_hub.max())
    hub /= hub.sum()
    leaves = np.einsum("a,jab->jb", hub, conditional / conditional.sum(axis=2, keepdims=True))
    return FactorGraph(unary, edges, table, n_chain_edges=0), np.vstack([hub, leaves])


# ----------------------------------------------------------------------------- unbiasedness


@pytest.mark.parametrize("graph_name", list(GRAPHS))
@pytest.mark.parametrize("name", MINIBATCH)
def test_minibatch_variants_stay_unbiased(name: str, graph_name: str) -> None:
    """20,000 sweeps at the default batch size: every marginal within 0.04 of the exact one (the
    largest error seen over 6 seeds was 0.018; Monte Carlo error alone is ~0.005-0.01 here)."""
    graph = GRAPHS[graph_name]()
    exact = brute_marginals(graph)
    for seed in (0, 1):
        decoding = make_decoder(name, sweeps=20000, seed=seed).decode(graph)
        assert np.abs(decoding.marginals - exact).max() < 0.04


@pytest.mark.parametrize("graph_name", list(GRAPHS))
def test_mgpmh_tiny_batches_stay_unbiased(graph_name: str) -> None:
    """Half a factor per proposal on average: a poor proposal, but the exact acceptance test keeps
    the chain exact (largest error over 6 seeds at 20,000 sweeps: 0.036; here 40,000)."""
    graph = GRAPHS[graph_name]()
    decoding = MinibatchGibbsProposalMH(sweeps=40000, seed=0, batch_size=0.5).decode(graph)
    assert decoding.stats["mean_batch"] == pytest.approx(0.5, rel=0.05)
    assert decoding.stats["acceptance"] < 0.9
    assert np.abs(decoding.marginals - brute_marginals(graph)).max() < 0.05


@pytest.mark.parametrize("name", MINIBATCH)
def test_hub_is_subsampled_and_unbiased(name: str) -> None:
    """A hub of degree 120 with batch size 8: it draws ~8 factors per minibatch, not 120, and the
    marginals (hub and leaves) still match the exact ones."""
    graph, exact = star(0)
    decoding = make_decoder(name, sweeps=10000, seed=0, batch_size=8.0).decode(graph)
    assert np.abs(decoding.marginals - exact).max() < 0.04
    assert np.abs(decoding.marginals[0] - exact[0]).max() < 0.01
    if name != "min-gibbs":  # every proposal minibatch has expected size lambda
        assert decoding.stats["mean_batch"] == pytest.approx(8.0, rel=0.02)


def test_mgpmh_with_a_huge_batch_is_plain_gibbs() -> None:
    """lambda = 1e6 >> local energy^2: the proposal is the exact conditional, almost every move is
    accepted, and the marginals behave like plain (constant-temperature) Gibbs'."""
    graph = GRAPHS["skip-chain"]()
    exact = brute_marginals(graph)
    decoding = MinibatchGibbsProposalMH(sweeps=20000, seed=0, batch_size=1e6).decode(graph)
    gibbs = make_decoder("gibbs", sweeps=20000, seed=0, schedule="constant").decode(graph)
    assert decoding.stats["acceptance"] > 0.995
    assert decoding.stats["mean_batch"] == pytest.approx(1e6, rel=1e-3)
    assert np.abs(decoding.marginals - exact).max() < 0.03
    assert np.abs(decoding.marginals - gibbs.marginals).max() < 0.04


def test_estimator_batches_follow_the_factor_means() -> None:
    """One shared table on a 6-chain: each factor's mean is lambda * M / max(L_a, L_b) = lambda / 2,
    so interior variables draw lambda per estimate and the two ends lambda / 2: mean 5/6 lambda."""
    rng = np.random.default_rng(0)
    graph = FactorGraph.chain(rng.normal(size=(6, 3)), rng.normal(size=(3, 3)))
    decoding = MinGibbs(sweeps=5000, seed=0, batch_size=12.0).decode(graph)
    assert decoding.stats["mean_batch"] == pytest.approx(10.0, rel=0.02)
    double = DoubleMinGibbs(sweeps=5000, seed=0, batch_size=4.0, accept_batch_size=12.0).decode(graph)
    assert double.stats["mean_batch"] == pytest.approx(4.0, rel=0.02)
    assert 5.0 < double.stats["mean_accept_batch"] < 13.0


# ----------------------------------------------------------------------------- determinism and shape


@pytest.mark.parametrize("name", MINIBATCH)
def test_seeded_runs_repeat_and_extend(name: str) -> None:
    graph = GRAPHS["skip-chain"]()
    first = make_decoder(name, sweeps=300, seed=7).decode(graph)
    again = make_decoder(name, sweeps=300, seed=7).decode(graph)
    other = make_decoder(name, sweeps=300, seed=8).decode(graph)
    longer = make_decoder(name, sweeps=600, seed=7).decode(graph)
    assert np.array_equal(first.labels, again.labels) and np.array_equal(first.marginals, again.marginals)
    assert first.stats == again.stats
    assert not np.array_equal(first.marginals, other.marginals)
    extra = longer.marginals * 600 - first.marginals * 300  # the longer run continues the shorter one
    assert extra.min() > -1e-9 and np.allclose(extra.sum(axis=1), 300)
    assert first.stats["updates"] == 300 * graph.n_variables
    assert graph.score(first.labels) == pytest.approx(first.stats["best_score"])


@pytest.mark.parametrize("name", MINIBATCH)
def test_graph_without_edges(name: str) -> None:
    """No factors to subsample: every minibatch is empty and sampling follows the unaries exactly."""
    unary = np.log([[0.2, 0.8], [0.6, 0.4]])
    decoding = make_decoder(name, sweeps=20000, seed=0).decode(FactorGraph(unary))
    np.testing.assert_allclose(decoding.marginals, np.exp(unary), atol=0.02)
    assert decoding.stats["mean_batch"] == 0.0
    assert decoding.labels.tolist() == [1, 0]


# ----------------------------------------------------------------------------- settings


@pytest.mark.parametrize("cls", [MinGibbs, MinibatchGibbsProposalMH, DoubleMinGibbs])
@pytest.mark.parametrize("setting, value", [
    ("sweeps", 0), ("sweeps", 2.5), ("seed", -1), ("seed", True), ("batch_size", 0), ("batch_size", -3.0),
    ("batch_size", float("nan")), ("batch_size", float("inf")), ("batch_size", "8"), ("batch_size", True),
])
def test_bad_settings(cls, setting: str, value) -> None:
    with pytest.raises(ValueError, match=f"{setting} must be .*got {re.escape(repr(value))}"):
        cls(**{setting: value})


@pytest.mark.parametrize("value", [0, -1.0, float("nan")])
def test_bad_accept_batch_size(value) -> None:
    with pytest.raises(ValueError, match=r"accept_batch_size must be a finite number in \(0, 1000000000\]"):
        DoubleMinGibbs(accept_batch_size=value)
    with pytest.raises(HgnerError, match="doublemin-gibbs"):
        make_decoder("doublemin-gibbs", accept_batch_size=value)


def test_defaults_and_repr() -> None:
    decoder = make_decoder("doublemin-gibbs")
    assert (decoder.sweeps, decoder.seed, decoder.batch_size, decoder.accept_batch_size) == (100, 0, 32.0, 32.0)
    assert "batch_size=32.0" in repr(make_decoder("min-gibbs"))
