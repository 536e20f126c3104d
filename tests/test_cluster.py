"""hgner.distributed on local Dask clusters bound to 127.0.0.1: tagging into parts equals one process,
resuming skips committed parts, a killed worker loses and duplicates nothing, evaluate gives the
local scores, the bag/dataframe API, Parquet, and the command line."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed")

from tag_support import ENGLISH, FIXTURE, SPANISH, SPANISH_WARNING, run_hgner, subprocess_env, tag_model  # noqa: E402,F401

from hgner.core.errors import HgnerError, HgnerWarning  # noqa: E402
from hgner.crf.modelfiles import shipped_models_dir  # noqa: E402
from hgner.distributed.connect import connect  # noqa: E402
from hgner.distributed.frames import tag_bag, tag_dataframe  # noqa: E402
from hgner.distributed.jobs import tag_to_folder  # noqa: E402
from hgner.features import WORD_FREQUENCY_FILE  # noqa: E402
from hgner.reseal import reseal  # noqa: E402
from hgner.tagging import tagger as tag  # noqa: E402
from hgner.tagging.inputs import Input  # noqa: E402
from hgner.tagging.run import tag_inputs  # noqa: E402
from hgner.tagging.settings import TagSettings  # noqa: E402
from hgner.tagging.writers import JsonlWriter, OutputOptions  # noqa: E402

SENTENCES = [
    "Angela Merkel works for United Nations in Tokyo .",
    "Jim Smith flew from Paris to London on Monday .",
    "Shares in Siemens rose 3 percent , Reuters said .",
    "The weather in Berlin was cold .",
    "Peter Blake met Mary Jones at the Acme Corp office .",
]


def documents(count: int, sentences: int = 3) -> list[str]:
    """``count`` distinct small documents."""
    return ["\n".join(SENTENCES[(d + s) % len(SENTENCES)] for s in range(sentences)) + f"\nDocument {d} ends .\n"
            for d in range(count)]


def local_records(model: Path, texts: list[str]) -> list[dict]:
    """What ``hgner tag --format jsonl`` writes for ``texts`` in this process."""
    out = io.StringIO()
    tagger = tag.Tagger(TagSettings(model))
    tag_inputs(tagger, [Input("<text>", text=t) for t in texts], JsonlWriter(out, OutputOptions()), progress=False)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def read_parts(folder: Path) -> list[dict]:
    return [json.loads(line) for part in sorted(folder.glob("part-*.jsonl")) for line in part.read_text().splitlines()]


def write_files(folder: Path, texts: list[str]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, text in enumerate(texts):
        paths.append(folder / f"doc{i:03d}.txt")
        paths[-1].write_text(text, encoding="utf-8")
    return paths


@pytest.fixture(scope="module")
def client():
    with connect("local:2") as client:
        yield client


def test_tag_to_folder_equals_one_process(client, tag_model, tmp_path):
    texts = documents(12)
    write_files(tmp_path / "in" / "news", texts[:8])
    lines = [json.dumps({"text": t, "id": i}) for i, t in enumerate(texts[8:])]
    (tmp_path / "in" / "more.jsonl").write_text("\n".join(lines[:2]) + "\n\n" + "\n".join(lines[2:]) + "\n")
    settings = TagSettings(tag_model)
    manifest = tag_to_folder(client, [str(tmp_path / "in")], tmp_path / "out", settings, part_bytes=400)
    records = read_parts(tmp_path / "out")
    assert [r["text"] for r in records] == [*texts[8:], *texts[:8]]  # more.jsonl sorts before news/
    sources = [r["source"] for r in records]
    assert sources[:4] == [f"{tmp_path / 'in' / 'more.jsonl'}:{line}" for line in (1, 2, 4, 5)]
    assert sources[4] == str(tmp_path / "in" / "news" / "doc000.txt")
    assert [r.get("id") for r in records[:5]] == [0, 1, 2, 3, None]  # a record's id is kept
    expected = local_records(tag_model, [r["text"] for r in records])
    assert [r["entities"] for r in records] == [e["entities"] for e in expected]
    assert any(r["entities"] for r in records)
    counts = manifest["counts"]
    assert manifest["complete"] and counts["documents"] == 12 and counts["parts"] > 2
    assert counts["entities"] == sum(len(r["entities"]) for r in records)
    assert json.loads((tmp_path / "out" / "manifest.json").read_text()) == manifest
    # the model loaded once per worker process, whatever the number of parts and documents
    assert set(client.run(lambda: len(__import__("hgner.distributed.workers").distributed.workers._TAGGERS)).values()) <= {0, 1}


def test_local_workers_run_without_the_dashboards_profiler(client):
    # the statistical profiler feeds only the dashboard, which a local cluster here does not have
    assert set(client.run(lambda: __import__("dask").config.get("distributed.worker.profile.enabled")).values()) == {False}


def test_local_workers_check_on_themselves_about_once_a_second(client):
    # Dask's periodic checks (every 20-500 ms by default) take the GIL from the task each time
    from dask.utils import parse_timedelta

    keys = ("distributed.admin.tick.interval", "distributed.admin.system-monitor.interval",
            "distributed.worker.memory.monitor-interval")
    seen = client.run(lambda: tuple(parse_timedelta(__import__("dask").config.get(k)) for k in keys))
    assert all(1 <= seconds <= 2 for intervals in seen.values() for seconds in intervals)


def test_warming_the_parent_loads_wordfreqs_list_only_for_a_table_that_asks_it(tmp_path):
    # a shipped table answers every word; one written before the pieces rule asks wordfreq, whose list
    # workers forked after warm_tagger then share instead of each loading it (about 0.4 CPU-s)
    older = tmp_path / "older"
    shutil.copytree(shipped_models_dir() / "en-conll03", older)
    with np.load(older / WORD_FREQUENCY_FILE) as stored:
        arrays = {name: stored[name] for name in stored.files if name != "pieces"}
    np.savez_compressed(older / WORD_FREQUENCY_FILE, **arrays)
    with pytest.warns(HgnerWarning, match=r"types\.npz: made for other"):
        reseal(older)
    script = ("import sys, warnings; warnings.simplefilter('ignore'); from hgner.distributed.workers import warm_tagger; "
              "from hgner.tagging.settings import TagSettings; warm_tagger(TagSettings(model=sys.argv[1])); "
              "print('wordfreq' in sys.modules)")
    loaded = [subprocess.run([sys.executable, "-c", script, model], capture_output=True, text=True, check=True).stdout
              for model in ("en-conll03", str(older))]
    assert [output.split() for output in loaded] == [["False"], ["True"]]


def test_resume_skips_committed_parts_and_refuses_another_job(client, tag_model, tmp_path):
    write_files(tmp_path / "in", documents(6))
    settings = TagSettings(tag_model)
    out = tmp_path / "out"
    first = tag_to_folder(client, [str(tmp_path / "in" / "*.txt")], out, settings, part_bytes=300)
    before = read_parts(out)
    parts = sorted(out.glob("part-*.jsonl"))
    assert len(parts) == first["counts"]["parts"] >= 3
    stamps = {p.name: p.stat().st_mtime_ns for p in parts}
    parts[1].unlink()  # a crash between two commits: part 1 is redone, the others are kept
    (out / "part-00001.done.json").unlink()
    (out / ".part-00001.jsonl.abc.part").write_text("half a part")  # a dead worker's temporary file
    second = tag_to_folder(client, [str(tmp_path / "in" / "*.txt")], out, settings, part_bytes=300)
    assert second["counts"]["parts_this_run"] == 1
    assert {p.name: p.stat().st_mtime_ns for p in parts if p != parts[1]} == \
           {name: stamp for name, stamp in stamps.items() if name != parts[1].name}
    assert read_parts(out) == before and not list(out.glob(".*.part"))
    assert tag_to_folder(client, [str(tmp_path / "in" / "*.txt")], out, settings, part_bytes=300)["counts"][
        "parts_this_run"] == 0
    parts[0].unlink()  # deleted after its commit: tagged again, as is a part whose bytes changed
    parts[2].write_text("garbage\n")
    third = tag_to_folder(client, [str(tmp_path / "in" / "*.txt")], out, settings, part_bytes=300)
    assert third["counts"]["parts_this_run"] == 2 and read_parts(out) == before
    with pytest.raises(HgnerError, match="another job .*decoder"):
        tag_to_folder(client, [str(tmp_path / "in" / "*.txt")], out, TagSettings(tag_model, "herded"), part_bytes=300)
    manifest = json.loads((out / "manifest.json").read_text())
    for damaged, message in [({**manifest, "job": 5}, "manifest.json: job: expected an object describing the job"),
                             ({"parts": []}, "manifest.json: top level: missing required field 'job'")]:
        (out / "manifest.json").write_text(json.dumps(damaged))
        with pytest.raises(HgnerError, match=message):
            tag_to_folder(client, [str(tmp_path / "in" / "*.txt")], out, settings, part_bytes=300)
    (out / "manifest.json").write_text("{not json")
    with pytest.raises(HgnerError, match="manifest.json: not valid JSON"):
        tag_to_folder(client, [str(tmp_path / "in" / "*.txt")], out, settings, part_bytes=300)


def test_text_in_another_shipped_models_language_is_warned_about_before_the_job(client, tag_model, tmp_path):
    """As ``hgner tag`` warns in one process: on the first words of the inputs (here the records of
    a JSONL file), once, before any task runs; English text gets no warning."""
    (tmp_path / "es.jsonl").write_text("".join(json.dumps({"text": SPANISH}) + "\n" for _ in range(3)), encoding="utf-8")
    import warnings

    from hgner.commands.arguments import flag_names

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        manifest = tag_to_folder(client, [str(tmp_path / "es.jsonl")], tmp_path / "out", TagSettings(tag_model))
        write_files(tmp_path / "en", [ENGLISH])
        tag_to_folder(client, [str(tmp_path / "en")], tmp_path / "out-en", TagSettings(tag_model))
    assert [w.message.render(flag_names()) for w in caught] == [SPANISH_WARNING]
    assert manifest["counts"]["documents"] == 3


def test_folder_inputs_leave_out_earlier_output_and_refuse_the_out_folder(client, tag_model, tmp_path):
    write_files(tmp_path / "in", documents(2))
    settings = TagSettings(tag_model)
    tag_to_folder(client, [str(tmp_path / "in")], tmp_path / "in" / "out", settings)
    manifest = tag_to_folder(client, [str(tmp_path / "in")], tmp_path / "out2", settings)
    assert manifest["counts"]["documents"] == 2  # not the first job's part file
    with pytest.raises(HgnerError, match="inside, the out folder"):
        tag_to_folder(client, [str(tmp_path / "in")], tmp_path / "in", settings)


def test_bad_records_name_file_and_line(client, tag_model, tmp_path):
    (tmp_path / "in.jsonl").write_text('{"text": "Jim Smith ."}\n{"body": "no text"}\n')
    with pytest.raises(HgnerError, match=r"in\.jsonl:2: expected an object with a text field 'text', got keys 'body'"):
        tag_to_folder(client, [str(tmp_path / "in.jsonl")], tmp_path / "out", TagSettings(tag_model))
    with pytest.raises(HgnerError, match="no such file or folder"):
        tag_to_folder(client, [str(tmp_path / "missing")], tmp_path / "out2", TagSettings(tag_model))
    (tmp_path / "surrogate.jsonl").write_text('{"text": "Jim Smith ."}\n{"text": "\\ud800 x"}\n')
    with pytest.raises(HgnerError, match=r"surrogate\.jsonl:2: 'text': not valid Unicode \(surrogates not allowed at character 0\)"):
        tag_to_folder(client, [str(tmp_path / "surrogate.jsonl")], tmp_path / "out3", TagSettings(tag_model))


def test_a_carriage_return_inside_a_json_line_is_whitespace(client, tag_model, tmp_path):
    (tmp_path / "cr.jsonl").write_bytes(b'{"text": "Jim Smith ."}\r\n{"text":\r"Angela Merkel ."}\n')
    manifest = tag_to_folder(client, [str(tmp_path / "cr.jsonl")], tmp_path / "out", TagSettings(tag_model))
    assert manifest["counts"]["documents"] == 2


def test_killed_worker_loses_and_duplicates_nothing(tag_model, tmp_path):
    texts = documents(40, sentences=60)
    write_files(tmp_path / "in", texts)
    settings = TagSettings(tag_model)
    out = tmp_path / "out"
    with connect("local:2") as client:
        pids = set(client.run(os.getpid).values())
        outcome: dict = {}
        job = threading.Thread(target=lambda: outcome.update(
            manifest=tag_to_folder(client, [str(tmp_path / "in")], out, settings, part_bytes=1)))
        job.start()
        deadline = time.monotonic() + 120
        while not list(out.glob("*.done.json")) and time.monotonic() < deadline:
            time.sleep(0.05)
        committed_at_kill = len(list(out.glob("*.done.json")))
        os.kill(next(iter(pids)), signal.SIGKILL)
        job.join(timeout=300)
        assert not job.is_alive()
        assert 1 <= committed_at_kill < len(texts), "the worker must die in the middle of the job"
        assert set(client.run(os.getpid).values()) != pids  # one worker was replaced
    records = read_parts(out)
    assert [r["source"] for r in records] == [str(tmp_path / "in" / f"doc{i:03d}.txt") for i in range(len(texts))]
    assert [r["entities"] for r in records] == [e["entities"] for e in local_records(tag_model, texts)]
    assert outcome["manifest"]["counts"]["documents"] == len(texts)
    assert not list(out.glob(".*.part"))


def test_evaluate_on_the_cluster_gives_the_local_numbers(client, tiny_model, tiny_corpus):
    """With the model's calibration and with another one (--calibration), which the workers use too."""
    from hgner.crf.model import CrfModel
    from hgner.distributed.evaluate import cluster_outcomes
    from hgner.evaluation import EvaluateOptions, evaluate

    options = EvaluateOptions(decoders=("viterbi", "gibbs", "herded"), sweeps=(20,), seeds=2)
    timing = {"decode_seconds", "total_seconds"}
    figures = []
    for model in (tiny_model, CrfModel.load(tiny_model.directory, 0.05)):
        local = evaluate(model, tiny_corpus, options).to_json()
        remote = evaluate(model, tiny_corpus, options, outcomes=cluster_outcomes(client)).to_json()
        figures.append([{k: v for k, v in r.items() if k not in timing} for r in local["results"]])
        assert [{k: v for k, v in r.items() if k not in timing} for r in remote["results"]] == figures[-1]
        assert remote["calibration"] == local["calibration"] == model.calibration
    assert len({r["f1"] for r in figures[0]}) > 1 or figures[0][0]["f1"] > 0
    assert figures[1][1:] != figures[0][1:]  # the samplers see the flatter model


