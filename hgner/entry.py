"""The ``hgner`` console script (and ``python -m hgner``): signal handling first, then the CLI,
imported under the handlers (see :mod:`hgner.core.process`)."""

from __future__ import annotations

from .core.process import run


def _load():
    from .cli import main

    return lambda: main(keep_handlers=True)


def entry() -> int:
    """The ``hgner`` command."""
    return run(_load)
