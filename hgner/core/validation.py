"""Data on disk is never trusted: JSON files are size-capped, parsed strictly (no NaN, no
Infinity) and checked against their JSON schema (the model files' in ``hgner/schemas/``, the
corpus manifests' in ``corpora/``) before anything is built from them. Every failure is one line
naming the file, the field and what was expected, e.g.
``models/x/meta.json: features.window: expected an integer 0..10, got 1e12``: a
:class:`~hgner.core.errors.ModelError`, or the error class the caller passes as ``raises``.

Each schema node may carry an ``expected`` keyword (ignored by JSON Schema itself): the phrase
the error message uses. The big word tables (``truecase.json``, ``gazetteer.json``,
word clusters given to training as JSON: up to hundreds of thousands of entries) are checked by
:func:`check_string_table`, a fast reading of the same
schema (a string map whose values are strings or lists of strings); a test checks that it agrees
with ``jsonschema``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Iterator, Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

import msgspec

from .errors import HgnerError, ModelError, named
from .fileio import read_input

MAX_JSON_BYTES = 64 * 2**20  # nl-conll02's word clusters as JSON (hgner train --word-clusters) have 11.8 MB


@cache
def load_schema(name: str) -> dict[str, Any]:
    """The schema ``hgner/schemas/NAME.schema.json``."""
    return json.loads((resources.files("hgner") / "schemas" / f"{name}.schema.json").read_text(encoding="utf-8"))


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all different (``json`` would keep the last of a repeated one)."""
    found = dict(pairs)
    if len(found) != len(pairs):
        repeated = next(key for i, (key, _) in enumerate(pairs) if key in dict(pairs[:i]))
        raise ValueError(f"key {repeated!r} appears twice in one object")
    return found


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")  # how JSON writes half of a UTF-16 surrogate pair


def parse_json(text: str) -> Any:
    """``text`` parsed as strict JSON: a repeated key in an object, NaN or Infinity is a ValueError."""
    return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)


def read_json(path: Path, max_bytes: int = MAX_JSON_BYTES, raises: type[HgnerError] = ModelError) -> Any:
    """The JSON value in ``path`` (UTF-8, a byte-order mark allowed), or a ``raises`` error when
    the file is missing, too large, not UTF-8, not strict JSON, nested too deeply or holds a
    string that is not text (a lone surrogate such as ``"\\ud800"``)."""
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise raises(f"{path}: {size} bytes, expected at most {max_bytes}")
        text = read_input(path).decode("utf-8-sig")
        data = parse_json(text)
        if _SURROGATE_ESCAPE.search(text):  # a pair decodes to one character; a lone half cannot be encoded
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        return data
    except FileNotFoundError:
        raise raises(f"{path}: missing") from None
    except OSError as error:
        raise raises(f"{path}: cannot read ({error.strerror or error})") from None
    except RecursionError:
        raise raises(f"{path}: not valid JSON (nested too deeply)") from None
    except UnicodeEncodeError:
        raise raises(f"{path}: a string holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is not text") from None
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise raises(f"{path}: not valid JSON ({error})") from None


def show(value: Any) -> str:
    """A short rendering of a JSON value for an error message: ``1e12``, ``'abc'``, ``a list``."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, float):
        return f"{value:g}".replace("e+", "e")
    if isinstance(value, int):
        return str(value) if abs(value) < 10**15 else f"{float(value):g}".replace("e+", "e")
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:40] + "...")
    if isinstance(value, dict):
        return "an object" if value else "an empty object"
    if isinstance(value, list):
        return "a list" if value else "an empty list"
    return type(value).__name__


def check_argument(ok: bool, name: str, expected: str, value: Any) -> None:
    """An :class:`HgnerError` ``name: expected ..., got ...`` unless ``ok``: for the Python API's
    arguments, which the command line's parser checks for its own."""
    if not ok:
        raise HgnerError(f"{named(name)}: expected {expected}, got {show(value)}")


def check_fields(data: Mapping[str, Any], settings: type, what: str) -> None:
    """A :class:`ModelError` when ``data`` (a settings object read back from JSON) has keys that
    are not fields of the dataclass ``settings``; ``what`` names them (``skip settings``)."""
    known = sorted(f.name for f in dataclasses.fields(settings))
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ModelError(f"unknown {what} {unknown}; expected some of {known}")


def _where(path: Any) -> str:
    parts = ""
    for part in path:
        parts += f"[{part}]" if isinstance(part, int) else (f".{part}" if parts else str(part))
    return parts or "top level"


@cache
def ecma_pattern(pattern: str) -> re.Pattern:
    """A schema's ``pattern`` with its final ``$`` as ECMA-262 (JSON Schema's regular expressions)
    means it: only at the end of the string, where Python's would also match before a final
    newline. (The rest is read as Python reads it: ``\\w`` and ``\\d`` match any script.)"""
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


