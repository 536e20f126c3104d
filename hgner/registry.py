"""The open registries: decoders, corpus readers and output formats, by name.

Each is a :mod:`catalogue` registry, as spaCy's are. Built-in entries register themselves when
their module is imported; :func:`lookup` imports those modules one at a time until the name is
registered and :func:`names` imports them all, so what is available never depends on what the
caller happened to import, and looking up one entry loads only what it needs. Other packages add
entries through the entry-point groups ``hgner_decoders``, ``hgner_corpus_readers`` and
``hgner_output_formats``::

    [project.entry-points.hgner_decoders]
    my-decoder = "my_package.module:MyDecoder"
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Iterator
from typing import Any

import catalogue

from .errors import UnknownNameError

decoders = catalogue.create("hgner", "decoders", entry_points=True)
corpus_readers = catalogue.create("hgner", "corpus_readers", entry_points=True)
output_formats = catalogue.create("hgner", "output_formats", entry_points=True)

# registry -> (what its entries are called in messages, the modules that register the built-ins;
# a package stands for its submodules, so a new decoder is one new module of hgner.decoders)
_KINDS: dict[int, tuple[str, tuple[str, ...]]] = {
    id(decoders): ("decoder", ("hgner.decoders",)),
    id(corpus_readers): ("corpus reader", ("hgner.corpus", "hgner.ieer")),
    id(output_formats): ("output format", ("hgner.tag",)),
}


def _builtin_modules(registry: catalogue.Registry) -> Iterator[str]:
    """The names of the modules that register ``registry``'s built-ins, in import order."""
    for name in _KINDS[id(registry)][1]:
        package = importlib.util.find_spec(name).submodule_search_locations
        if package is None:
            yield name
        else:
            yield from (f"{name}.{module.name}" for module in pkgutil.iter_modules(package))


def names(registry: catalogue.Registry) -> list[str]:
    """Every registered name, built-in and from entry points, sorted."""
    for module in _builtin_modules(registry):
        importlib.import_module(module)
    return sorted(registry.get_all())


def lookup(registry: catalogue.Registry, name: str) -> Any:
    """The entry registered as ``name``: built-in modules are imported until one registers it, then
    entry points are asked; :class:`UnknownNameError` lists the valid names."""
    for module in _builtin_modules(registry):
        if catalogue.check_exists(*registry.namespace, name):
            break
        importlib.import_module(module)
    if name not in registry:
        raise UnknownNameError(_KINDS[id(registry)][0], name, names(registry))
    return registry.get(name)
