"""hgner: named-entity recognition with CRFs, decoded by Viterbi, annealed Gibbs, herded Gibbs and
their variants on one factor graph. Bad input exits with status 2 and one line on stderr."""

from __future__ import annotations

import argparse
import errno
import math
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .errors import HgnerError, ModelError
from .graphkinds import GRAPH_KINDS

_OUTPUT_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO}


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``hgner CMD: error: ...``, exit 2) instead of usage plus error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class _CommandParser(_Parser):
    """A command's parser (``hgner tag``, ``hgner models info``): arguments it does not know are
    its error, named after it, not the top-level parser's; the innermost command's name goes into
    the arguments as ``command_name``, the prefix of the command's error messages."""

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        if not hasattr(namespace, "command_name"):  # (an inner command's parser has set it already)
            namespace.command_name = self.prog
        return namespace, extras


def _scheme(text: str) -> str:
    from .schemes import normalize_scheme

    try:
        return normalize_scheme(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _finite(text: str, zero: bool) -> float:
    """argparse type: a finite number > 0, or >= 0 when ``zero``."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and (value >= 0 if zero else value > 0)):
        raise argparse.ArgumentTypeError(f"expected a finite number {'>=' if zero else '>'} 0, got {text!r}")
    return value


def _nonnegative(text: str) -> float:
    return _finite(text, zero=True)


def _positive(text: str) -> float:
    return _finite(text, zero=False)


def _positive_int(text: str, maximum: int = 10**9) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= maximum:
        raise argparse.ArgumentTypeError(f"expected a whole number 1..{maximum}, got {text!r}")
    return value


def _neighbour_count(text: str) -> int:
    if text.strip() == "0":
        return 0
    return _positive_int(text, maximum=10)


def _casings(text: str) -> tuple[str, ...]:
    from .augment import CASINGS

    casings = tuple(v.strip() for v in text.split(","))
    if not set(casings) <= set(CASINGS) or len(set(casings)) != len(casings):
        raise argparse.ArgumentTypeError(f"expected {', '.join(CASINGS)} or both, comma-separated, got {text!r}")
    return casings


def _seed_count(text: str) -> int:
    from .api import MAX_SEEDS

    return _positive_int(text, maximum=MAX_SEEDS)


if TYPE_CHECKING:
    from .api import ModelInfo

def _int_list(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers, got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive whole numbers, got {text!r}")
    return values


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}")
    return value


def _source(text: str) -> str:
    """A model name, model directory or file to read a table from (``--gazetteer``, ``--word-clusters``)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a model name, a model directory or a file, got {text!r}")
    return text


def _documents(text: str) -> str:
    from .reading import documents_option

    return documents_option(text)


def _cluster(text: str) -> str:
    from .cluster import local_workers

    try:
        local_workers(text)
    except HgnerError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("--cluster: ")) from None
    return text


def _glob(text: str) -> str:
    from .tag import check_glob

    try:
        return check_glob(text)
    except HgnerError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _language(text: str) -> str:
    """argparse type: a language code spaCy has (checked before any corpus is read)."""
    from .tokenizer import language_defaults

    try:
        language_defaults(text)
    except ModelError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def _names(text: str) -> list[str]:
    names = [v.strip() for v in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"expected comma-separated names, got {text!r}")
    return names


