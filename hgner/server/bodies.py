"""Request bodies without the web framework: JSON read strictly (RFC 8259), and the field of a
request that an error found after the schema check is about (:mod:`hgner.server.app` serves both)."""

from __future__ import annotations

import json
import sys
from typing import Any

from ..core.errors import HgnerError, UnknownNameError
from ..decoders.settings import SettingError


def strict_json(raw: bytes) -> Any:
    """``raw`` as JSON: UTF-8 only (``UnicodeDecodeError``), and no ``NaN`` or ``Infinity``, no key
    twice in one object, no integer of more than 4,300 digits (``ValueError``: :func:`strict_json_error`
    says which); ``json.JSONDecodeError`` (with its position) for the rest."""
    return json.loads(raw.decode("utf-8"), parse_constant=_not_json, object_pairs_hook=_unique_keys)


def _not_json(constant: str) -> Any:
    """``json.loads``'s ``parse_constant``: ``NaN``, ``Infinity`` and ``-Infinity`` are not JSON (RFC 8259)."""
    raise ValueError(f"{constant} is not a JSON value")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``'s ``object_pairs_hook``: an object naming a key twice is refused."""
    value = dict(pairs)
    if len(value) < len(pairs):
        repeated = next(key for key in value if sum(1 for k, _ in pairs if k == key) > 1)
        raise ValueError(f"key {repeated!r} appears twice in one object")
    return value


def unencodable(value: Any) -> list[str | int] | None:
    """The path (keys and indexes) to the first string of a JSON value, key or value, that UTF-8
    cannot encode (a lone surrogate, which a JSON escape can carry); None when there is none."""
    if isinstance(value, str):
        return None if _encodes(value) else []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if isinstance(key, str) and not _encodes(key):
            return [key]
        inner = unencodable(item)
        if inner is not None:
            return [key, *inner]
    return None


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable(text: str) -> str:
    """``text`` with what UTF-8 cannot encode written as ``\\udXXX`` escapes (for a message)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def strict_json_error(error: ValueError) -> str:
    """What :func:`_not_json`, :func:`_unique_keys` or Python's integer limit refused."""
    message = str(error)
    if "integer string conversion" in message:
        return f"an integer of more than {sys.get_int_max_str_digits()} digits"
    return message


def field_at_fault(error: HgnerError, path: str) -> str:
    """The request field that an error found after the schema check is about: an unknown model,
    decoder or setting, a setting's value, or the first field the message names (``body``: none)."""
    if isinstance(error, UnknownNameError):
        if error.kind in ("model", "decoder"):
            return "body.decoders" if error.kind == "decoder" and path == "/v1/compare" else f"body.{error.kind}"
        if error.kind.endswith(" setting"):
            return f"body.settings.{error.name}"
    if isinstance(error, SettingError):
        return f"body.settings.{error.setting}"
    fields = error.fields()
    return f"body.{fields[0]}" if fields else "body"
