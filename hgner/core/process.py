"""The command-line process: its signals and its standard streams, in one place.

The command's first line of hgner code (``hgner/__init__.py``, when the process is the ``hgner``
command) blocks SIGINT, SIGTERM and SIGHUP; :func:`run` (what :func:`hgner.entry.entry`, the console
script, calls) installs the handlers of :func:`install` and unblocks them. The handlers turn the
signals into exceptions (:class:`KeyboardInterrupt`, :class:`Terminated`), so that whenever one
arrives (during imports too, or held back until then) the context managers that own temporary
files and folders remove them, and the command ends with one line and exit status 130, 143 or 129,
never a traceback. A second signal while the first is being handled ends the process at once (one line).

:func:`guard_streams` makes closed standard streams harmless: a closed descriptor 0, 1 or 2 is
pointed at ``/dev/null`` (so no file the command opens takes its number and receives its
output); writing to a closed standard output is an error (``cannot write standard output``),
while messages for a closed standard error are dropped.
"""

from __future__ import annotations

import errno
import gc
import os
import signal
import sys
from contextlib import contextmanager

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

EXIT_STATUS: dict[int, int] = {signal.SIGINT: 130, signal.SIGTERM: 143}
if hasattr(signal, "SIGHUP"):
    EXIT_STATUS[signal.SIGHUP] = 129
NAMES: dict[int, str] = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}
if hasattr(signal, "SIGHUP"):
    NAMES[signal.SIGHUP] = "hung up"

received: list[int] = []  # the signals this process has received, in order
_prefix = ["hgner"]  # what the final line starts with (the command's name once it is known)


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived (a BaseException, as KeyboardInterrupt, so that ``except
    Exception`` does not swallow it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _handle(signum: int, frame: Any) -> None:
    received.append(signum)
    if len(received) > 1:  # a second signal while the first is handled: stop now
        say(f"{_prefix[0]}: {NAMES.get(signum, 'stopped')}")
        os._exit(EXIT_STATUS.get(signum, 1))
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signum)


_pending: list[int] = []  # a signal whose exception a finalizer swallowed, raised again by _again


def _unraisable(unraisable: Any) -> None:
    """``sys.unraisablehook`` while the handlers are set: when the signal's exception was raised
    inside a finalizer (a ``__del__`` run by the garbage collector), where Python prints and drops
    it, raise it again 10 ms later, back in the command's own code, without a word."""
    if isinstance(unraisable.exc_value, (KeyboardInterrupt, Terminated)) and received and hasattr(signal, "setitimer"):
        _pending.append(received.pop())
        signal.setitimer(signal.ITIMER_REAL, 0.01)
        return
    sys.__unraisablehook__(unraisable)


def _again(signum: int, frame: Any) -> None:
    """SIGALRM after :func:`_unraisable`: the swallowed signal's exception, raised here."""
    if _pending:
        _handle(_pending.pop(), frame)


def install(prefix: str | None = None, handler: Any = None) -> dict[int, Any]:
    """Turn SIGINT, SIGTERM and SIGHUP into exceptions (main thread only; ``handler`` instead
    when given); ``prefix`` names the command in the line a second signal prints. An exception a
    finalizer swallowed is raised again (:func:`_unraisable`). Returns the previous handlers (for
    :func:`restore`)."""
    if prefix:
        _prefix[0] = prefix
    previous: dict[int, Any] = {}
    for signum in EXIT_STATUS:
        try:
            previous[signum] = signal.signal(signum, handler or _handle)
        except (ValueError, OSError):  # not the main thread, or not settable here
            pass
    if previous and hasattr(signal, "SIGALRM"):
        previous[signal.SIGALRM] = signal.signal(signal.SIGALRM, _again)
        sys.unraisablehook = _unraisable
    return previous


def restore(previous: dict[int, Any]) -> None:
    for signum, handler in previous.items():
        try:
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        except (ValueError, OSError, TypeError):
            pass
    if sys.unraisablehook is _unraisable:
        sys.unraisablehook = sys.__unraisablehook__


def exit_now(signum: int, frame: Any) -> None:
    """After the command has finished: a signal ends the process at once, with one line."""
    what, status = describe(signum)
    say(f"{_prefix[0]}: {what}")
    os._exit(status)


def stopped_by() -> int | None:
    """The first signal this process received, if any."""
    return received[0] if received else None


def describe(signum: int) -> tuple[str, int]:
    """(``interrupted``/``terminated``/``hung up``, exit status) of a signal."""
    return NAMES.get(signum, "stopped"), EXIT_STATUS.get(signum, 1)


def signal_of(error: BaseException) -> int | None:
    """The signal behind ``error``: a :class:`KeyboardInterrupt` or :class:`Terminated` (also
    as the cause or context of another exception, e.g. numba's ``SystemError ... returned a result
    with an exception set``), or any exception raised after a signal arrived."""
    seen = 0
    current: BaseException | None = error
    while current is not None and seen < 20:
        if isinstance(current, KeyboardInterrupt):
            return signal.SIGINT
        if isinstance(current, Terminated):
            return current.signum
        current = current.__cause__ or current.__context__
        seen += 1
    return stopped_by()


