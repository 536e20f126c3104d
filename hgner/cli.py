"""hgner: named-entity recognition with CRFs, decoded by Viterbi, annealed Gibbs, herded Gibbs and
their variants on one factor graph. Bad input exits with status 2 and one line on stderr."""

from __future__ import annotations

import argparse
import errno
import logging
import os
import signal
import sys
import traceback
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TextIO

from . import commands
from .commands.arguments import flag_names
from .core import process
from .core.errors import HgnerError, render
from .core.jit import announced
from .core.version import __version__

_OUTPUT_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO}


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``hgner CMD: error: ...``, exit 2) instead of usage plus error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class _CommandParser(_Parser):
    """A command's parser (``hgner tag``, ``hgner models info``): arguments it does not know are
    its error, named after it, not the top-level parser's; the innermost command's name goes into
    the arguments as ``command_name``, the prefix of the command's error messages."""

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def,override]
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        if not hasattr(namespace, "command_name"):  # (an inner command's parser has set it already)
            namespace.command_name = self.prog
        return namespace, extras


def build_parser(command: str | None = None, *, full: bool = True) -> argparse.ArgumentParser:
    """The ``hgner`` parser with every command's (:data:`hgner.commands.COMMANDS`); with ``full``
    off, only ``command``'s in full and the others' names and help lines (their modules are not
    imported: what :func:`main` parses with)."""
    parser = _Parser(prog="hgner", description=__doc__)
    parser.add_argument("--version", action="version", version=f"hgner {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="print the Python traceback of an internal error (hgner --debug COMMAND ...)")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_CommandParser)
    for name, summary in commands.COMMANDS.items():
        if full or name == command:
            commands.load(name).add_parser(subparsers)
        else:
            subparsers.add_parser(name, help=summary)
    return parser


def _command(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names (its first argument that is not an option), when it is one."""
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if first in commands.NAMES else None


def main(argv: Sequence[str] | None = None, keep_handlers: bool = False) -> int:
    """Run one command. Bad input (:class:`HgnerError`, unreadable or unwritable files, a full
    disk) is one line ``hgner CMD: error: ...`` and exit status 2; anything else is a bug: exit
    status 1 with a line asking for a report (the traceback with ``--debug``). SIGINT, SIGTERM
    and SIGHUP end it with one line and exit status 130, 143 or 129 (:mod:`hgner.core.process`; the
    previous handlers are restored at the end unless ``keep_handlers``)."""
    previous = process.install()
    process.guard_streams()
    try:
        return _main(sys.argv[1:] if argv is None else list(argv))
    except (KeyboardInterrupt, process.Terminated) as error:  # while parsing the arguments, before the boundary
        return _stopped("hgner", process.signal_of(error))
    finally:
        if not keep_handlers:
            process.restore(previous)


def _main(arguments: list[str]) -> int:
    """Parse ``arguments`` and run the command inside the error boundary."""
    args = build_parser(_command(arguments), full=False).parse_args(arguments)
    prefix = args.command_name
    process.install(prefix)
    try:  # undecodable bytes in arguments or file names (lone surrogates) print as escapes, never crash
        sys.stdout.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    except (AttributeError, ValueError):
        pass
    messages, sys.stderr = sys.stderr, _Messages(sys.stderr)
    try:
        with _reporting(prefix), announced(prefix, messages):
            code = _run(args)
        sys.stdout.flush()  # a full device or closed pipe fails here, inside the boundary
        return code
    except Exception as error:  # noqa: BLE001  (the boundary)
        return _failed(error, args, arguments)
    except (KeyboardInterrupt, process.Terminated) as error:
        return _stopped(prefix, process.signal_of(error))
    finally:
        sys.stderr = messages


def _failed(error: Exception, args: argparse.Namespace, arguments: list[str]) -> int:
    """The one line for an error that ended a command, and its exit status: 2 for bad input, 0
    for a closed pipe, 1 (a bug, with a request to report it) for anything else."""
    prefix = args.command_name
    if isinstance(error, HgnerError):
        return _fail(prefix, error.render(flag_names()))
    if isinstance(error, BrokenPipeError):  # e.g. `hgner tag big.txt | head`: stop quietly, as other filters do
        _silence_stdout()
        return 0
    if isinstance(error, OSError):
        if error.filename is None and error.errno in _OUTPUT_ERRORS:  # files name themselves: this is stdout
            _silence_stdout()
            return _fail(prefix, f"cannot write standard output ({error.strerror or error})")
        where = f"{error.filename}: " if error.filename else ""
        return _fail(prefix, f"{where}{error.strerror or error}")
    if isinstance(error, UnicodeError):
        return _fail(prefix, _unicode_message(error, arguments))
    if isinstance(error, (MemoryError, RecursionError)):
        return _fail(prefix, "out of memory" if isinstance(error, MemoryError) else "input nested too deeply")
    if process.signal_of(error) is not None:  # e.g. numba's SystemError around a Ctrl-C
        return _stopped(prefix, process.signal_of(error))
    if args.debug:
        traceback.print_exc()
    how = "with the traceback above" if args.debug else f"with the output of: hgner --debug {args.command} ..."
    print(f"{prefix}: internal error ({type(error).__name__}: {_safe(' '.join(str(error).split()))[:200]}); "
          f"this is a bug in hgner, please report it to its maintainers {how}", file=sys.stderr)
    return 1


def _unicode_message(error: UnicodeError, arguments: list[str]) -> str:
    undecodable = [a for a in arguments if _safe(a) != a]
    if undecodable:
        reason = getattr(error, "reason", error)
        return f"argument '{_safe(undecodable[0])[:80]}' is not valid UTF-8 ({reason}); text to tag must be UTF-8"
    return (f"cannot encode or decode text ({error}); text and output must be UTF-8 (set PYTHONIOENCODING=utf-8 for "
            "a terminal that is not)")


def _stopped(prefix: str, signum: int | None) -> int:
    """One line for the signal that stopped the command, and its exit status."""
    what, status = process.describe(signum or signal.SIGINT)
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


@contextmanager
def _reporting(prefix: str) -> Iterator[None]:
    """While a command runs: the ``hgner`` logger's notes on standard error, and warnings as one
    line ``hgner CMD: warning: ...`` each time they occur; settings fields named as flags."""
    names = flag_names()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_FlagFormatter(names))
    logger = logging.getLogger("hgner")
    saved = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False

    def show(message: Any, category: Any, filename: str, lineno: int, file: TextIO | None = None,
             line: str | None = None) -> None:
        text = message.render(names) if hasattr(message, "render") else str(message)
        print(f"{prefix}: warning: {_safe(text)}", file=sys.stderr)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = show
            yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(saved[0])
        logger.propagate = saved[1]


class _FlagFormatter(logging.Formatter):
    def __init__(self, names: dict[str, str]) -> None:
        super().__init__("%(message)s")
        self.names = names

    def format(self, record: logging.LogRecord) -> str:
        return render(super().format(record), self.names)


def _run(args: argparse.Namespace) -> int:
    return commands.load(args.command).run(args)


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




if __name__ == "__main__":
    sys.exit(process.run(lambda: lambda: main(keep_handlers=True)))
