"""The shared kernels: slicing never changes a result, and the one categorical draw."""

from __future__ import annotations

import numpy as np
import pytest
from decoder_support import small_graph

from hgner.decoders import kernels, make_decoder
from hgner.graph.toy import brute_map, random_graph


@pytest.mark.parametrize("name", ["gibbs", "herded", "rdhg", "beg", "mgpmh", "doublemin-gibbs", "meanfield"])
def test_results_do_not_depend_on_blocks_or_slices(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    graph = small_graph(5, loopy=True)
    settings = {"schedule": "constant"} if name == "gibbs" else {}
    shared = {"sweeps": 50, "seed": 1}
    whole = make_decoder(name, settings, shared=shared).decode(graph)
    monkeypatch.setattr(kernels, "CHUNK_UNIFORMS", 1)  # one sweep per block of uniforms
    monkeypatch.setattr(kernels, "SLICE_UPDATES", 1)  # kernels run one sweep at a time, then more
    monkeypatch.setattr(kernels, "SLICE_SECONDS", 0.0)  # ... and never more than one
    sliced = make_decoder(name, settings, shared=shared).decode(graph)
    np.testing.assert_array_equal(whole.marginals, sliced.marginals)
    np.testing.assert_array_equal(whole.labels, sliced.labels)
    assert whole.stats == sliced.stats


def test_pick_never_lands_on_a_label_of_weight_zero():
    cumulative = np.array([0.0, 0.5, 0.5, 1.0])  # labels 0 and 2 have weight 0
    assert [kernels.pick(cumulative, u) for u in (0.0, 0.25, 0.5, 0.75, 0.999)] == [1, 1, 3, 3, 3]
    assert kernels.pick(np.array([0.3, 0.3]), 0.3) == 0  # rounding past the total: the last label of weight > 0


def test_start_labellings():
    rng = np.random.default_rng(7)
    chain = random_graph(rng, 7, 3, [4, 3])
    graph = chain.with_edges([[0, 5], [2, 6]], 5 * rng.normal(size=(3, 3)))
    np.testing.assert_array_equal(kernels.initial_labels(graph, "argmax"), np.argmax(graph.unary, axis=1))
    # "viterbi": the MAP of the chains alone, whatever the skip edges say
    np.testing.assert_array_equal(kernels.initial_labels(graph, "viterbi"), brute_map(chain)[0])
    np.testing.assert_array_equal(kernels.initial_labels(chain, "viterbi"), brute_map(chain)[0])
