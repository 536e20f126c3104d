"""The exceptions hgner raises for bad input; the CLI turns each into one line and exit status 2.

A message names a setting by :func:`field` (``named("sweeps")``): printed as it is, the message
says the settings object's field name (``sweeps``), as the Python API takes it;
:meth:`HgnerError.render` lets a front end name it its own way (the CLI: ``--sweeps``).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Mapping

_MARK = "\x1f"  # (unit separator: no text a user types holds it)
_FIELD = re.compile(f"{_MARK}([A-Za-z_][A-Za-z0-9_.]*){_MARK}")


def named(name: str) -> str:
    """A settings field's name inside an error message, for a front end to name as it names it."""
    return f"{_MARK}{name}{_MARK}"


def render(message: str, names: Mapping[str, str] | None = None) -> str:
    """``message`` with each :func:`named` field named by ``names`` (its own name when absent)."""
    return _FIELD.sub(lambda match: (names or {}).get(match[1], match[1]), message)


class HgnerError(Exception):
    """Base class: a problem with the user's input, model or arguments (never a bug)."""

    def render(self, names: Mapping[str, str] | None = None) -> str:
        """The message with each :func:`named` field named by ``names`` (its own name when absent)."""
        return render(super().__str__(), names)

    def __str__(self) -> str:
        return self.render()

    def fields(self) -> list[str]:
        """The :func:`named` fields of the message, in order."""
        return _FIELD.findall(super().__str__())


class HgnerWarning(UserWarning):
    """A warning about the input or settings (a model for another language, a decoder switched);
    its message names fields as :class:`HgnerError`'s do."""

    def render(self, names: Mapping[str, str] | None = None) -> str:
        return render(super().__str__(), names)

    def __str__(self) -> str:
        return self.render()


def warn(message: str, stacklevel: int = 2) -> None:
    """Issue ``message`` as an :class:`HgnerWarning` (shown once per place by Python's default filter)."""
    warnings.warn(HgnerWarning(message), stacklevel=stacklevel + 1)


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
