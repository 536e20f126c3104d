"""The annotation page of ``hgner serve --annotate QUEUE --annotations FILE`` (issue 59): the page
at ``/annotate`` and its API under ``/v1/annotate``, over one
:class:`~hgner.adaptation.annotations_store.AnnotationSession` (the queue, the file, the decisions).

Every answer is the loop's state: the entity types with their keys, the progress, the sentence to
annotate and the next ones (the page shows the next as soon as a sentence is accepted or skipped).
Sentences of a plain-text queue are tagged with the default model when they come up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar

from fastapi import APIRouter
from fastapi.responses import FileResponse
from pydantic import BaseModel, ConfigDict, Field

from ..adaptation.annotations_store import AnnotationSession, NotCurrent, NotSaved
from ..api import model_info
from ..core.process import say
from .engine import TagOptions
from .limits import Refused
from .schemas import ErrorResponse
from .service import Service

Decided = TypeVar("Decided")
PAGE = "annotate.html"
SHOWN = 10  # the sentence to annotate and those after it, which the page shows as fast as it is typed


class Conflict(Refused):
    status, code = 409, "conflict"


class Unsaved(Refused):
    status, code = 507, "not_saved"


class Decision(BaseModel):
    """Skip the sentence ``id`` (the one the last answer showed)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    id: int = Field(ge=0, description="the sentence's id, as the last answer gave it")


class Acceptance(Decision):
    """Save the sentence ``id`` with ``tags``: IOB2, one per token, of the types the state lists."""

    tags: list[str] = Field(max_length=100_000, description="IOB2 tags, one per token")


class Sentence(BaseModel):
    id: int = Field(description="the sentence's place in the queue")
    tokens: list[str]
    tags: list[str] = Field(description="IOB2, one per token")


class LastDecision(Sentence):
    decision: Literal["accept", "skip"] = Field(description="what undo takes back; tags: as accepted")


class TypeKeys(BaseModel):
    type: str
    keys: list[str] = Field(description="the page's keys for the type: its digit, and its first letter when free")


class Progress(BaseModel):
    position: int = Field(description="1-based, of total")
    total: int = Field(description="sentences in the queue (each once)")
    before: int = Field(description="of the queue's, saved in the file by earlier sessions")
    accepted: int
    skipped: int
    remaining: int
    saved: int = Field(description="sentences in the file")


class AnnotationState(BaseModel):
    """Every answer of the annotation API."""

    types: list[TypeKeys]
    progress: Progress
    file: str = Field(description="the annotations file")
    sentence: Sentence | None = Field(description="the sentence to annotate; null once the queue is done")
    upcoming: list[Sentence] = Field(description="the sentences after it, in order")
    last: LastDecision | None = Field(description="the decision undo takes back")


ERRORS: dict[int | str, dict[str, Any]] = {status: {"model": ErrorResponse, "description": text} for status, text in (
    (409, "not the sentence shown (decided elsewhere), or nothing to undo"),
    (422, "malformed JSON, unknown field, tags that are not IOB2 of the types, one per token"),
    (503, "the model is still loading (a plain-text queue)"), (504, "over the timeout (a plain-text queue)"),
    (507, "the annotations file could not be written: it is as it was"))}
ANSWER: dict[str, Any] = {"response_model": AnnotationState, "responses": ERRORS}


def annotation_router(service: Service, static: Any) -> APIRouter:
    """The routes of the annotation loop that ``service``'s settings name (its queue and file are
    read here: a bad one is the error of ``hgner serve``, before it listens); ``static``: the
    folder of the page's files."""
    settings = service.settings
    assert settings.annotate is not None and settings.annotations is not None
    labels = model_info(settings.models[settings.default_model]).labels
    session = AnnotationSession(settings.annotate, settings.annotations, labels)
    progress = session.progress()
    say(f"hgner serve: annotation page at /annotate: {progress['remaining']} of {progress['total']} sentences of "
        f"{settings.annotate} to go, saved to {settings.annotations}")
    router = APIRouter()

    async def state() -> dict[str, Any]:
        await _pre_annotate(service, session)
        return _state(session)

    @router.get("/annotate", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(str(static / PAGE), media_type="text/html; charset=utf-8")

    @router.get("/v1/annotate", **ANSWER, summary="the annotation loop: types and keys, progress, the sentence to annotate")
    async def show() -> dict[str, Any]:
        return await state()

    @router.post("/v1/annotate/accept", **ANSWER, summary="save the sentence shown with its tags (rewrites the file atomically)")
    async def accept(body: Acceptance) -> dict[str, Any]:
        _decide(lambda: session.accept(body.id, body.tags))
        return await state()

    @router.post("/v1/annotate/skip", **ANSWER, summary="pass the sentence shown for this session")
    async def skip(body: Decision) -> dict[str, Any]:
        _decide(lambda: session.skip(body.id))
        return await state()

    @router.post("/v1/annotate/undo", **ANSWER, summary="take back the last accept or skip of this session")
    async def undo() -> dict[str, Any]:
        if _decide(session.undo) is None:
            raise Conflict("nothing to undo: no sentence was accepted or skipped since the server started")
        return await state()

    return router


def _decide(decision: Callable[[], Decided]) -> Decided:
    """What ``decision`` returns; a sentence that is no longer the one shown is a 409, a file that cannot
    be written a 507."""
    try:
        return decision()
    except NotCurrent as error:
        raise Conflict(str(error)) from None
    except NotSaved as error:
        raise Unsaved(str(error)) from None


async def _pre_annotate(service: Service, session: AnnotationSession) -> None:
    """Tag the plain-text sentences about to be shown with the default model (on the decoding thread)."""
    untagged = [index for index in session.pending(SHOWN) if session.items[index].tokens is None]
    if not untagged:
        return
    texts = [session.items[index].text or "" for index in untagged]
    options = TagOptions(service.default_model, tokens=True)
    results, _, _, _ = await service.run(lambda deadline: service.engine.tag(texts, options, deadline),
                                         sum(map(len, texts)))
    for index, result in zip(untagged, results):
        session.pre_annotate(index, [t["text"] for t in result["tokens"]], [t["tag"] for t in result["tokens"]])


def _state(session: AnnotationSession) -> dict[str, Any]:
    """What the page shows: types and keys, progress, the sentence to annotate and the next ones,
    and the last decision (which the page shows again at once when it is taken back)."""
    shown = [{"id": index, "tokens": session.items[index].tokens, "tags": session.items[index].tags}
             for index in session.pending(SHOWN)]
    last = session.last_decision()
    return {"types": [{"type": name, "keys": session.keys[name]} for name in session.types],
            "progress": session.progress(), "file": session.path,
            "sentence": shown[0] if shown else None, "upcoming": shown[1:],
            "last": None if last is None else {"decision": last[0], "id": last[1], "tokens": session.items[last[1]].tokens,
                                               "tags": last[2]}}

