"""The document graphs a :class:`~hgner.pipeline.Pipeline` builds: sentence chains, or chains plus
skip edges between repeated names (:mod:`hgner.skip`). Apart from :mod:`hgner.graph` so that the
CLI's parser offers them without importing numpy."""

GRAPH_KINDS = ("chain", "skip")
