"""The commands of ``hgner``, one module each (as spaCy's ``spacy/cli/``): ``add_parser(subparsers)``
adds the command's parser, ``run(args) -> int`` runs it, a thin function over library calls.
:data:`COMMANDS` is the registry :mod:`hgner.cli` builds its parser from.

Startup: a command's module imports at module level only what its parser needs (defaults and
value checks, no numpy, numba or spaCy), and its ``run`` imports the application it calls, so
``hgner tag --help`` or a usage error answers at once and ``hgner tag`` loads no evaluation,
training or Dask code. Only the command that runs is imported (:func:`hgner.cli.build_parser`
imports them all for the full parser).
"""

from __future__ import annotations

import importlib
from types import ModuleType

COMMANDS = {
    "train": "train a linear-chain CRF on a CoNLL corpus",
    "evaluate": "score decoders on a tagged corpus",
    "select": "choose the sentences of your text worth labelling, written as CoNLL to label",
    "tag": "tag raw text: arguments, files or standard input",
    "decoders": "every decoder: what it is, its capabilities and settings",
    "corpora": "the corpus catalogue: list, fetch, verify, info",
    "models": "list the shipped models and the data home's, or show one (hgner models info NAME)",
    "serve": "serve a JSON API and a web page where decoders compete on your text",
}
"""Every command (the module ``hgner.commands.NAME``) and its line in ``hgner --help``, in that order."""

NAMES = tuple(COMMANDS)


def load(name: str) -> ModuleType:
    """The module of command ``name`` (one of :data:`NAMES`)."""
    return importlib.import_module(f"{__name__}.{name}")
