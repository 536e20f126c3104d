"""``hgner decoders``: every registered decoder, what it is, what it can do and the settings it takes."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .. import commands
from ..core.wording import aligned
from ..decoders import CAPABILITY_WORDS, available_decoders, describe_decoder

NAME = "decoders"
def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    return subparsers.add_parser(NAME, help=commands.COMMANDS[NAME],
        description="Every registered decoder (built-in and from entry points): one line on what it is, its "
                    "capabilities (with the settings tag uses: viterbi gives confidences there) and the settings "
                    "--set takes, with type, default and valid values.")


def describe(name: str) -> str:
    """One decoder's block (:func:`~hgner.decoders.describe_decoder`, with the settings hgner tag
    uses): its summary line, capabilities and settings."""
    info = describe_decoder(name, shared={"marginals": True})
    capabilities = ", ".join(f"{CAPABILITY_WORDS[c]}: {'yes' if value else 'no'}"
                             for c, value in info["capabilities"].items())
    rows = [(s["name"], s["type"], f"default {s['default']}", s["valid"]) for s in info["settings"]]
    return "\n".join([f"{name}: {info['summary']}" if info["summary"] else name, f"  {capabilities}",
                      "  settings (--set NAME=VALUE):" if rows else "  settings: none",
                      *(f"    {line}" for line in aligned(rows))])


def run(args: argparse.Namespace) -> int:
    """``hgner decoders``: one block per decoder."""
    sys.stdout.write("\n\n".join(describe(name) for name in available_decoders()) + "\n")
    return 0
