"""The gibbs decoder (and herded beside it): the paper's two-variable model, exact answers on
small graphs, a reference implementation, reproducibility, schedules and settings validation."""

from __future__ import annotations

import re

import numpy as np
import pytest
from decoder_support import SMALL_GRAPHS, loglog_slope, small_graph

from hgner.core.errors import HgnerError
from hgner.decoders import decoder_settings, make_decoder
from hgner.decoders.sampling import AnnealedGibbs, temperatures
from hgner.graph.factor_graph import FactorGraph
from hgner.graph.toy import brute_map, brute_marginals, two_variable_model

# ----------------------------------------------------------------------------- the paper's model


@pytest.mark.parametrize("eps", [0.1, 0.01, 0.001])
def test_constant_gibbs_two_variable_error_falls_like_one_over_sqrt_t(eps: float) -> None:
    graph = two_variable_model(eps)
    t = np.unique(np.geomspace(1e3, 1e5, 12).astype(int))
    error = np.array([[abs(make_decoder("gibbs", sweeps=int(s), seed=seed, schedule="constant")
                           .decode(graph).marginals[0, 1] - 0.75) for s in t] for seed in range(16)])
    # 8-seed averages gave slopes from -0.31 to -0.71; 16 seeds narrow that
    assert -0.75 < loglog_slope(t, error.mean(axis=0)) < -0.25
    herded = abs(make_decoder("herded", sweeps=int(t[-1])).decode(graph).marginals[0, 1] - 0.75)
    assert herded < error[:, -1].mean() / 3


# ----------------------------------------------------------------------------- small graphs, exact answers


@pytest.mark.parametrize("seed, loopy", SMALL_GRAPHS)
def test_marginals_approach_exact(seed: int, loopy: bool) -> None:
    graph = small_graph(seed, loopy)
    exact = brute_marginals(graph)
    herded = make_decoder("herded", sweeps=20000).decode(graph)
    gibbs = make_decoder("gibbs", sweeps=20000, seed=seed, schedule="constant").decode(graph)
    for decoding in (herded, gibbs):
        assert decoding.marginals.shape == exact.shape
        np.testing.assert_allclose(decoding.marginals.sum(axis=1), 1.0)
    # measured over these 20 graphs: herded <= 0.004, Gibbs <= 0.015
    assert np.abs(herded.marginals - exact).max() < 0.01
    assert np.abs(gibbs.marginals - exact).max() < 0.04


@pytest.mark.parametrize("seed, loopy", SMALL_GRAPHS)
def test_decode_finds_the_map(seed: int, loopy: bool) -> None:
    graph = small_graph(seed, loopy)
    best, _ = brute_map(graph)
    for decoder in (make_decoder("gibbs", sweeps=2000, seed=seed), make_decoder("herded", sweeps=2000)):
        decoding = decoder.decode(graph)
        np.testing.assert_array_equal(decoding.labels, best)
        assert decoding.stats["best_score"] == pytest.approx(graph.score(best))
        assert 0 <= decoding.stats["best_sweep"] < 2000


def reference_gibbs(graph: FactorGraph, temps: np.ndarray, seed: int) -> tuple[np.ndarray, float]:
    """Systematic-scan Gibbs in plain Python with the decoder's uniform stream: label counts (n, K)
    and the best score of a combination of each component's best end-of-sweep state."""
    n, k = graph.unary.shape
    uniforms = np.random.default_rng(seed).random((len(temps), n))
    y = np.argmax(graph.unary, axis=1)
    counts = np.zeros((n, k))
    best = np.full(len(graph.components.ptr) - 1, -np.inf)
    for t, temperature in enumerate(temps):
        for i in range(n):
            scores = graph.local_scores(y, i)
            cumulative = np.cumsum(np.exp((scores - scores.max()) / temperature))
            y[i] = int(np.searchsorted(cumulative, uniforms[t, i] * cumulative[-1], side="right"))
            counts[i, y[i]] += 1
        best = np.maximum(best, graph.component_scores(y))
    return counts, float(best.sum())