def say(line: str) -> None:
    try:
        os.write(2, (line + "\n").encode("utf-8", "backslashreplace"))
    except OSError:
        pass


class _ClosedOutput:
    """Standard output when descriptor 1 was closed: any write is an ``EBADF`` error."""

    encoding = "utf-8"
    errors = "strict"

    def write(self, text: str) -> int:
        if not text:
            return 0
        raise OSError(errno.EBADF, "standard output is closed")

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise OSError(errno.EBADF, "standard output is closed")

    @property
    def buffer(self) -> _ClosedOutput:
        return self

    def reconfigure(self, **_: Any) -> None:
        pass


def guard_streams() -> None:
    """Point closed descriptors 0-2 at ``/dev/null``; a closed standard output becomes
    :class:`_ClosedOutput`, a closed standard error a sink."""
    closed = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.append(fd)
    for fd in closed:
        try:
            opened = os.open(os.devnull, os.O_RDWR)
            if opened != fd:
                os.dup2(opened, fd)
                os.close(opened)
        except OSError:
            pass
    if 1 in closed or sys.stdout is None:
        sys.stdout = _ClosedOutput()  # type: ignore[assignment]
    if 2 in closed or sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115  (for the process's life)
    if 0 in closed or sys.stdin is None:
        sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115


_fork_quiet = [False]


def _quiet_child() -> None:
    """In a forked child (a --jobs worker, a local Dask worker) of a process whose signals are
    handled here: the terminal's SIGINT and SIGHUP are the parent's to handle, and SIGTERM (how a
    pool stops its workers) ends the child as by default, never with a traceback."""
    if _fork_quiet[0] or signal.getsignal(signal.SIGTERM) is _handle:
        for signum in (signal.SIGINT, getattr(signal, "SIGHUP", signal.SIGINT)):
            signal.signal(signum, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # how the driver's nanny stops it


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_quiet_child)


class quiet_forks:
    """Within the block, forked children ignore SIGINT and SIGHUP and die of SIGTERM (local Dask workers: a Ctrl-C at
    the terminal reaches the whole process group, and the driver stops them itself)."""

    def __enter__(self) -> None:
        _fork_quiet[0] = True

    def __exit__(self, *exc: object) -> None:
        _fork_quiet[0] = False


PR_SET_PDEATHSIG = 1  # Linux's prctl option: a signal for this process when its parent dies


def die_with_parent(parent: int, signum: int = signal.SIGTERM) -> None:
    """Have ``signum`` sent to this process when its parent (process ``parent``) dies, even of
    SIGKILL: ``prctl(PR_SET_PDEATHSIG)`` on Linux, else a daemon thread that looks every second;
    at once when the parent is already gone."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)
    else:
        import threading
        import time

        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(1.0)
            os.kill(os.getpid(), signum)

        threading.Thread(target=watch, name="hgner-parent", daemon=True).start()
    if os.getppid() != parent:
        os.kill(os.getpid(), signum)


@contextmanager
def lasting(collect: bool = False) -> Iterator[None]:
    """What the block builds (modules, models, a tagger) lasts as long as the process: the garbage
    collector is off meanwhile, then leaves those objects out of its passes (:func:`gc.freeze`),
    which would otherwise scan them again and again (a pause on every full collection). With
    ``collect``, a collection first, so that the block's garbage is not kept (a long-running process)."""
    gc.disable()
    try:
        yield
    finally:
        if collect:
            gc.collect()
        gc.freeze()
        gc.enable()


def run(load: Callable[[], Callable[[], int]]) -> int:
    """Install the handlers, then call ``load()`` (which imports the command, under them) and the
    function it returns; the exit status. After a signal the process ends here (see :func:`install`).
    Signals that ``hgner/__init__.py`` held back while the command was imported arrive here."""
    try:
        install()
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_UNBLOCK, EXIT_STATUS)  # (a pending one raises here)
        guard_streams()
        status = load()()
    except (KeyboardInterrupt, Terminated) as error:  # during imports, or outside the CLI's own boundary
        what, status = describe(signal_of(error) or signal.SIGINT)
        say(f"hgner: {what}")
    install(handler=exit_now)  # from here to the process's end, a signal cannot raise in the exit path
    if received:  # stopped by a signal: end now, without the exit handlers of libraries interrupted mid-way
        what, code = describe(received[0])  # (a signal some library swallowed still counts: its line too)
        if status != code:
            say(f"{_prefix[0]}: {what}")
        status = code
        for stream in (sys.stdout, sys.stderr):  # (Dask's would print its half-closed cluster's traceback)
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        os._exit(status)
    return status
