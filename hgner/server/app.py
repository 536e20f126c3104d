"""The one module that talks to the web framework: the FastAPI application (its request and
response models are in :mod:`hgner.server.schemas`), the JSON errors, the guard (API key, body limit, metrics,
security headers) and running it on uvicorn.

Decoding runs in one thread per worker (numba and the tokenizer are not shared between threads);
the event loop only parses, admits (:class:`~hgner.server.limits.Admission`) and waits with the
request's deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import os
import re
import signal
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from importlib import resources
from typing import Any, TypeVar

import msgspec
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ValidationError
from pydantic.json_schema import models_json_schema
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..core.errors import HgnerError, ModelError
from ..core.process import die_with_parent
from ..core.version import __version__
from .annotate import annotation_router
from .bodies import field_at_fault, printable, strict_json, strict_json_error, unencodable
from .engine import CompareOptions, TagOptions, decoder_infos
from .limits import NotReady, Refused, TooLarge
from .metrics import CONTENT_TYPE, Metrics
from .protocol import MAX_HEADERS, set_body_limit
from .schemas import ERRORS, REQUESTS, CompareRequest, CompareResponse, TagRequest, TagResponse
from .service import Service
from .settings import SUPERVISOR_VARIABLE, ServerSettings

log = logging.getLogger("hgner")

STATIC = resources.files("hgner.server") / "static"
OPEN_PATHS = ("/health",)  # answered without the API key
SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"content-security-policy", b"default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
                                 b"img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
]

Body = TypeVar("Body", bound=BaseModel)
ENCODER = msgspec.json.Encoder()  # the answers of /v1/tag and /v1/compare, as JSONResponse would write them
NO_TELEMETRY: Any = {"tracing": False, "metrics": False, "logs": False}  # FastAPI's OpenTelemetry: /metrics has ours


# --------------------------------------------------------------------------- errors
def error_response(status: int, code: str, message: str, headers: dict[str, str] | None = None,
                   details: list[dict[str, Any]] | None = None) -> JSONResponse:
    body: dict[str, Any] = {"status": status, "code": code, "message": printable(message)}
    if details:
        body["details"] = [{k: printable(v) if isinstance(v, str) else v for k, v in d.items()} for d in details]
    return JSONResponse({"error": body}, status_code=status, headers=headers)


def _no_paths(message: str) -> str:
    """``message`` without the server's folders (a file keeps its name)."""
    return re.sub(r"(?:[A-Za-z]:)?[/\\]\S*[/\\]", "", message)


def _is_json(content_type: str) -> bool:
    """Whether a Content-Type is JSON (``application/json``, ``application/*+json``)."""
    kind = content_type.split(";")[0].strip().lower()
    return kind.startswith("application/") and (kind == "application/json" or kind.endswith("+json"))


def _validation_details(error: RequestValidationError, content_type: str) -> list[dict[str, Any]]:
    """One ``{"field", "message"}`` per problem, the field as a dotted path (``body.documents.0.id``)."""
    if not _is_json(content_type):
        return [{"field": "body", "message": f"expected Content-Type: application/json, got {content_type or 'none'!r}"}]
    details = []
    for item in error.errors():
        location = [str(part) for part in item.get("loc", ())]
        message = item.get("msg", "invalid").removeprefix("Value error, ")
        if item.get("type") == "json_invalid":  # its location is the body and the character, when known
            where = f" at character {location[1]}" if len(location) > 1 else ""
            message = f"malformed JSON{where} ({item.get('ctx', {}).get('error', 'cannot be parsed')})"
            location = location[:1]
        details.append({"field": ".".join(location), "message": message})
    return details