def _name(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a name, got {text!r}")
    return text.strip()


def build_parser() -> argparse.ArgumentParser:
    from . import __version__, tag
    from .reading import NO_DOCUMENTS

    documents_help = ("documents: the corpus's own (-DOCSTART-), one per sentence, or groups of N sentences "
                      f"(default auto: the corpus's own, groups of {NO_DOCUMENTS} sentences when it has none)")
    parser = _Parser(prog="hgner", description=__doc__)
    parser.add_argument("--version", action="version", version=f"hgner {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="print the Python traceback of an internal error (hgner --debug COMMAND ...)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_CommandParser)

    train = commands.add_parser("train", help="train a linear-chain CRF on a CoNLL corpus")
    train.add_argument("--train", required=True, metavar="CORPUS", help="training corpus (file, conll2003:train, nltk:...)")
    train.add_argument("--dev", metavar="CORPUS",
                       help="development corpus: scored with Viterbi, tunes the skip potential's weight and fits the "
                            "calibration factor on every potential (without it neither is written)")
    train.add_argument("--out", required=True, metavar="DIR", help="model directory to write (e.g. models/my-model)")
    train.add_argument("--lang", type=_language, default="en", metavar="CODE",
                       help="ISO code of the corpus language (default en): recorded in the model for tagging, and "
                            "its spaCy stop words complete the skip edges' learned function words")
    train.add_argument("--scheme", type=_scheme, help="tag scheme of the corpora (IOB1, IOB2/BIO, BIOES; detected and printed when "
                                        "omitted; given, it overrides leniently: tags are read as conlleval reads them)")
    train.add_argument("--documents", type=_documents, default="auto", metavar="corpus|sentence|N",
                       help=documents_help)
    train.add_argument("--model-scheme", type=_scheme, default="IO",
                       help="tag scheme the model predicts: IO (default; lets samplers move one token at a time), "
                            "IOB1, IOB2 or BIOES (IOB2 and BIOES often a little better with Viterbi)")
    train.add_argument("--c1", type=_nonnegative, default=0.05, help="L1 regularisation (prunes features; default 0.05)")
    train.add_argument("--c2", type=_nonnegative, default=0.01, help="L2 regularisation (default 0.01)")
    train.add_argument("--max-iterations", type=_positive_int, default=150, help="L-BFGS iterations (default 150)")
    train.add_argument("--features", choices=["recommended", "baseline"], default="recommended",
                       help="recommended: the shipped models' features without their gazetteer (window, affixes, "
                            "conjunctions, truecasing, document-level); baseline: word, shape, affixes and neighbours")
    train.add_argument("--gazetteer", type=_source, metavar="MODEL|FILE",
                       help="add gazetteer features with these lists: a model's (a name or directory; the shipped "
                            "models': GeoNames places, US first names and surnames) or a JSON file mapping list names "
                            "to entries; one-token entries the training corpus usually writes in lower case are left out")
    train.add_argument("--word-clusters", type=_source, metavar="MODEL|FILE",
                       help="add Brown word-cluster features with these clusters: a model's (a name or directory; "
                            "es-conll02: spaCy's Spanish clusters, nl-conll02: its German ones), a model's "
                            "word_clusters.json, or a file of Brown clusters, a line per word: PATH<TAB>WORD<TAB>COUNT "
                            "(as Liang's wcluster writes them)")
    train.add_argument("--lowercase-clusters", action="store_true",
                       help="with --word-clusters: a capitalised word also gets its lowercase form's cluster when both "
                            "have one (es-conll02 uses it)")
    train.add_argument("--neighbour-clusters", type=_neighbour_count, default=0, metavar="K",
                       help="with --word-clusters: the tokens up to K positions away (within the window) also give "
                            "their clusters (default 0)")
    train.add_argument("--word-frequency", action="store_true",
                       help="add each word's frequency bucket in the --lang language (wordfreq's Zipf scale)")
    train.add_argument("--outside-truecase", type=_source, metavar="MODEL|FILE",
                       help="truecase caseless text (all lower or all upper case) with this table after the training "
                            "corpus's own: a model's (en-conll03: spaCy's English word probabilities) or a JSON file "
                            "mapping lowercase words to their usual spelling")
    train.add_argument("--case-augment", type=_casings, default=(), metavar="lower,upper",
                       help="also train on a lowercased and/or uppercased copy of every training document; caseless "
                            "sentences then get weights of their own, so cased text keeps its figures")
    train.add_argument("--drop-type", action="append", default=[], metavar="TYPE",
                       help="map an entity type to O (repeatable), e.g. --drop-type MISC for a 3-class model")
    train.add_argument("--offline", action="store_true", help=OFFLINE_HELP)

    evaluate = commands.add_parser("evaluate", help="score decoders on a tagged corpus")
    evaluate.add_argument("--model", default=tag.DEFAULT_MODEL, help=f"model name or directory (default {tag.DEFAULT_MODEL})")
    evaluate.add_argument("--corpus", required=True,
                          help="CoNLL file or catalogue name: conll2003:SPLIT, wikigold, nltk:ieer, nltk:conll2002/FILE "
                               "(hgner corpora list)")
    evaluate.add_argument("--decoders", type=_names, default=["viterbi"],
                          help="comma-separated decoders (default viterbi; hgner decoders lists them)")
    evaluate.add_argument("--sweeps", type=_int_list, default=[100], help="sweep counts for samplers, e.g. 100,400,800")
    evaluate.add_argument("--seeds", type=_seed_count, default=1, help="runs with seeds 0..N-1 for stochastic decoders (default 1)")
    evaluate.add_argument("--scheme", type=_scheme, help="tag scheme of the corpus (detected and printed when omitted; given, it "
                                           "overrides leniently: tags are read as conlleval reads them)")
    evaluate.add_argument("--documents", type=_documents, default="auto", metavar="corpus|sentence|N",
                          help=documents_help)
    evaluate.add_argument("--mode", choices=["conlleval", "strict"], default="conlleval", help="scoring mode (default conlleval)")
    evaluate.add_argument("--graph", choices=GRAPH_KINDS, default="chain",
                          help="chain, or skip: the chain plus skip edges between repeated names in a document, with "
                               "the model's skip potential (viterbi and crfsuite still decode the chain; default chain)")
    evaluate.add_argument("--calibration", type=_positive, metavar="FACTOR",
                          help="the factor on every potential instead of the model's calibration factor (hgner models "
                               "info prints it); 1 scores the model as trained. Viterbi and exact labellings do not "
                               "change with it; marginals and samplers do")
    evaluate.add_argument("--input", choices=["tokens", "raw"], default="tokens",
                          help="tokens: tag the corpus's own tokens and sentences (default); raw: rebuild each "
                               "document's text, tag it as 'hgner tag' does, score entities by character span")
    evaluate.add_argument("--layout", choices=["lines", "paragraph", "wrapped"], default="lines",
                          help="with --input raw: one sentence per line (default), each document one paragraph on "
                               "one line, or that paragraph hard-wrapped at 72 columns")
    evaluate.add_argument("--json", metavar="FILE", help="write the full report as JSON (-: to standard output, "
                          "the table then going to standard error)")
    evaluate.add_argument("--plot", metavar="FILE.png", help="draw F1 against sweeps and against seconds (matplotlib)")
    evaluate.add_argument("--predictions", metavar="FILE",
                          help="write 'token gold predicted' CoNLL (one file per run, suffixed, when there are several; -: "
                               "one run's to standard output, the table then going to standard error)")
    evaluate.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                          help="a decoder setting (repeatable), given to every decoder that takes it, e.g. --set damping=0.5")
    evaluate.add_argument("--offline", action="store_true", help=OFFLINE_HELP)
    evaluate.add_argument("--cluster", type=_cluster, metavar="SPEC",
                          help="featurise and decode on a Dask cluster: local, local:N (N worker processes) or "
                               "tcp://HOST:PORT (a running scheduler); same scores as without (pip install 'hgner[dask]')")
    _add_tag_parser(commands)
    commands.add_parser("decoders", help="every decoder with its capabilities and settings",
                        description="Every registered decoder (built-in and from entry points): its capabilities "
                                    "(gives_marginals with the default settings) and the settings --set takes, with "
                                    "type, default and valid values.")
    _add_corpora_parser(commands)
    _add_models_parser(commands)
    from .commands import serve
    serve.add_parser(commands)
    return parser


