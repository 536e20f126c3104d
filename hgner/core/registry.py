"""The open registries: decoders, corpus readers and output formats, by name.

Each is a :mod:`catalogue` registry, as spaCy's are. Built-in entries register themselves when
their module is imported. A registry knows the modules of the lower layers that register its
built-ins (:attr:`Registry.builtin`): :func:`lookup` imports them one at a time until the name is
registered and :func:`names` imports them all, so what is available never depends on what the
caller happened to import, and looking up one entry loads only what it needs. The output formats'
module imports this one (the tagging application sits above it) and registers them before it
looks any up. Other packages add entries through the entry-point groups ``hgner_decoders``,
``hgner_corpus_readers`` and ``hgner_output_formats``::

    [project.entry-points.hgner_decoders]
    my-decoder = "my_package.module:MyDecoder"
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from functools import cache
from typing import Any

import catalogue

from .errors import UnknownNameError


class Registry(catalogue.Registry):
    """A catalogue registry with what its entries are called in messages (``noun``) and the modules
    that register its built-ins (a package stands for its submodules, so a new decoder is one new
    module of :mod:`hgner.decoders`)."""

    def __init__(self, name: str, noun: str, builtin: tuple[str, ...] = ()) -> None:
        super().__init__(("hgner", name), entry_points=True)
        self.noun = noun
        self.builtin = builtin
        self._entry_points: list[Any] | None = None

    def _get_entry_points(self) -> list[Any]:
        """The entry points of this registry's group, picked once from catalogue's list (which
        catalogue reads once, when it is imported): every lookup asks them, and picking them
        from every installed package's took a millisecond each time."""
        if self._entry_points is None:
            self._entry_points = list(super()._get_entry_points())
        return self._entry_points


decoders = Registry("decoders", "decoder", ("hgner.decoders",))
corpus_readers = Registry("corpus_readers", "corpus reader", ("hgner.data.corpus", "hgner.data.ieer", "hgner.data.annotations"))
output_formats = Registry("output_formats", "output format")


def _builtin_modules(registry: Registry) -> tuple[str, ...]:
    """The names of the modules that register ``registry``'s built-ins, in import order."""
    return _modules(registry.builtin)


@cache  # (a package's modules do not change while it runs)
def _modules(builtin: tuple[str, ...]) -> tuple[str, ...]:
    names: list[str] = []
    for name in builtin:
        spec = importlib.util.find_spec(name)
        package = spec.submodule_search_locations if spec is not None else None
        if package is None:
            names.append(name)
        else:
            names.extend(f"{name}.{module.name}" for module in pkgutil.iter_modules(package))
    return tuple(names)


def names(registry: Registry) -> list[str]:
    """Every registered name, built-in and from entry points, sorted."""
    for module in _builtin_modules(registry):
        importlib.import_module(module)
    return sorted(registry.get_all())


def lookup(registry: Registry, name: str) -> Any:
    """The entry registered as ``name``: built-in modules are imported until one registers it, then
    entry points are asked; :class:`UnknownNameError` lists the valid names."""
    for module in _builtin_modules(registry):
        if catalogue.check_exists(*registry.namespace, name):
            break
        importlib.import_module(module)
    if name not in registry:
        raise UnknownNameError(registry.noun, name, names(registry))
    return registry.get(name)
