"""The options of ``hgner serve``, validated once: :class:`ServerSettings`. No web framework here.

Worker processes (``--workers N``) are started by uvicorn, which imports the application by name;
the settings reach them as JSON in the environment variable :data:`SETTINGS_VARIABLE`.
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..core.errors import HgnerError
from ..tagging.defaults import DEFAULT_MODEL

SETTINGS_VARIABLE = "HGNER_SERVE_SETTINGS"  # the settings as JSON, for the worker processes
SUPERVISOR_VARIABLE = "HGNER_SERVE_SUPERVISOR"  # the supervisor's process id, for its workers
API_KEY_VARIABLE = "HGNER_API_KEY"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
DEFAULT_MAX_CHARS = 100_000  # characters of text in one request (all documents of a batch together)
DEFAULT_MAX_DOCUMENTS = 256  # documents in one batch
DEFAULT_MAX_QUEUE = 64  # requests waiting or running in one worker before 429
DEFAULT_TIMEOUT = 30.0  # seconds from arrival to answer before 504
MAX_WORKERS = 64
MAX_TIMEOUT = 86_400.0  # a day: longer is a mistake (and must stay a finite number of seconds)
MIN_API_KEY_CHARS = 16


@dataclass(frozen=True)
class ServerSettings:
    """Everything a worker needs: the models by name (name -> directory, loaded at startup), the
    address, the limits and the security options."""

    models: dict[str, str] = field(default_factory=dict)
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    workers: int = 1
    max_chars: int = DEFAULT_MAX_CHARS
    max_documents: int = DEFAULT_MAX_DOCUMENTS
    max_queue: int = DEFAULT_MAX_QUEUE
    timeout: float = DEFAULT_TIMEOUT
    api_key: str | None = None
    cors_origins: tuple[str, ...] = ()
    insecure: bool = False
    warm: bool = True  # compile every decoder's kernels before /ready says yes
    annotate: str | None = None  # the queue of the annotation page (hgner.server.annotate), with:
    annotations: str | None = None  # the file its accepted sentences go to

    def __post_init__(self) -> None:
        check_settings(self)

    @property
    def default_model(self) -> str:
        """The model of a request that names none: the default of ``hgner tag`` when served, else
        the first served."""
        return DEFAULT_MODEL if DEFAULT_MODEL in self.models else next(iter(self.models))

    @property
    def max_body_bytes(self) -> int:
        """The largest request body read: the text with every character JSON-escaped (12 bytes
        for a character outside the BMP, ``\\ud83d\\ude00``, as Python's ``json.dumps`` writes it),
        and 64 KiB of options and ids."""
        return 12 * self.max_chars + 64 * 1024 + 64 * self.max_documents

    def to_environment(self) -> str:
        """The settings as JSON for :data:`SETTINGS_VARIABLE`."""
        return json.dumps(asdict(self))

    @classmethod
    def from_environment(cls) -> ServerSettings:
        """The settings the serving process put in :data:`SETTINGS_VARIABLE`."""
        text = os.environ.get(SETTINGS_VARIABLE)
        if not text:
            raise HgnerError(f"{SETTINGS_VARIABLE} is not set: start the server with 'hgner serve'")
        values: dict[str, Any] = json.loads(text)
        values["cors_origins"] = tuple(values.get("cors_origins", ()))
        return cls(**values)


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (or ``localhost``): only this machine can connect."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_settings(settings: ServerSettings) -> None:
    """An :class:`HgnerError` naming the option for a value out of range, no model, or a
    non-loopback address without an API key (unless ``insecure``)."""
    s = settings
    if not s.models:
        raise HgnerError("--model: no model to serve")
    checks = [
        (1 <= s.port <= 65535 or s.port == 0, "--port", "a port 1..65535 (0: any free port)", s.port),
        (1 <= s.workers <= MAX_WORKERS, "--workers", f"a number of workers 1..{MAX_WORKERS}", s.workers),
        (s.max_chars >= 1, "--max-chars", "a positive number of characters", s.max_chars),
        (s.max_documents >= 1, "--max-documents", "a positive number of documents", s.max_documents),
        (s.max_queue >= 1, "--max-queue", "a positive number of requests", s.max_queue),
        (0 < s.timeout <= MAX_TIMEOUT, "--timeout", f"a number of seconds above 0, at most {MAX_TIMEOUT:g}", s.timeout),
    ]
    for ok, option, expected, got in checks:
        if not ok:
            raise HgnerError(f"{option}: expected {expected}, got {got!r}")
    if s.api_key is not None and (len(s.api_key) < MIN_API_KEY_CHARS or not s.api_key.isprintable()
                                  or any(c.isspace() for c in s.api_key)):
        raise HgnerError(f"--api-key / {API_KEY_VARIABLE}: expected at least {MIN_API_KEY_CHARS} printable characters "
                         "without spaces")
    if (s.annotate is None) != (s.annotations is None) or (s.annotate is not None and s.workers != 1):
        raise HgnerError("--annotate QUEUE and --annotations FILE go together, with one worker (--workers 1)")
    if not is_loopback(s.host) and s.api_key is None and not s.insecure:
        raise HgnerError(f"--host {s.host}: other machines could connect; give --api-key (or {API_KEY_VARIABLE}) "
                         "so that requests need a bearer token, or --insecure to serve without one")
    origins = tuple(origin if origin == "*" else browser_origin(origin) for origin in s.cors_origins)
    object.__setattr__(s, "cors_origins", origins)  # (frozen: the check's own normal form)


DEFAULT_PORTS = {"http": 80, "https": 443}


def browser_origin(origin: str) -> str:
    """``origin`` as a browser sends it in ``Origin`` (``scheme://host[:port]``: lower case, no
    default port), which is what CORS compares; an :class:`HgnerError` for anything else (a path,
    a space, a wildcard, port 0)."""
    problem = "expected an origin such as https://example.org (scheme, host and optional port; no path or trailing " \
              "slash), or *"
    try:
        parts = urlsplit(origin)
        port = parts.port
    except ValueError:
        port, parts = -1, None
    host = (parts.hostname or "") if parts else ""
    if (parts is None or port == -1 or parts.scheme.lower() not in DEFAULT_PORTS or not host or parts.path
            or parts.query or parts.fragment or parts.username or parts.password is not None or origin.endswith(":")
            or origin.lower() != f"{parts.scheme}://{parts.netloc}".lower() or any(c.isspace() or c in "*%" for c in origin)):
        raise HgnerError(f"--cors-origin {origin!r}: {problem}")
    if port == 0:
        raise HgnerError(f"--cors-origin {origin!r}: port 0 is no port a page is served from")
    scheme = parts.scheme.lower()
    netloc = f"[{host}]" if ":" in host else host
    return f"{scheme}://{netloc}" if port in (None, DEFAULT_PORTS[scheme]) else f"{scheme}://{netloc}:{port}"


def check_address(host: str, port: int) -> None:
    """An :class:`HgnerError` naming ``--host`` and ``--port`` when the server could not listen
    there (an unknown name, another machine's address, a port in use or not allowed), found
    before the models load rather than as the web server's log line."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                             flags=socket.AI_PASSIVE)[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
            probe.bind(address)
    except OSError as error:
        raise HgnerError(f"--host {host} --port {port}: cannot listen there ({error.strerror or error})") from None
