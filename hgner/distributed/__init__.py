"""Tagging and evaluating beyond one process, on a Dask cluster (:mod:`.connect` is the one module
that talks to Dask's client).

Install with ``pip install 'hgner[dask]'``. Three ways in:

* ``hgner tag --cluster local[:N] | tcp://HOST:PORT INPUTS... --out DIR`` (:func:`.jobs.tag_to_folder`):
  inputs are text files (one document each), folders and globs of them, and JSONL (``.jsonl``,
  ``.ndjson``) or Parquet (``.parquet``, needs pyarrow) files with one document per record in
  their ``--text-column``. A folder gives the text files plain ``hgner tag`` reads from it
  (:func:`hgner.tagging.inputs.folder_files`: those matching ``--glob``, ``*.txt`` by default, recursively,
  hidden ones left out) and its JSONL and Parquet files, less the ``--out`` folder and the part
  files of earlier jobs' output folders (an input folder inside ``--out`` is refused). The work is
  cut into *parts* of about :data:`PART_BYTES` of input, in
  input order; each part is one task and one output file ``part-NNNNN.jsonl``, written atomically
  and then committed by a ``part-NNNNN.done.json`` marker holding its counts, size and sha256
  (a part file deleted or changed since is tagged again). ``manifest.json``
  describes the job (the inputs: arguments, files, bytes and a checksum of the file listing;
  model, decoder, parts, counts). Rerunning the same
  command skips the committed parts, so a crashed or interrupted job resumes and no part is
  written twice; a folder holding another job's output is refused. A worker that dies mid-task
  loses nothing: the scheduler runs its task again elsewhere, and the part file only appears
  complete.
* ``hgner evaluate --cluster ...`` (:func:`.evaluate.cluster_outcomes`): documents are featurised and
  decoded on the workers in batches, every decoder run on each batch; the report's scores equal
  the local run's exactly (every decoder reseeds per document, so batching changes nothing).
* The Python API for code already on Dask: :func:`.frames.tag_bag` (texts -> records) and
  :func:`.frames.tag_dataframe` (adds an ``entities`` column).

One record per input document, in input order: ``{"source", "text", "entities"}``, the entities
as ``hgner tag --format jsonl`` writes them (:meth:`hgner.tagging.tagger.Entity.to_json`). ``source`` is the
file, or ``FILE:LINE`` (JSONL, 1-based) / ``FILE:ROW`` (Parquet, 0-based).

Each worker process loads a model once (:func:`.workers.worker_tagger`, a cache keyed by the tagging
settings), not once per document or task. Memory per worker is bounded by one part's text plus
the model: records stream to the part file one document at a time.

Importing the package loads none of its modules (``hgner.dask`` gathers the Python API).
"""
