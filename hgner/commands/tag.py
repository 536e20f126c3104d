"""``hgner tag``: raw text in, entities out (:mod:`hgner.tagging`); with ``--cluster``, a Dask job
(:mod:`hgner.distributed`, loaded only then)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from functools import partial
from typing import Any

from .. import commands
from ..core import registry
from ..core.errors import HgnerError, named
from ..core.fileio import outputs_together, refuse_inputs
from ..core.integrity import refuse_model_folder
from ..core.process import lasting
from ..core.wording import counted
from ..graph.kinds import GRAPH_KINDS
from ..tagging.defaults import DEFAULT_DECODER, DEFAULT_MODEL, DEFAULT_SPLIT, SKIP_DEFAULT_DECODER, SKIP_MAX_TOKENS
from ..tagging.inputs import DEFAULT_GLOB, check_glob, resolve_inputs
from ..tagging.records import DEFAULT_TEXT_FIELD
from ..tagging.splitting import SPLITS
from ..tagging.writers import DEFAULT_FORMAT, OutputOptions, output_format
from .arguments import assignments, checked_by, cluster_spec, name, names, positive_int, probability, scheme

NAME = "tag"
DESCRIPTION = """Tag raw text. Each input is one document (--split lines: each of its lines):
  an argument that names an existing file is read as a file (UTF-8), a .jsonl/.ndjson or .csv
  file as its records (one document each: see --text-field);
  one that looks like a path ('/' in it or a .txt/.md/... ending, no spaces) but does not
  exist is an error; any other argument is the text itself;
  an existing directory gives its files matching --glob, recursively, in path order
  (hidden files and folders left out; with --cluster, its JSONL and Parquet files too);
  no argument, or '-', reads standard input. --text or --files force one reading."""
EPILOG = (f"defaults: --model {DEFAULT_MODEL} --decoder {DEFAULT_DECODER} (the best measured configuration with\n"
          f"per-entity confidences; --graph skip --decoder exact scored 0.16 F1 more on eng.testa but has no "
          "confidences)\nentity confidence: the minimum over the entity's tokens of the marginal probability of the "
          "predicted tag\n(exact for viterbi, sample frequencies for samplers, null for a decoder without marginals)")
CLUSTER_ONLY = ("out", "part_format")
LOCAL_ONLY = ("output", "format", "scheme", "jobs")
EOF_KEYS = "Ctrl-Z then Enter" if sys.platform == "win32" else "Ctrl-D on a new line"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(NAME, help=commands.COMMANDS[NAME],
                                   formatter_class=argparse.RawDescriptionHelpFormatter, description=DESCRIPTION,
                                   epilog=EPILOG)
    parser.add_argument("inputs", nargs="*", metavar="INPUT", help="text, file, or '-' for standard input (the default)")
    reading = parser.add_mutually_exclusive_group()
    reading.add_argument("--text", dest="reading", action="store_const", const="text", default="auto",
                         help="every INPUT is text, even if a file of that name exists")
    reading.add_argument("--files", dest="reading", action="store_const", const="files",
                         help="every INPUT is a file: a missing one is an error")
    parser.add_argument("--model", default=DEFAULT_MODEL, help=f"model name or directory (default {DEFAULT_MODEL})")
    parser.add_argument("--decoder", type=name, help=f"decoder (default {DEFAULT_DECODER}; {SKIP_DEFAULT_DECODER} "
                                                     "with --graph skip; hgner decoders lists them)")
    parser.add_argument("--graph", choices=GRAPH_KINDS, default="chain",
                        help=f"chain, or skip (skip edges within a document; documents over {SKIP_MAX_TOKENS} "
                             "tokens are tagged in chunks of that size, with a note)")
    parser.add_argument("--sweeps", type=positive_int, help="sweeps for sampling decoders (their default when omitted)")
    parser.add_argument("--seed", type=int, help="random seed for stochastic decoders")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a decoder setting (repeatable), e.g. --decoder gibbs --set schedule=constant")
    formats = {format_name: output_format(format_name) for format_name in registry.names(registry.output_formats)}
    parser.add_argument("--format", choices=list(formats),
                        help="; ".join(f"{n}: {writer.summary}" for n, writer in formats.items())
                             + f" (default {DEFAULT_FORMAT})")
    parser.add_argument("--scheme", type=scheme, help="tag scheme of conll output: IOB2 (the default), BIOES or IO")
    parser.add_argument("--min-confidence", type=probability, metavar="X",
                        help="leave out entities whose confidence is below X (entities without one are kept)")
    parser.add_argument("--labels", type=names, metavar="TYPE,...",
                        help="keep only the entities of these types, e.g. PER,LOC (default: every type of the model)")
    parser.add_argument("--split", choices=list(SPLITS), default=DEFAULT_SPLIT,
                        help="none: each input is one document (the default); lines: each non-blank line is one "
                             "(unrelated short texts, one a line), offsets still into the whole input")
    parser.add_argument("--text-field", "--text-column", metavar="NAME",
                        help=f"the text field of JSONL, CSV (header row) and, with --cluster, Parquet records "
                             f"(default {DEFAULT_TEXT_FIELD}); a record's id field is kept in the output")
    parser.add_argument("--glob", type=checked_by(check_glob), default=DEFAULT_GLOB, metavar="PATTERN",
                        help=f"files to read from a directory INPUT, recursively (default {DEFAULT_GLOB!r})")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write to FILE instead of standard output ('-': standard output; a directory for "
                             "--format brat)")
    parser.add_argument("-j", "--jobs", type=positive_int,
                        help="worker processes for several input files (default 1); output stays in input order")
    _add_cluster_arguments(parser)
    return parser


def _add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    scale = parser.add_argument_group("corpus scale (Dask; pip install 'hgner[dask]')")
    scale.add_argument("--cluster", type=cluster_spec, metavar="SPEC",
                       help="tag on a Dask cluster: local, local:N (N worker processes) or tcp://HOST:PORT (a running "
                            "scheduler). INPUTs are then files, folders or glob patterns: text files (one document "
                            "each), JSONL or Parquet (one document per record); needs --out")
    scale.add_argument("--out", metavar="DIR",
                       help="with --cluster: the folder for part-NNNNN.jsonl files (one record per document: source, "
                            "text, entities) and manifest.json; rerunning the same command resumes an unfinished job")
    scale.add_argument("--part-format", choices=("jsonl", "parquet"),
                       help="with --cluster: write the parts as JSONL (default) or Parquet (needs pyarrow)")


def tag_settings(args: argparse.Namespace) -> Any:
    """The :class:`~hgner.tagging.settings.TagSettings` of the parsed arguments (flags named as its fields)."""
    from ..tagging.settings import TagSettings  # (startup: see hgner.commands)

    return TagSettings.from_options({**vars(args), "decoder_settings": assignments(args.set)})


def run(args: argparse.Namespace) -> int:
    """``hgner tag``: see ``hgner tag --help``."""
    if args.cluster:
        return _run_cluster(args)
    for option in CLUSTER_ONLY:
        if getattr(args, option) is not None:
            raise HgnerError(f"{named(option)} needs {named('cluster')} (e.g. {named('cluster')} local:1)")
    writer = output_format(args.format or DEFAULT_FORMAT)
    settings = tag_settings(args)
    inputs = resolve_inputs(args.inputs, args.reading, args.glob, args.text_field or DEFAULT_TEXT_FIELD)
    options = OutputOptions(args.output, args.scheme, len(inputs))
    writer.check(inputs, options)
    with lasting():
        from ..tagging.run import opened, tag_inputs  # (startup: see hgner.commands)
        from ..tagging.tagger import Tagger

        tagger = Tagger(settings)
    options = replace(options, language=tagger.tokenizer.language)
    if writer.stream != "files":
        read = list(dict.fromkeys(i.file for i in inputs if i.file is not None))
        refuse_inputs(args.output, [*read, *tagger.pipeline.model.files()], named("output"),
                      read_stdin=any(i.path == "-" for i in inputs))
    if any(i.path == "-" for i in inputs) and sys.stdin.isatty():
        print(f"hgner tag: reading standard input; end it with {EOF_KEYS}", file=sys.stderr)
    with outputs_together(refuse_model_folder), opened(writer, args.output) as out:  # brat's files: all written, or none replaced
        written = writer(out, options)
        tag_inputs(tagger, inputs, written, progress=sys.stderr.isatty(), jobs=args.jobs or 1)
    if written.written() is not None:
        print(f"hgner tag: {written.written()}", file=sys.stderr)
    return 0


def _run_cluster(args: argparse.Namespace) -> int:
    """``hgner tag --cluster SPEC INPUTS... --out DIR`` (:func:`hgner.distributed.jobs.tag_to_folder`)."""
    from ..distributed.connect import connect  # the Dask side loads only with --cluster
    from ..distributed.jobs import tag_to_folder
    from ..distributed.workers import warm_tagger

    for option in LOCAL_ONLY:
        if getattr(args, option) is not None:
            raise HgnerError(f"{named(option)} is not used with {named('cluster')}, which writes part files in "
                             f"{named('out')} (one JSONL or Parquet record per document, with every entity)")
    if args.reading == "text":
        raise HgnerError(f"{named('text')} is not used with {named('cluster')}, whose inputs are files, folders or "
                         "glob patterns")
    if not args.out:
        raise HgnerError(f"{named('cluster')} needs {named('out')} DIR (the folder for the output parts)")
    if not args.inputs:
        raise HgnerError(f"{named('cluster')} needs input files, folders or glob patterns")
    settings = tag_settings(args)
    given = {key: getattr(args, option) for key, option in (("text_column", "text_field"), ("part_format", "part_format"))
             if getattr(args, option) is not None}
    with connect(args.cluster, prepare=lasting()(partial(warm_tagger, settings))) as client:  # (workers fork after it)
        manifest = tag_to_folder(client, args.inputs, args.out, settings, pattern=args.glob,
                                             progress=sys.stderr.isatty(), **given)
    counts = manifest["counts"]
    print(f"hgner tag: {counted(counts['documents'], 'document')}, {counted(counts['tokens'], 'token')}, "
          f"{counted(counts['entities'], 'entity')} in {counted(counts['parts'], 'part')} "
          f"({counts['parts_this_run']} tagged now) in {args.out}", file=sys.stderr)
    return 0
