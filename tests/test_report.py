import io

from hgner.core.wording import counted
from hgner.evaluation import Report, RunResult
from hgner.evaluation.report import format_table3, plot


def result(decoder, f1, sweeps=None, seed=None, seconds=1.0):
    return RunResult(decoder=decoder, sweeps=sweeps, seed=seed, graph="chain", settings={}, f1=f1, precision=f1,
                     recall=f1, macro_f1=f1, per_type={}, decode_seconds=seconds, total_seconds=seconds,
                     viterbi_agreement=1.0, consistency_disagreement=0.0, stats_mean={}, stats_max={})


def report_of(results):
    return Report(corpus="c", model="m", scheme="IOB2", mode="conlleval", graph="chain", settings={}, input="tokens",
                  documents=1, sentences=1, tokens=1, build_seconds=0.0, notes=[], results=results)


REPORT = report_of([
    result("viterbi", 84.81, seconds=0.5),
    result("gibbs", 84.0, 100, 0), result("gibbs", 84.2, 100, 1),
    result("gibbs", 84.5, 400, 0), result("gibbs", 84.5, 400, 1),
    result("herded", 84.7, 100), result("herded", 84.75, 400),
])


def test_table3_layout():
    out = io.StringIO()
    format_table3(REPORT, out)
    lines = out.getvalue().splitlines()
    assert lines[0].split("|")[1:] == [" 100                   ", " 400                  "]
    assert "viterbi | 84.81 [0.50 s]" in lines[2]
    assert "84.10 (0.14) [1.00 s]" in lines[3] and "84.50 (0.00) [1.00 s]" in lines[3]
    assert "84.70 [1.00 s]" in lines[4] and "84.75 [1.00 s]" in lines[4]


def test_table3_columns_fit_the_longest_name():
    report = report_of([*REPORT.results, result("doublemin-gibbs", 83.0, 100), result("herded-shared", 84.0, 400)])
    out = io.StringIO()
    format_table3(report, out)
    lines = out.getvalue().splitlines()
    assert len({line.index("|") for line in lines if "|" in line}) == 1  # every row's first bar in one column
    assert lines[0].index("|") == len("doublemin-gibbs") + 1


def test_plot_writes_a_png(tmp_path):
    path = tmp_path / "f1.png"
    plot(REPORT, str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_counted():
    assert [counted(n, "document") for n in (0, 1, 2)] == ["0 documents", "1 document", "2 documents"]
    assert [counted(n, "entity") for n in (1, 5)] == ["1 entity", "5 entities"]


def test_interval_and_labels_are_shown_and_read_back():
    from dataclasses import replace

    from hgner.evaluation.report import format_report

    one = replace(result("viterbi", 61.5), f1_interval=[48.25, 72.5])
    report = replace(report_of([one]), labels=["PER", "LOC"],
                     bootstrap={"resamples": 1000, "seed": 0, "level": 0.95, "units": 200})
    out = io.StringIO()
    format_report(report, out)
    text = out.getvalue()
    assert "entity types PER,LOC only" in text.splitlines()[0]
    assert "F1 95% interval, bootstrap over the 200 documents (1000 resamples, seed 0):" in text
    assert "61.50  [48.25, 72.50]" in text
    assert Report.from_json(report.to_json()) == report
    assert "f1_interval" not in report_of([result("viterbi", 1.0)]).to_json()["results"][0]
