"""A few cases of tools/fuzz_cli.py in CI: hostile models, corpora, arguments and output paths
must end in exit status 0 or a one-line error (2), never a traceback, crash, hang or silent load
of a damaged model. The full run (``python tools/fuzz_cli.py -n 10000``) is a script."""

import importlib.util
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "tools" / "fuzz_cli.py"


def load_fuzzer():
    spec = importlib.util.spec_from_file_location("fuzz_cli", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["fuzz_cli"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_a_few_hostile_cases_give_no_traceback_crash_or_hang(tmp_path):
    """In a process of its own: the fuzzer forks its cases, which is safe only from a process that
    runs no other thread (this test session's other tests leave some: Dask's, the test clients')."""
    import json
    import subprocess

    result = subprocess.run([sys.executable, str(SCRIPT), "-n", "8", "--seed", "2026", "--json", str(tmp_path / "f.json")],
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    found = json.loads((tmp_path / "f.json").read_text())
    assert found["cases_run"] == 8 and found["failures"] == 0, found


def test_the_judge_catches_what_it_should(tmp_path):
    fuzz_cli = load_fuzzer()
    case = fuzz_cli.Case("model", ["tag"], damaged=True)
    assert fuzz_cli.judge(case, None, "", {}) == "hang (timeout)"
    assert fuzz_cli.judge(case, -11, "", {}) == "crash (signal 11)"
    assert fuzz_cli.judge(case, 1, "Traceback (most recent call last):\n", {}) == "traceback"
    assert fuzz_cli.judge(case, 1, "hgner tag: internal error (X)\n", {}) == "exit status 1"
    assert fuzz_cli.judge(case, 2, "usage: hgner\n", {}) == "exit 2 without a one-line error"
    assert fuzz_cli.judge(case, 0, "", {}) == "damaged model loaded silently"
    assert fuzz_cli.judge(case, 2, "hgner tag: error: model.crfsuite: damaged\n", {}) is None
    watched = tmp_path / "input.txt"
    watched.write_text("new")
    assert fuzz_cli.judge(fuzz_cli.Case("outputs", []), 0, "", {watched: "old"}).startswith("input changed")


def test_a_seal_that_says_the_same_is_no_damage(tmp_path, tiny_model):
    """A damaged seal.json must be refused only when what it records changed: the first 10,000-case
    run flagged a seal that had lost its final newline, which loads as it should."""
    import random

    fuzz_cli = load_fuzzer()
    seal = (tiny_model.directory / "seal.json").read_bytes()
    assert fuzz_cli.recorded(seal[:-1]) == fuzz_cli.recorded(seal)  # (the final newline)
    assert fuzz_cli.recorded(seal[:-2]) != fuzz_cli.recorded(seal)  # (not JSON: refused)
    for number in range(200):  # every damage of seal.json is judged by what the seal then says
        target = tmp_path / f"m{number}"
        damaged = fuzz_cli.damage_model(random.Random(number), tiny_model.directory, target)
        if not (target / "seal.json").exists():
            assert damaged  # (a model without its seal is refused)
        elif (target / "seal.json").read_bytes() != seal:
            assert damaged == (fuzz_cli.recorded((target / "seal.json").read_bytes()) != fuzz_cli.recorded(seal))


def test_outputs_among_files_hgner_does_not_own_are_refused(tmp_path, tiny_model, capsys):
    """Issue 62's families (tools/fuzz_cli.py owned_outputs), each run in this process: refused
    with one line, nothing changed or added."""
    import random

    from hgner.cli import main

    fuzz_cli = load_fuzzer()
    seen = set()
    for number in range(40):
        work = tmp_path / f"w{number}"
        work.mkdir()
        text_file = work / "input.txt"
        text_file.write_text(fuzz_cli.TEXT + "\n")
        case = fuzz_cli.owned_outputs(random.Random(number), work, tiny_model.directory, text_file)
        seen.add(case.argv[0] + (" " + case.argv[case.argv.index("--format") + 1] if "--format" in case.argv else ""))
        before = {path: fuzz_cli.digest(path) for path in case.watched}
        code = main(case.argv)
        err = capsys.readouterr().err
        assert fuzz_cli.judge(case, code, err, before, work) is None, (case.argv, code, err)
        assert code == 2
    assert {"train", "tag brat"} <= seen
