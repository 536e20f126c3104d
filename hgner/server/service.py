"""What one worker of ``hgner serve`` holds, without the web framework: the settings, the engine,
the decoding thread, the admission queue, the ``/v1/tag`` requests waiting to be tagged together
and the metrics (:mod:`hgner.server.app` serves them over HTTP)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from ..core.deadline import stopping_at
from .batching import TagBatches
from .engine import Engine
from .limits import Admission, Deadline, NotReady, TooLarge
from .metrics import Metrics
from .settings import ServerSettings


class Service:
    """What one worker holds: the settings, the engine, the decoding thread, the admission queue,
    the ``/v1/tag`` requests waiting to be tagged together and the metrics."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self.engine = Engine(settings.models, settings.timeout)
        self.batches = TagBatches(self.engine)
        self.metrics = Metrics()
        self.admission = Admission(settings.max_queue)
        self.executor = ThreadPoolExecutor(1, thread_name_prefix="hgner-decode")  # a new one at each start
        self.loading: Future | None = None
        self.default_model = settings.default_model

    def start(self) -> None:
        if self.loading is not None:
            self.executor = ThreadPoolExecutor(1, thread_name_prefix="hgner-decode")
        self.loading = self.executor.submit(self.engine.load, self.settings.warm)

    def stop(self) -> None:
        self.executor.shutdown(wait=True, cancel_futures=True)
        self.metrics.worker_stopped()

    def load_error(self) -> str | None:
        """Why the models could not be loaded, or None."""
        if self.loading is None or not self.loading.done() or self.loading.exception() is None:
            return None
        return f"the models could not be loaded: {self.loading.exception()}"

    def deadline(self) -> Deadline:
        """The deadline of a request arriving now (``timeout`` seconds)."""
        return Deadline.after(self.settings.timeout)

    async def run(self, job: Callable[[Deadline], Any], characters: int, deadline: Deadline | None = None) -> Any:
        """``job(deadline)`` on the decoding thread, admitted to the queue; 429 when it is full,
        504 once the deadline passes (the job's decoders stop then too: :func:`~hgner.core.deadline.check_stop`),
        503 when the models failed to load."""
        problem = self.load_error()
        if problem is not None:
            raise NotReady(problem)
        if characters > self.settings.max_chars:
            raise TooLarge(f"{characters} characters of text; this server takes at most {self.settings.max_chars} "
                           "in one request (--max-chars)")
        self.admission.enter()
        self.metrics.queue.inc()
        started = time.monotonic()
        deadline = deadline or self.deadline()
        try:
            future = self.executor.submit(_with_deadline, job, deadline)
            try:
                return await asyncio.wait_for(asyncio.wrap_future(future), max(0.0, deadline.remaining()))
            except asyncio.TimeoutError:
                future.cancel()
                raise deadline.error() from None
        finally:
            self.admission.leave(time.monotonic() - started)
            self.metrics.queue.dec()


def _with_deadline(job: Callable[[Deadline], Any], deadline: Deadline) -> Any:
    deadline.check()  # waited too long in the queue: do not start
    with stopping_at(deadline.at, deadline.error):
        return job(deadline)
