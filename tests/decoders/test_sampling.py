"""The gibbs and herded decoders: the paper's two-variable model, exact answers on small graphs,
reference implementations, reproducibility, bounded memory on hubs, and settings validation."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

from hgner.decoders import decoder_settings, herding, kernels, make_decoder, sampling
from hgner.decoders.herding import HerdedGibbs, initial_capacity, table_bytes
from hgner.decoders.sampling import AnnealedGibbs, temperatures
from hgner.errors import HgnerError
from hgner.graph import FactorGraph
from hgner.toy import brute_map, brute_marginals, two_variable_model


def small_graph(seed: int, loopy: bool) -> FactorGraph:
    """3-8 variables, 2-3 labels, N(0, 1) potentials; ``loopy`` adds 3 skip edges (one shared table)."""
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(3, 9)), int(rng.integers(2, 4))
    graph = FactorGraph.chain(rng.normal(size=(n, k)), rng.normal(size=(k, k)))
    if loopy:
        pairs = [(a, b) for a in range(n) for b in range(a + 2, n)]
        pick = rng.choice(len(pairs), size=min(3, len(pairs)), replace=False)
        graph = graph.with_edges(np.array([pairs[p] for p in pick]), rng.normal(size=(k, k)))
    return graph


SMALL_GRAPHS = [(seed, loopy) for loopy in (False, True) for seed in range(10)]


def loglog_slope(t: np.ndarray, error: np.ndarray) -> float:
    return float(np.polyfit(np.log(t), np.log(error), 1)[0])


# ----------------------------------------------------------------------------- the paper's model


@pytest.mark.parametrize("eps", [0.1, 0.01, 0.001])
def test_herded_two_variable_error_falls_like_one_over_t(eps: float) -> None:
    # The paper measures P(X1 = 1) by the frequency of X1 = 1 in the end-of-sweep samples (its
    # Definition 1), which is what herded's marginals are; the error oscillates, so, as in its
    # Figure 3, fit the upper envelope: the largest error at any measured T' >= T.
    graph = two_variable_model(eps)
    t = np.unique(np.geomspace(1e3, 1e5, 300).astype(int))
    error = np.array([abs(make_decoder("herded", sweeps=int(s)).decode(graph).marginals[0, 1] - 0.75) for s in t])
    envelope = np.maximum.accumulate(error[::-1])[::-1]
    assert -1.3 < loglog_slope(t, envelope) < -0.7
    assert envelope[-1] < 200 / t[-1]  # measured: T * error stays near 1, 12 and 124-180


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


def reference_herded(graph: FactorGraph, sweeps: int) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1 with weight vectors, in plain Python: (last labelling, label counts (n, K))."""
    n, k = graph.unary.shape
    adj = graph.adjacency
    y = np.argmax(graph.unary, axis=1)
    counts = np.zeros((n, k))
    weights: dict[tuple[int, tuple[int, ...]], np.ndarray] = {}
    for _ in range(sweeps):
        for i in range(n):
            key = (i, tuple(y[adj.node[adj.ptr[i]:adj.ptr[i + 1]]]))
            if key not in weights:
                scores = graph.local_scores(y, i)
                p = np.exp(scores - scores.max())
                weights[key] = np.concatenate([p / p.sum(), p / p.sum()])  # [w | p], w0 = p
            w = weights[key]
            y[i] = int(np.argmax(w[:k]))
            w[:k] += w[k:]
            w[y[i]] -= 1.0
            counts[i, y[i]] += 1
    return y, counts


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


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_herded_matches_reference(seed: int) -> None:
    graph = small_graph(seed, loopy=True)
    _, counts = reference_herded(graph, 300)
    np.testing.assert_array_equal(make_decoder("herded", sweeps=300).decode(graph).marginals, counts / 300)


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


