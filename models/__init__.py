"""The shipped models: each sub-directory is a model (model.crfsuite, meta.json and its JSON resources).

An importable package so ``importlib.resources`` finds the models after a non-editable install."""
