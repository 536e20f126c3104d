"""``hgner select``: choose the sentences of your text worth labelling (:mod:`hgner.adaptation`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .. import commands
from ..adaptation.defaults import DEFAULT_STRATEGY, DEFAULT_SWEEPS
from ..core.errors import HgnerError, named
from ..core.fileio import check_writable, refuse_inputs
from ..tagging.defaults import DEFAULT_MODEL
from .arguments import OFFLINE_HELP, file_name, name, positive_int

NAME = "select"
DESCRIPTION = """Rank the sentences of unlabelled text by how much labelling them would teach the
model, and write the top N as IOB2 CoNLL (token<TAB>tag), each its own document.
INPUTs: text files (one document each; with --lines, one per line), folders (their *.txt and *.jsonl
files), JSONL files (one document per record, its "text" field); or a labelled corpus: CoNLL files
(.conll, .iob, .bio) or a catalogue name (hgner corpora list). From raw text the output carries the model's entities, to
correct; from a labelled corpus, the gold tags (a simulated annotation). No sentence is written twice."""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(NAME, help=commands.COMMANDS[NAME], description=DESCRIPTION,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("inputs", nargs="+", metavar="INPUT", help="text or JSONL files, folders, or a labelled corpus")
    parser.add_argument("--model", default=DEFAULT_MODEL, help=f"model name or directory (default {DEFAULT_MODEL})")
    parser.add_argument("--n", type=positive_int, required=True, help="how many sentences to write")
    parser.add_argument("--out", type=file_name, required=True, metavar="FILE.conll", help="the CoNLL file to write")
    parser.add_argument("--strategy", type=name, default=DEFAULT_STRATEGY,
                        help=f"how to rank (default {DEFAULT_STRATEGY}): margin, entropy, disagreement, diverse, "
                             "or random (the baseline); see docs/guide/adapting.md")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the random strategy and of annealed Gibbs (default 0)")
    parser.add_argument("--sweeps", type=positive_int, default=DEFAULT_SWEEPS,
                        help=f"sweeps of herded and annealed Gibbs, compared with Viterbi by the disagreement and "
                             f"diverse strategies (default {DEFAULT_SWEEPS})")
    parser.add_argument("--lines", action="store_true",
                        help="every line of a text file is a text of its own (a file of posts, one per line)")
    parser.add_argument("--offline", action="store_true", help=OFFLINE_HELP)
    return parser


def run(args: argparse.Namespace) -> int:
    """``hgner select``: see ``hgner select --help``."""
    from ..adaptation.select import select, write_selection  # (startup: see hgner.commands)
    from ..adaptation.settings import SelectSettings

    if args.out == "-":
        raise HgnerError(f"{named('out')} -: give a file name (the output is written atomically)")
    settings = SelectSettings(model=args.model, n=args.n, strategy=args.strategy, seed=args.seed,
                              sweeps=args.sweeps, lines=args.lines, offline=args.offline)
    check_writable(args.out)
    refuse_inputs(args.out, args.inputs, named("out"))
    selection = select(settings, args.inputs, progress=sys.stderr.isatty())
    write_selection(selection, args.out)
    pool = selection.pool
    kind = "gold tags" if pool.labelled else f"model {args.model}'s entities, to correct"
    sys.stderr.write(f"{args.out}: {len(selection.candidates)} of {len(pool.candidates)} sentences "
                     f"({selection.tokens} tokens; strategy {settings.strategy}), with {kind}\n")
    return 0
