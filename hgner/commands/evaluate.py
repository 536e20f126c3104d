"""``hgner evaluate``: score decoders on a tagged corpus (:mod:`hgner.evaluation`), here or on a
Dask cluster (:mod:`hgner.distributed`), and print or write the report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .. import commands
from ..core.errors import HgnerError, named
from ..core.fileio import STANDARD_OUTPUT, check_writable, outputs_together, refuse_inputs
from ..core.integrity import refuse_model_folder
from ..core.scoring import MODES
from ..data.reading import NO_DOCUMENTS, check_documents
from ..graph.kinds import GRAPH_KINDS
from ..tagging.defaults import DEFAULT_MODEL
from ..text.rawtext import LAYOUTS
from .arguments import (
    OFFLINE_HELP,
    assignments,
    checked_by,
    cluster_spec,
    file_name,
    int_list,
    names,
    positive,
    positive_int,
    scheme,
)

NAME = "evaluate"
DOCUMENTS_HELP = ("documents: the corpus's own (-DOCSTART-), one per sentence, or groups of N sentences "
                  f"(default auto: the corpus's own, groups of {NO_DOCUMENTS} sentences when it has none)")
OUTPUTS = ("json", "plot", "predictions")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(NAME, help=commands.COMMANDS[NAME])
    parser.add_argument("--model", default=DEFAULT_MODEL, help=f"model name or directory (default {DEFAULT_MODEL})")
    parser.add_argument("--corpus", required=True,
                        help="CoNLL file or catalogue name: conll2003:SPLIT, wikigold, nltk:ieer, nltk:conll2002/FILE "
                             "(hgner corpora list)")
    parser.add_argument("--decoders", type=names, default=["viterbi"],
                        help="comma-separated decoders (default viterbi; hgner decoders lists them)")
    parser.add_argument("--sweeps", type=int_list, default=[100], help="sweep counts for samplers, e.g. 100,400,800")
    parser.add_argument("--seeds", type=positive_int, default=1,
                        help="runs with seeds 0..N-1 for stochastic decoders (default 1)")
    parser.add_argument("--scheme", type=scheme, help="tag scheme of the corpus (detected and printed when omitted; "
                                                      "given, it overrides leniently: tags are read as conlleval "
                                                      "reads them)")
    parser.add_argument("--documents", type=checked_by(check_documents), default="auto",
                        metavar="corpus|sentence|N", help=DOCUMENTS_HELP)
    parser.add_argument("--mode", choices=MODES, default="conlleval", help="scoring mode (default conlleval)")
    parser.add_argument("--graph", choices=GRAPH_KINDS, default="chain",
                        help="chain, or skip: the chain plus skip edges between repeated names in a document, with "
                             "the model's skip potential (viterbi and crfsuite still decode the chain; default chain)")
    parser.add_argument("--calibration", type=positive, metavar="FACTOR",
                        help="the factor on every potential instead of the model's calibration factor (hgner models "
                             "info prints it); 1 scores the model as trained. Viterbi and exact labellings do not "
                             "change with it; marginals and samplers do")
    parser.add_argument("--input", choices=["tokens", "raw"], default="tokens",
                        help="tokens: tag the corpus's own tokens and sentences (default); raw: rebuild each "
                             "document's text, tag it as 'hgner tag' does, score entities by character span")
    parser.add_argument("--layout", choices=LAYOUTS, default="lines",
                        help="with --input raw: one sentence per line (default), all sentences of a document on "
                             "one line (paragraph), or that paragraph hard-wrapped at 72 columns (wrapped)")
    parser.add_argument("--labels", type=names, metavar="TYPE,...",
                        help="score only these entity types, e.g. PER,LOC (default: every type)")
    parser.add_argument("--bootstrap", type=positive_int, default=0, metavar="B",
                        help="a 95%% interval on each F1 from B resamples of the documents, e.g. 1000 (--documents "
                             "sentence resamples sentences)")
    parser.add_argument("--bootstrap-seed", type=int, default=0, metavar="S", help="seed of the resamples (default 0)")
    _add_outputs(parser)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a decoder setting (repeatable), given to every decoder that takes it, e.g. --set "
                             "damping=0.5")
    parser.add_argument("--offline", action="store_true", help=OFFLINE_HELP)
    parser.add_argument("--cluster", type=cluster_spec, metavar="SPEC",
                        help="featurise and decode on a Dask cluster: local, local:N (N worker processes) or "
                             "tcp://HOST:PORT (a running scheduler); same scores as without (pip install 'hgner[dask]')")
    return parser


def _add_outputs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", type=file_name, metavar="FILE", help="write the full report as JSON (-: to standard output, "
                        "the table then going to standard error)")
    parser.add_argument("--plot", type=file_name, metavar="FILE.png",
                        help="draw F1 against sweeps and against seconds (matplotlib)")
    parser.add_argument("--predictions", type=file_name, metavar="FILE",
                        help="write 'token gold predicted' CoNLL (one file per run, suffixed, when there are several; "
                             "-: one run's to standard output, the table then going to standard error)")


def evaluate_options(args: argparse.Namespace) -> Any:
    """The :class:`~hgner.evaluation.options.EvaluateOptions` of the parsed arguments."""
    from ..evaluation.options import EvaluateOptions  # (startup: see hgner.commands)

    return EvaluateOptions(model=args.model, corpus=args.corpus, decoders=tuple(args.decoders),
                           sweeps=tuple(args.sweeps), seeds=args.seeds, mode=args.mode, graph=args.graph,
                           settings=assignments(args.set), input=args.input, layout=args.layout,
                           predictions=args.predictions, scheme=args.scheme, documents=args.documents,
                           calibration=args.calibration, offline=args.offline, labels=args.labels,
                           bootstrap=args.bootstrap, bootstrap_seed=args.bootstrap_seed)


def _check_outputs(args: argparse.Namespace, runs: Any) -> list[str]:
    """The outputs that go to standard output, once every output file is checked (before any model
    or corpus is read): writable, and no two the same file (``--predictions`` names one file per
    run of ``runs`` when there are several)."""
    from ..evaluation.evaluator import prediction_paths  # (startup: see hgner.commands)

    if args.input == "raw" and args.cluster:
        raise HgnerError(f"{named('input')} raw scores entities by character span: it takes no {named('cluster')}")
    to_stdout = [option for option in OUTPUTS if getattr(args, option) == STANDARD_OUTPUT]
    if len(to_stdout) > 1:
        raise HgnerError(f"{' and '.join(named(o) for o in to_stdout)} both name standard output (-): give each but "
                         "one a file")
    if args.plot == STANDARD_OUTPUT:
        raise HgnerError(f"{named('plot')} -: a plot is an image file; give FILE.png (or .pdf, .svg)")
    claimed: dict[Path, str] = {}  # file -> the option that names it
    for option in OUTPUTS:
        given = getattr(args, option)
        if not given or given == STANDARD_OUTPUT:
            continue
        for path in prediction_paths(given, runs) if option == "predictions" else [given]:
            check_writable(path)
            earlier = claimed.setdefault(Path(path).resolve(), option)
            if earlier != option:
                raise HgnerError(f"{named(earlier)} and {named(option)} both name {path}: give each its own file")
    if args.plot:
        from ..evaluation.report import check_plot_format  # (matplotlib: only with --plot)

        check_plot_format(args.plot)
    return to_stdout


def run(args: argparse.Namespace) -> int:
    """``hgner evaluate``: see ``hgner evaluate --help``."""
    from ..evaluation.evaluator import load_inputs  # (startup: see hgner.commands)

    options = evaluate_options(args)  # every run checked before any model or corpus is read
    to_stdout = _check_outputs(args, options.runs)
    model, corpus = load_inputs(options)  # (a corpus fetched into the data home is in place before the block)
    for option in ("json", "plot"):  # (evaluate refuses them as each run's predictions file)
        refuse_inputs(getattr(args, option), [corpus.file, *model.files()], named(option))
    with outputs_together(refuse_model_folder):  # the predictions, JSON and plot replace earlier ones together, or none do
        return _evaluate(args, options, to_stdout, model, corpus)


def _evaluate(args: argparse.Namespace, options: Any, to_stdout: list[str], model: Any, corpus: Any) -> int:
    """Evaluate, print the tables and write the outputs."""
    from ..evaluation.evaluator import evaluate  # (startup: see hgner.commands)
    from ..evaluation.report import format_per_type, format_report, format_table3, plot, write_json
    from ..evaluation.runs import local_outcomes

    progress = sys.stderr.isatty()
    if args.cluster:
        from ..distributed.connect import connect  # the Dask side loads only with --cluster
        from ..distributed.evaluate import cluster_outcomes

        with connect(args.cluster) as client:
            report = evaluate(model, corpus, options, outcomes=cluster_outcomes(client), progress=progress)
    else:
        report = evaluate(model, corpus, options, outcomes=local_outcomes, progress=progress)
    table = sys.stderr if to_stdout else sys.stdout  # standard output carries the JSON or predictions alone
    format_report(report, table)
    format_per_type(report, table)
    if any(r.sweeps is not None for r in report.results):
        table.write("\nF1 by sweeps (mean (sd) over seeds; decoding seconds in brackets):\n")
        format_table3(report, table)
    if args.json:
        write_json(report, args.json)
    if args.plot:
        plot(report, args.plot)
    return 0
