import pytest

from hgner.decoders.chain import viterbi
from hgner.evaluation import in_scheme, plan_runs
from tag_support import FIXTURE, tag_model  # noqa: F401  (fixture)


@pytest.mark.parametrize(
    ("tags", "model_scheme", "mode", "expected"),
    [
        (["I-PER", "I-PER", "O"], "IOB2", "conlleval", ["I-PER", "I-PER", "O"]),
        (["I-PER", "I-PER", "O"], "IOB2", "strict", ["O", "O", "O"]),  # a chunk IOB2 cannot start with I-
        (["B-PER", "I-PER", "B-PER"], "IOB2", "strict", ["I-PER", "I-PER", "B-PER"]),
        (["B-LOC", "O"], "BIOES", "strict", ["O", "O"]),  # B- without its E-
        (["B-LOC", "E-LOC"], "BIOES", "strict", ["I-LOC", "I-LOC"]),
        (["I-PER", "I-PER", "O", "I-ORG"], "IO", "strict", ["I-PER", "I-PER", "O", "I-ORG"]),
    ],
)
def test_predictions_in_the_corpus_scheme(tags, model_scheme, mode, expected):
    assert in_scheme(tags, model_scheme, "IOB1", mode) == expected


def test_plan_runs_expands_sweeps_and_seeds_only_where_accepted():
    runs = plan_runs(["viterbi", "herded", "gibbs"], [100, 800], [0, 1])
    assert [(r.decoder, r.sweeps, r.seed) for r in runs] == [
        ("viterbi", None, None),
        ("herded", 100, None), ("herded", 800, None),
        ("gibbs", 100, 0), ("gibbs", 100, 1), ("gibbs", 800, 0), ("gibbs", 800, 1),
    ]


def test_report_table_fits_the_longest_name():
    import io

    from hgner.evaluation import format_report

    def row(decoder, graph="skip"):
        return {"decoder": decoder, "sweeps": 100, "seed": 0, "f1": 80.0, "precision": 80.0, "recall": 80.0,
                "macro_f1": 80.0, "decode_seconds": 1.0, "total_seconds": 2.0, "viterbi_agreement": 0.9, "graph": graph}

    report = {"model": "m", "corpus": "c", "documents": 1, "sentences": 1, "tokens": 1, "scheme": "IOB2",
              "mode": "conlleval", "graph": "skip", "notes": [],
              "results": [row("viterbi", "chain"), row("doublemin-gibbs"), row("herded-shared")]}
    out = io.StringIO()
    format_report(report, out)
    table = [line for line in out.getvalue().splitlines()[1:] if not line.startswith("note")]
    assert table[0].startswith("decoder         sweeps") and table[1].startswith("viterbi@chain   ")
    assert len({line.index(" 100 ") for line in table[1:]}) == 1  # the sweeps column lines up


def test_a_viterbi_run_is_the_reference_labelling(tag_model, monkeypatch):
    """With a viterbi run in the plan its labels are the reference (no second Viterbi decode), and
    every figure but the seconds is the one computed against a separate reference decode."""
    from hgner import evaluation
    from hgner.corpus import read_conll
    from hgner.model import CrfModel

    model, corpus = CrfModel.load(tag_model), read_conll(FIXTURE)
    calls = []
    monkeypatch.setattr(evaluation, "viterbi", lambda graph: calls.append(graph) or viterbi(graph))

    def figures(decoders):
        report = evaluation.evaluate(model, corpus, decoders, sweeps=[20], progress=False)
        return {r["decoder"]: {k: v for k, v in r.items() if "seconds" not in k} for r in report["results"]}

    with_viterbi = figures(["herded", "viterbi", "exact"])
    assert calls == []
    without = figures(["herded", "exact"])
    assert len(calls) == len(corpus.documents)
    assert with_viterbi["herded"] == without["herded"] and with_viterbi["exact"] == without["exact"]
    assert with_viterbi["viterbi"]["viterbi_agreement"] == 1.0
