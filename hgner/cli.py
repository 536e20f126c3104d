"""hgner: named-entity recognition with CRFs, decoded by Viterbi, annealed Gibbs, herded Gibbs and
their variants on one factor graph. Bad input exits with status 2 and one line on stderr."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from .errors import HgnerError
from .graph import GRAPH_KINDS

def _int_list(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers, got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive whole numbers, got {text!r}")
    return values


def _documents(text: str) -> str:
    from .reading import documents_option

    return documents_option(text)


def _names(text: str) -> list[str]:
    return [v.strip() for v in text.split(",") if v.strip()]


def build_parser() -> argparse.ArgumentParser:
    from . import tag
    from .decoders import available_decoders
    from .pipeline import CrfsuiteReference  # noqa: F401  (registers the crfsuite reference decoder)

    parser = argparse.ArgumentParser(prog="hgner", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    train = commands.add_parser("train", help="train a linear-chain CRF on a CoNLL corpus")
    train.add_argument("--train", required=True, metavar="CORPUS", help="training corpus (file, conll2003:train, nltk:...)")
    train.add_argument("--dev", metavar="CORPUS",
                       help="development corpus: scored with Viterbi, and tunes the skip potential's weight "
                            "(without it no skip potential is written)")
    train.add_argument("--out", required=True, metavar="DIR", help="model directory to write (e.g. models/my-model)")
    train.add_argument("--lang", default="en", metavar="CODE",
                       help="ISO code of the corpus language (default en): recorded in the model for tagging, and "
                            "its spaCy stop words complete the skip edges' learned function words")
    train.add_argument("--scheme", help="tag scheme of the corpora (IOB1, IOB2/BIO, BIOES; detected and printed when "
                                        "omitted; given, it overrides leniently: tags are read as conlleval reads them)")
    train.add_argument("--documents", type=_documents, default="auto", metavar="corpus|sentence|N",
                       help="documents: the corpus's own (-DOCSTART-), one per sentence, or groups of N sentences "
                            "(default auto: the corpus's own, groups of 10 sentences when it has none)")
    train.add_argument("--model-scheme", default="IO",
                       help="tag scheme the model predicts: IO (default; lets samplers move one token at a time), "
                            "IOB2 or BIOES (often a little better with Viterbi)")
    train.add_argument("--c1", type=float, default=0.05, help="L1 regularisation (prunes features; default 0.05)")
    train.add_argument("--c2", type=float, default=0.01, help="L2 regularisation (default 0.01)")
    train.add_argument("--max-iterations", type=int, default=150, help="L-BFGS iterations (default 150)")
    train.add_argument("--features", choices=["recommended", "baseline"], default="recommended",
                       help="recommended: the shipped models' features without their gazetteer (window, affixes, "
                            "conjunctions, truecasing, document-level); baseline: word, shape, affixes and neighbours")
    train.add_argument("--drop-type", action="append", default=[], metavar="TYPE",
                       help="map an entity type to O (repeatable), e.g. --drop-type MISC for a 3-class model")

    evaluate = commands.add_parser("evaluate", help="score decoders on a tagged corpus")
    evaluate.add_argument("--model", default=tag.DEFAULT_MODEL, help=f"model name or directory (default {tag.DEFAULT_MODEL})")
    evaluate.add_argument("--corpus", required=True, help="CoNLL file, conll2003:SPLIT, nltk:ieer or nltk:conll2002/FILE")
    evaluate.add_argument("--decoders", type=_names, default=["viterbi"],
                          help=f"comma-separated decoders (default viterbi); available: {', '.join(available_decoders())}")
    evaluate.add_argument("--sweeps", type=_int_list, default=[100], help="sweep counts for samplers, e.g. 100,400,800")
    evaluate.add_argument("--seeds", type=int, default=1, help="runs with seeds 0..N-1 for stochastic decoders (default 1)")
    evaluate.add_argument("--scheme", help="tag scheme of the corpus (detected and printed when omitted; given, it "
                                           "overrides leniently: tags are read as conlleval reads them)")
    evaluate.add_argument("--documents", type=_documents, default="auto", metavar="corpus|sentence|N",
                          help="documents: the corpus's own (-DOCSTART-), one per sentence, or groups of N sentences "
                               "(default auto: the corpus's own, groups of 10 sentences when it has none)")
    evaluate.add_argument("--mode", choices=["conlleval", "strict"], default="conlleval", help="scoring mode (default conlleval)")
    evaluate.add_argument("--graph", choices=GRAPH_KINDS, default="chain",
                          help="chain, or skip: the chain plus skip edges between repeated names in a document, with "
                               "the model's skip potential (viterbi and crfsuite still decode the chain; default chain)")
    evaluate.add_argument("--json", metavar="FILE", help="write the full report as JSON")
    evaluate.add_argument("--plot", metavar="FILE.png", help="draw F1 against sweeps and against seconds (matplotlib)")
    evaluate.add_argument("--predictions", metavar="FILE",
                          help="write 'token gold predicted' CoNLL (one file per run, suffixed, when there are several)")
    _add_tag_parser(commands, available_decoders())
    return parser


def _add_tag_parser(commands: argparse._SubParsersAction, decoders: list[str]) -> None:
    from . import tag

    parser = commands.add_parser(
        "tag", help="tag raw text: arguments, files or standard input",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Tag raw text. Each input is one document:\n"
                    "  an argument that names an existing file is read as a file (UTF-8);\n"
                    "  one that looks like a path ('/' in it or a .txt/.md/... ending, no spaces) but does not\n"
                    "  exist is an error; any other argument is the text itself;\n"
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
    parser.add_argument("--decoder", default=tag.DEFAULT_DECODER,
                        help=f"decoder (default {tag.DEFAULT_DECODER}); available: {', '.join(decoders)}")
    parser.add_argument("--graph", choices=GRAPH_KINDS, default="chain",
                        help=f"chain, or skip (skip edges within a document; documents over {tag.SKIP_MAX_TOKENS} "
                             "tokens are tagged in chunks of that size with a warning)")
    parser.add_argument("--sweeps", type=int, help="sweeps for sampling decoders (their default when omitted)")
    parser.add_argument("--seed", type=int, help="random seed for stochastic decoders")
    parser.add_argument("--format", choices=tag.FORMATS, default="inline",
                        help="inline: [Jim Smith](PER) markup; conll: token and tag per line; jsonl: one JSON object "
                             "per document with character offsets and confidences; html: a displaCy page (default inline)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    parser.add_argument("-j", "--jobs", type=int, default=1,
                        help="worker processes for several input files (default 1); output stays in input order")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "train":
            return _train(args)
        if args.command == "evaluate":
            return _evaluate(args)
        if args.command == "tag":
            from .tag import run

            return run(args)
    except HgnerError as error:
        print(f"hgner {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("hgner: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `hgner tag big.txt | head`: stop quietly, as other filters do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 0
    return 0


def _train(args: argparse.Namespace) -> int:
    from .features import BASELINE, RECOMMENDED
    from .reading import read_tagged
    from .training import build_model

    train_corpus, documents = read_tagged(args.train, args.scheme, args.documents, sys.stderr, "training corpus")
    dev_corpus, dev_documents = (read_tagged(args.dev, args.scheme, args.documents, sys.stderr, "development corpus")
                                 if args.dev else (None, None))
    label_map = {t: "O" for t in args.drop_type}
    config = RECOMMENDED if args.features == "recommended" else BASELINE
    build_model(train_corpus, args.out, dev=dev_corpus, language=args.lang, documents=documents,
                dev_documents=dev_documents, config=config, scheme=args.model_scheme, c1=args.c1, c2=args.c2,
                max_iterations=args.max_iterations, label_map=label_map, verbose=True, progress=sys.stderr.isatty(),
                log=sys.stderr)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    from .decoders import decoder_class
    from .evaluate import evaluate, format_report, write_json
    from .model import CrfModel
    from .reading import read_tagged
    from .report import format_table3, plot
    from .skip import load as load_skip

    for name in args.decoders:
        decoder_class(name)  # unknown names fail before any work
    if args.seeds < 1:
        raise HgnerError(f"--seeds must be at least 1, got {args.seeds}")
    model = CrfModel.load(args.model)
    if args.graph == "skip":
        load_skip(model)  # a missing skip potential fails before any work
    corpus, _ = read_tagged(args.corpus, args.scheme, args.documents, sys.stderr)
    report = evaluate(model, corpus, args.decoders, sweeps=args.sweeps, seeds=list(range(args.seeds)),
                      mode=args.mode, graph=args.graph, predictions=args.predictions, progress=sys.stderr.isatty())
    format_report(report, sys.stdout)
    if any(r["sweeps"] is not None for r in report["results"]):
        sys.stdout.write("\nF1 by sweeps (mean (sd) over seeds; decoding seconds in brackets):\n")
        format_table3(report, sys.stdout)
    if args.json:
        write_json(report, args.json)
    if args.plot:
        plot(report, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
