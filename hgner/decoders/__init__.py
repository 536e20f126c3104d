"""Decoders, registered by name in :data:`hgner.registry.decoders` (entry-point group
``hgner_decoders``). Importing this package imports every module in it, which registers every
built-in decoder: a new decoder is one new module."""

import importlib
import pkgutil

from .base import (Decoder, Decoding, available_decoders, decoder_class, decoder_settings, make_decoder,
                   parse_settings, register)
from .settings import MAX_SWEEPS, Setting, SettingError

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
del _module

__all__ = ["MAX_SWEEPS", "Decoder", "Decoding", "Setting", "SettingError", "available_decoders", "decoder_class",
           "decoder_settings", "make_decoder", "parse_settings", "register"]
