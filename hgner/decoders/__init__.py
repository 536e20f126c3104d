"""Decoders, registered by name. Importing this package registers every built-in decoder."""

from . import chain, exact, sampling  # noqa: F401  (registers viterbi, exact, gibbs, herded)
from . import herding, meanfield  # noqa: F401  (registers herded-shared, dhg, rdhg, beg, meanfield)
from . import minibatch  # noqa: F401  (registers min-gibbs, mgpmh, doublemin-gibbs)
from .base import Decoder, Decoding, available_decoders, decoder_class, decoder_options, make_decoder, register

__all__ = ["Decoder", "Decoding", "available_decoders", "decoder_class", "decoder_options", "make_decoder", "register"]
