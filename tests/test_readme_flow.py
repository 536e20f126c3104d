"""The README's flow end to end, offline (issue 61), each step as a user runs it, in a fresh data
home: the first command's evaluation (its Viterbi row as the README shows it), the tagging example,
training a model saved by name (a small corpus, so it is quick), tagging with it by that name, and
serving it: ``/health`` answers, then the server stops. The install itself is CI's step."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from corpus_support import needs_corpus

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
TINY_CORPUS = ROOT / "tests" / "fixtures" / "tag_train.conll"


def hgner(*arguments: str, env: dict[str, str], cwd: Path) -> str:
    """Run ``hgner ARGUMENTS`` (as the console script does) and return its standard output."""
    done = subprocess.run([sys.executable, "-m", "hgner", *arguments], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, f"hgner {shlex.join(arguments)}: exit {done.returncode}\n{done.stderr}"
    return done.stdout


def readme_command(start: str) -> list[str]:
    """The arguments of the README's first ``hgner`` command that starts with ``start``."""
    line = re.search(rf"hgner ({re.escape(start)}[^\n&#]*)", README)
    assert line, f"the README shows no 'hgner {start}' command"
    return shlex.split(line.group(1))


def scores(text: str, decoder: str) -> list[str]:
    """F1, P and R of ``decoder``'s row in an evaluation table."""
    row = re.search(rf"^{decoder} +([\d.]+) +([\d.]+) +([\d.]+)", text, re.M)
    assert row, f"no {decoder} row in:\n{text}"
    return list(row.groups())


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def health(port: int, seconds: float) -> dict[str, object]:
    """``/health``'s answer, polled until it comes or ``seconds`` pass."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as answer:
                return json.loads(answer.read())
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


@pytest.fixture
def user(tmp_path) -> dict[str, str]:
    """A user's environment: an empty data home, the mirror (if any) where the corpora come from."""
    return {**os.environ, "HGNER_DATA": str(tmp_path / "data")}


@needs_corpus("conll2003:testb")
def test_the_readme_flow(user, tmp_path):
    evaluate = readme_command("evaluate --model en-conll03")
    viterbi_only = [*evaluate[:evaluate.index("--decoders") + 1], "viterbi"]
    assert scores(hgner(*viterbi_only, env=user, cwd=tmp_path), "viterbi") == scores(README, "viterbi")

    example = re.search(r'hgner tag ("[^"]+") +# (.+)', README)
    assert hgner("tag", *shlex.split(example.group(1)), env=user, cwd=tmp_path).strip() == example.group(2).strip()

    train = readme_command("train")
    name = train[train.index("--out") + 1]
    assert "/" not in name, "the README's model is saved by name, into the data home"
    hgner("train", "--train", str(TINY_CORPUS), "--out", name, env=user, cwd=tmp_path)
    assert (tmp_path / "data" / "models" / name / "meta.json").is_file()
    tagged = hgner(*readme_command(f"tag --model {name}"), env=user, cwd=tmp_path)
    assert "](PER)" in tagged

    pytest.importorskip("uvicorn")
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "hgner", "serve", "--model", name, "--host", "127.0.0.1",
                               "--port", str(port)], env=user, cwd=tmp_path, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    try:
        assert health(port, 120).get("status") == "ok"
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
