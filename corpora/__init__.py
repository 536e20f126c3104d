"""The corpus catalogue: one JSON manifest per corpus, checked against ``schema.json``.

An importable package so ``importlib.resources`` finds the manifests after a non-editable install
(installed as ``hgner.corpora``; read by :mod:`hgner.data.catalog`)."""
