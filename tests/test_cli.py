"""The hgner command: exit status 2 and one line for bad input, the evaluate report and JSON."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import hgner
from hgner.cli import main
from hgner.data.corpus import write_conll
from hgner.decoders import available_decoders

JSON_KEYS = {"corpus", "model", "calibration", "scheme", "mode", "documents", "sentences", "tokens", "results"}
RESULT_KEYS = {"decoder", "sweeps", "seed", "f1", "precision", "recall", "macro_f1", "per_type", "decode_seconds",
               "total_seconds", "viterbi_agreement", "mean_score_gap", "consistency_disagreement"}


@pytest.fixture()
def corpus_file(tmp_path, tiny_corpus):
    path = tmp_path / "gold.conll"
    with open(path, "w") as out:
        write_conll(out, tiny_corpus, [s.tags for s in tiny_corpus.sentences])
    return path


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    return err


def test_evaluate_json_schema(tmp_path, tiny_model, corpus_file, capsys):
    out = tmp_path / "report.json"
    predictions = tmp_path / "pred.conll"
    code = main(["evaluate", "--model", str(tiny_model.directory), "--corpus", str(corpus_file),
                 "--decoders", "viterbi,crfsuite", "--json", str(out), "--predictions", str(predictions)])
    assert code == 0
    table = capsys.readouterr().out
    assert "scheme IOB2, mode conlleval" in table
    report = json.loads(out.read_text())
    assert set(report) >= JSON_KEYS
    assert [r["decoder"] for r in report["results"]] == ["viterbi", "crfsuite"]
    for result in report["results"]:
        assert set(result) >= RESULT_KEYS
        assert result["viterbi_agreement"] == 1.0
        assert result["mean_score_gap"] == pytest.approx(0.0, abs=1e-9)
    assert (tmp_path / "pred.viterbi.conll").is_file() and (tmp_path / "pred.crfsuite.conll").is_file()


def test_calibration_option_replaces_the_models_factor(tmp_path, tiny_model, corpus_file, capsys):
    """--calibration 1 scores the model as trained, whatever factor it records: the report equals
    the one of the model without a factor, apart from timings; the factor used is reported."""
    from test_calibration import calibrated_copy

    scaled = calibrated_copy(tiny_model, tmp_path / "scaled", 0.2)
    timing = {"decode_seconds", "total_seconds", "build_seconds"}

    def report(directory: Path, *options: str) -> dict:
        out = tmp_path / "report.json"
        assert main(["evaluate", "--model", str(directory), "--corpus", str(corpus_file), "--decoders",
                     "viterbi,gibbs", "--sweeps", "3", "--json", str(out), *options]) == 0
        figures = json.loads(out.read_text())
        return {"calibration": figures["calibration"], "table": capsys.readouterr().out.splitlines()[0],
                "results": [{k: v for k, v in r.items() if k not in timing} for r in figures["results"]]}

    trained = report(tiny_model.directory)
    as_scaled, as_trained = report(scaled.directory), report(scaled.directory, "--calibration", "1")
    assert as_trained["results"] == trained["results"] and as_trained["calibration"] == trained["calibration"] == 1.0
    assert as_scaled["calibration"] == 0.2 and as_scaled["table"].endswith("graph chain, calibration 0.2")
    assert as_trained["table"].endswith("graph chain, calibration 1")
    assert as_scaled["results"][0] == trained["results"][0]  # Viterbi's labelling does not change
    assert as_scaled["results"][1] != trained["results"][1]  # a sampler's does
    for bad in ("0", "-1", "nan", "x"):
        with pytest.raises(SystemExit) as stop:
            main(["evaluate", "--model", str(scaled.directory), "--corpus", str(corpus_file), "--calibration", bad])
        assert stop.value.code == 2
        assert f"argument --calibration: expected a finite number > 0, got '{bad}'" in one_line_error(capsys)
    assert main(["evaluate", "--model", str(scaled.directory), "--corpus", str(corpus_file), "--calibration", "200"]) == 2
    assert one_line_error(capsys).endswith("calibration: expected a number > 0 and at most 100, got 200.0")


def test_predictions_score_the_same_with_seqeval(tmp_path, tiny_model, corpus_file):
    from seqeval.metrics import f1_score

    out, predictions = tmp_path / "r.json", tmp_path / "p.conll"
    main(["evaluate", "--model", str(tiny_model.directory), "--corpus", str(corpus_file),
          "--json", str(out), "--predictions", str(predictions)])
    gold, guessed = [], []
    for block in predictions.read_text().split("\n\n"):
        rows = [line.split() for line in block.splitlines() if line and not line.startswith("-DOCSTART-")]
        if rows:
            gold.append([r[1] for r in rows])
            guessed.append([r[2] for r in rows])
    assert json.loads(out.read_text())["results"][0]["f1"] == pytest.approx(100 * f1_score(gold, guessed), abs=1e-9)


def test_dash_sends_the_json_report_or_the_predictions_to_standard_output(tmp_path, tiny_model, corpus_file, capsys,
                                                                         monkeypatch):
    monkeypatch.chdir(tmp_path)
    base = ["evaluate", "--model", str(tiny_model.directory), "--corpus", str(corpus_file)]
    assert main([*base, "--json", str(tmp_path / "r.json"), "--predictions", str(tmp_path / "p.conll")]) == 0
    table = capsys.readouterr().out
    assert main([*base, "--json", "-"]) == 0
    captured = capsys.readouterr()
    report, from_file = json.loads(captured.out), json.loads((tmp_path / "r.json").read_text())
    assert set(report) >= JSON_KEYS and report["results"][0]["f1"] == from_file["results"][0]["f1"]
    assert captured.err.startswith(table.splitlines()[0])  # the table goes to standard error
    assert main([*base, "--predictions", "-"]) == 0
    assert capsys.readouterr().out == (tmp_path / "p.conll").read_text()
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--decoders", "viterbi,crfsuite", "--predictions", "-"], "--predictions -: the 2 runs write one file each"),
        (["--json", "-", "--predictions", "-"], "--json and --predictions both name standard output (-)"),
        (["--plot", "-"], "--plot -: a plot is an image file"),
    ],
)
def test_standard_output_for_one_output_only(options, expected, tmp_path, tiny_model, corpus_file, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["evaluate", "--model", str(tiny_model.directory), "--corpus", str(corpus_file), *options]) == 2
    assert expected in one_line_error(capsys) and not (tmp_path / "-").exists()


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["evaluate", "--corpus", "missing.conll"], "no such file"),
        (["evaluate", "--corpus", "nltk:nothing"], "not a catalogue name"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(argv, expected, capsys):
    assert main(argv) == 2
    assert expected in one_line_error(capsys)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["tag", "--lang", "es", "Juan"], "hgner tag: error: unrecognized arguments: --lang (see hgner tag --help)"),
        (["evaluate", "--corpus", "x", "--lang", "es"],
         "hgner evaluate: error: unrecognized arguments: --lang es (see hgner evaluate --help)"),
        (["models", "info", "es-conll02", "nl-conll02"],
         "hgner models info: error: unrecognized arguments: nl-conll02 (see hgner models info --help)"),
        (["--bogus", "models"], "hgner: error: unrecognized arguments: --bogus (see hgner --help)"),
    ],
)
def test_unknown_arguments_are_the_error_of_the_command_they_follow(argv, expected, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2 and one_line_error(capsys) == expected


@pytest.mark.parametrize(("options", "expected"), [
    (["--set", "foo=1"], "unknown viterbi setting 'foo'"),
    (["--decoders", "herded", "--set", "damping=5"], "unknown herded setting 'damping'"),
    (["--decoders", "gibbs", "--sweeps", "999999999999"],
     "--sweeps: expected a non-empty list of whole numbers 1..100000000, got 999999999999"),
])
def test_bad_decoder_settings_fail_before_the_corpus_is_read(tiny_model, capsys, options, expected):
    """The corpus has no -DOCSTART-: reading it would print a warning before the error."""
    spanish = Path(__file__).parent / "fixtures" / "spanish_like.conll"
    assert main(["evaluate", "--model", str(tiny_model.directory), "--corpus", str(spanish), *options]) == 2
    assert expected in one_line_error(capsys)


def test_a_subcommands_errors_name_it(capsys):
    assert main(["models", "info", "no/such-model"]) == 2
    assert one_line_error(capsys).startswith("hgner models info: error: model 'no/such-model'")


def test_unknown_model_exits_2(corpus_file, capsys):
    assert main(["evaluate", "--model", "no-such-model", "--corpus", str(corpus_file)]) == 2
    assert "not a shipped model" in one_line_error(capsys)


@pytest.mark.parametrize("command", [["evaluate", "--corpus", "CORPUS", "--decoders", "nope"],
                                     ["tag", "--decoder", "nope", "Jim Smith flew to Paris."]])
def test_unknown_decoder_lists_the_options(command, tiny_model, corpus_file, capsys):
    argv = [str(corpus_file) if arg == "CORPUS" else arg for arg in command]
    assert main([*argv, "--model", str(tiny_model.directory)]) == 2
    assert f"unknown decoder 'nope'; expected one of: {', '.join(available_decoders())}" in one_line_error(capsys)


def test_malformed_corpus_names_file_and_line(tmp_path, tiny_model, capsys):
    bad = tmp_path / "bad.conll"
    bad.write_text("John B-PER\nSmith I--PER\n")
    assert main(["evaluate", "--model", str(tiny_model.directory), "--corpus", str(bad)]) == 2
    assert f"{bad}:2: malformed tag 'I--PER'" in one_line_error(capsys)


def test_argparse_errors_exit_2():
    result = subprocess.run([sys.executable, "-m", "hgner.cli", "evaluate", "--sweeps", "x,1", "--corpus", "c"],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "expected comma-separated whole numbers" in result.stderr


def test_train_command_writes_a_model(tmp_path, corpus_file, capsys):
    out = tmp_path / "model"
    assert main(["train", "--train", str(corpus_file), "--dev", str(corpus_file), "--out", str(out),
                 "--max-iterations", "10"]) == 0
    meta = json.loads((out / "meta.json").read_text())
    assert meta["dev"]["f1"] > 0
    assert 1 <= meta["training"]["iterations"] <= 10 and meta["training"]["loss"] > 0
    captured = capsys.readouterr()
    assert captured.out == ""  # crfsuite's log is not printed: everything goes to standard error
    assert f"({meta['training']['iterations']} L-BFGS iteration" in captured.err and "dev F1" in captured.err


# ---- the error boundary (issue 14) ----------------------------------------------------------

@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["evaluate", "--corpus", "c", "--scheme", "FOO"], "argument --scheme: unknown tag scheme 'FOO'"),
        (["train", "--train", "c", "--out", "o", "--model-scheme", "FOO"], "argument --model-scheme: unknown tag scheme"),
        (["train", "--train", "c", "--out", "o", "--c1", "nan"], "argument --c1: expected a finite number >= 0, got 'nan'"),
        (["train", "--train", "c", "--out", "o", "--c1", "-1"], "argument --c1: expected a finite number >= 0"),
        (["train", "--train", "c", "--out", "o", "--c2", "inf"], "argument --c2: expected a finite number >= 0"),
        (["train", "--train", "c", "--out", "o", "--max-iterations", "0"], "argument --max-iterations: expected a whole number"),
        (["train", "--train", "c", "--out", "o", "--max-iterations", "-1"], "argument --max-iterations: expected a whole number"),
        (["evaluate", "--corpus", "c", "--seeds", "99999999999999999999"], "argument --seeds: expected a whole number 1..10000"),
        (["evaluate", "--corpus", "c", "--sweeps", "1,,2"], "argument --sweeps: expected comma-separated whole numbers"),
        (["evaluate", "--corpus", "c", "--decoders", ","], "argument --decoders: expected comma-separated names"),
        (["evaluate", "--corpus", "c", "--decoders", ""], "argument --decoders: expected comma-separated names"),
        (["tag", "--decoder", "", "text"], "argument --decoder: expected a name"),
        (["tag", "-j", "0", "text"], "argument -j/--jobs: expected a whole number"),
        (["tag", "--sweeps", "0", "text"], "argument --sweeps: expected a whole number"),
    ],
)
def test_bad_settings_are_one_line_usage_errors(argv, expected, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    error = one_line_error(capsys)
    assert error.startswith(f"hgner {argv[0]}: error: ") and expected in error


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["tag", "--out", "o", "text"], "--out needs --cluster"),
        (["tag", "--part-format", "parquet", "text"], "--part-format needs --cluster"),
        (["tag", "--cluster", "local:1", "--out", "o", "-o", "x.txt", "in"], "-o is not used with --cluster"),
        (["tag", "--cluster", "local:1", "--out", "o", "--format", "html", "in"], "--format is not used with --cluster"),
        (["tag", "--cluster", "local:1", "--out", "o", "--jobs", "2", "in"], "-j is not used with --cluster"),
        (["tag", "--cluster", "local:1", "--out", "o", "--text", "in"], "--text is not used with --cluster"),
        (["tag", "--decoder", "gibbs", "--sweeps", "5", "--set", "sweeps=10", "text"],
         "--sweeps 5 and --set sweeps=10: give sweeps once"),
        (["evaluate", "--corpus", "CORPUS", "--decoders", "gibbs", "--set", "sweeps=3"],
         "give sweeps with --sweeps, which evaluate varies"),
        (["evaluate", "--corpus", "CORPUS", "--input", "raw", "--decoders", "gibbs", "--set", "seed=3"],
         "give seed with --seeds, which evaluate varies"),
        (["evaluate", "--corpus", "CORPUS", "--json", "same.out", "--predictions", "same.out"],
         "--json and --predictions both name same.out"),
        (["evaluate", "--corpus", "CORPUS", "--decoders", "viterbi,herded", "--predictions", "same.out",
          "--json", "same.viterbi.out"], "--json and --predictions both name same.viterbi.out"),
        (["train", "--train", "CORPUS", "--out", ""], "--out: expected a model directory or name, got ''"),
        (["train", "--train", "CORPUS", "--dev-documents", "5", "--out", "m"],
         "--dev-documents groups the development corpus: give --dev too"),
        (["train", "--train", "CORPUS", "--out", "en-conll03"], "--out en-conll03: a shipped model has this name"),
        (["train", "--train", "CORPUS", "--word-frequency", "--lang", "et", "--out", "m"],
         "--word-frequency: wordfreq has no word list for 'et'"),
        (["evaluate", "--corpus", "."], "corpus '.': is a directory"),
        (["evaluate", "--corpus", "missing.conll", "--decoders", "viterbi,viterbi"],  # before the corpus is read
         "decoder 'viterbi' is given twice: each run would be the same"),
        (["evaluate", "--corpus", "missing.conll", "--decoders", "herded", "--sweeps", "10,20,10"],
         "sweep count 10 is given twice"),
    ],
)
def test_conflicting_or_misplaced_options_exit_2(argv, expected, tiny_model, corpus_file, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = [str(corpus_file) if arg == "CORPUS" else arg for arg in argv]
    assert main([*argv, *(["--model", str(tiny_model.directory)] if argv[0] != "train" else [])]) == 2
    assert expected in one_line_error(capsys)
    assert not (tmp_path / "same.out").exists() and not (tmp_path / "m").exists()


@pytest.mark.parametrize("option", ["--json", "--plot", "--predictions"])
def test_an_empty_output_name_is_refused_as_the_arguments_are_parsed(option, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["evaluate", "--corpus", "missing.conll", option, ""])
    assert stop.value.code == 2 and f"argument {option}: expected a file name, got ''" in one_line_error(capsys)


def test_a_failed_evaluate_replaces_none_of_its_outputs(tmp_path, tiny_model, corpus_file, capsys):
    """The predictions are complete before the JSON report fails to write: neither replaces its file."""
    kept = tmp_path / "kept.conll"
    kept.write_text("earlier\n")
    assert main(["evaluate", "--model", str(tiny_model.directory), "--corpus", str(corpus_file),
                 "--predictions", str(kept), "--json", "/dev/full"]) == 2
    assert "/dev/full: cannot write" in one_line_error(capsys)
    assert kept.read_text() == "earlier\n" and [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("spec", ["", "local:0", "local:100000", "tcp://[::1", "tcp://127.0.0.1:99999", "tcp://nowhere"])
@pytest.mark.parametrize("command", [["evaluate", "--corpus", "missing.conll"], ["tag", "missing-dir", "--out", "o"]])
def test_cluster_specs_are_checked_when_the_arguments_are_parsed(command, spec, capsys):
    with pytest.raises(SystemExit) as stop:
        main([*command, "--cluster", spec])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1
    assert "argument --cluster: expected local, local:N (N from 1 to " in err and f"got {spec!r}" in err


def test_train_refuses_a_dev_corpus_without_entities_and_unknown_drop_types(tmp_path, corpus_file, capsys):
    empty = tmp_path / "empty.conll"
    empty.write_text("")
    def error() -> str:  # train notes the corpora's schemes on stderr before it fails
        err = capsys.readouterr().err
        assert "Traceback" not in err
        return err.strip().splitlines()[-1]

    assert main(["train", "--train", str(corpus_file), "--dev", str(empty), "--out", str(tmp_path / "m")]) == 2
    assert f"development corpus {empty}: no entity of the model's types" in error()
    assert main(["train", "--train", str(corpus_file), "--drop-type", "FOO", "--out", str(tmp_path / "m")]) == 2
    assert "--drop-type FOO: no such entity type" in error()
    assert not (tmp_path / "m").exists()


def test_unknown_plot_format_fails_before_any_work(tmp_path, tiny_model, corpus_file, capsys):
    code = main(["evaluate", "--model", str(tiny_model.directory), "--corpus", str(corpus_file), "--plot", str(tmp_path / "f.xyz")])
    assert code == 2 and "unknown image format 'xyz'; expected a file ending in one of:" in one_line_error(capsys)


@pytest.mark.parametrize("option", ["--json", "--predictions"])
def test_outputs_never_overwrite_the_corpus(tmp_path, tiny_model, corpus_file, option, capsys):
    before = corpus_file.read_bytes()
    link = tmp_path / "link.conll"
    link.symlink_to(corpus_file)
    for target in (corpus_file, link):
        code = main(["evaluate", "--model", str(tiny_model.directory), "--corpus", str(corpus_file), option, str(target)])
        assert code == 2 and "is also an input" in one_line_error(capsys)
    assert corpus_file.read_bytes() == before


def test_outputs_never_overwrite_model_files(tiny_model, corpus_file, capsys):
    meta = tiny_model.directory / "meta.json"
    before = meta.read_bytes()
    assert main(["evaluate", "--model", str(tiny_model.directory), "--corpus", str(corpus_file), "--json", str(meta)]) == 2
    assert "is also an input" in one_line_error(capsys) and meta.read_bytes() == before


@pytest.mark.parametrize("target", ["missing/out.json", ".", "/proc/version"])
def test_unwritable_outputs_are_one_line_errors(tmp_path, tiny_model, corpus_file, target, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = main(["evaluate", "--model", str(tiny_model.directory), "--corpus", str(corpus_file), "--json", target])
    assert code == 2 and target.split("/")[0] in one_line_error(capsys)


def test_train_out_onto_a_file_is_an_error(tmp_path, corpus_file, capsys):
    (tmp_path / "file").write_text("keep")
    assert main(["train", "--train", str(corpus_file), "--out", str(tmp_path / "file")]) == 2
    assert "exists and is not a directory" in one_line_error(capsys)
    assert (tmp_path / "file").read_text() == "keep"


def test_training_data_errors_are_one_line(tmp_path, capsys):
    only_o = tmp_path / "o.conll"
    only_o.write_text("Paris O\nis O\n")
    assert main(["train", "--train", str(only_o), "--out", str(tmp_path / "m")]) == 2
    *progress, error = capsys.readouterr().err.strip().splitlines()
    assert progress[0].startswith("training corpus") and progress[-1].startswith("training on")  # scheme, then sizes
    assert error.endswith("has no entity types: every tag is O") and "Traceback" not in "".join(progress)
    assert not (tmp_path / "m").exists()


def test_stdout_on_a_full_device_is_a_one_line_error(tiny_model, corpus_file):
    with open("/dev/full", "w") as full:
        result = subprocess.run([sys.executable, "-m", "hgner.cli", "evaluate", "--model", str(tiny_model.directory),
                                 "--corpus", str(corpus_file)], stdout=full, stderr=subprocess.PIPE, text=True)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == ["hgner evaluate: error: cannot write standard output (No space left on device)"]


def test_internal_errors_exit_1_and_ask_for_a_report(monkeypatch, tiny_model, corpus_file, capsys):
    import hgner.evaluation.evaluator

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(hgner.evaluation.evaluator, "evaluate", broken)
    argv = ["evaluate", "--model", str(tiny_model.directory), "--corpus", str(corpus_file)]
    assert main(argv) == 1
    error = one_line_error(capsys)
    assert "internal error (ZeroDivisionError: a bug); this is a bug in hgner, please report it" in error and "--debug" in error
    assert main(["--debug", *argv]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "please report it" in err.splitlines()[-1]


def test_undecodable_arguments_are_one_line_errors(tiny_model):
    result = subprocess.run([sys.executable, "-m", "hgner.cli", "tag", "--model", str(tiny_model.directory),
                             b"Jim \xff Smith flew to Paris ."], capture_output=True)
    assert result.returncode == 2
    assert result.stderr.decode().strip() == ("hgner tag: error: argument 'Jim \\xff Smith flew to Paris .' is not valid "
                                              "UTF-8 (surrogates not allowed); text to tag must be UTF-8")


def test_version(capsys):
    from hgner import __version__

    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0 and capsys.readouterr().out == f"hgner {__version__}\n"


@pytest.mark.parametrize("argv", [["--version"], ["tag", "--help"], ["evaluate", "--decoders"]])
def test_help_version_and_usage_errors_load_no_numerical_library(argv):
    """They build the parser only: no decoder module (numba), no numpy or scipy."""
    code = ("import sys; from hgner.cli import main\ntry: main(sys.argv[1:])\nexcept SystemExit: pass\n"
            "print([m for m in ('numba', 'numpy', 'scipy', 'hgner.decoders') if m in sys.modules], file=sys.stderr)")
    result = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True)
    assert result.stderr.splitlines()[-1] == "[]"


def test_decoders_lists_capabilities_and_settings(capsys):
    assert main(["decoders"]) == 0
    blocks = {block.splitlines()[0].split(":")[0]: block for block in capsys.readouterr().out.split("\n\n")}
    assert list(blocks) == available_decoders()
    assert all(len(block.splitlines()[0]) > len(name) + 10 for name, block in blocks.items())  # a line on each
    herded, viterbi, exact = ([" ".join(line.split()) for line in blocks[name].splitlines()]
                              for name in ("herded", "viterbi", "exact"))
    assert ("confidences: yes, certifies its optimum: no, always the exact MAP: no, best labelling visited: yes, "
            "chain graphs only: no, crfsuite's own tagger: no") in herded
    assert "sweeps int default 100 an integer in [1, 100000000]" in herded
    assert ("confidences: yes, certifies its optimum: no, always the exact MAP: yes, best labelling visited: yes, "
            "chain graphs only: yes, crfsuite's own tagger: no") in viterbi  # as hgner tag builds it
    assert "certifies its optimum: yes" in exact[1]
    assert "marginals bool default False true or false" in viterbi
    assert blocks["crfsuite"].endswith("settings: none") and "crfsuite's own tagger: yes" in blocks["crfsuite"]


def test_models_lists_and_describes(capsys):
    from hgner.api import available_models, model_info

    assert main(["models", "-v"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["name", "language", "labels", "scheme", "dev", "F1", "test", "F1", "size", "path"]
    assert [line.split()[0] for line in lines[1:]] == available_models()
    for line, name in zip(lines[1:], available_models()):
        info = model_info(name)
        assert line.endswith(str(info.path)) and f" {info.language} " in line and ",".join(info.labels) in line
    if "en-conll03" in available_models():
        assert main(["models", "info", "en-conll03"]) == 0
        info = capsys.readouterr().out
        meta = model_info("en-conll03").metadata  # the figures of the shipped build, as meta.json records them
        dev, factor = meta["scores"]["dev"], meta["calibration"]["factor"]
        assert "labels:          LOC, MISC, ORG, PER\n" in info and (
            f"dev F1:          {dev['conll2003:testa']['f1']:.2f} (conll2003:testa), {dev['wikigold']['f1']:.2f} (wikigold)\n") in info
        assert ("files:           gazetteer.json, model.crfsuite, outside_truecase.npz, sentence_starts.crfsuite, skip.json, "
                "skip.npz, truecase.json, types.npz, word_clusters.npz, word_frequency.npz (sizes and sha256 as "
                "meta.json records)\n") in info
        assert f"calibration:     every potential times {factor:.3f}, fitted on conll2003:testa\n" in info
    assert main(["models", "info", "no-such-model"]) == 2
    assert "not a shipped model" in one_line_error(capsys)


def test_one_damaged_model_in_the_data_home_hides_none_of_the_others(tiny_model, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HGNER_DATA", str(tmp_path))
    for name in ("mine", "broken"):
        shutil.copytree(tiny_model.directory, tmp_path / "models" / name)
    with open(tmp_path / "models" / "broken" / "meta.json", "a") as meta:
        meta.write(" ")
    assert main(["models", "-v"]) == 0
    captured = capsys.readouterr()
    assert str(tmp_path / "models" / "mine") in captured.out and "broken" not in captured.out
    assert "broken: left out of the list: " in captured.err and "damaged or edited" in captured.err


def test_models_info_says_when_the_skip_weight_leaves_the_skip_edges_out():
    from hgner.commands.models import _skip_potential
    from hgner.crf.modelfiles import SKIP_FILES

    files = {"files": dict.fromkeys(SKIP_FILES, {})}
    assert _skip_potential({**files, "dev": {"skip": {"weight": 0.0}}}) == (
        "yes, weight 0 (skip edges left out: the skip graph is the chain)")
    assert _skip_potential({**files, "dev": {"skip": {"weight": 0.5}}}) == "yes, weight 0.5"
    assert _skip_potential(files) == "yes" and _skip_potential({}) == "no (--graph skip needs one)"


def test_models_info_checks_the_files(tiny_model, tmp_path, capsys):
    copy = tmp_path / "copy"
    shutil.copytree(tiny_model.directory, copy)
    assert main(["models", "info", str(copy)]) == 0
    assert "(sizes and sha256 as meta.json records)" in capsys.readouterr().out
    data = bytearray((copy / "model.crfsuite").read_bytes())
    data[len(data) // 3] ^= 0x10
    (copy / "model.crfsuite").write_bytes(bytes(data))
    assert main(["models", "info", str(copy)]) == 2
    assert "model.crfsuite: damaged or edited after the model was sealed" in one_line_error(capsys)


def test_evaluate_set(tiny_model, corpus_file, capsys):
    assert main(["evaluate", "--model", str(tiny_model.directory), "--corpus", str(corpus_file), "--decoders", "nope",
                 "--set", "damping"]) == 2
    assert "expected NAME=VALUE" in one_line_error(capsys)
    assert main(["evaluate", "--model", str(tiny_model.directory), "--corpus", str(corpus_file),
                 "--decoders", "viterbi,meanfield", "--set", "dampnig=0.5"]) == 2
    assert "unknown viterbi/meanfield setting 'dampnig'; expected one of: damping, marginals, sweeps" in one_line_error(capsys)


def test_evaluate_set_reaches_the_decoder(tiny_model, corpus_file, tmp_path, capsys):
    """dhg's weight tables take 8 n K B bytes: the bins set on the command line show in them; the
    report says which settings were given, and which each run took."""
    weights = []
    for bins in (3, 6):
        out = tmp_path / f"{bins}.json"
        assert main(["evaluate", "--model", str(tiny_model.directory), "--corpus", str(corpus_file), "--decoders",
                     "viterbi,dhg", "--sweeps", "3", "--set", f"bins={bins}", "--set", "start=viterbi",
                     "--json", str(out)]) == 0
        report = json.loads(out.read_text())
        weights.append(report["results"][1]["stats_max"]["weight_bytes"])
        assert report["settings"] == {"bins": bins, "start": "viterbi"}
        assert [r["settings"] for r in report["results"]] == [{}, {"bins": bins, "start": "viterbi"}]
        assert f"graph chain, calibration 1; decoder settings bins={bins} start=viterbi\n" in capsys.readouterr().out
    assert weights[1] == 2 * weights[0]


def test_evaluate_warns_when_the_corpus_is_not_in_the_models_language(tiny_model, tmp_path, capsys):
    spanish = Path(__file__).parent / "fixtures" / "spanish_like.conll"
    assert main(["evaluate", "--model", str(tiny_model.directory), "--corpus", str(spanish)]) == 0
    prefix = "hgner evaluate: warning: "
    warnings = [line.removeprefix(prefix) for line in capsys.readouterr().err.splitlines() if line.startswith(prefix)]
    assert warnings == [
        f"corpus {spanish} has no -DOCSTART- document boundaries (48 sentences in one document); reading "
        "one document per 40 sentences (--documents corpus|sentence|N chooses)",
        f"corpus {spanish}: of its 53 most frequent words, 28% are spaCy stop words of 'es' "
        "and 2% of 'en', the language of model tiny: for 'es' text use --model es-conll02"]
    with pytest.warns(UserWarning) as caught:  # the Python API warns the same way, naming its own parameters
        hgner.evaluate(tiny_model.directory, str(spanish))
    assert [str(w.message) for w in caught] == [warning.replace("--documents", "documents").replace("--model", "model")
                                                for warning in warnings]


def test_a_model_trained_by_name_is_saved_in_the_data_home_and_found_by_name(corpus_file, tmp_path, monkeypatch,
                                                                              capsys):
    """``train --out NAME`` (no folder) saves into the data home's models folder; ``hgner models``
    lists it and ``--model NAME`` finds it, while a path keeps meaning a folder."""
    monkeypatch.setenv("HGNER_DATA", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    assert main(["train", "--train", str(corpus_file), "--out", "my-model", "--max-iterations", "5"]) == 0
    saved = tmp_path / "home" / "models" / "my-model"
    assert (saved / "meta.json").is_file() and not (tmp_path / "my-model").exists()
    capsys.readouterr()
    assert main(["models", "-v"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:]}
    assert "my-model" in rows and str(saved) in rows["my-model"]
    assert main(["tag", "--model", "my-model", "Jim Smith flew to Paris ."]) == 0
    assert main(["tag", "--model", "./my-model", "Paris"]) == 2  # a path is a folder, not a name
    assert "not a model directory" in capsys.readouterr().err
