"""hgner: named-entity recognition with CRFs, decoded by Viterbi, annealed Gibbs, herded Gibbs
and their variants on one factor graph.

The Python API (``__all__``)::

    import hgner
    tagger = hgner.load("en-conll03", "viterbi")   # a Tagger; decoder settings as keywords
    tagger.tag("Jim Smith flew to Paris.")          # [Entity(start=0, end=9, text='Jim Smith', ...), ...]
    tagger.pipe(texts, batch_size=64)               # an iterator of entity lists
    hgner.evaluate("en-conll03", "conll2003:testa", ["viterbi", "herded"])  # the report (.to_json(): the dict)
    hgner.select("notes/", 200, exclude="round1.conll").write("round2.conll")  # the sentences to label next
    hgner.available_decoders(), hgner.available_models(), hgner.model_info("en-conll03")

Importing ``hgner`` is cheap: everything loads on first use.
"""

from __future__ import annotations

import sys as _sys


def _started_as_command() -> bool:
    """Whether this process is the ``hgner`` command: its console script (``__main__`` is the script
    named ``hgner``) or ``python -m hgner`` / ``python -m hgner.cli`` / ``python -m hgner.reseal``,
    which call :func:`hgner.core.process.run` once their modules are imported."""
    argv0 = _sys.argv[0] if _sys.argv else ""
    if argv0 == "-m":  # python -m: the module's name comes after -m
        flags = getattr(_sys, "orig_argv", [])
        module = next((flags[i + 1] for i, flag in enumerate(flags[:-1]) if flag == "-m"), None)
        return module in ("hgner", "hgner.cli", "hgner.reseal")
    name = argv0.replace("\\", "/").rpartition("/")[2]
    return name.partition(".")[0].removesuffix("-script") == "hgner" and \
        getattr(_sys.modules.get("__main__"), "__file__", None) == argv0


if _started_as_command():  # from this line on, SIGINT, SIGTERM and SIGHUP wait (blocked) until
    import _signal  # hgner.core.process.run handles them: one line, exit 130/143/129 (_signal: no enum set-up)

    if hasattr(_signal, "pthread_sigmask"):
        _signal.pthread_sigmask(_signal.SIG_BLOCK, {_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP})

from .core.numba_cache import ensure_cache_dir as _ensure_cache_dir  # noqa: E402
from .core.version import __version__  # noqa: E402

_ensure_cache_dir()  # before any kernel is defined: numba needs somewhere to cache it

TYPE_CHECKING = False  # (typing not imported: the console script's first import stays small, see hgner.core.process)

__all__ = [
    "Entity",
    "ModelInfo",
    "Selection",
    "Tagger",
    "__version__",
    "available_decoders",
    "available_models",
    "evaluate",
    "load",
    "model_info",
    "select",
]

if TYPE_CHECKING:
    from .adaptation.select import Selection
    from .api import ModelInfo, available_decoders, available_models, evaluate, load, model_info, select
    from .tagging.tagger import Entity, Tagger

_HOMES = {"Entity": "tagging.tagger", "Tagger": "tagging.tagger", "ModelInfo": "api", "available_decoders": "api",
          "available_models": "api", "evaluate": "api", "load": "api", "model_info": "api", "select": "api",
          "Selection": "adaptation.select"}


def __getattr__(name: str) -> object:
    if name in _HOMES:
        import importlib

        return getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
    raise AttributeError(f"module 'hgner' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
