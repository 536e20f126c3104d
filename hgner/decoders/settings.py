"""Decoder settings, declared once by each decoder's constructor signature and checked in one place.

A decoder annotates its keyword arguments with the types below (``Sweeps``, ``Seed``, ...) or
with plain ``int``/``float``/``bool``/``str``/``Literal[...]``; :class:`~hgner.decoders.base.Decoder`
checks every constructor call against those annotations, so a decoder never writes its own
checks. :func:`settings_of` turns a signature into :class:`Setting` records, which also parse the
text of ``--set NAME=VALUE`` and of configuration files.
"""

from __future__ import annotations

import inspect
import math
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union

import numpy as np

from ..core.errors import HgnerError

MAX_SWEEPS = 100_000_000  # the largest ``sweeps`` any sampler accepts (use ``time_limit`` to bound time)


class SettingError(HgnerError, ValueError):
    """A decoder setting with a value of the wrong type or out of range; ``setting`` is its name."""

    def __init__(self, message: str, setting: str) -> None:
        super().__init__(message)
        self.setting = setting


@dataclass(frozen=True)
class Bounds:
    """Range of a numeric setting: ``low``/``high`` inclusive (``low_open``: > low), ``finite``
    refuses +-inf (NaN is always refused)."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    finite: bool = True


Sweeps = Annotated[int, Bounds(1, MAX_SWEEPS)]
Seed = Annotated[int, Bounds(0)]
Positive = Annotated[float, Bounds(0, low_open=True)]
MAX_BATCH_SIZE = 1e9  # an expected minibatch size: beyond any graph's factor count, and its means stay finite
BatchSize = Annotated[float, Bounds(0, MAX_BATCH_SIZE, low_open=True)]
# far below any useful temperature: sweeps are then argmax updates; lower ones underflow 1 / T
Temperature = Annotated[float, Bounds(1e-6)]
TimeLimit = Annotated[float | None, Bounds(0, low_open=True)]
# a sampler's first labelling: each unary's argmax, or the Viterbi labelling of the graph's chains
Start = Literal["argmax", "viterbi"]

# a number as text: ASCII digits, sign, point and exponent, or inf / nan (not int's "1_0" or Arabic-Indic digits)
_PLAIN_NUMBER = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)", re.IGNORECASE)
_BOOLEANS = {"true": True, "yes": True, "on": True, "1": True, "false": False, "no": False, "off": False, "0": False}


@dataclass(frozen=True)
class Setting:
    """One constructor keyword: its name, value type (int, float, bool, str), default, range,
    allowed values (``Literal``) and whether ``None`` is allowed (meaning: no limit)."""

    name: str
    type: type
    default: Any
    bounds: Bounds = Bounds()
    choices: tuple[str, ...] | None = None
    optional: bool = False

    def describe(self) -> str:
        """What a valid value is, in words (for error messages and help)."""
        if self.choices is not None:
            text = f"one of {', '.join(self.choices)}"
        elif self.type is bool:
            text = "true or false"
        elif self.type is str:
            text = "a string"
        else:
            b = self.bounds
            text = "an integer" if self.type is int else "a finite number" if b.finite else "a number"
            if b.low is not None and b.high is not None:
                text += f" in {'(' if b.low_open else '['}{_number(b.low)}, {_number(b.high)}]"
            elif b.low is not None:
                text += f" {'>' if b.low_open else '>='} {_number(b.low)}"
            elif b.high is not None:
                text += f" <= {_number(b.high)}"
        return text + (" or None" if self.optional else "")

    def check(self, value: Any) -> Any:
        """``value`` as the setting's type (numpy scalars and, for floats, ints converted);
        :class:`SettingError` saying what was expected and what came."""
        if value is None and self.optional:
            return None
        if self.choices is not None:
            if isinstance(value, str) and value in self.choices:
                return value
        elif self.type is bool:
            if isinstance(value, (bool, np.bool_)):
                return bool(value)
        elif self.type is str:
            if isinstance(value, str):
                return value
        elif not isinstance(value, (bool, np.bool_)):
            if self.type is int and isinstance(value, (int, np.integer)) and self._in_bounds(value):
                return int(value)
            if self.type is float and isinstance(value, (int, float, np.integer, np.floating)) \
                    and self._in_bounds(float(value)):
                return float(value)
        raise SettingError(f"{self.name} must be {self.describe()}, got {value!r}", self.name)

    def read(self, value: Any) -> Any:
        """``value`` as given in code, or as text (``--set``, configuration files) for a
        setting whose type is not ``str``; checked."""
        return self.parse(value) if isinstance(value, str) and self.type is not str else self.check(value)

    def parse(self, text: str) -> Any:
        """The value written as ``text`` (``--set NAME=VALUE``, config files), checked."""
        stripped = text.strip()
        value: Any = stripped
        if self.optional and stripped.lower() in ("none", "null", ""):
            return None
        try:
            if self.choices is None and self.type is bool:
                value = _BOOLEANS.get(stripped.lower(), text)
            elif self.choices is None and self.type is int and _PLAIN_NUMBER.fullmatch(stripped):
                value = int(stripped)
            elif self.choices is None and self.type is float and _PLAIN_NUMBER.fullmatch(stripped):
                value = float(stripped)
        except ValueError:
            pass
        return self.check(value)

    def _in_bounds(self, value: Any) -> bool:
        b = self.bounds
        if math.isnan(value) or (b.finite and math.isinf(value)):
            return False
        if b.low is not None and (value <= b.low if b.low_open else value < b.low):
            return False
        return b.high is None or value <= b.high


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else str(value)


def settings_of(init: Callable[..., None]) -> dict[str, Setting]:
    """The :class:`Setting` of every keyword of a decoder constructor ``init``, in signature order."""
    hints = typing.get_type_hints(init, include_extras=True)
    settings = {}
    for name, parameter in inspect.signature(init).parameters.items():
        if name == "self" or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        if name not in hints or parameter.default is inspect.Parameter.empty:
            raise TypeError(f"decoder setting {name!r} of {init.__qualname__} needs a type annotation and a default")
        settings[name] = _setting(name, hints[name], parameter.default)
    return settings


def _setting(name: str, hint: Any, default: Any) -> Setting:
    bounds = Bounds()
    if typing.get_origin(hint) is Annotated:
        hint, *extras = typing.get_args(hint)
        bounds = next((e for e in extras if isinstance(e, Bounds)), bounds)
    optional = False
    if typing.get_origin(hint) in (Union, types.UnionType) and type(None) in typing.get_args(hint):
        optional = True
        (hint,) = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) is Literal:
        return Setting(name, str, default, bounds, tuple(typing.get_args(hint)), optional)
    if hint not in (int, float, bool, str):
        raise TypeError(f"decoder setting {name!r}: unsupported annotation {hint!r}")
    return Setting(name, hint, default, bounds, None, optional)


def checked(settings: dict[str, Setting], init: Callable[..., None]) -> Callable[..., None]:
    """``init`` with every argument checked by its :class:`Setting` (defaults included)."""
    signature = inspect.signature(init)

    def wrapper(self: Any, *args: Any, **kwargs: Any) -> None:
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        for name, setting in settings.items():
            bound.arguments[name] = setting.check(bound.arguments[name])
        init(*bound.args, **bound.kwargs)

    wrapper.__wrapped__ = init  # type: ignore[attr-defined]  # signature and hints follow the original
    wrapper.__doc__ = init.__doc__
    wrapper.__qualname__ = init.__qualname__
    return wrapper