def test_tag_bag_and_dataframe(client, tag_model):
    import dask.bag

    texts = documents(7)
    expected = [r["entities"] for r in local_records(tag_model, texts)]
    records = tag_bag(dask.bag.from_sequence(texts, npartitions=3), model=tag_model).compute()
    assert [r["text"] for r in records] == texts and [r["entities"] for r in records] == expected
    dataframe = pytest.importorskip("dask.dataframe")
    pandas = pytest.importorskip("pandas")
    frame = dataframe.from_pandas(pandas.DataFrame({"body": texts, "n": range(7)}), npartitions=2)
    tagged = tag_dataframe(frame, "body", model=tag_model).compute()
    assert list(tagged["n"]) == list(range(7)) and list(tagged["entities"]) == expected
    with pytest.raises(HgnerError, match="no column 'text'"):
        tag_dataframe(frame, "text", model=tag_model)


def test_parquet_in_and_out(client, tag_model, tmp_path):
    pyarrow = pytest.importorskip("pyarrow")
    import pyarrow.parquet

    texts = documents(5)
    pyarrow.parquet.write_table(pyarrow.table({"body": texts, "id": [f"n{i}" for i in range(5)]}),
                                tmp_path / "news.parquet", row_group_size=2)
    settings = TagSettings(tag_model)
    manifest = tag_to_folder(client, [str(tmp_path / "news.parquet")], tmp_path / "out", settings,
                             text_column="body", part_format="parquet")
    assert manifest["counts"]["parts"] == 3
    rows = [row for part in sorted((tmp_path / "out").glob("part-*.parquet"))
            for row in pyarrow.parquet.read_table(part).to_pylist()]
    assert [r["source"] for r in rows] == [f"{tmp_path / 'news.parquet'}:{i}" for i in range(5)]
    assert [r["id"] for r in rows] == [f"n{i}" for i in range(5)]  # a record's id is kept
    assert [r["entities"] for r in rows] == [r["entities"] for r in local_records(tag_model, texts)]
    with pytest.raises(HgnerError, match="no column 'text'"):
        tag_to_folder(client, [str(tmp_path / "news.parquet")], tmp_path / "out2", settings)