@pytest.mark.parametrize("name", ["gibbs", "herded", "rdhg", "beg", "mgpmh", "doublemin-gibbs", "meanfield"])
def test_results_do_not_depend_on_blocks_or_slices(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    graph = small_graph(5, loopy=True)
    settings = {"schedule": "constant"} if name == "gibbs" else {}
    shared = {"sweeps": 50, "seed": 1}
    whole = make_decoder(name, settings, shared=shared).decode(graph)
    monkeypatch.setattr(sampling, "CHUNK_UNIFORMS", 1)  # one sweep per block of uniforms
    monkeypatch.setattr(kernels, "SLICE_UPDATES", 1)  # kernels run one sweep at a time, then more
    monkeypatch.setattr(kernels, "SLICE_SECONDS", 0.0)  # ... and never more than one
    sliced = make_decoder(name, settings, shared=shared).decode(graph)
    np.testing.assert_array_equal(whole.marginals, sliced.marginals)
    np.testing.assert_array_equal(whole.labels, sliced.labels)
    assert whole.stats == sliced.stats


def test_herded_repeatable_bit_for_bit() -> None:
    graph = small_graph(6, loopy=True)
    first, again = (make_decoder("herded", sweeps=500).decode(graph) for _ in range(2))
    np.testing.assert_array_equal(first.labels, again.labels)
    assert first.marginals.tobytes() == again.marginals.tobytes()
    assert first.stats == again.stats


def test_herded_hashed_keys_and_table_growth_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    graph = small_graph(7, loopy=True)
    reference = make_decoder("herded", sweeps=400).decode(graph)
    monkeypatch.setattr(herding, "_radix_fits", lambda g: np.zeros(g.n_variables, bool))
    monkeypatch.setattr(herding, "initial_capacity", lambda n, sweeps: 16)
    hashed = make_decoder("herded", sweeps=400).decode(graph)
    np.testing.assert_array_equal(reference.marginals, hashed.marginals)
    assert reference.stats["weight_vectors"] == hashed.stats["weight_vectors"] > 16  # it grew


# ----------------------------------------------------------------------------- memory on hubs


def test_repeated_name_hub_keeps_the_table_bounded() -> None:
    # 200 tokens, K = 9; a name repeated 20 times, every pair joined: the 20 hubs have degree 21,
    # 9**21 ~ 1e20 blanket configurations each, keys hashed (21 * log2 9 > 62 bits)
    rng = np.random.default_rng(0)
    n, k, sweeps = 200, 9, 200
    hubs = np.arange(5, n, 10)
    graph = FactorGraph.chain(rng.normal(size=(n, k)), rng.normal(size=(k, k)), [14] * 14 + [4])
    graph = graph.with_edges(np.array(list(itertools.combinations(hubs, 2))), rng.normal(size=(k, k)))
    decoding = make_decoder("herded", sweeps=sweeps).decode(graph)
    degree = np.diff(graph.adjacency.ptr)
    assert degree[hubs].min() >= 20
    # at most one new vector per update, and never more than a variable's configurations
    per_variable = np.minimum(float(k) ** degree, sweeps)
    assert decoding.stats["weight_vectors"] <= per_variable.sum() <= decoding.stats["updates"]
    bound = table_bytes(n, k, max(initial_capacity(n, sweeps), 2 * decoding.stats["weight_vectors"]))
    assert decoding.stats["weight_bytes"] <= bound <= table_bytes(n, k, 2 * decoding.stats["updates"])
    assert decoding.stats["weight_bytes"] < 20 * 2**20
    assert graph.score(decoding.labels) == pytest.approx(decoding.stats["best_score"])


# ----------------------------------------------------------------------------- settings, registry, edges


def test_registered_with_their_settings() -> None:
    assert list(decoder_settings("herded")) == ["sweeps", "time_limit"]
    assert list(decoder_settings("gibbs")) == ["sweeps", "seed", "schedule", "initial_temperature", "time_limit"]
    assert make_decoder("herded", shared={"sweeps": 3, "seed": 9}).sweeps == 3  # seed is not herded's


@pytest.mark.parametrize("settings, message", [
    ({"sweeps": 0}, "sweeps must be an integer in [1, 100000000], got 0"),
    ({"sweeps": 2.5}, "sweeps must be an integer in [1, 100000000], got 2.5"),
    ({"sweeps": True}, "sweeps must be an integer in [1, 100000000], got True"),
    ({"sweeps": 10**13}, "sweeps must be an integer in [1, 100000000], got 10000000000000"),
    ({"seed": -1}, "seed must be an integer >= 0, got -1"),
    ({"schedule": "cosine"}, "schedule must be one of linear, exponential, constant, got 'cosine'"),
    ({"initial_temperature": 0.0}, "initial_temperature must be a finite number > 0, got 0.0"),
    ({"initial_temperature": float("nan")}, "initial_temperature must be a finite number > 0, got nan"),
    ({"initial_temperature": True}, "initial_temperature must be a finite number > 0, got True"),
])
def test_gibbs_rejects_bad_settings(settings: dict, message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        AnnealedGibbs(**settings)
    with pytest.raises(HgnerError, match="decoder 'gibbs'"):
        make_decoder("gibbs", **settings)


def test_herded_rejects_bad_settings() -> None:
    with pytest.raises(ValueError, match=re.escape("sweeps must be an integer in [1, 100000000], got -3")):
        HerdedGibbs(sweeps=-3)
    with pytest.raises(TypeError):
        HerdedGibbs(10)  # keyword-only


def test_schedules() -> None:
    np.testing.assert_allclose(temperatures("linear", 2.0, 4), [2.0, 1.5, 1.0, 0.5])
    np.testing.assert_allclose(temperatures("exponential", 2.0, 4)[[0, -1]], [2.0, 0.5])
    np.testing.assert_allclose(temperatures("constant", 2.0, 3), [2.0, 2.0, 2.0])
    np.testing.assert_allclose(temperatures("exponential", 2.0, 1), [2.0])


@pytest.mark.parametrize("name", ["gibbs", "herded"])
def test_degenerate_graphs(name: str) -> None:
    one_label = FactorGraph(np.zeros((4, 1)), np.array([[0, 1], [1, 2], [0, 3]]), np.zeros((1, 1)), n_chain_edges=2)
    decoding = make_decoder(name, sweeps=5).decode(one_label)
    np.testing.assert_array_equal(decoding.labels, np.zeros(4))
    empty = make_decoder(name, sweeps=5).decode(FactorGraph(np.zeros((0, 3))))
    assert empty.labels.shape == (0,)
