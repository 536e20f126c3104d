"""``crfsuite``: crfsuite's own tagger, registered with the other decoders so that what is
available never depends on what was imported. :class:`hgner.crf.pipeline.Pipeline` runs it on the
model's features; it cannot decode a bare graph."""

from __future__ import annotations

from ..core.errors import GraphError
from ..graph.factor_graph import FactorGraph
from .base import Decoder, Decoding, register


@register("crfsuite")
class CrfsuiteReference(Decoder):
    """crfsuite's own tagger, for checking that our Viterbi equals it. It decodes the model's
    features sentence by sentence, so it cannot decode a bare graph."""

    summary = "crfsuite's own Viterbi on the model's features: the reference hgner's viterbi must equal"

    exact = True
    chain_only = True
    decodes_features = True

    def decode(self, graph: FactorGraph) -> Decoding:
        raise GraphError("the crfsuite reference decodes a model's features, not a graph; use it through a Pipeline")
