"""Benchmark the first run after a fresh install (issue 61): numba compiles hgner's kernels once.

The README's install step: a virtual environment in a temporary folder that sees this
interpreter's packages (``--system-site-packages``, so hgner's dependencies are there) and ``pip
install --no-deps .`` of this checkout into it (a wheel, not an editable install; pip fetches the
build backend, setuptools, into its isolated build environment), with numba's
caches empty (``XDG_CACHE_HOME`` and ``HGNER_DATA`` in the temporary folder, ``NUMBA_CACHE_DIR``
unset). Then ``hgner tag "Jim Smith flew to Paris."`` from the environment, timed in wall seconds
(the issue's targets in brackets):

* standard error a terminal (a pseudo-terminal): the first call's wall time and when its first
  line on standard error came [<= 2 s], and the second call's (which prints nothing there);
* standard error a pipe, the caches emptied again: the first call's wall time against the second
  call's [<= 2x, or the line on a terminal above].

Wall seconds depend on what else runs on the machine: the load average is printed before and after.

Usage: python benchmarks/bench_first_run.py [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEXT = "Jim Smith flew to Paris."


def install(folder: Path) -> tuple[Path, float]:
    """A venv in ``folder`` with this checkout installed as a wheel: its ``hgner`` and the install's wall seconds."""
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(folder / "venv")],
                   check=True)
    started = time.perf_counter()  # (this interpreter's pip, which the venv sees)
    subprocess.run([str(folder / "venv" / "bin" / "python"), "-m", "pip", "install", "--no-deps", "-q", str(ROOT)],
                   check=True, cwd=folder)
    return folder / "venv" / "bin" / "hgner", time.perf_counter() - started


def environment(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"NUMBA_CACHE_DIR", "PYTHONPATH"}}
    env.update(XDG_CACHE_HOME=str(folder / "cache"), HGNER_DATA=str(folder / "data"))
    return env


def empty_caches(folder: Path) -> None:
    """Remove numba's cache files from the installed package and the user-wide cache."""
    shutil.rmtree(folder / "cache", ignore_errors=True)
    for path in (folder / "venv").rglob("*.nb[ic]"):
        path.unlink()


def on_terminal(hgner: Path, folder: Path) -> dict[str, object]:
    """One ``hgner tag`` with standard error a pseudo-terminal: wall seconds, the first stderr line's seconds and text."""
    leader, follower = pty.openpty()
    started = time.perf_counter()
    child = subprocess.Popen([str(hgner), "tag", TEXT], cwd=folder, env=environment(folder),
                             stdout=subprocess.PIPE, stderr=follower)
    os.close(follower)
    first_line_at, received = None, b""
    while True:
        ready, _, _ = select.select([leader], [], [], 0.05)
        if not ready:
            continue
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        if first_line_at is None:
            first_line_at = time.perf_counter() - started
        received += chunk
    stdout = child.communicate()[0]
    wall = time.perf_counter() - started
    os.close(leader)
    return {"wall_seconds": round(wall, 2), "stdout": stdout.decode().strip(),
            "first_stderr_line_seconds": None if first_line_at is None else round(first_line_at, 2),
            "stderr": received.decode().strip()}


def on_a_pipe(hgner: Path, folder: Path) -> float:
    """One ``hgner tag`` with standard error a pipe: wall seconds."""
    started = time.perf_counter()
    subprocess.run([str(hgner), "tag", TEXT], cwd=folder, env=environment(folder), check=True, capture_output=True)
    return round(time.perf_counter() - started, 2)


def measure() -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="hgner-first-run-") as name:
        folder = Path(name)
        hgner, install_seconds = install(folder)
        first, second = on_terminal(hgner, folder), on_terminal(hgner, folder)
        empty_caches(folder)
        cold, warm = on_a_pipe(hgner, folder), on_a_pipe(hgner, folder)
    return {"cpus": os.cpu_count(), "install_seconds": round(install_seconds, 1),
            "terminal": {"first": first, "second": second},
            "pipe": {"first_wall_seconds": cold, "second_wall_seconds": warm, "ratio": round(cold / warm, 1)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="write the figures here as JSON")
    args = parser.parse_args()
    before = " ".join(f"{x:.1f}" for x in os.getloadavg())
    figures = {"load_average_before": before, **measure(),
               "load_average_after": " ".join(f"{x:.1f}" for x in os.getloadavg())}
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
