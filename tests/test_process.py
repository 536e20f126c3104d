"""Signals and standard streams of the hgner command (issue 40, items 4 and 5): SIGINT, SIGTERM and
SIGHUP end with one line and exit status 130, 143, 129; closed streams are no internal error."""

import os
import signal
import subprocess
import sys
import time

import pytest

from hgner.core import process

COMMAND = [sys.executable, "-m", "hgner", "tag", "--decoder", "gibbs", "--sweeps", "100000000", "Jim Smith"]


def run_and_signal(signum, delay, command=COMMAND):
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    time.sleep(delay)
    os.killpg(child.pid, signum)
    _, err = child.communicate(timeout=120)
    return child.returncode, err.decode()


@pytest.mark.parametrize("signum, status, word", [(signal.SIGINT, 130, "interrupted"),
                                                   (signal.SIGTERM, 143, "terminated"),
                                                   (signal.SIGHUP, 129, "hung up")])
def test_a_signal_ends_the_command_with_one_line(signum, status, word):
    code, err = run_and_signal(signum, 4.0)
    assert code == status
    assert err.strip().splitlines() == [f"hgner tag: {word}"]


def test_ctrl_c_on_a_local_cluster_prints_one_line(tmp_path):
    for number in range(20):
        (tmp_path / f"f{number}.txt").write_text("Angela Merkel met Jim Smith in Paris .\n")
    command = [sys.executable, "-m", "hgner", "tag", "--cluster", "local:2", "--decoder", "gibbs", "--sweeps",
               "2000000", str(tmp_path), "--out", str(tmp_path / "out")]
    code, err = run_and_signal(signal.SIGINT, 5.0, command)
    assert code == 130
    assert err.strip().splitlines() == ["hgner tag: interrupted"]


def test_a_system_error_around_a_keyboard_interrupt_is_an_interrupt(monkeypatch, capsys):
    """numba's dispatcher turns a Ctrl-C inside a call into ``SystemError: ... returned a result
    with an exception set`` whose cause is the KeyboardInterrupt."""
    from hgner import cli

    def interrupted(args):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as error:
            raise SystemError("CPUDispatcher(<function _document_tables>) returned a result with an exception "
                              "set") from error

    monkeypatch.setattr(cli, "_run", interrupted)
    assert cli.main(["decoders"]) == 130
    assert capsys.readouterr().err.strip() == "hgner decoders: interrupted"


def test_signal_of_follows_causes():
    error = SystemError("x")
    error.__cause__ = process.Terminated(signal.SIGHUP)
    assert process.signal_of(error) == signal.SIGHUP


