import pytest

from hgner.evaluate import in_scheme, plan_runs


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