def test_command_line(tag_model, tmp_path):
    texts = documents(3)
    write_files(tmp_path / "in", texts)
    result = run_hgner(["tag", "--model", str(tag_model), "--cluster", "local:1", str(tmp_path / "in"),
                        "--out", str(tmp_path / "out")])
    assert result.returncode == 0, result.stderr
    assert re.search(r"3 documents, \d+ tokens, \d+ entities in 3 parts", result.stderr)
    assert [r["entities"] for r in read_parts(tmp_path / "out")] == \
           [r["entities"] for r in local_records(tag_model, texts)]
    assert "warning" not in result.stderr
    (tmp_path / "es.jsonl").write_text(json.dumps({"text": SPANISH}) + "\n", encoding="utf-8")
    spanish = run_hgner(["tag", "--model", str(tag_model), "--cluster", "local:1", str(tmp_path / "es.jsonl"),
                         "--out", str(tmp_path / "out-es")])
    assert spanish.returncode == 0 and f"hgner tag: warning: {SPANISH_WARNING}\n" in spanish.stderr, spanish.stderr
    for args, message in [(["--out", str(tmp_path / "x")], "--out needs --cluster"),
                          (["--cluster", "local:0", "--out", str(tmp_path / "x")], "expected local, local:N"),
                          (["--cluster", "local", str(tmp_path / "in")], "--cluster needs --out")]:
        failed = run_hgner(["tag", "--model", str(tag_model), *args])
        assert failed.returncode == 2 and failed.stderr.count("\n") == 1 and message in failed.stderr, failed.stderr
    failed = run_hgner(["evaluate", "--model", str(tag_model), "--corpus", str(FIXTURE), "--cluster", "tcp://nowhere"])
    assert failed.returncode == 2 and failed.stderr.count("\n") == 1 and "expected local, local:N" in failed.stderr


