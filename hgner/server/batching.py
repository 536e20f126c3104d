"""``/v1/tag`` requests that wait for the decoding thread together are tagged together.

A worker decodes one job at a time. When several clients send short texts at once, each request
would pay the fixed cost of a tagging call (a graph, a decoder call) for a few tokens. Instead,
each request joins :class:`TagBatches` as it arrives, and the first of them to reach the decoding
thread takes every waiting request with the same options and tags all their texts in one call
(:meth:`~hgner.server.engine.Engine.tag_requests`); the others then find their answers ready.
Each request gets what it would get alone: its own texts' entities, the warnings of the options
and of its own texts. A batch that fails is tried again request by request, so one request's
error never reaches another.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..core.deadline import stopping_at
from .engine import Engine, TagOptions
from .limits import Deadline

MOST_REQUESTS = 64  # requests tagged in one call at most


@dataclass(eq=False)
class WaitingRequest:
    """One request's texts and options, and its answer once its batch has been tagged."""

    texts: Sequence[str]
    options: TagOptions
    deadline: Deadline
    answer: tuple[list[dict[str, Any]], list[str], str, int] | None = None
    error: BaseException | None = None


class TagBatches:
    """The requests waiting for the decoding thread of ``engine``."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.waiting: list[WaitingRequest] = []
        self.lock = threading.Lock()

    def add(self, texts: Sequence[str], options: TagOptions, deadline: Deadline) -> WaitingRequest:
        """Enter a request (before its job is queued for the decoding thread)."""
        request = WaitingRequest(texts, options, deadline)
        with self.lock:
            self.waiting.append(request)
        return request

    def answer(self, request: WaitingRequest) -> tuple[list[dict[str, Any]], list[str], str, int]:
        """On the decoding thread: ``request``'s answer, tagging it with every request waiting with
        the same options unless an earlier batch has already answered it."""
        if request.answer is None and request.error is None:
            with self.lock:
                batch = [r for r in self.waiting if r.options == request.options][:MOST_REQUESTS]
                if request not in batch:
                    batch = [request, *batch[:MOST_REQUESTS - 1]]
                taken = {id(r) for r in batch}
                self.waiting = [r for r in self.waiting if id(r) not in taken]
            self._tag(batch)
        if request.error is not None:
            raise request.error
        assert request.answer is not None
        return request.answer

    def forget(self, request: WaitingRequest) -> None:
        """Leave the queue unanswered (the request timed out or was refused)."""
        with self.lock:
            self.waiting = [r for r in self.waiting if r is not request]

    def _tag(self, batch: list[WaitingRequest]) -> None:
        deadline = min((r.deadline for r in batch), key=lambda d: d.at)
        try:
            with stopping_at(deadline.at, deadline.error):
                answers = self.engine.tag_requests([r.texts for r in batch], batch[0].options, deadline)
        except Exception as error:  # noqa: BLE001  (each request on its own: its own answer or error)
            if len(batch) == 1:
                batch[0].error = error
                return
            for request in batch:
                if request.deadline.remaining() <= 0:
                    request.error = request.deadline.error()
                else:
                    self._tag([request])
            return
        for request, answer in zip(batch, answers):
            request.answer = answer
