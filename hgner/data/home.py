"""Where hgner keeps data and where it may fetch it from: the data home (``$HGNER_DATA``, else
the user data folder), ``$HGNER_OFFLINE`` and ``$HGNER_MIRROR``."""

from __future__ import annotations

import os
from pathlib import Path

from ..core.errors import HgnerError

URL_SCHEMES = ("http://", "https://", "file://")


def data_home() -> Path:
    """``$HGNER_DATA``, else the platform's user data folder for hgner."""
    if os.environ.get("HGNER_DATA"):
        return Path(os.environ["HGNER_DATA"]).expanduser()
    import platformdirs

    return platformdirs.user_data_path("hgner", appauthor=False)


_OFFLINE_VALUES = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False,
                   "off": False, "": False}


def is_offline(flag: bool = False) -> bool:
    """True when ``flag`` (``--offline``) is set or ``$HGNER_OFFLINE`` is 1/true/yes/on (0/false/no/off
    or unset: online; anything else is an error, not a silent "online")."""
    value = os.environ.get("HGNER_OFFLINE", "").strip().lower()
    if value not in _OFFLINE_VALUES:
        raise HgnerError(f"HGNER_OFFLINE: expected 1, true, yes or on (offline) or 0, false, no or off (online), "
                         f"got {os.environ['HGNER_OFFLINE']!r}")
    return flag or _OFFLINE_VALUES[value]


def mirror() -> str | None:
    """``$HGNER_MIRROR`` (a folder, ``~`` expanded, or an http, https or file URL), or None."""
    value = os.environ.get("HGNER_MIRROR") or None
    if value is None or value.startswith(URL_SCHEMES):
        return value
    if "://" in value:
        raise HgnerError(f"HGNER_MIRROR: expected a folder or an http://, https:// or file:// URL, got {value!r}")
    return str(Path(value).expanduser())
