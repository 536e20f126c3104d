"""The document graphs a :class:`~hgner.pipeline.Pipeline` builds: sentence chains, or chains plus
skip edges between repeated names (:mod:`hgner.skip`). Apart from :mod:`hgner.graph` so that the
CLI's parser offers them without importing numpy."""

from .errors import GraphError

GRAPH_KINDS = ("chain", "skip")


def check_graph_kind(kind: str) -> str:
    """``kind`` when it is one of :data:`GRAPH_KINDS`, a :class:`GraphError` otherwise."""
    if kind not in GRAPH_KINDS:
        raise GraphError(f"unknown graph kind {kind!r}; expected one of {', '.join(GRAPH_KINDS)}")
    return kind