@pytest.mark.parametrize("extra, status", [([], 2), (["-o", "OUT"], 0)])
def test_a_closed_standard_output(tmp_path, extra, status):
    extra = [str(tmp_path / "out.txt") if a == "OUT" else a for a in extra]
    result = subprocess.run([sys.executable, "-m", "hgner", "tag", *extra, "Jim Smith"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, pass_fds=(), close_fds=True,
                            preexec_fn=lambda: os.close(1), timeout=120)
    assert result.returncode == status, result.stderr
    assert b"Traceback" not in result.stderr and b"internal error" not in result.stderr
    if extra:
        assert "Jim Smith" in (tmp_path / "out.txt").read_text()


def test_a_closed_standard_error_keeps_exit_status_2():
    result = subprocess.run([sys.executable, "-m", "hgner", "tag", "--decoder", "FOO", "Jim"],
                            stdout=subprocess.DEVNULL, preexec_fn=lambda: os.close(2), timeout=120)
    assert result.returncode == 2


def test_sigterm_removes_temporary_model_folders(tmp_path):
    """Issue 40: SIGTERM and SIGHUP left hidden .part model folders behind. The signal is sent once
    the model's workspace exists, while crfsuite trains on a corpus large enough to take seconds."""
    fixture = os.path.join(os.path.dirname(__file__), "fixtures", "tag_train.conll")
    train = tmp_path / "train.conll"
    train.write_text(open(fixture, encoding="utf-8").read() * 300, encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    command = [sys.executable, "-m", "hgner", "train", "--train", str(train), "--out", str(out / "model"),
               "--max-iterations", "100000", "--c1", "0", "--c2", "0.0000001"]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 120
    while not any(p.name.endswith(".part") for p in out.iterdir()) and child.poll() is None:
        assert time.monotonic() < deadline, "no model workspace appeared"
        time.sleep(0.05)
    os.killpg(child.pid, signal.SIGTERM)
    _, err = child.communicate(timeout=120)
    assert child.returncode == 143, err.decode()
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == []


# A console script named `hgner` that signals itself right after hgner's first line has run, while
# the command is still being imported: the signal must wait for the command's handlers.
SIGNALLED_SCRIPT = """import os, signal, sys, time
import hgner
os.kill(os.getpid(), signal.{name})
time.sleep(0.3)
from hgner.entry import entry
sys.exit(entry())
"""


@pytest.mark.parametrize("name, status, word", [("SIGINT", 130, "interrupted"), ("SIGTERM", 143, "terminated"),
                                                 ("SIGHUP", 129, "hung up")])
def test_a_signal_from_hgners_first_line_on_is_one_line(tmp_path, name, status, word):
    script = tmp_path / "hgner"
    script.write_text(SIGNALLED_SCRIPT.format(name=name))
    result = subprocess.run([sys.executable, str(script), "--version"], capture_output=True, text=True, timeout=120)
    assert (result.returncode, result.stderr, result.stdout) == (status, f"hgner: {word}\n", "")


def test_importing_hgner_as_a_library_holds_no_signal():
    code = "import signal, hgner; print(sorted(signal.pthread_sigmask(signal.SIG_BLOCK, [])))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize("argv0, orig_argv, main_file, expected", [
    ("/venv/bin/hgner", [], "/venv/bin/hgner", True),  # the console script
    ("C:\\venv\\Scripts\\hgner-script.py", [], "C:\\venv\\Scripts\\hgner-script.py", True),
    ("-m", ["python", "-m", "hgner", "tag"], None, True),
    ("-m", ["python", "-X", "dev", "-m", "hgner.cli"], None, True),
    ("-m", ["python", "-m", "hgner.entry"], None, False),  # runs nothing that would release the signals
    ("-m", ["python", "-m", "pytest"], None, False),
    ("/home/me/hgner", [], "/home/me/other.py", False),  # a file named hgner that is not __main__
    ("analyse.py", [], "analyse.py", False),
    ("", [], None, False),  # the interactive interpreter
])
def test_the_command_is_told_from_a_library_import(monkeypatch, argv0, orig_argv, main_file, expected):
    import types

    import hgner

    main = types.ModuleType("__main__")
    if main_file is not None:
        main.__file__ = main_file
    monkeypatch.setattr(sys, "argv", [argv0])
    monkeypatch.setattr(sys, "orig_argv", orig_argv)
    monkeypatch.setitem(sys.modules, "__main__", main)
    assert hgner._started_as_command() is expected


FINALIZER_SCRIPT = """import os, signal, sys, time
from hgner.core import process

class Finalized:
    def __del__(self):  # the signal lands here, where Python would print its exception and drop it
        os.kill(os.getpid(), signal.{name})
        time.sleep(0.2)

def command():
    Finalized()
    time.sleep(30)
    print("went on")
    return 0

sys.exit(process.run(lambda: command))
"""


@pytest.mark.parametrize("name, status, word", [("SIGINT", 130, "interrupted"), ("SIGTERM", 143, "terminated")])
def test_a_signal_inside_a_finalizer_still_stops_the_command_with_one_line(name, status, word):
    """The 10,000-case run: a SIGINT inside llvmlite's ObjectRef.__del__ printed 'Exception ignored'
    and a traceback, and the command went on."""
    result = subprocess.run([sys.executable, "-c", FINALIZER_SCRIPT.format(name=name)], capture_output=True,
                            text=True, timeout=120)
    assert (result.returncode, result.stderr, result.stdout) == (status, f"hgner: {word}\n", "")