def _add_models_parser(commands: argparse._SubParsersAction) -> None:
    models = commands.add_parser("models", help="list the shipped models, or show one (hgner models info NAME)")
    actions = models.add_subparsers(dest="models_command", metavar="info")
    info = actions.add_parser("info", help="everything meta.json says about one model")
    info.add_argument("name", metavar="NAME", help="a shipped model name or a model directory")


OFFLINE_HELP = ("never download a missing corpus (as HGNER_OFFLINE=1): use the data home, or copy from HGNER_MIRROR "
                "when it is a local folder")


def _add_corpora_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "corpora", help="the corpus catalogue: list, fetch, verify, info",
        description="The corpus catalogue (corpora/*.json) and the data home ($HGNER_DATA, else the user data "
                    "folder). A missing corpus is fetched from $HGNER_MIRROR (a folder or URL laid out as "
                    "CORPUS/FILE) first, then its public sources; every file's size and sha256 are verified.")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    actions.add_parser("list", help="every corpus split: counts once present, license, present or not, path")
    fetch = actions.add_parser("fetch", help="fetch and verify corpora (a corpus name fetches all its splits)")
    fetch.add_argument("names", nargs="+", metavar="NAME", help="corpus or split, e.g. conll2003 wikigold nltk:ieer")
    fetch.add_argument("--offline", action="store_true", help=OFFLINE_HELP)
    verify = actions.add_parser("verify", help="check the sha256 of the files present (exit 1 on a mismatch)")
    verify.add_argument("names", nargs="*", metavar="NAME", help="corpora or splits (default: all)")
    info = actions.add_parser("info", help="a corpus's manifest: splits, sources, label map, license, citation")
    info.add_argument("name", metavar="NAME")


