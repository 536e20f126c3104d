"""The CRF model and its folder on disk: :class:`~hgner.crf.model.CrfModel` (labels, features,
weights), the folder, its ``meta.json`` and where models are found (:mod:`~hgner.crf.modelfiles`),
crfsuite's model file checked before crfsuite reads it (:mod:`~hgner.crf.crfsuite_format`) and the one
place that talks to crfsuite (:mod:`~hgner.crf.crfsuite_adapter`), the skip-chain potential
(:mod:`~hgner.crf.skip`), and the pipeline from documents to a factor graph to a decoder's tags
(:mod:`~hgner.crf.pipeline`)."""