@pytest.mark.parametrize("schedule", ["linear", "exponential", "constant"])
def test_gibbs_matches_reference(schedule: str) -> None:
    graph = small_graph(4, loopy=True)
    counts, best = reference_gibbs(graph, temperatures(schedule, 2.0, 200), seed=7)
    decoding = make_decoder("gibbs", sweeps=200, seed=7, schedule=schedule, initial_temperature=2.0).decode(graph)
    assert decoding.stats["best_score"] == pytest.approx(best, rel=1e-9)
    if schedule == "constant":
        np.testing.assert_array_equal(decoding.marginals, counts / 200)
    else:  # the frequencies of a cooling walk are not the model's marginals
        assert decoding.marginals is None


# ----------------------------------------------------------------------------- determinism


def test_gibbs_reproducible_per_seed() -> None:
    graph = small_graph(3, loopy=True)
    first, again = (make_decoder("gibbs", sweeps=300, seed=5, schedule="constant").decode(graph) for _ in range(2))
    np.testing.assert_array_equal(first.labels, again.labels)
    np.testing.assert_array_equal(first.marginals, again.marginals)
    assert first.stats == again.stats
    others = [make_decoder("gibbs", sweeps=300, seed=seed, schedule="constant").decode(graph).marginals
              for seed in (6, 7, 8)]
    assert not any(np.array_equal(first.marginals, other) for other in others)


# ----------------------------------------------------------------------------- settings, registry, edges


def test_registered_with_their_settings() -> None:
    assert list(decoder_settings("herded")) == ["sweeps", "start", "time_limit"]
    assert list(decoder_settings("gibbs")) == ["sweeps", "seed", "schedule", "initial_temperature", "start", "time_limit"]
    assert decoder_settings("herded")["start"].choices == ("argmax", "viterbi")
    assert make_decoder("herded", shared={"sweeps": 3, "seed": 9}).sweeps == 3  # seed is not herded's


@pytest.mark.parametrize("settings, message", [
    ({"sweeps": 0}, "sweeps must be an integer in [1, 100000000], got 0"),
    ({"sweeps": 2.5}, "sweeps must be an integer in [1, 100000000], got 2.5"),
    ({"sweeps": True}, "sweeps must be an integer in [1, 100000000], got True"),
    ({"sweeps": 10**13}, "sweeps must be an integer in [1, 100000000], got 10000000000000"),
    ({"seed": -1}, "seed must be an integer >= 0, got -1"),
    ({"schedule": "cosine"}, "schedule must be one of linear, exponential, constant, got 'cosine'"),
    ({"initial_temperature": 0.0}, "initial_temperature must be a finite number >= 1e-06, got 0.0"),
    ({"initial_temperature": 1e-320}, "initial_temperature must be a finite number >= 1e-06, got 1e-320"),
    ({"initial_temperature": float("nan")}, "initial_temperature must be a finite number >= 1e-06, got nan"),
    ({"initial_temperature": True}, "initial_temperature must be a finite number >= 1e-06, got True"),
])
def test_gibbs_rejects_bad_settings(settings: dict, message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        AnnealedGibbs(**settings)
    with pytest.raises(HgnerError, match="decoder 'gibbs'"):
        make_decoder("gibbs", **settings)


def test_schedules() -> None:
    np.testing.assert_allclose(temperatures("linear", 2.0, 4), [2.0, 1.5, 1.0, 0.5])
    np.testing.assert_allclose(temperatures("exponential", 2.0, 4)[[0, -1]], [2.0, 0.5])
    np.testing.assert_allclose(temperatures("constant", 2.0, 3), [2.0, 2.0, 2.0])
    np.testing.assert_allclose(temperatures("exponential", 2.0, 1), [2.0])