def _add_tag_parser(commands: argparse._SubParsersAction) -> None:
    from . import registry, tag
    from .cluster import PART_WRITERS

    parser = commands.add_parser(
        "tag", help="tag raw text: arguments, files or standard input",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Tag raw text. Each input is one document:\n"
                    "  an argument that names an existing file is read as a file (UTF-8);\n"
                    "  one that looks like a path ('/' in it or a .txt/.md/... ending, no spaces) but does not\n"
                    "  exist is an error; any other argument is the text itself;\n"
                    "  an existing directory gives its files matching --glob, recursively, in path order\n"
                    "  (hidden files and folders left out; with --cluster, its JSONL and Parquet files too);\n"
                    "  no argument, or '-', reads standard input. --text or --files force one reading.",
        epilog=f"defaults: --model {tag.DEFAULT_MODEL} --decoder {tag.DEFAULT_DECODER} (the best measured configuration with\n"
               "per-entity confidences; --graph skip --decoder exact scored 0.16 F1 more on eng.testa but has no confidences)\n"
               "entity confidence: the minimum over the entity's tokens of the marginal probability of the predicted "
               "tag\n(exact for viterbi, sample frequencies for samplers, null for a decoder without marginals)",
    )
    parser.add_argument("inputs", nargs="*", metavar="INPUT", help="text, file, or '-' for standard input (the default)")
    reading = parser.add_mutually_exclusive_group()
    reading.add_argument("--text", dest="reading", action="store_const", const="text", default="auto",
                         help="every INPUT is text, even if a file of that name exists")
    reading.add_argument("--files", dest="reading", action="store_const", const="files",
                         help="every INPUT is a file: a missing one is an error")
    parser.add_argument("--model", default=tag.DEFAULT_MODEL, help=f"model name or directory (default {tag.DEFAULT_MODEL})")
    parser.add_argument("--decoder", type=_name, help=f"decoder (default {tag.DEFAULT_DECODER}; {tag.SKIP_DEFAULT_DECODER} with --graph "
                                          "skip; hgner decoders lists them)")
    parser.add_argument("--graph", choices=GRAPH_KINDS, default="chain",
                        help=f"chain, or skip (skip edges within a document; documents over {tag.SKIP_MAX_TOKENS} "
                             "tokens are tagged in chunks of that size with a warning)")
    parser.add_argument("--sweeps", type=_positive_int, help="sweeps for sampling decoders (their default when omitted)")
    parser.add_argument("--seed", type=int, help="random seed for stochastic decoders")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a decoder setting (repeatable), e.g. --decoder gibbs --set schedule=constant")
    formats = {name: tag.output_format(name) for name in registry.names(registry.output_formats)}
    parser.add_argument("--format", choices=list(formats),
                        help="; ".join(f"{name}: {writer.summary}" for name, writer in formats.items()) + f" (default {tag.DEFAULT_FORMAT})")
    parser.add_argument("--scheme", type=_scheme, help="tag scheme of conll output: IOB2 (the default), BIOES or IO")
    parser.add_argument("--min-confidence", type=_probability, metavar="X",
                        help="leave out entities whose confidence is below X (entities without one are kept)")
    parser.add_argument("--glob", type=_glob, default=tag.DEFAULT_GLOB, metavar="PATTERN",
                        help=f"files to read from a directory INPUT, recursively (default {tag.DEFAULT_GLOB!r})")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write to FILE instead of standard output ('-': standard output; a directory for --format brat)")
    parser.add_argument("-j", "--jobs", type=_positive_int,
                        help="worker processes for several input files (default 1); output stays in input order")
    scale = parser.add_argument_group("corpus scale (Dask; pip install 'hgner[dask]')")
    scale.add_argument("--cluster", type=_cluster, metavar="SPEC",
                       help="tag on a Dask cluster: local, local:N (N worker processes) or tcp://HOST:PORT (a running "
                            "scheduler). INPUTs are then files, folders or glob patterns: text files (one document "
                            "each), JSONL or Parquet (one document per record); needs --out")
    scale.add_argument("--out", metavar="DIR",
                       help="with --cluster: the folder for part-NNNNN.jsonl files (one record per document: source, "
                            "text, entities) and manifest.json; rerunning the same command resumes an unfinished job")
    scale.add_argument("--text-column", help="with --cluster: the text field of JSONL/Parquet records "
                                                             "(default text)")
    scale.add_argument("--part-format", choices=list(PART_WRITERS),
                       help="with --cluster: write the parts as JSONL (default) or Parquet (needs pyarrow)")


