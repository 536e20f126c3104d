"""Files the tool writes: atomically, and never over one of its inputs.

Every output (``-o``, ``--json``, ``--plot``, ``--predictions``, model files, downloaded corpora)
goes through :func:`atomic_write` (:func:`output_stream` where ``-`` names standard output): the
bytes go to a temporary file in the destination's folder, which is renamed over the destination
only once it is complete. A failure or Ctrl-C leaves the previous file intact and no partial file
behind. :func:`refuse_inputs` is checked before anything is opened for writing, so an output path
that names an input is an error, not data loss. A command that writes several files writes them
inside :func:`outputs_together`: they replace their destinations together at its end, or none do.
A command passes both a check of where it writes (``refuse``: never into a model's folder,
:func:`hgner.core.integrity.refuse_model_folder`).
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import IO

from .errors import HgnerError


def _describe(error: OSError) -> str:
    return error.strerror or str(error)


def check_writable(path: str | os.PathLike) -> Path:
    """``path`` as a Path, or an :class:`HgnerError` saying why a file cannot be written there."""
    target = Path(path)
    if str(path).endswith(("/", os.sep)) and not target.is_dir():  # `-o newdir/`: a folder meant, not a file
        raise HgnerError(f"{path}: no such folder (a name ending in '/' names a folder, and it does not exist)")
    if target.is_dir():
        raise HgnerError(f"{target}: is a directory, expected a file to write")
    folder = target.parent
    if not folder.is_dir():
        raise HgnerError(f"{target}: cannot write (folder {str(folder)!r} does not exist)")
    return target


@contextmanager
def atomic_write(path: str | os.PathLike, *, binary: bool = False, encoding: str = "utf-8",
                 follow_links: bool = True) -> Iterator[IO]:
    """Open a temporary file beside ``path`` for writing; rename it to ``path`` when the block ends
    without an exception, delete it otherwise. OSErrors become one-line :class:`HgnerError`\\ s.
    A symlink at ``path`` (one the user named) is followed: the file it names is replaced and the
    link kept; with ``follow_links=False`` (a path hgner chose, such as a file inside ``-o DIR``)
    the link itself is replaced, never what it points to."""
    target = check_writable(path)
    refuse = _REFUSE.get()
    if refuse is not None:  # a command's output (brat's files in -o DIR): the command's check of where it writes
        refuse(target)
    if not follow_links and target.is_symlink():
        pass  # replaced by the rename below, as a regular file
    elif target.exists() and not target.is_file():  # a device or pipe (/dev/null, /dev/stdout): write to it as it is
        yield from _write_special(target, binary, encoding)
        return
    else:
        target = Path(os.path.realpath(target))  # through a symlink: replace the file it names, keep the link
    temporary = None
    try:
        with signals_deferred():  # (a signal between creating the file and naming it would leave it behind)
            handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
        mode = stat.S_IMODE(os.stat(target).st_mode) if target.is_file() and not target.is_symlink() \
            else 0o666 & ~umask()
        os.chmod(temporary, mode)
        with (os.fdopen(handle, "wb") if binary else os.fdopen(handle, "w", encoding=encoding, errors="backslashreplace")) as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        together = _TOGETHER.get()
        if together is None:
            os.replace(temporary, target)
        else:  # renamed at the end of outputs_together, with the others
            together.append((temporary, target))
    except OSError as error:
        if temporary is not None:
            _remove(temporary)
        raise HgnerError(f"{target}: cannot write ({_describe(error)})") from None
    except BaseException:
        if temporary is not None:
            _remove(temporary)
        raise


STANDARD_OUTPUT = "-"  # the output file name that means standard output

# the (temporary file, destination) pairs written inside outputs_together, waiting for its end
_TOGETHER: ContextVar[list[tuple[str, Path]] | None] = ContextVar("outputs_together", default=None)
# what refuses a destination inside outputs_together (e.g. hgner.core.integrity.refuse_model_folder)
_REFUSE: ContextVar[Callable[[Path], None] | None] = ContextVar("outputs_refuse", default=None)


@contextmanager
def outputs_together(refuse: Callable[[Path], None] | None = None) -> Iterator[None]:
    """Every file :func:`atomic_write` completes inside the block replaces its destination when the
    block ends without an exception, all of them then; none if it fails, so a command that fails
    after writing one output (``--predictions``) and before another (``--json``) leaves both as
    they were. Standard output and devices are written as they come. Only a command's outputs are
    written inside the block: a file it must read back (a corpus fetched into the data home) would
    not be there yet. ``refuse`` is called with each destination before it is written (it raises
    to refuse one)."""
    pending: list[tuple[str, Path]] = []
    token, refusing = _TOGETHER.set(pending), _REFUSE.set(refuse)
    try:
        yield
    except BaseException:
        for temporary, _ in pending:
            _remove(temporary)
        raise
    finally:
        _TOGETHER.reset(token)
        _REFUSE.reset(refusing)
    with signals_deferred():
        for number, (temporary, target) in enumerate(pending):
            try:
                os.replace(temporary, target)
            except OSError as error:
                for left, _ in pending[number:]:
                    _remove(left)
                raise HgnerError(f"{target}: cannot write ({_describe(error)})") from None


@contextmanager
def output_stream(path: str | os.PathLike, *, binary: bool = False,
                  refuse: Callable[[Path], None] | None = None) -> Iterator[IO]:
    """Standard output for ``-`` (:data:`STANDARD_OUTPUT`), else ``path`` written atomically
    (``refuse`` first checks where, as in :func:`outputs_together`)."""
    if str(path) == STANDARD_OUTPUT:
        stream = sys.stdout.buffer if binary else sys.stdout
        yield stream
        stream.flush()
        return
    if refuse is not None:
        refuse(Path(path))
    with atomic_write(path, binary=binary) as out:
        yield out


def _write_special(target: Path, binary: bool, encoding: str) -> Iterator[IO]:
    """Write straight to a character device or a pipe (``/dev/null``, ``/dev/stdout``), which
    cannot be renamed over. The open never blocks: a FIFO that no process reads is an error
    (opening it for writing would wait for a reader forever); sockets and block devices are refused."""
    try:
        fd = os.open(target, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        if error.errno == errno.ENXIO:
            raise HgnerError(f"{target}: a FIFO that no process is reading; expected a file to write") from None
        raise HgnerError(f"{target}: cannot write ({_describe(error)})") from None
    mode = os.fstat(fd).st_mode
    if not (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)):
        os.close(fd)
        raise HgnerError(f"{target}: not a regular file, a character device or a pipe; expected a file to write")
    os.set_blocking(fd, True)
    try:
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding=encoding, errors="backslashreplace")) as out:
            yield out
    except OSError as error:
        raise HgnerError(f"{target}: cannot write ({_describe(error)})") from None


def read_input(path: str | os.PathLike) -> bytes:
    """The bytes of an input file: a regular file, or a pipe (``<(cmd)``, a FIFO: opened without
    waiting for a writer, so one that has none reads as empty); a device or socket (``/dev/zero``,
    whose reading would never end) is an :class:`OSError`-free :class:`HgnerError`. Other
    OSErrors (missing, unreadable) propagate for the caller to name."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as stream:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
            raise HgnerError(f"{path}: not a regular file (a device or socket); expected a file to read")
        os.set_blocking(fd, True)
        return stream.read()


