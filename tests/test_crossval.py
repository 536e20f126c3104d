"""``hgner train --folds K``: cross-validation of a training on a toy corpus. The folds partition the
documents (or a one-document corpus's sentences), every training is the command's own, the pooled
figures are those of the out-of-fold tags, ``meta.json`` records them, and a bad K is refused."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from hgner.cli import main
from hgner.core.errors import HgnerError, warn
from hgner.core.scoring import score
from hgner.crf.model import CrfModel
from hgner.data.corpus import Corpus, read_conll
from hgner.training import TrainOptions, build_model
from hgner.training.crossval import assign_folds, cross_validate, split_units

BASE_CORPUS = str(Path(__file__).parent / "fixtures" / "tag_train.conll")
NAMES = [("Angela", "Merkel"), ("Anna", "Berg"), ("John", "Smith"), ("Maria", "Lopez")]
PLACES = ["Tokyo", "Paris", "Berlin", "Madrid", "Lima"]
FIRMS = [("Siemens",), ("United", "Nations"), ("Acme", "Bank")]


def _sentence(i: int) -> str:
    first, last = NAMES[i % len(NAMES)]
    firm = FIRMS[i % len(FIRMS)]
    tokens = [(first, "B-PER"), (last, "I-PER"), ("works" if i % 2 else "met", "O"), ("for", "O"),
              *((t, ("B-ORG" if k == 0 else "I-ORG")) for k, t in enumerate(firm)), ("in", "O"),
              (PLACES[i % len(PLACES)], "B-LOC"), (".", "O")]
    return "\n".join(f"{t}\t{g}" for t, g in tokens)


def _corpus_file(folder: Path, sizes: tuple[int, ...] = (3, 1, 4, 2, 2, 3, 1), name: str = "toy.conll") -> Path:
    """Documents of ``sizes`` sentences (-DOCSTART- between them)."""
    count, documents = 0, []
    for size in sizes:
        documents.append("-DOCSTART-\tO\n\n" + "\n\n".join(_sentence(count + k) for k in range(size)))
        count += size
    path = folder / name
    path.write_text("\n\n".join(documents) + "\n", encoding="utf-8")
    return path


def _recording_trainer(trained: list[Corpus]):
    """A training as ``hgner train --max-iterations 10`` trains, recording the corpora it is given."""
    def train(corpus: Corpus, out: Path, *, progress: bool) -> CrfModel:
        trained.append(corpus)
        return build_model(corpus, out, TrainOptions(max_iterations=10), progress=progress)
    return train


def _pairs(corpus: Corpus, original: Corpus) -> set[tuple[int, int]]:
    """``corpus``'s sentences as (document, sentence) indices of ``original`` (found by identity)."""
    where = {id(s): (d, i) for d, doc in enumerate(original.documents) for i, s in enumerate(doc.sentences)}
    return {where[id(s)] for s in corpus.sentences}


def test_the_folds_partition_the_documents_and_the_figures_are_the_out_of_fold_tags(tmp_path):
    corpus = read_conll(_corpus_file(tmp_path))
    trained: list[Corpus] = []
    result = cross_validate(corpus, 3, _recording_trainer(trained))
    everything = {(d, i) for d, doc in enumerate(corpus.documents) for i in range(len(doc.sentences))}
    assert len(trained) == 3 and result.by == "document" and result.units == 7 and result.sentences == 16
    held_out = [everything - _pairs(part, corpus) for part in trained]
    assert set().union(*held_out) == everything and sum(map(len, held_out)) == len(everything)  # no overlap
    for number, fold in enumerate(held_out):
        assert fold and fold == {(d, i) for d, row in enumerate(result.fold) for i, f in enumerate(row) if f == number}
    assert all(len(set(row)) == 1 for row in result.fold)  # a document stays whole
    assert sorted(map(len, held_out)) == [5, 5, 6]  # balanced by sentences
    gold = [s.tags for s in corpus.sentences]
    predicted = [tags for row in result.predicted for tags in row]
    again = score(gold, predicted, corpus.scheme)
    assert result.score.micro == again.micro and result.score.per_type == again.per_type
    assert result.record()["f1"] == round(again.micro.f1, 2) and len(result.fold_f1) == 3
    assert cross_validate(corpus, 3, _recording_trainer([])).predicted == result.predicted  # seeded: the same folds


