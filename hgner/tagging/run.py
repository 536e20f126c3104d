"""Tagging inputs into a writer: in input order, streaming a document's groups as they are
decoded, or in forked worker processes (``hgner tag -j N``)."""

from __future__ import annotations

import logging
import multiprocessing
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import IO

from tqdm import tqdm

from ..core.errors import named
from ..core.fileio import STANDARD_OUTPUT, output_stream
from ..core.integrity import refuse_model_folder
from .defaults import DEFAULT_SPLIT
from .inputs import Input
from .splitting import looks_like_lines
from .tagger import TaggedGroup, Tagger, add_to_language_sample
from .writers import Writer

BATCH_DOCUMENTS, BATCH_BYTES = 64, 200_000  # inputs read ahead and tagged together (_batches)
PROGRESS_BYTES = 1_000_000  # show a progress bar (on a terminal) for more input than this, or several inputs


log = logging.getLogger("hgner")
_worker_tagger: Tagger | None = None  # the parent's Tagger, inherited by forked workers (see _tagged)


def _tag_whole(document: Input) -> tuple[str, list[TaggedGroup]]:
    """In a worker: one input's text and all its decoded groups."""
    text = document.read()
    assert _worker_tagger is not None  # (set before the workers fork)
    return text, list(_worker_tagger.tag_text(text))


def _tagged(tagger: Tagger, inputs: list[Input], jobs: int) -> Iterator[tuple[Input, str, Iterable[TaggedGroup]]]:
    """Each input with its text and decoded groups, in input order. One job streams groups as they
    are decoded; several jobs tag whole inputs in forked worker processes (files only)."""
    if jobs <= 1 or len(inputs) < 2 or any(i.path == "-" for i in inputs):
        for chunk in _batches(inputs):
            texts: list[str] = []
            try:
                texts.extend(document.read() for document in chunk)
            except BaseException:  # an input that cannot be read: the ones before it are still tagged and written
                yield from zip(chunk, texts, tagger.tag_texts(texts, BATCH_DOCUMENTS))
                raise
            yield from zip(chunk, texts, tagger.tag_texts(texts, BATCH_DOCUMENTS))
        return
    global _worker_tagger
    tagger.pipeline.decode([["Warm", "up", "."]])  # load the kernels once, before forking
    _worker_tagger = tagger
    workers = min(jobs, len(inputs))
    batch = max(1, len(inputs) // (8 * workers))  # a few batches per worker: balance against messaging
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        for document, (text, groups) in zip(inputs, pool.imap(_tag_whole, inputs, chunksize=batch)):
            yield document, text, groups


def _batches(inputs: list[Input]) -> Iterator[list[Input]]:
    """``inputs`` in order, a few at a time: up to :data:`BATCH_DOCUMENTS` inputs and about
    :data:`BATCH_BYTES` bytes (short documents are decoded together, long ones stream alone).
    Standard input comes alone, after the inputs before it are written."""
    batch: list[Input] = []
    size = 0
    for document in inputs:
        if document.path == "-" and batch:
            yield batch
            batch, size = [], 0
        batch.append(document)
        size += document.size()
        if len(batch) == BATCH_DOCUMENTS or size >= BATCH_BYTES or document.path == "-":
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def tag_inputs(tagger: Tagger, inputs: list[Input], writer: Writer, progress: bool, jobs: int = 1) -> None:
    """Tag every input, writing each document to ``writer`` in input order (blank ones too, with no
    groups); with one job the groups of a document stream out as they are decoded."""
    total = sum(i.size() for i in inputs)
    show = progress and (len(inputs) > 1 or total > PROGRESS_BYTES)
    documents = _tagged(tagger, inputs, jobs)
    sample: list[str] | None = []  # the first words tagged, until the language check has read them
    hint = tagger.settings.split == DEFAULT_SPLIT  # until a text that looks like one short text a line is found
    with tqdm(total=total or None, unit="B", unit_scale=True, disable=not show, file=sys.stderr, leave=False) as bar:
        for document, text, groups in documents:
            if sample is not None and add_to_language_sample(sample, text):
                tagger.check_language(sample)
                sample = None
            if hint and looks_like_lines(text):
                hint = False
                log.info("hgner tag: hint: %s has many short lines and no blank line, and is tagged as one document; "
                         "if each line is a text of its own, tag with %s lines", document.name, named("split"))
            writer.start(document, text)
            done = 0
            for group in groups:
                writer.group(group)
                bar.update(len(text[done:group.end].encode("utf-8")))
                done = group.end
            writer.finish()
            bar.update(len(text[done:].encode("utf-8")))
    writer.close()
    if sample:
        tagger.check_language(sample)



@contextmanager
def opened(writer: type[Writer], output: str | None) -> Iterator[IO | None]:
    """The stream ``writer`` writes to: standard output (no ``-o``, or ``-o -``), or the ``-o``
    file written atomically."""
    if writer.stream == "files":
        yield None
    else:
        with output_stream(STANDARD_OUTPUT if output is None else output, binary=writer.stream == "bytes",
                           refuse=refuse_model_folder) as out:
            yield out