def write_text(path: str | os.PathLike, text: str, follow_links: bool = True) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (see :func:`atomic_write`)."""
    with atomic_write(path, follow_links=follow_links) as out:
        out.write(text)


def decode_utf8(raw: bytes, where: str) -> str:
    """``raw`` as UTF-8 text, a byte-order mark dropped; else an :class:`HgnerError`
    ``WHERE:LINE: not UTF-8 (byte 0x.. at column N)`` naming the first bad byte, as CoNLL corpora
    name theirs."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        data, start = error.object, error.start  # (data: raw without its byte-order mark)
        line, column = data.count(b"\n", 0, start) + 1, start - data.rfind(b"\n", 0, start)
        raise HgnerError(f"{where}:{line}: not UTF-8 (byte {data[start]:#04x} at column {column})") from None


def file_sha256(path: str | os.PathLike) -> str:
    """Hex sha256 of the file at ``path``, read in 1 MiB blocks."""
    with open(path, "rb") as stream:
        return stream_sha256(stream)


def stream_sha256(stream: IO[bytes]) -> str:
    """Hex sha256 of what is left to read in the binary ``stream``, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    for block in iter(lambda: stream.read(1 << 20), b""):
        digest.update(block)
    return digest.hexdigest()


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def not_a_file(path: str | os.PathLike) -> str:
    """Why ``path`` cannot be read as a file: ``no such file``, ``is a directory`` or ``not a
    regular file`` (a device, FIFO or socket)."""
    if not os.path.exists(path):
        return "no such file"
    return "is a directory" if os.path.isdir(path) else "not a regular file (a device, pipe or socket)"


def umask() -> int:
    """The process's umask (read by setting it, then restoring it)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def file_identity(path: str | os.PathLike) -> tuple[int, int] | None:
    """(device, inode) of ``path``, or None when it cannot be read: the same file through any link."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def stdin_identity() -> tuple[int, int] | None:
    """(device, inode) of standard input when it is a regular file (``hgner tag < f``)."""
    try:
        info = os.fstat(sys.stdin.fileno())
    except (OSError, ValueError, AttributeError):
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISREG(info.st_mode) else None


def refuse_inputs(output: str | os.PathLike | None, inputs: Iterable[str | os.PathLike | None], option: str,
                  read_stdin: bool = False) -> None:
    """An :class:`HgnerError` when ``output`` (given as ``option``) is one of ``inputs`` (through
    any link; None, an input read from no file, is skipped) or the file standard input reads;
    checked before anything is opened for writing."""
    if output is None or str(output) == STANDARD_OUTPUT:
        return
    target = file_identity(output)
    if target is None:
        return
    for source in inputs:
        if source is not None and file_identity(source) == target:
            raise HgnerError(f"{option} {output}: is also an input ({source}); refusing to overwrite it")
    if read_stdin and stdin_identity() == target:
        raise HgnerError(f"{option} {output}: is the file standard input reads; refusing to overwrite it")


def exchange_paths(first: str | os.PathLike, second: str | os.PathLike) -> bool:
    """Swap two existing paths in one step (Linux ``renameat2(RENAME_EXCHANGE)``): at every instant
    each path names either what it named before or what the other named. False when the system or
    file system cannot (the caller falls back to renames)."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    at_cwd, exchange = -100, 2  # AT_FDCWD, RENAME_EXCHANGE
    if renameat2(at_cwd, os.fsencode(first), at_cwd, os.fsencode(second), exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), os.fspath(second))


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Within the block, SIGINT, SIGTERM and SIGHUP wait (delivered when it ends): for steps that
    must not be cut in two, such as a pair of renames. The signals' Python handlers are replaced by
    one that notes them: blocking them in this thread alone would not do, since the kernel may hand a
    signal to another thread (numba's, crfsuite's), whose note Python then acts on in this one."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():  # only the main thread handles signals
        yield
        return
    wanted = [signal.SIGINT, signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])]
    arrived: list[int] = []
    previous = {signum: signal.signal(signum, lambda signum, frame: arrived.append(signum)) for signum in wanted}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)  # None: not set from Python
        for number in dict.fromkeys(arrived):  # delivered again, once each, to the handlers restored
            signal.raise_signal(number)
