"""The server's Prometheus metrics (``GET /metrics``), with ``prometheus-client``.

With several workers (``--workers N``) each writes its figures under ``PROMETHEUS_MULTIPROC_DIR``
(set by ``hgner serve``) and ``/metrics`` adds up every worker's, whichever worker answers.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest, multiprocess

from .settings import SUPERVISOR_VARIABLE

MULTIPROCESS_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class Metrics:
    """Requests by endpoint and status, a latency histogram by endpoint, tokens tagged, errors by
    code and the queue depth (requests waiting or decoding)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter("hgner_requests", "HTTP requests answered", ["endpoint", "status"],
                                registry=self.registry)
        self.latency = Histogram("hgner_request_seconds", "Seconds from request to response", ["endpoint"],
                                 buckets=LATENCY_BUCKETS, registry=self.registry)
        self.tokens = Counter("hgner_tokens", "Tokens tagged or compared", registry=self.registry)
        self.errors = Counter("hgner_errors", "Requests answered with an error, by error code", ["code"],
                              registry=self.registry)
        self.queue = Gauge("hgner_queue_depth", "Requests waiting or decoding", registry=self.registry,
                           multiprocess_mode="livesum")
        self._answered: dict[tuple[str, int], tuple[Any, Any]] = {}  # (endpoint, status) -> their two series

    def answered(self, endpoint: str, status: int, seconds: float) -> None:
        """Count one request answered with ``status`` after ``seconds`` (the series of an endpoint
        and status looked up once: the endpoints are a fixed set)."""
        series = self._answered.get((endpoint, status))
        if series is None:
            series = self._answered[endpoint, status] = (self.requests.labels(endpoint, str(status)),
                                                         self.latency.labels(endpoint))
        series[0].inc()
        series[1].observe(seconds)

    def exposition(self) -> bytes:
        """The Prometheus text of this worker, or of every worker when they share a directory."""
        if os.environ.get(MULTIPROCESS_VARIABLE):
            registry = CollectorRegistry()
            multiprocess.MultiProcessCollector(registry)
            return generate_latest(registry)
        return generate_latest(self.registry)

    @staticmethod
    def worker_stopped() -> None:
        """Drop this worker's live gauges (several workers only); when the supervisor that made
        the metrics folder has died (its workers stop then), remove the folder."""
        folder = os.environ.get(MULTIPROCESS_VARIABLE)
        if folder:
            multiprocess.mark_process_dead(os.getpid())
            supervisor = os.environ.get(SUPERVISOR_VARIABLE)
            if supervisor and os.getppid() != int(supervisor):
                shutil.rmtree(folder, ignore_errors=True)
