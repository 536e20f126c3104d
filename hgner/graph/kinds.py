"""The document graphs a :class:`~hgner.crf.pipeline.Pipeline` builds: sentence chains, or chains plus
skip edges between repeated names (:mod:`hgner.crf.skip`). Apart from :mod:`hgner.graph.factor_graph` so that the
CLI's parser offers them without importing numpy."""

from ..core.errors import GraphError

GRAPH_KINDS = ("chain", "skip")


def check_graph_kind(kind: str) -> str:
    """``kind`` when it is one of :data:`GRAPH_KINDS`, a :class:`GraphError` otherwise."""
    if kind not in GRAPH_KINDS:
        raise GraphError(f"unknown graph kind {kind!r}; expected one of {', '.join(GRAPH_KINDS)}")
    return kind
