"""Requests waiting together are tagged together (hgner/server/batching.py): each gets what it
gets alone, its own language warning, and one request's error never reaches another; and
concurrent requests to the app give the answers of the same requests sent one at a time."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from server_support import MODEL, settings

from hgner.crf.modelfiles import model_directory
from hgner.server.app import create_app
from hgner.server.batching import TagBatches
from hgner.server.engine import Engine, TagOptions
from hgner.server.limits import Deadline, TimedOut

SPANISH = ("El presidente del Gobierno dijo ayer en Madrid que las medidas para la economía se aprobarán "
           "cuando los grupos de la oposición estén de acuerdo con ellas . Según fuentes del ministerio , "
           "el plan incluye una serie de cambios sobre los impuestos y también sobre las pensiones , "
           "aunque todavía no hay fecha para su votación en el Congreso porque muchos diputados "
           "quieren otras reformas antes del verano y nadie sabe cuándo podrán hablar entre sí .")
TEXTS = [["Angela Merkel met Jacques Chirac in Paris ."], ["Jim Smith flew to London on Monday .", "IBM rose ."],
         [SPANISH],
         ["Reuters reported that Toyota will open a plant in Ohio ."]]


@pytest.fixture(scope="module")
def engine() -> Engine:
    engine = Engine({MODEL: str(model_directory(MODEL))}, timeout=60)
    engine.load(warm=False)
    return engine


@pytest.mark.parametrize("tokens", [False, True])
def test_a_batch_answers_each_request_as_alone(engine, tokens):
    options = TagOptions(MODEL, tokens=tokens)
    alone = [engine.tag(texts, options, Deadline.after(60)) for texts in TEXTS]
    batches = TagBatches(engine)
    waiting = [batches.add(texts, options, Deadline.after(60)) for texts in TEXTS]
    assert batches.answer(waiting[1]) == alone[1]  # tags all four
    assert not batches.waiting and all(w.answer is not None for w in waiting)
    assert [w.answer for w in waiting] == alone
    assert any("looks like 'es'" in note for note in alone[2][1]) and not any("'es'" in n for n in alone[0][1])


def test_one_requests_error_stays_its_own(engine):
    options = TagOptions(MODEL)
    batches = TagBatches(engine)
    good, bad = batches.add(TEXTS[0], options, Deadline.after(60)), batches.add(["Jim \ud800 Smith"], options,
                                                                                 Deadline.after(60))
    other = batches.add(TEXTS[1], TagOptions(MODEL, min_confidence=0.5), Deadline.after(60))  # other options: not in this batch
    assert batches.answer(good) == engine.tag(TEXTS[0], options, Deadline.after(60))
    with pytest.raises(Exception, match="not valid Unicode"):
        batches.answer(bad)
    assert batches.waiting == [other]


def test_concurrent_requests_get_the_answers_of_one_at_a_time():
    async def run() -> tuple[list[dict], list[dict]]:
        app = create_app(settings())
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
                bodies = [{"text": texts[0]} for texts in TEXTS * 4]
                while (await client.get("/ready")).status_code != 200:
                    await asyncio.sleep(0.1)
                one = [(await client.post("/v1/tag", json=body)).json() for body in bodies]
                together = await asyncio.gather(*(client.post("/v1/tag", json=body) for body in bodies))
                return one, [response.json() for response in together]

    one, together = asyncio.run(run())
    assert together == one and all("entities" in answer for answer in one)


def test_a_slow_request_stops_at_its_deadline_and_keeps_its_504(engine):
    """A sampler at 10^8 sweeps stops at its request's deadline (not at the decoder's time_limit),
    and a request batched with it is tried again alone, until its own (later) deadline."""
    options = TagOptions(MODEL, decoder="gibbs", sweeps=100_000_000)
    engine.tag(TEXTS[0], TagOptions(MODEL, decoder="gibbs", sweeps=10), Deadline.after(60))  # compiled
    batches = TagBatches(engine)
    slow = batches.add(TEXTS[0], options, Deadline.after(0.5))
    later = batches.add(TEXTS[0], TagOptions(MODEL, decoder="gibbs", sweeps=100_000_000, settings={"time_limit": 2}),
                        Deadline.after(30))
    patient = batches.add(TEXTS[1], options, Deadline.after(1.5))
    started = time.monotonic()
    with pytest.raises(TimedOut):
        batches.answer(slow)
    assert time.monotonic() - started < 3, "the decode went on past both deadlines"
    assert isinstance(patient.error, TimedOut) and later.answer is None
    assert batches.answer(later)[2] == "gibbs"


def test_a_tagger_whose_spacy_vocabulary_grows_gets_a_new_one(engine, monkeypatch):
    from hgner.server import engine as engine_module

    options = TagOptions(MODEL, min_confidence=0.1)
    first = engine.tag(TEXTS[1], options, Deadline.after(60))
    tokenizer = engine._tagger(options).tokenizer
    assert tokenizer.max_words == engine_module.TOKENIZER_WORDS
    vocabulary = tokenizer.nlp.vocab
    monkeypatch.setattr(tokenizer, "max_words", 1)  # (bounded memory: a new vocabulary)
    assert engine.tag(TEXTS[1], options, Deadline.after(60)) == first
    assert tokenizer.nlp.vocab is not vocabulary and engine._tagger(options).tokenizer is tokenizer
