import io

from hgner.report import counted, format_table3, plot


def result(decoder, f1, sweeps=None, seed=None, seconds=1.0):
    return {"decoder": decoder, "sweeps": sweeps, "seed": seed, "f1": f1, "decode_seconds": seconds}


REPORT = {
    "model": "m", "corpus": "c", "graph": "chain",
    "results": [
        result("viterbi", 84.81, seconds=0.5),
        result("gibbs", 84.0, 100, 0), result("gibbs", 84.2, 100, 1),
        result("gibbs", 84.5, 400, 0), result("gibbs", 84.5, 400, 1),
        result("herded", 84.7, 100), result("herded", 84.75, 400),
    ],
}


def test_table3_layout():
    out = io.StringIO()
    format_table3(REPORT, out)
    lines = out.getvalue().splitlines()
    assert lines[0].split("|")[1:] == [" 100                   ", " 400                  "]
    assert "viterbi | 84.81 [0.50 s]" in lines[2]
    assert "84.10 (0.14) [1.00 s]" in lines[3] and "84.50 (0.00) [1.00 s]" in lines[3]
    assert "84.70 [1.00 s]" in lines[4] and "84.75 [1.00 s]" in lines[4]


def test_table3_columns_fit_the_longest_name():
    report = {**REPORT, "results": [*REPORT["results"], result("doublemin-gibbs", 83.0, 100), result("herded-shared", 84.0, 400)]}
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