def _pattern(validator: Any, pattern: str, instance: Any, schema: dict) -> Iterator[Any]:
    """jsonschema's ``pattern`` keyword with :func:`ecma_pattern`'s end of string."""
    from jsonschema import ValidationError

    if validator.is_type(instance, "string") and not ecma_pattern(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


@cache
def _validator(schema: str | Path) -> Any:
    import jsonschema

    validator = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": _pattern})
    if isinstance(schema, Path):
        return validator(json.loads(schema.read_text(encoding="utf-8")))
    return validator(load_schema(schema))


def check(data: Any, schema: str | Path, path: Path, raises: type[HgnerError] = ModelError) -> None:
    """Raise a ``raises`` error naming ``path``, the field and the expectation when ``data`` does
    not fit the schema: ``schema`` is a name in ``hgner/schemas/`` (``"meta"``) or a schema file."""
    error = next(iter(_validator(schema).iter_errors(data)), None)
    if error is None:
        return
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        raise raises(f"{path}: {_where(error.absolute_path)}: missing required field {missing!r}")
    if error.validator == "additionalProperties" and error.schema.get("additionalProperties") is False:
        raise raises(f"{path}: {_where(error.absolute_path)}: {error.message}")
    if error.validator == "uniqueItems":
        raise raises(f"{path}: {_where(error.absolute_path)}: expected distinct items")
    expected = error.schema.get("expected") if isinstance(error.schema, dict) else None
    if expected is None:
        raise raises(f"{path}: {_where(error.absolute_path)}: {error.message[:200]}")
    raise raises(f"{path}: {_where(error.absolute_path)}: expected {expected}, got {show(error.instance)}")


def read_string_table(path: Path, schema_name: str) -> dict:
    """The word table in ``path`` (JSON), checked against its schema. A table that fits is decoded
    and checked in one pass by :mod:`msgspec` (typed from the schema, :func:`_table_decoder`); any
    other is read again by :func:`read_json` and :func:`check_string_table`, which name the
    field and what was expected. A key repeated in the table keeps its last value."""
    try:
        size = path.stat().st_size
        if size > MAX_JSON_BYTES:
            raise ModelError(f"{path}: {size} bytes, expected at most {MAX_JSON_BYTES}")
        return _table_decoder(schema_name).decode(read_input(path).removeprefix(b"\xef\xbb\xbf"))
    except (msgspec.DecodeError, OSError):
        pass
    data = read_json(path)
    check_string_table(data, schema_name, path)
    return data


@cache
def _table_decoder(schema_name: str) -> msgspec.json.Decoder:
    """A decoder of the word tables that ``schema_name``'s schema admits (the shape
    :func:`check_string_table` reads)."""
    schema = load_schema(schema_name)
    names, values = schema.get("propertyNames", {}), schema["additionalProperties"]
    strings = values.get("items", values)

    def constrained(node: dict[str, Any]) -> Any:
        meta = {"max_length": node.get("maxLength"), "min_length": node.get("minLength"), "pattern": node.get("pattern")}
        if meta["pattern"] is not None:
            meta["pattern"] = ecma_pattern(meta["pattern"]).pattern
        meta = {key: value for key, value in meta.items() if value is not None}
        return Annotated[str, msgspec.Meta(**meta)] if meta else str

    value_type = list[constrained(strings)] if "items" in values else constrained(strings)  # type: ignore[misc]
    return msgspec.json.Decoder(dict[constrained(names), value_type])  # type: ignore[misc]


def check_string_table(data: Any, schema_name: str, path: Path) -> None:
    """:func:`check` for a big word table, fast: the schema's top level is an object whose
    ``propertyNames`` have a ``maxLength`` or ``pattern`` and whose values are strings (with
    ``maxLength``) or arrays of such strings (``minLength``/``maxLength``)."""
    schema = load_schema(schema_name)
    if not isinstance(data, dict):
        raise ModelError(f"{path}: top level: expected {schema['expected']}, got {show(data)}")
    names = schema.get("propertyNames", {})
    name_pattern = ecma_pattern(names["pattern"]) if "pattern" in names else None
    values = schema["additionalProperties"]
    items = values.get("items")
    strings = items if items is not None else values
    low, high = strings.get("minLength", 0), strings.get("maxLength", math.inf)
    for key, value in data.items():
        if len(key) > names.get("maxLength", math.inf) or (name_pattern and not name_pattern.search(key)):
            raise ModelError(f"{path}: {key[:40]!r}: not a valid key; expected {names.get('expected', 'another key')}")
        entries = value if items is not None else [value]
        if items is not None and not isinstance(value, list):
            raise ModelError(f"{path}: {key[:40]}: expected {values['expected']}, got {show(value)}")
        for entry in entries:
            if not isinstance(entry, str) or not low <= len(entry) <= high:
                raise ModelError(f"{path}: {key[:40]}: expected {strings['expected']}, got {show(entry)}")
