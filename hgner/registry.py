"""The open registries: decoders, corpus readers and output formats, by name.

Each is a :mod:`catalogue` registry, as spaCy's are. Built-in entries register themselves when
their module is imported; :func:`lookup` and :func:`names` import those modules first, so what is
available never depends on what the caller happened to import. Other packages add entries through
the entry-point groups ``hgner_decoders``, ``hgner_corpus_readers`` and ``hgner_output_formats``::

    [project.entry-points.hgner_decoders]
    my-decoder = "my_package.module:MyDecoder"
"""

from __future__ import annotations

import importlib
from typing import Any

import catalogue

from .errors import UnknownNameError

decoders = catalogue.create("hgner", "decoders", entry_points=True)
corpus_readers = catalogue.create("hgner", "corpus_readers", entry_points=True)
output_formats = catalogue.create("hgner", "output_formats", entry_points=True)

# registry -> (what its entries are called in messages, the modules that register the built-ins)
_KINDS: dict[int, tuple[str, tuple[str, ...]]] = {
    id(decoders): ("decoder", ("hgner.decoders",)),
    id(corpus_readers): ("corpus reader", ("hgner.corpus", "hgner.ieer")),
    id(output_formats): ("output format", ("hgner.tag",)),
}


def _load_builtins(registry: catalogue.Registry) -> str:
    kind, modules = _KINDS[id(registry)]
    for module in modules:
        importlib.import_module(module)
    return kind


def names(registry: catalogue.Registry) -> list[str]:
    """Every registered name, built-in and from entry points, sorted."""
    _load_builtins(registry)
    return sorted(registry.get_all())


def lookup(registry: catalogue.Registry, name: str) -> Any:
    """The entry registered as ``name``; :class:`UnknownNameError` lists the valid names."""
    kind = _load_builtins(registry)
    if name not in registry:
        raise UnknownNameError(kind, name, names(registry))
    return registry.get(name)
