"""Decoder settings given by name: ``--set NAME=VALUE`` (repeatable) in ``hgner tag`` and
``hgner evaluate``, ``decoder_settings`` in the spaCy component, keywords of :func:`hgner.load`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .errors import HgnerError, UnknownNameError


def parse_assignments(assignments: Iterable[str]) -> dict[str, str]:
    """``NAME=VALUE`` strings as ``{NAME: VALUE}``; the values stay strings (the decoder's settings
    converter turns them into its constructor's types). A malformed assignment, or a name given
    twice, is a one-line :class:`HgnerError`."""
    settings: dict[str, str] = {}
    for assignment in assignments:
        name, equals, value = assignment.partition("=")
        name = name.strip()
        if not equals or not name.isidentifier():
            raise HgnerError(f"--set {assignment!r}: expected NAME=VALUE, e.g. --set damping=0.5")
        if name in settings:
            raise HgnerError(f"--set {assignment!r}: {name} is already set to {settings[name]!r}")
        settings[name] = value
    return settings


def settings_per_decoder(settings: Mapping[str, Any], decoders: Sequence[str]) -> dict[str, dict[str, Any]]:
    """For each decoder, the ``settings`` its constructor accepts. A setting that none of
    ``decoders`` accepts is an :class:`UnknownNameError` listing the ones they do."""
    from .decoders import decoder_settings

    options = {name: set(decoder_settings(name)) for name in decoders}
    valid = set().union(*options.values())
    for name in settings:
        if name not in valid:
            raise UnknownNameError(f"{'/'.join(decoders)} setting", name, valid)
    return {decoder: {k: v for k, v in settings.items() if k in accepted} for decoder, accepted in options.items()}