def main(argv: Sequence[str] | None = None, keep_handlers: bool = False) -> int:
    """Run one command. Bad input (:class:`HgnerError`, unreadable or unwritable files, a full
    disk) is one line ``hgner CMD: error: ...`` and exit status 2; anything else is a bug: exit
    status 1 with a line asking for a report (the traceback with ``--debug``). SIGINT, SIGTERM
    and SIGHUP end it with one line and exit status 130, 143 or 129 (:mod:`hgner.process`; the
    previous handlers are restored at the end unless ``keep_handlers``)."""
    from . import process

    previous = process.install()
    process.guard_streams()
    try:
        return _main(argv)
    except (KeyboardInterrupt, process.Terminated) as error:  # while parsing the arguments, before the boundary
        return _stopped("hgner", process.signal_of(error))
    finally:
        if not keep_handlers:
            process.restore(previous)


def _main(argv: Sequence[str] | None) -> int:
    from . import process

    parser = build_parser()
    args = parser.parse_args(argv)
    prefix = args.command_name
    process.install(prefix)
    try:  # undecodable bytes in arguments or file names (lone surrogates) print as escapes, never crash
        sys.stdout.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    except (AttributeError, ValueError):
        pass
    messages, sys.stderr = sys.stderr, _Messages(sys.stderr)
    try:
        code = _run(args)
        sys.stdout.flush()  # a full device or closed pipe fails here, inside the boundary
        return code
    except HgnerError as error:
        return _fail(prefix, str(error))
    except (KeyboardInterrupt, process.Terminated) as error:
        return _stopped(prefix, process.signal_of(error))
    except BrokenPipeError:  # e.g. `hgner tag big.txt | head`: stop quietly, as other filters do
        _silence_stdout()
        return 0
    except OSError as error:
        if error.filename is None and error.errno in _OUTPUT_ERRORS:  # files name themselves: this is stdout
            _silence_stdout()
            return _fail(prefix, f"cannot write standard output ({error.strerror or error})")
        where = f"{error.filename}: " if error.filename else ""
        return _fail(prefix, f"{where}{error.strerror or error}")
    except UnicodeError as error:
        undecodable = [a for a in (sys.argv[1:] if argv is None else argv) if _safe(a) != a]
        if undecodable:
            return _fail(prefix, f"argument '{_safe(undecodable[0])[:80]}' is not valid UTF-8 ({error.reason}); "
                                 "text to tag must be UTF-8")
        return _fail(prefix, f"cannot encode or decode text ({error}); text and output must be UTF-8 "
                             "(set PYTHONIOENCODING=utf-8 for a terminal that is not)")
    except MemoryError:
        return _fail(prefix, "out of memory")
    except RecursionError:
        return _fail(prefix, "input nested too deeply")
    except Exception as error:  # noqa: BLE001  (the boundary: a bug, reported as such)
        if process.signal_of(error) is not None:  # e.g. numba's SystemError around a Ctrl-C
            return _stopped(prefix, process.signal_of(error))
        if args.debug:
            traceback.print_exc()
        kind, value = sys.exc_info()[:2]
        how = "with the traceback above" if args.debug else f"with the output of: hgner --debug {args.command} ..."
        print(f"{prefix}: internal error ({kind.__name__}: {_safe(' '.join(str(value).split()))[:200]}); "
              f"this is a bug in hgner, please report it to its maintainers {how}", file=sys.stderr)
        return 1
    finally:
        sys.stderr = messages


