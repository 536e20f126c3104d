"""Adapting a model to the user's own text: choosing the sentences worth labelling
(:mod:`~hgner.adaptation.select`, ``hgner select``) from the decoders' marginals and disagreement."""
