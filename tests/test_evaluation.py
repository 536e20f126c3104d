import pytest
from tag_support import FIXTURE, tag_model  # noqa: F401  (fixture)

from hgner.decoders.chain import viterbi
from hgner.evaluation import EvaluateOptions
from hgner.evaluation.runs import in_scheme


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
    runs = EvaluateOptions(decoders=("viterbi", "herded", "gibbs"), sweeps=(100, 800), seeds=2).runs
    assert [(r.decoder, r.sweeps, r.seed) for r in runs] == [
        ("viterbi", None, None),
        ("herded", 100, None), ("herded", 800, None),
        ("gibbs", 100, 0), ("gibbs", 100, 1), ("gibbs", 800, 0), ("gibbs", 800, 1),
    ]


def test_report_table_fits_the_longest_name():
    import io

    from hgner.evaluation import Report
    from hgner.evaluation.report import format_report

    def row(decoder, graph="skip"):
        return {"decoder": decoder, "sweeps": 100, "seed": 0, "f1": 80.0, "precision": 80.0, "recall": 80.0,
                "macro_f1": 80.0, "decode_seconds": 1.0, "total_seconds": 2.0, "viterbi_agreement": 0.9, "graph": graph,
                "settings": {}, "per_type": {}, "consistency_disagreement": 0.0, "stats_mean": {}, "stats_max": {}}

    report = Report.from_json({"model": "m", "corpus": "c", "documents": 1, "sentences": 1, "tokens": 1,
                               "scheme": "IOB2", "mode": "conlleval", "graph": "skip", "notes": [], "settings": {},
                               "build_seconds": 0.0,
                               "results": [row("viterbi", "chain"), row("doublemin-gibbs"), row("herded-shared")]})
    out = io.StringIO()
    format_report(report, out)
    table = [line for line in out.getvalue().splitlines()[1:] if not line.startswith("note")]
    assert table[0].startswith("decoder         sweeps") and table[1].startswith("viterbi@chain   ")
    assert len({line.index(" 100 ") for line in table[1:]}) == 1  # the sweeps column lines up


def test_a_viterbi_run_is_the_reference_labelling(tag_model, monkeypatch):
    """With a viterbi run in the plan its labels are the reference (no second Viterbi decode), and
    every figure but the seconds is the one computed against a separate reference decode."""
    from hgner.crf.model import CrfModel
    from hgner.data.corpus import read_conll
    from hgner.evaluation import evaluate, runs

    model, corpus = CrfModel.load(tag_model), read_conll(FIXTURE)
    calls = []
    monkeypatch.setattr(runs, "viterbi", lambda graph: calls.append(graph) or viterbi(graph))

    def figures(decoders):
        report = evaluate(model, corpus, EvaluateOptions(decoders=tuple(decoders), sweeps=(20,))).to_json()
        return {r["decoder"]: {k: v for k, v in r.items() if "seconds" not in k} for r in report["results"]}

    with_viterbi = figures(["herded", "viterbi", "exact"])
    assert calls == []
    without = figures(["herded", "exact"])
    assert len(calls) == len(corpus.documents)
    assert with_viterbi["herded"] == without["herded"] and with_viterbi["exact"] == without["exact"]
    assert with_viterbi["viterbi"]["viterbi_agreement"] == 1.0


def _scored(tag_model, corpus=None, **options):
    from hgner.crf.model import CrfModel
    from hgner.data.corpus import load_corpus
    from hgner.evaluation import evaluate

    return evaluate(CrfModel.load(tag_model), corpus or load_corpus(str(FIXTURE)), EvaluateOptions(**options))


@pytest.mark.parametrize("input", ["tokens", "raw"])
def test_labels_score_a_subset_of_types(tag_model, input):
    every = _scored(tag_model, input=input).results[0]
    people = _scored(tag_model, input=input, labels=("PER",)).results[0]
    assert set(people.per_type) == {"PER"} and len(every.per_type) > 1
    assert people.f1 == pytest.approx(every.per_type["PER"]["f1"])


def test_unknown_labels_name_the_field(tag_model):
    from hgner.core.errors import HgnerError
    from hgner.evaluation import load_inputs

    with pytest.raises(HgnerError, match="labels: no entity type 'PERSON'"):
        load_inputs(EvaluateOptions(model=tag_model, corpus=str(FIXTURE), labels=("PERSON",)))


@pytest.mark.parametrize("input", ["tokens", "raw"])
def test_bootstrap_interval_holds_the_f1_and_repeats_with_its_seed(tag_model, tiny_corpus, input):
    """The tagging model on the synthetic corpus (other names, other sentences): an F1 below 100."""
    first = _scored(tag_model, tiny_corpus, input=input, bootstrap=500, bootstrap_seed=1)
    again = _scored(tag_model, tiny_corpus, input=input, bootstrap=500, bootstrap_seed=1)
    result = first.results[0]
    low, high = result.f1_interval
    assert low <= result.f1 <= high and low < high
    assert again.results[0].f1_interval == result.f1_interval
    assert first.bootstrap == {"resamples": 500, "seed": 1, "level": 0.95, "units": 12}
    assert _scored(tag_model).results[0].f1_interval is None


def test_f1_intervals_of_identical_documents_have_no_width():
    import numpy as np

    from hgner.evaluation.interval import f1_intervals

    same = np.tile([[2, 3, 4]], (20, 1))  # every document: 2 correct of 3 predicted, 4 gold
    (low, high), = f1_intervals([same], 200, np.random.default_rng(0))
    assert low == high == pytest.approx(200 * 2 / 7)


def test_bootstrap_below_its_least_is_refused():
    from hgner.core.errors import HgnerError

    with pytest.raises(HgnerError, match="bootstrap: expected 0"):
        EvaluateOptions(bootstrap=5)