def test_a_corpus_of_one_document_is_split_by_sentence(tmp_path):
    corpus = read_conll(_corpus_file(tmp_path, (9,)))
    by, units = split_units(corpus, 4)
    assert by == "sentence" and units == [[(0, i)] for i in range(9)]
    assigned = assign_folds(units, 4, seed=0)
    assert sorted(assigned.count(f) for f in range(4)) == [2, 2, 2, 3] and assigned == assign_folds(units, 4, seed=0)
    with pytest.raises(HgnerError, match="has 9 sentences to split into folds; give at most 9 folds$"):
        split_units(corpus, 10)
    with pytest.raises(HgnerError, match="a whole number of at least 2"):
        split_units(corpus, 1)


def test_a_warning_of_every_fold_is_shown_once(tmp_path):
    corpus = read_conll(_corpus_file(tmp_path))
    trained: list[Corpus] = []

    def train(part: Corpus, out: Path, *, progress: bool) -> CrfModel:
        warn("the same warning from every training")
        return _recording_trainer(trained)(part, out, progress=progress)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cross_validate(corpus, 2, train)
    assert len(trained) == 2 and [str(w.message) for w in caught] == ["the same warning from every training"]


def test_train_with_folds_prints_and_records_the_estimate(tmp_path, capsys):
    corpus_file = _corpus_file(tmp_path)
    out = tmp_path / "model"
    assert main(["train", "--train", str(corpus_file), "--out", str(out), "--folds", "3", "--max-iterations", "10"]) == 0
    captured = capsys.readouterr()
    assert "cross-validation: 3 folds of 7 documents (16 sentences), seed 0: 4 trainings" in captured.err
    assert sum(line.startswith("fold ") for line in captured.err.splitlines()) == 3
    assert captured.err.count(f"training on {corpus_file}:") == 1  # the folds' trainings say nothing else
    assert "bootstrap over 7 documents, too few" in captured.err
    record = json.loads((out / "meta.json").read_text(encoding="utf-8"))["cross_validation"]
    assert record["folds"] == 3 and record["sentences"] == 16 and record["units"] == 7 and record["by"] == "document"
    low, high = record["interval"]
    assert f"F1 {record['f1']:.2f}, 95% interval [{low:.2f}, {high:.2f}]" in captured.out
    model = CrfModel.load(out)  # sealed again with the record
    assert model.metadata["cross_validation"] == record and model.metadata["training"]["sentences"] == 16
    assert main(["models", "info", str(out)]) == 0


@pytest.mark.parametrize(("argv", "message"), [
    (["--folds", "8"], "--folds 8: training corpus {file} has 7 documents to split into folds; give at most 7 "
                       "folds, or --documents sentence to split it by sentence"),
    (["--folds", "17", "--documents", "sentence"], "--folds 17: training corpus {file} has 16 sentences to split "
                                                   "into folds; give at most 16 folds"),
])
def test_more_folds_than_documents_are_refused_before_any_training(tmp_path, capsys, argv, message):
    corpus_file = _corpus_file(tmp_path)
    out = tmp_path / "model"
    assert main(["train", "--train", str(corpus_file), "--out", str(out), *argv]) == 2
    err = capsys.readouterr().err
    assert message.format(file=corpus_file) in err and "fold 1" not in err and not out.exists()


@pytest.mark.parametrize("folds", ["1", "0", "two"])
def test_fewer_than_two_folds_are_refused(tmp_path, capsys, folds):
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--train", str(_corpus_file(tmp_path)), "--out", str(tmp_path / "m"), "--folds", folds])
    assert exit_info.value.code == 2 and "--folds" in capsys.readouterr().err


def test_folds_with_a_base_model_adapt_as_the_command_does(tmp_path, capsys):
    base = tmp_path / "base"
    assert main(["train", "--train", BASE_CORPUS, "--out", str(base), "--max-iterations", "10"]) == 0
    out = tmp_path / "adapted"
    assert main(["train", "--base", str(base), "--train", str(_corpus_file(tmp_path)), "--out", str(out),
                 "--folds", "2", "--max-iterations", "10", "--adapt-method", "concatenate"]) == 0
    err = capsys.readouterr().err
    assert err.count("adapting base to ") == 1 and "fold 2 of 2: trained on " in err
    meta = json.loads((out / "meta.json").read_text(encoding="utf-8"))
    assert meta["adaptation"]["method"] == "concatenate" and meta["cross_validation"]["folds"] == 2