def _unreadable(cause: BaseException | None) -> str:
    """Why FastAPI could not read a body as JSON (it raises its 400 from the parser's error)."""
    if isinstance(cause, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(cause, RecursionError):
        return "nested too deeply"
    return "cannot be parsed"


def _install_error_handlers(app: FastAPI, metrics: Metrics) -> None:
    def count(code: str) -> None:
        metrics.errors.labels(code).inc()

    async def refused(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, HgnerError)
        if isinstance(error, Refused):
            count(error.code)
            return error_response(error.status, error.code, str(error), getattr(error, "headers", None))
        if isinstance(error, ModelError):  # found after start-up: the server's fault, not the request's
            log.error("a served model is damaged: %s", error)
            count("model_damaged")
            return error_response(503, "model_damaged", f"a model served here is damaged ({_no_paths(str(error))}); "
                                  "the server's log names its files")
        count("invalid")  # found after the schema check: a model, decoder or setting the engine refused
        field = field_at_fault(error, request.url.path)
        return error_response(422, "invalid", f"{field}: {error}", details=[{"field": field, "message": str(error)}])

    async def invalid(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, RequestValidationError)
        details = _validation_details(error, request.headers.get("content-type", ""))
        count("invalid")
        first = details[0] if details else {"field": "body", "message": "invalid request"}
        return error_response(422, "invalid", f"{first['field']}: {first['message']}", details=details)

    async def http_error(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, StarletteHTTPException)
        if error.status_code == 400:  # FastAPI could not read the body: malformed JSON too
            count("invalid")
            return error_response(422, "invalid", f"body: malformed JSON ({_unreadable(error.__cause__)})")
        code = {404: "not_found", 405: "method_not_allowed"}.get(error.status_code, "http_error")
        count(code)
        headers = getattr(error, "headers", None)
        if headers and "Allow" in headers:  # in one order (Starlette's comes from a set); HEAD wherever GET is
            methods = {m.strip() for m in headers["Allow"].split(",")}  # served, since the guard answers it
            headers = {**headers, "Allow": ", ".join(sorted(methods | ({"HEAD"} if "GET" in methods else set())))}
        where = f"{request.method} {request.url.path}"
        message = {404: f"{where}: no such endpoint (the API is described at /openapi.json)",
                   405: f"{where}: method not allowed; this endpoint takes {(headers or {}).get('Allow', 'another')}"}
        return error_response(error.status_code, code, message.get(error.status_code, str(error.detail)), headers)

    async def internal(request: Request, error: Exception) -> JSONResponse:
        log.exception("internal error on %s", request.url.path)
        count("internal")
        return error_response(500, "internal", "internal error in hgner; the server log has the details")

    app.add_exception_handler(HgnerError, refused)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(Exception, internal)


# --------------------------------------------------------------------------- the guard
class Guard:
    """Outermost ASGI layer: times and counts every request, refuses a missing or wrong bearer
    token (401, except :data:`OPEN_PATHS`), reads a POST body only up to the limit (413) and
    within the timeout (408, against clients that hold a connection open), answers ``HEAD`` as
    ``GET`` without the body, and adds the security headers."""

    def __init__(self, app: ASGIApp, settings: ServerSettings, metrics: Metrics) -> None:
        self.app = app
        self.key = settings.api_key.encode() if settings.api_key else None
        self.limit = settings.max_body_bytes
        self.body_seconds = settings.timeout  # a client that sends its body slower is answered 408
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = [500]
        head = scope["method"] == "HEAD"
        if head:  # the GET answer's status and headers (its Content-Length too), without its body
            scope = {**scope, "method": "GET"}

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            elif head and message.get("body"):
                message = {**message, "body": b""}
            await send(message)

        path = scope["path"]
        try:
            refusal = self._refusal(scope)
            if refusal is None and scope["method"] in ("POST", "PUT", "PATCH"):
                receive, refusal = await self._read_body(scope, receive)
            if refusal is not None:
                await refusal(scope, receive, sending)
            else:
                await self.app(scope, receive, sending)
        finally:
            self.metrics.answered(_endpoint(scope, path), status[0], time.perf_counter() - started)

    def _refusal(self, scope: Scope) -> Response | None:
        if len(scope["headers"]) > MAX_HEADERS:
            self.metrics.errors.labels("too_many_headers").inc()
            return error_response(431, "too_many_headers", f"{len(scope['headers'])} header fields; this server "
                                  f"takes at most {MAX_HEADERS}", {"Connection": "close"})
        if self.key is None or scope["path"] in OPEN_PATHS or scope["method"] == "OPTIONS":
            return None
        given = dict(scope["headers"]).get(b"authorization", b"")
        scheme, _, token = given.partition(b" ")
        if scheme.lower() == b"bearer" and hmac.compare_digest(token.strip(), self.key):
            return None
        self.metrics.errors.labels("unauthorized").inc()
        return error_response(401, "unauthorized", "this server needs an API key: send 'Authorization: Bearer KEY'",
                              {"WWW-Authenticate": "Bearer"})

    async def _read_body(self, scope: Scope, receive: Receive) -> tuple[Receive, Response | None]:
        """The whole body, read up to the limit, replayed to the application; or a 413."""
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.limit:
            return receive, self._too_large()
        chunks, size, more = [], 0, True
        deadline = time.monotonic() + self.body_seconds
        while more:
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                self.metrics.errors.labels("request_timeout").inc()
                return receive, error_response(408, "request_timeout", f"the request body did not arrive within "
                                                                        f"{self.body_seconds:g} s (--timeout)",
                                               {"Connection": "close"})
            if message["type"] == "http.disconnect":
                return receive, None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                return receive, self._too_large()
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return replay, None

    def _too_large(self) -> Response:
        self.metrics.errors.labels("too_large").inc()
        return error_response(413, "too_large", f"request body over {self.limit} bytes (the limit follows "
                                                "--max-chars and --max-documents)")


class _Cors(CORSMiddleware):
    """Starlette's CORS, with a refused preflight (an origin, method or header not allowed) as a
    JSON error rather than plain text."""

    def preflight_response(self, request_headers: Any) -> Response:
        response = super().preflight_response(request_headers)
        if response.status_code < 400:
            return response
        refused = bytes(response.body).decode().removeprefix("Disallowed CORS ")
        return error_response(response.status_code, "cors_refused", f"CORS preflight refused: this {refused} is not "
                              "allowed (the server's --cors-origin names the origins; methods GET and POST; headers "
                              "Authorization and Content-Type)")


def _endpoint(scope: Scope, path: str) -> str:
    """The route's path for the metrics' label (a fixed set: unknown paths are ``other``)."""
    known = ("/", "/health", "/ready", "/metrics", "/openapi.json", "/v1/tag", "/v1/compare", "/v1/models",
             "/v1/decoders")
    if path in known:
        return path
    return "/static" if path.startswith("/static/") else "other"


# --------------------------------------------------------------------------- the application
def create_app(settings: ServerSettings) -> FastAPI:
    """The application for one worker; its models load in the background at startup
    (``/ready`` says when they are loaded and their kernels compiled)."""
    service = Service(settings)
    set_body_limit(settings.max_body_bytes)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        service.start()
        yield
        service.stop()

    app = FastAPI(title="hgner", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None,
                  telemetry=NO_TELEMETRY, redirect_slashes=False,
                  description="Named-entity recognition with CRFs: tag texts and watch decoders compete on them.")
    app.state.service = service
    _install_error_handlers(app, service.metrics)

    _add_api_routes(app, service)  # first: the router tries the routes in order
    _add_status_routes(app, service)
    _add_request_schemas(app)
    if settings.annotate is not None:  # the annotation page (issue 59)
        app.include_router(annotation_router(service, STATIC))

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(str(STATIC / "index.html"), media_type="text/html; charset=utf-8")

    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    app.add_middleware(Guard, settings=settings, metrics=service.metrics)
    if settings.cors_origins:
        app.add_middleware(_Cors, allow_origins=list(settings.cors_origins), allow_methods=["GET", "POST"],
                           allow_headers=["Authorization", "Content-Type"])
    return app


def _add_status_routes(app: FastAPI, service: Service) -> None:
    """/health, /ready, /metrics, /v1/models and /v1/decoders."""
    settings = service.settings

    @app.get("/health", summary="the process answers (no API key needed)")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/ready", summary="models loaded and kernels compiled", responses={503: ERRORS[503]})
    async def ready() -> dict[str, Any]:
        problem = service.load_error()
        if problem is not None or not service.engine.ready:
            raise NotReady(problem or "the models are loading")
        return {"status": "ready", "models": list(settings.models)}

    @app.get("/metrics", summary="Prometheus metrics", response_class=Response)
    async def metrics() -> Response:
        return Response(service.metrics.exposition(), media_type=CONTENT_TYPE)

    @app.get("/v1/models", summary="the models served, as hgner models shows them", responses={503: ERRORS[503]})
    async def models() -> dict[str, Any]:
        return {"models": await service.run(lambda deadline: service.engine.model_infos(), 0),
                "default": service.default_model}

    @app.get("/v1/decoders", summary="the decoders, their capabilities and settings, as hgner decoders shows them")
    async def decoders() -> dict[str, Any]:
        return {"decoders": decoder_infos()}


def _add_api_routes(app: FastAPI, service: Service) -> None:
    """/v1/tag and /v1/compare."""
    settings = service.settings

    # the answers are built by the engine and sent as they are (json_response): the response models
    # document them in the schema, and the schema test checks that the answers fit
    async def tag(request: Request) -> Response:
        body = await read_body(request, TagRequest)
        texts = [body.text] if body.text is not None else [d.text for d in body.documents or []]
        if len(texts) > settings.max_documents:
            raise TooLarge(f"{len(texts)} documents; this server takes at most {settings.max_documents} in one "
                           "request (--max-documents)")
        options = TagOptions(body.model or service.default_model, body.decoder, body.graph, body.sweeps, body.seed,
                             body.settings, body.min_confidence, body.tokens, body.split)

        deadline = service.deadline()
        waiting = service.batches.add(texts, options, deadline)  # tagged with the requests waiting beside it
        try:
            results, warnings, decoder, tokens = await service.run(
                lambda _: service.batches.answer(waiting), sum(map(len, texts)), deadline)
        finally:
            service.batches.forget(waiting)
        service.metrics.tokens.inc(tokens)
        answer: dict[str, Any] = {"model": options.model, "decoder": decoder, "graph": options.graph,
                                  "warnings": warnings}
        if body.text is not None:
            answer.update(results[0])
        else:
            answer["documents"] = [{"id": d.id, **r} for d, r in zip(body.documents or [], results)]
        return json_response(answer)

    async def compare(request: Request) -> Response:
        body = await read_body(request, CompareRequest)
        options = CompareOptions(body.model or service.default_model, body.decoders, body.graph, body.sweeps,
                                 body.seed, body.settings)
        answer = await service.run(lambda deadline: service.engine.compare(body.text, options, deadline),
                                   len(body.text))
        service.metrics.tokens.inc(len(answer["tokens"]))
        return json_response(answer)

    for path, endpoint, request_model, response_model, summary in (
            ("/v1/tag", tag, TagRequest, TagResponse, "tag a text, or a batch of documents with ids"),
            ("/v1/compare", compare, CompareRequest, CompareResponse, "several decoders on one text")):
        app.router.add_api_route(path, endpoint, methods=["POST"], response_model=response_model, summary=summary,
                                 responses=ERRORS, openapi_extra=_request_body(request_model),
                                 route_class_override=_DirectRoute)


class _DirectRoute(APIRoute):
    """A route whose endpoint takes the :class:`Request` and returns its :class:`Response` (it
    reads its body with :func:`read_body`): FastAPI documents it from its declaration, and calls
    it without solving its parameters at each request."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        return self.endpoint  # type: ignore[return-value]


# the request bodies are read by read_body, not by FastAPI: the schema names them as FastAPI would
def _request_body(model: type[BaseModel]) -> dict[str, Any]:
    """The ``requestBody`` of an endpoint that reads ``model`` with :func:`read_body`."""
    schema = {"$ref": f"#/components/schemas/{model.__name__}"}
    return {"requestBody": {"content": {"application/json": {"schema": schema}}, "required": True}}


def _add_request_schemas(app: FastAPI) -> None:
    """The OpenAPI schema of ``app``, with the request models among its components."""
    def openapi() -> dict[str, Any]:
        schema = app.openapi_schema
        if schema is None:
            schema = FastAPI.openapi(app)
            _, definitions = models_json_schema([(model, "validation") for model in REQUESTS],
                                                ref_template="#/components/schemas/{model}")
            # as pydantic writes them (FastAPI's own Schema model would write integer bounds as floats)
            schema["components"]["schemas"].update(definitions["$defs"])
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


async def read_body(request: Request, model: type[Body]) -> Body:
    """The JSON body of ``request`` checked as ``model``, as FastAPI reads a declared body (its
    request and validation errors, located under ``body``), without FastAPI's per-request
    dependency solving: the model's validator, built once, checks it."""
    try:
        raw = await request.body()
    except ClientDisconnect as error:  # as FastAPI: a 400 (which the client, gone, never reads)
        raise StarletteHTTPException(400, "There was an error parsing the body") from error
    if not raw:
        raise RequestValidationError([{"type": "missing", "loc": ("body",), "msg": "Field required", "input": None}])
    value: Any = raw  # not JSON: refused by the model (the error names the Content-Type)
    if _is_json(request.headers.get("content-type", "")):
        try:
            value = strict_json(raw)
        except json.JSONDecodeError as error:
            raise RequestValidationError([{"type": "json_invalid", "loc": ("body", error.pos), "msg": "JSON decode error",
                                           "input": {}, "ctx": {"error": error.msg}}]) from error
        except (UnicodeDecodeError, RecursionError) as error:  # as FastAPI: a 400 caused by it
            raise StarletteHTTPException(400, "There was an error parsing the body") from error
        except ValueError as error:  # NaN, a repeated key, an integer of more than 4,300 digits
            raise RequestValidationError([{"type": "json_invalid", "loc": ("body",), "msg": "JSON decode error",
                                           "input": {}, "ctx": {"error": strict_json_error(error)}}]) from error
    where = unencodable(value)
    if where is not None:  # a lone surrogate, anywhere: never taken in, never echoed in a message
        raise RequestValidationError([{"type": "string_unicode", "loc": ("body", *map(_escaped, where)),
                                       "msg": "Value error, not valid Unicode (a lone surrogate)", "input": None}])
    try:
        return model.model_validate(value)
    except ValidationError as error:
        raise RequestValidationError([{**item, "loc": ("body", *item["loc"])}
                                      for item in error.errors(include_url=False)]) from None


def _escaped(part: str | int) -> str | int:
    return printable(part) if isinstance(part, str) else part


def json_response(answer: dict[str, Any]) -> Response:
    """``answer`` as JSON (UTF-8, compact: as JSONResponse writes it), encoded by msgspec."""
    return Response(ENCODER.encode(answer), media_type="application/json")


def app_from_environment() -> FastAPI:
    """The application of a worker process started by uvicorn (``--workers N``), in its main
    thread under uvicorn's signal handlers: SIGHUP stops it as SIGTERM does (draining its
    requests), and it gets SIGTERM when its supervisor dies (even of SIGKILL)."""
    signal.signal(signal.SIGHUP, signal.getsignal(signal.SIGTERM))
    supervisor = os.environ.get(SUPERVISOR_VARIABLE)
    if supervisor:
        die_with_parent(int(supervisor))
    return create_app(ServerSettings.from_environment())