def test_a_peer_that_accepts_and_never_answers_is_an_error_not_a_hang(monkeypatch):
    """Issue 40: --cluster tcp://HOST:PORT at a silent peer waited for ever (the 10 s covered connecting only)."""
    import socket
    import time

    from hgner.core import deadline
    from hgner.core.errors import HgnerError
    from hgner.distributed.connect import connect

    monkeypatch.setattr(deadline, "CONNECT_SECONDS", 3.0)
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(5)
        started = time.monotonic()
        with pytest.raises(HgnerError, match="no answer from a Dask scheduler"):
            with connect(f"tcp://127.0.0.1:{server.getsockname()[1]}"):
                pass
        assert time.monotonic() - started < 30


def test_a_scheduler_that_stops_answering_is_an_error_not_a_hang(monkeypatch):
    import threading

    from hgner.core import deadline
    from hgner.core.errors import HgnerError
    from hgner.distributed import connect as cluster

    monkeypatch.setattr(deadline, "CALL_SECONDS", 0.3)
    never = threading.Event()

    class Future:
        def result(self, timeout=None):
            never.wait(timeout)
            raise TimeoutError

    class Client:
        class scheduler:
            address = "tcp://127.0.0.1:1"
            identity = None

        def sync(self, *args):
            never.wait()

    with pytest.raises(HgnerError, match="stopped answering"):
        cluster.result(Client(), Future())
    with pytest.raises(HgnerError, match="stopped answering"):
        list(cluster.answered(Client(), iter(lambda: never.wait(), True)))