def _stopped(prefix: str, signum: int | None) -> int:
    """One line for the signal that stopped the command, and its exit status."""
    import signal

    from .process import describe

    what, status = describe(signum or signal.SIGINT)
    try:
        print(f"{prefix}: {what}", file=sys.stderr)
    except (OSError, ValueError):
        pass
    return status


class _Messages:
    """Standard error while a command runs: its warnings, notes and progress bars. When the reader
    goes away (``hgner train ... 2>&1 | head -1``) the messages stop and the work goes on, instead
    of a closed pipe ending a training run without its model."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._discard()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._discard()

    def _discard(self) -> None:
        """Send the rest (and what is still buffered) to /dev/null."""
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
        except OSError:
            return
        try:
            os.dup2(devnull, self._stream.fileno())
        except (OSError, ValueError):
            pass
        finally:
            os.close(devnull)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _run(args: argparse.Namespace) -> int:
    if args.command == "train":
        return _train(args)
    if args.command == "evaluate":
        return _evaluate(args)
    if args.command == "tag":
        from .tag import run

        return run(args)
    if args.command == "corpora":
        from .corpora_command import run as run_corpora

        return run_corpora(args)
    if args.command == "models":
        return _models(args)
    if args.command == "decoders":
        return _decoders()
    if args.command == "serve":
        from .commands.serve import run as run_serve
        return run_serve(args)
    raise HgnerError(f"unknown command {args.command!r}")


def _safe(text: str) -> str:
    """``text`` printable on any stream: lone surrogates (undecodable bytes in names) made visible."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace") if text else text


def _fail(prefix: str, message: str) -> int:
    print(f"{prefix}: error: {_safe(' '.join(message.split()))}", file=sys.stderr)
    return 2


