"""Where numba keeps hgner's compiled kernels when it has nowhere of its own (issue 61).

Numba caches a ``cache=True`` kernel beside its module (the package's ``__pycache__`` folders) or,
when that folder is not writable, in its user-wide cache folder (``~/.cache/numba`` on Linux).
When neither is writable (a read-only install and home), numba refuses to define the kernel at
import ("no locator available"); :func:`ensure_cache_dir` then points ``NUMBA_CACHE_DIR`` at a
folder in the temporary directory first. Imported by ``hgner/__init__.py``: only :mod:`os` and
:mod:`sys` load unless the fallback is needed.
"""

from __future__ import annotations

import os
import sys

KERNELS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "decoders", "__pycache__")


def _writable(folder: str) -> bool:
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return False
    return os.access(folder, os.W_OK)


def ensure_cache_dir(kernels: str = KERNELS) -> str | None:
    """The ``NUMBA_CACHE_DIR`` set when neither ``kernels`` (a kernel module's ``__pycache__``) nor
    numba's user-wide cache folder is writable and none was given; None when numba has a place."""
    if os.environ.get("NUMBA_CACHE_DIR") or _writable(kernels):
        return None
    import platformdirs

    if _writable(platformdirs.user_cache_dir("numba", appauthor=False)):
        return None
    import tempfile

    folder = os.path.join(tempfile.gettempdir(), f"hgner-numba-{os.getuid() if hasattr(os, 'getuid') else 'user'}")
    os.environ["NUMBA_CACHE_DIR"] = folder
    if "numba" in sys.modules:  # (already imported: its configuration has read the environment)
        sys.modules["numba"].config.CACHE_DIR = folder
    return folder
