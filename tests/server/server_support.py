"""Shared by the server tests: the settings of a test server and a browser to drive."""

from __future__ import annotations

import shutil

from hgner.model import model_directory
from hgner.server.settings import ServerSettings

MODEL = "en-conll03"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run"]


def settings(**changes) -> ServerSettings:
    """Settings for a test server with the shipped English model (its kernels compiled on demand)."""
    values = dict(models={MODEL: str(model_directory(MODEL))}, warm=False)
    values.update(changes)
    return ServerSettings(**values)


def chromium() -> str | None:
    """Debian's chromium, or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")
