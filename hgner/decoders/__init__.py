"""Decoders, registered by name in :data:`hgner.core.registry.decoders` (entry-point group
``hgner_decoders``). Each module of this package registers its own decoders when imported;
:mod:`hgner.core.registry` imports them as a name is looked up, so a new decoder is one new module.
Importing this package loads none of them (no numba)."""

from .base import (
                   CAPABILITIES,
                   CAPABILITY_WORDS,
                   Decoder,
                   Decoding,
                   available_decoders,
                   decoder_arguments,
                   decoder_class,
                   decoder_settings,
                   describe_decoder,
                   make_decoder,
                   register,
                   settings_per_decoder,
)
from .settings import MAX_SWEEPS, Setting, SettingError

__all__ = ["CAPABILITIES", "CAPABILITY_WORDS", "MAX_SWEEPS", "Decoder", "Decoding", "Setting", "SettingError",
           "available_decoders", "decoder_arguments", "decoder_class", "decoder_settings", "describe_decoder",
           "make_decoder", "register", "settings_per_decoder"]