def test_resume_checks_inputs_model_parts_and_markers_by_content(client, tag_model, tmp_path):
    """Issue 62: an input edited with its size and time kept, a model folder replaced, a stray part
    file, a forged marker and a second job on the same folder are each refused, not resumed."""
    import fcntl

    from hgner.crf import skip
    from hgner.crf.model import CrfModel
    from hgner.data.corpus import load_corpus
    from hgner.training import skip as skip_training

    paths = write_files(tmp_path / "in", documents(4))
    model = tmp_path / "model"
    shutil.copytree(tag_model, model)
    out = tmp_path / "out"
    run = lambda: tag_to_folder(client, [str(tmp_path / "in")], out, TagSettings(model))  # noqa: E731
    first = run()
    assert set(first["part_counts"]) == set(first["parts"]) and len(first["parts"]) == 4
    stat = paths[0].stat()  # edited as cp -p leaves it: same size, same modification time
    paths[0].write_text(paths[0].read_text().replace("Tokyo", "Osaka"), encoding="utf-8")
    os.utime(paths[0], ns=(stat.st_atime_ns, stat.st_mtime_ns))
    with pytest.raises(HgnerError, match=r"another job \(different inputs\)"):
        run()
    paths[0].write_text(paths[0].read_text().replace("Osaka", "Tokyo"), encoding="utf-8")
    assert run()["counts"]["parts_this_run"] == 0
    marker = out / "part-00000.done.json"
    honest = marker.read_text()
    for forged, problem in [(-5000, "negative counts"), (7, "7 documents, but part-00000.jsonl holds 1")]:
        marker.write_text(json.dumps({**json.loads(honest), "documents": forged}))
        with pytest.raises(HgnerError, match=f"part-00000.done.json: {problem}; delete it and part-00000.jsonl"):
            run()
    marker.write_text(json.dumps({**json.loads(honest), "tokens": 1}))
    with pytest.raises(HgnerError, match="counts other than the ones manifest.json recorded"):
        run()
    marker.write_text(honest)
    (out / "part-00099.jsonl").write_text("{}\n")
    with pytest.raises(HgnerError, match="part-00099.jsonl: a part file that this job does not write"):
        run()
    (out / "part-00099.jsonl").unlink()
    with open(out / ".hgner-tag.lock", "a+b") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(HgnerError, match="another job is tagging into this folder"):
            run()
    assert run()["counts"]["parts_this_run"] == 0
    skip.save(skip_training.estimate(load_corpus(str(FIXTURE)), CrfModel.load(model)), model)  # another model there
    with pytest.raises(HgnerError, match=r"another job \(different model_files\)"):
        run()
