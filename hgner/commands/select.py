"""``hgner select``: choose the sentences of your text worth labelling (:mod:`hgner.adaptation`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .. import commands
from ..adaptation.defaults import DEFAULT_STRATEGY, DEFAULT_SWEEPS
from ..tagging.defaults import DEFAULT_MODEL
from .arguments import OFFLINE_HELP, file_name, name, positive_int

NAME = "select"
DESCRIPTION = """Rank the sentences of unlabelled text by how much labelling them would teach
the model, and write the top N as IOB2 CoNLL (token<TAB>tag), each its own
document, in the order chosen: label from the top.

INPUTs: text files (one document each; with --lines, one per line), folders
(their *.txt and *.jsonl files), JSONL files (one document per record, its
"text" field); or a labelled corpus: CoNLL files (.conll, .iob, .bio) or a
catalogue name (hgner corpora list). From raw text the output carries the
model's entities, to correct; from a labelled corpus, the gold tags (a simulated
annotation). No sentence is written twice.

Round by round: label the file, train on it (hgner train --base), then select
again with --exclude naming every file labelled so far, so that no sentence
already labelled takes a place:

  hgner select --n 200 --out round2.conll --exclude round1.conll notes/"""


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
    parser.add_argument("--exclude", action="append", type=file_name, default=[], metavar="FILE",
                        help="sentences already labelled, never chosen again: a CoNLL file (an earlier round's "
                             "--out, hgner serve's annotations), an annotation tool's export or a catalogue name; "
                             "repeat for more files. Their near-copies count as chosen (see docs/guide/adapting.md)")
    parser.add_argument("--offline", action="store_true", help=OFFLINE_HELP)
    return parser


def run(args: argparse.Namespace) -> int:
    """``hgner select``: see ``hgner select --help``."""
    from ..adaptation.select import check_out, select  # (startup: see hgner.commands)
    from ..adaptation.settings import SelectSettings

    settings = SelectSettings(model=args.model, n=args.n, strategy=args.strategy, seed=args.seed, sweeps=args.sweeps,
                              lines=args.lines, offline=args.offline, exclude=tuple(args.exclude))
    check_out(args.out, [*args.inputs, *args.exclude])  # (before the pool is decoded)
    selection = select(settings, args.inputs, progress=sys.stderr.isatty())
    selection.write(args.out)
    pool = selection.pool
    kind = "gold tags" if pool.labelled else f"model {args.model}'s entities, to correct"
    excluded = f", {pool.excluded} already labelled left out" if settings.exclude else ""
    sys.stderr.write(f"{args.out}: {len(selection.candidates)} of {len(pool.candidates)} sentences "
                     f"({selection.tokens} tokens; strategy {settings.strategy}{excluded}), with {kind}\n")
    return 0