def _silence_stdout() -> None:
    """Point standard output at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _train(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from .augment import case_augmented
    from .features import BASELINE, RECOMMENDED
    from .model import check_model_target
    from .reading import read_tagged
    from .training import build_model, read_gazetteer, read_outside_truecase, read_word_clusters

    if (args.lowercase_clusters or args.neighbour_clusters) and not args.word_clusters:
        raise HgnerError("--lowercase-clusters and --neighbour-clusters add to the word-cluster features: give "
                         "--word-clusters too")
    gazetteer, gazetteer_sources, gazetteer_file = read_gazetteer(args.gazetteer) if args.gazetteer else (None,) * 3
    clusters, clusters_sources, clusters_file = (read_word_clusters(args.word_clusters) if args.word_clusters
                                                 else (None,) * 3)
    truecase, truecase_sources, truecase_file = (read_outside_truecase(args.outside_truecase) if args.outside_truecase
                                                 else (None,) * 3)
    check_model_target(Path(args.out), [gazetteer_file, clusters_file, truecase_file])  # before the corpora load
    train_corpus, documents = read_tagged(args.train, args.scheme, args.documents, sys.stderr, "training corpus",
                                          offline=args.offline)
    dev_corpus, dev_documents = (read_tagged(args.dev, args.scheme, args.documents, sys.stderr, "development corpus",
                                             offline=args.offline) if args.dev else (None, None))
    train_corpus = case_augmented(train_corpus, args.case_augment) if args.case_augment else train_corpus
    label_map = {t: "O" for t in args.drop_type}
    config = RECOMMENDED if args.features == "recommended" else BASELINE
    config = replace(config, gazetteer=bool(gazetteer), word_clusters=bool(clusters),
                     lowercase_clusters=args.lowercase_clusters, neighbour_clusters=args.neighbour_clusters,
                     frequency=args.lang if args.word_frequency else "", outside_truecase=bool(truecase),
                     caseless_features=bool(args.case_augment))
    build_model(train_corpus, args.out, dev=dev_corpus, language=args.lang, documents=documents,
                dev_documents=dev_documents, config=config, scheme=args.model_scheme, c1=args.c1, c2=args.c2,
                max_iterations=args.max_iterations, label_map=label_map, gazetteer=gazetteer,
                gazetteer_sources=gazetteer_sources, word_clusters=clusters, word_clusters_sources=clusters_sources,
                outside_truecase=truecase, outside_truecase_sources=truecase_sources,
                progress=sys.stderr.isatty(), log=sys.stderr)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    from .decoders.settings import parse_assignments
    from .evaluation import check_runs, evaluate, evaluate_raw, format_report, load_inputs, write_json
    from .fileio import STANDARD_OUTPUT, check_writable, refuse_inputs
    from .report import check_plot_format, format_table3, plot

    settings = parse_assignments(args.set)
    check_runs(args.decoders, args.sweeps, list(range(args.seeds)), settings)  # before any model or corpus is read
    if args.input == "raw" and (args.mode != "conlleval" or args.predictions or args.cluster):
        raise HgnerError("--input raw scores entities by character span: it takes neither --mode strict, "
                         "--predictions nor --cluster")
    if args.input != "raw" and args.layout != "lines":
        raise HgnerError(f"--layout {args.layout} lays out raw text: it needs --input raw")
    outputs = {"--json": args.json, "--plot": args.plot, "--predictions": args.predictions}
    to_stdout = [option for option, path in outputs.items() if path == STANDARD_OUTPUT]
    if len(to_stdout) > 1:
        raise HgnerError(f"{' and '.join(to_stdout)} both name standard output (-): give each but one a file")
    if args.plot == STANDARD_OUTPUT:
        raise HgnerError("--plot -: a plot is an image file; give FILE.png (or .pdf, .svg)")
    named: dict[Path, str] = {}  # file -> the option that names it
    for option, path in outputs.items():
        if not path or path == STANDARD_OUTPUT:
            continue
        check_writable(path)
        earlier = named.setdefault(Path(path).resolve(), option)
        if earlier != option:
            raise HgnerError(f"{earlier} and {option} both name {path}: give each its own file")
    if args.plot:
        check_plot_format(args.plot)
    model, corpus = load_inputs(args.model, args.corpus, calibration=args.calibration, graph=args.graph,
                                scheme=args.scheme, documents=args.documents, offline=args.offline,
                                warn=lambda message: print(f"warning: {message}", file=sys.stderr))
    for option, path in outputs.items():
        refuse_inputs(path, [corpus.file, *model.files()], option)
    if args.input == "raw":
        report = evaluate_raw(model, corpus, args.decoders, sweeps=args.sweeps, seeds=list(range(args.seeds)),
                              graph=args.graph, layout=args.layout, settings=settings, progress=sys.stderr.isatty())
    elif args.cluster:
        from .cluster import connect

        with connect(args.cluster) as client:
            report = evaluate(model, corpus, args.decoders, sweeps=args.sweeps, seeds=list(range(args.seeds)),
                              mode=args.mode, graph=args.graph, settings=settings, predictions=args.predictions,
                              progress=sys.stderr.isatty(), client=client)
    else:
        report = evaluate(model, corpus, args.decoders, sweeps=args.sweeps, seeds=list(range(args.seeds)),
                          mode=args.mode, graph=args.graph, settings=settings, predictions=args.predictions,
                          progress=sys.stderr.isatty())
    table = sys.stderr if to_stdout else sys.stdout  # standard output carries the JSON or predictions alone
    format_report(report, table)
    if any(r["sweeps"] is not None for r in report["results"]):
        table.write("\nF1 by sweeps (mean (sd) over seeds; decoding seconds in brackets):\n")
        format_table3(report, table)
    if args.json:
        write_json(report, args.json)
    if args.plot:
        plot(report, args.plot)
    return 0


def _models(args: argparse.Namespace) -> int:
    """``hgner models``: one row per shipped model; ``hgner models info NAME``: one model in full,
    after loading it as every command does (files against the sizes and sha256 sums ``meta.json``
    records, and the checks of :class:`~hgner.model.CrfModel`)."""
    from .api import available_models, model_info
    from .model import CrfModel
    from .report import aligned, printable

    if args.models_command == "info":
        info = model_info(args.name)
        CrfModel.load(info.path)  # a damaged or inconsistent model is the one-line error loading it gives
        sys.stdout.write(format_model_info(info))
        return 0
    infos = [model_info(name) for name in available_models()]
    rows = [("name", "language", "labels", "scheme", "dev F1", "test F1", "size", "path")]
    for info in infos:
        rows.append((info.name, info.language, ",".join(info.labels), info.scheme, _scores(info.dev),
                     _scores(info.test), f"{info.size / 1e6:.1f} MB", str(info.path)))
    sys.stdout.writelines(printable(line) + "\n" for line in aligned(rows))
    return 0


def _decoders() -> int:
    """``hgner decoders``: one block per decoder: its capabilities (of an instance with the default
    settings), then its settings with type, default and valid values."""
    from .decoders import CAPABILITIES, available_decoders, decoder_settings, make_decoder
    from .report import aligned

    blocks = []
    for name in available_decoders():
        decoder = make_decoder(name)
        capabilities = ", ".join(f"{c} {'yes' if getattr(decoder, c) else 'no'}" for c in CAPABILITIES)
        rows = [(s.name, s.type.__name__, f"default {s.default}", s.describe()) for s in decoder_settings(name).values()]
        blocks.append("\n".join([name, f"  capabilities: {capabilities}",
                                 "  settings (--set NAME=VALUE):" if rows else "  settings: none",
                                 *(f"    {line}" for line in aligned(rows))]))
    sys.stdout.write("\n\n".join(blocks) + "\n")
    return 0


def _scores(scores: dict[str, float]) -> str:
    return ", ".join(f"{f1:.2f} ({corpus})" for corpus, f1 in scores.items()) or "-"


def _calibration(record: dict | None) -> str:
    """``meta.json``'s calibration record, for ``hgner models info``."""
    if record is None:
        return "none (every potential as trained)"
    fitted = f", fitted on {record['corpus']}" if "corpus" in record else ""
    return f"every potential times {record['factor']}{fitted}"


