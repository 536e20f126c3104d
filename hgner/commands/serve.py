"""``hgner serve``: a JSON API and a web page where decoders compete on your text (issue 38)."""

from __future__ import annotations

import argparse
import os

from .. import commands
from ..core.errors import HgnerError
from ..server.settings import (
    API_KEY_VARIABLE,
    DEFAULT_HOST,
    DEFAULT_MAX_CHARS,
    DEFAULT_MAX_DOCUMENTS,
    DEFAULT_MAX_QUEUE,
    DEFAULT_PORT,
    DEFAULT_TIMEOUT,
    ServerSettings,
)
from ..tagging.defaults import DEFAULT_MODEL

NAME = "serve"


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        NAME, help=commands.COMMANDS[NAME],
        description="Serve /v1/tag, /v1/compare, /v1/models, /v1/decoders, /health, /ready, /metrics and a web page "
                    "at / (pip install 'hgner[serve]'). Models load once per worker, at startup; a request can name "
                    "only the models given here.")
    parser.add_argument("--model", action="append", metavar="NAME|PATH",
                        help=f"a model to serve beside the default, {DEFAULT_MODEL} (repeatable; 'all': every model "
                             "hgner models lists); a request that names no model gets the default")
    parser.add_argument("--host", default=DEFAULT_HOST,
                        help=f"address to bind (default {DEFAULT_HOST}; another needs --api-key or --insecure)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any free)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes, each with its own models (default 1)")
    parser.add_argument("--max-chars", type=int, default=DEFAULT_MAX_CHARS,
                        help=f"characters of text in one request, all documents together (default {DEFAULT_MAX_CHARS}); "
                             "more is a 413")
    parser.add_argument("--max-documents", type=int, default=DEFAULT_MAX_DOCUMENTS,
                        help=f"documents in one batch (default {DEFAULT_MAX_DOCUMENTS}); more is a 413")
    parser.add_argument("--max-queue", type=int, default=DEFAULT_MAX_QUEUE,
                        help=f"requests waiting or decoding in one worker (default {DEFAULT_MAX_QUEUE}); more is a 429 "
                             "with Retry-After")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                        help=f"seconds to answer a request (default {DEFAULT_TIMEOUT:g}), then a 504; decoders that "
                             "take a time_limit get it")
    parser.add_argument("--api-key", help=f"require 'Authorization: Bearer KEY' on everything but /health "
                                          f"(default: the {API_KEY_VARIABLE} environment variable)")
    parser.add_argument("--cors-origin", action="append", default=[], metavar="ORIGIN",
                        help="allow browser pages from ORIGIN to call the API (repeatable; default: none)")
    parser.add_argument("--insecure", action="store_true",
                        help="allow binding an address other machines reach without an API key")
    parser.add_argument("--annotate", metavar="QUEUE",
                        help="also serve an annotation page at /annotate over QUEUE: the CoNLL file hgner select --out "
                             "writes, or plain text named *.txt, one sentence per line (tagged with the default model)")
    parser.add_argument("--annotations", metavar="FILE",
                        help="where --annotate saves each accepted sentence (CoNLL IOB2 for hgner train --train); "
                             "the sentences already in it are not shown again")
    return parser


def run(args: argparse.Namespace) -> int:
    """Check the options and the models' names, then serve until SIGTERM (exit status 0)."""
    settings = ServerSettings(models=served_models(args.model or []), host=args.host, port=args.port, workers=args.workers,
                              max_chars=args.max_chars, max_documents=args.max_documents, max_queue=args.max_queue,
                              timeout=args.timeout, api_key=_api_key(args.api_key),
                              cors_origins=tuple(args.cors_origin), insecure=args.insecure,
                              annotate=args.annotate, annotations=args.annotations)
    try:
        from ..server.running import serve
    except ImportError as error:
        raise HgnerError(f"hgner serve needs the serve extra ({error.name} is missing): "
                         "pip install 'hgner[serve]'") from None
    return serve(settings)


def served_models(given: list[str]) -> dict[str, str]:
    """Name -> directory of the models to serve: the default first, then those ``given``
    (``all``: every model ``hgner models`` lists); a model named twice from one directory once."""
    from ..api import available_models
    from ..crf.modelfiles import model_directory, model_name, read_metadata

    models: dict[str, str] = {}
    for each in [DEFAULT_MODEL, *given]:
        for one in available_models() if each == "all" else [each]:
            directory = model_directory(one).resolve()  # a bad name or path is the error loading it gives
            name = model_name(directory, read_metadata(directory))
            if models.get(name, str(directory)) != str(directory):
                raise HgnerError(f"--model {one}: a model named {name!r} is already served ({models[name]})")
            models[name] = str(directory)
    return models


def _api_key(given: str | None) -> str | None:
    """``--api-key``, else :data:`API_KEY_VARIABLE` when set: an empty one is refused (by the
    settings' check), never taken for "no key"."""
    return given if given is not None else os.environ.get(API_KEY_VARIABLE)
