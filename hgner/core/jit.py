"""Numba's compilation of hgner's kernels, seen from a terminal.

Every kernel is ``numba.njit(cache=True)``: it compiles on first use (about 12 s of CPU for
``hgner tag``'s, more with the samplers) and later runs load it from numba's on-disk cache, kept
in the package's ``__pycache__`` folders or, when the installed package's folder is not
writable, in numba's user-wide cache folder (``~/.cache/numba`` on Linux; ``NUMBA_CACHE_DIR``
overrides both). :func:`announced` says so on a terminal when a compile starts, so a first run
is not silent.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

NOTE = ("compiling hgner's numba kernels, once: about 10 to 30 s on first use, "
        "later runs load them from numba's cache")


@contextmanager
def announced(prefix: str, stream: TextIO) -> Iterator[None]:
    """While the block runs, the first compile of a kernel (a numba cache miss) prints
    ``prefix: NOTE`` on ``stream`` when it is a terminal; elsewhere nothing is printed."""
    if not _is_terminal(stream):
        yield
        return
    from numba.core import event

    class _FirstCompile(event.Listener):
        said = False

        def on_start(self, ev: event.Event) -> None:
            if not self.said:
                self.said = True
                print(f"{prefix}: {NOTE}", file=stream, flush=True)

        def on_end(self, ev: event.Event) -> None:
            pass

    with event.install_listener("numba:compile", _FirstCompile()):
        yield


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False