def _skip_potential(meta: dict) -> str:
    """Whether the model has a skip potential (as :func:`hgner.skip.load` decides) and its weight
    (as ``meta.json``'s dev record gives it), for ``hgner models info``."""
    from .model import SKIP_FILES

    if not all(f in meta.get("files", {}) for f in SKIP_FILES):
        return "no (--graph skip needs one)"
    weight = meta.get("dev", {}).get("skip", {}).get("weight")
    if weight is None:
        return "yes"
    return f"yes, weight {weight:g}" + (" (skip edges left out: the skip graph is the chain)" if weight == 0 else "")


def format_model_info(info: ModelInfo) -> str:
    """``hgner models info``: the summary, then the training record and the features (for a model
    whose files were verified)."""
    from .model import META_FILE

    meta = info.metadata
    training = meta.get("training", {})
    lines = [
        ("name", info.name), ("path", str(info.path)), ("language", info.language), ("labels", ", ".join(info.labels)),
        ("scheme", info.scheme), ("dev F1", _scores(info.dev)), ("test F1", _scores(info.test)),
        ("size", f"{info.size:,} bytes"),
        ("files", f"{', '.join(sorted(meta['files']))} (sizes and sha256 as {META_FILE} records)"),
        ("tokenizer", meta.get("tokenizer", "-")),
        ("label map", ", ".join(f"{a} -> {b}" for a, b in meta.get("label_map", {}).items()) or "-"),
        ("training corpus", f"{training.get('corpus', '-')} (sha256 {training.get('sha256', '-')})"),
        ("training", ", ".join(f"{k} {training[k]}" for k in ("sentences", "tokens", "algorithm", "c1", "c2",
                                                              "max_iterations", "iterations", "loss", "seconds")
                               if k in training) or "-"),
        ("features", ", ".join(f"{k}={v}" for k, v in meta.get("features", {}).items()) or "-"),
        ("gazetteer", meta.get("gazetteer_sources", "lists not described") if meta["features"].get("gazetteer") else "-"),
        ("word clusters", meta.get("word_clusters_sources", "not described")
                          if meta["features"].get("word_clusters") else "-"),
        ("skip potential", _skip_potential(meta)),
        ("calibration", _calibration(meta.get("calibration"))),
        ("hgner version", meta.get("hgner_version", "-")),
    ]
    from .report import printable

    width = max(len(key) for key, _ in lines)
    return "".join(f"{key + ':':<{width + 1}} {printable(value)}\n" for key, value in lines)


if __name__ == "__main__":
    from hgner.process import run

    sys.exit(run(lambda: lambda: main(keep_handlers=True)))
