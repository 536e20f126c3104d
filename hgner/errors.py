"""The exceptions hgner raises for bad input; the CLI turns each into one line and exit status 2."""

from __future__ import annotations

from collections.abc import Iterable


class HgnerError(Exception):
    """Base class: a problem with the user's input, model or arguments (never a bug)."""


class ConllFormatError(HgnerError):
    """A CoNLL file that cannot be read: carries the path and the 1-based line number."""

    def __init__(self, path: str, line: int | None, message: str) -> None:
        self.path = path
        self.line = line
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {message}")


class UnknownNameError(HgnerError):
    """A name that is not registered (decoder, corpus reader, output format, setting, ...); the
    message lists the valid names."""

    def __init__(self, kind: str, name: str, available: Iterable[str]) -> None:
        self.kind = kind
        self.name = name
        self.available = sorted(available)
        super().__init__(f"unknown {kind} {name!r}; expected one of: {', '.join(self.available) or 'none'}")


class ManifestError(HgnerError):
    """A corpus manifest (``corpora/*.json``) that cannot be read or does not fit its schema, or a
    catalogue that describes one corpus twice."""


class ModelError(HgnerError):
    """A model name or directory that cannot be loaded, or a model that does not fit the request."""


class GraphError(HgnerError):
    """A factor graph whose arrays have the wrong shape or values, or a decoder that cannot handle it."""
