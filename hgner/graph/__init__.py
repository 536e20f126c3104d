"""The factor graph every decoder consumes, numbers only (:class:`~hgner.graph.factor_graph.FactorGraph`),
the kinds of document graph (:mod:`~hgner.graph.kinds`: chains, or chains plus skip edges), and
small graphs with exact answers by enumeration for checking decoders (:mod:`~hgner.graph.toy`)."""
