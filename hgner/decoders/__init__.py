"""Decoders, registered by name in :data:`hgner.registry.decoders` (entry-point group
``hgner_decoders``). Importing this package registers every built-in decoder."""

from . import chain, crfsuite, exact, herding, meanfield, minibatch, sampling  # noqa: F401  (register the built-ins)
from .base import (Decoder, Decoding, available_decoders, decoder_class, decoder_settings, make_decoder,
                   parse_settings, register)
from .settings import MAX_SWEEPS, Setting, SettingError

__all__ = ["MAX_SWEEPS", "Decoder", "Decoding", "Setting", "SettingError", "available_decoders", "decoder_class",
           "decoder_settings", "make_decoder", "parse_settings", "register"]
