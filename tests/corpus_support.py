"""Skips for tests that need a catalogue corpus: it must be in the data home, in a mirror folder
(``HGNER_MIRROR``) or, for NLTK packages, where NLTK finds it. Nothing is downloaded.

A test that reads a catalogue corpus says so with ``@needs_corpus(NAME, ...)`` (for one parameter:
``pytest.param(NAME, marks=needs_corpus(NAME))``) or by using the ``conll2003`` fixture: either gives
it the ``corpus`` marker, and ``tests/conftest.py`` skips it, saying why, when a corpus is missing.
``.ci/run`` runs ``pytest -m corpus`` with no mirror and an empty data home, and fails if any of
those tests fails instead of skipping."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hgner.data import catalog, datahome


def missing_reason(name: str) -> str | None:
    """Why corpus ``name`` cannot be loaded without the internet, or None when it can."""
    manifest, split = catalog.resolve(name) or (None, None)
    assert manifest is not None and split is not None, f"{name} is not a catalogue split"
    if manifest.nltk_package is not None:
        package = datahome.nltk_location(manifest)
        if package is None:
            return f"{name}: NLTK's {manifest.nltk_package} package not found (set NLTK_DATA)"
        if split.file and datahome.nltk_find(f"corpora/{manifest.nltk_package}/{split.file}") is None:
            return f"{name}: the {manifest.nltk_package} package at {package} has no {split.file}"
        return None
    if datahome.file_path(manifest, split).is_file():
        return None
    mirror = os.environ.get("HGNER_MIRROR", "")
    if mirror and (Path(mirror) / manifest.name / str(split.file)).is_file():
        return None
    return (f"{name}: not in the data home and no HGNER_MIRROR folder has {manifest.name}/{split.file} "
            "(set HGNER_MIRROR, or run `hgner corpora fetch` with HGNER_DATA pointing at the data home)")


def needs_corpus(*names: str) -> pytest.MarkDecorator:
    """The ``corpus`` marker for a test that reads the catalogue corpora ``names``: it is skipped
    unless every one of them can be loaded offline (``skip_missing``)."""
    return pytest.mark.corpus(*names)


def skip_missing(item: pytest.Item) -> None:
    """Skip ``item``, saying why, when a corpus its ``corpus`` markers name cannot be loaded offline."""
    names = [name for marker in item.iter_markers("corpus") for name in marker.args]
    reasons = [reason for reason in map(missing_reason, dict.fromkeys(names)) if reason]
    if reasons:
        pytest.skip("; ".join(reasons))
