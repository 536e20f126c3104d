"""``hgner decoders``: every registered decoder, what it is, what it can do and the settings it takes."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .. import commands
from ..decoders import available_decoders, decoder_class, decoder_settings, make_decoder
from ..text import aligned

NAME = "decoders"
CAPABILITY_WORDS = {
    "gives_marginals": "confidences",
    "certifies": "certifies its optimum",
    "exact": "always the exact MAP",
    "searches_map": "best labelling visited",
    "chain_only": "chain graphs only",
    "decodes_features": "crfsuite's own tagger",
}
"""What each capability attribute of :class:`~hgner.decoders.Decoder` means, as the table says it."""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    return subparsers.add_parser(NAME, help=commands.COMMANDS[NAME],
        description="Every registered decoder (built-in and from entry points): one line on what it is, its "
                    "capabilities (with the settings tag uses: viterbi gives confidences there) and the settings "
                    "--set takes, with type, default and valid values.")


def describe(name: str) -> str:
    """One decoder's block: its summary line, capabilities and settings."""
    cls = decoder_class(name)
    decoder = make_decoder(name, shared={"marginals": True})  # as hgner tag builds it
    summary = cls.summary
    capabilities = ", ".join(f"{CAPABILITY_WORDS.get(c, c)}: {'yes' if getattr(decoder, c) else 'no'}"
                             for c in CAPABILITY_WORDS)
    rows = [(s.name, s.type.__name__, f"default {s.default}", s.describe()) for s in decoder_settings(name).values()]
    return "\n".join([f"{name}: {summary}" if summary else name, f"  {capabilities}",
                      "  settings (--set NAME=VALUE):" if rows else "  settings: none",
                      *(f"    {line}" for line in aligned(rows))])


def run(args: argparse.Namespace) -> int:
    """``hgner decoders``: one block per decoder."""
    sys.stdout.write("\n\n".join(describe(name) for name in available_decoders()) + "\n")
    return 0
