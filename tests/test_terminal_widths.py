"""``hgner models`` and ``hgner corpora list`` fit a 100-column terminal (issue 61); ``-v`` adds the paths."""

from __future__ import annotations

from hgner.api import available_models, model_info
from hgner.cli import main
from hgner.data.catalog import catalogue


def test_models_fit_100_columns_and_show_paths_with_v(capsys):
    assert main(["models"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(map(len, lines)) <= 100
    assert lines[0].split() == ["name", "language", "labels", "scheme", "size", "F1", "(corpus)"]
    assert [line.split()[0] for line in lines[1:] if not line.startswith(" ")] == available_models()
    scored = sum(len(model_info(name).dev) + len(model_info(name).test) or 1 for name in available_models())
    assert len(lines) == 1 + scored  # a row per model and scored corpus
    assert not any(str(model_info(name).path) in "\n".join(lines) for name in available_models())
    assert main(["models", "-v"]) == 0
    wide = capsys.readouterr().out.splitlines()
    assert all(line.endswith(str(model_info(name).path)) for line, name in zip(wide[1:], available_models()))


def test_corpora_list_fits_100_columns_and_shows_paths_with_v(capsys):
    assert main(["corpora", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line for line in lines[1:] if not line.startswith("data home: ")]
    assert max(map(len, rows)) <= 100 and len(rows) == sum(len(m.splits) for m in catalogue().values())
    assert all(" /" not in line for line in rows)  # no absolute paths
    assert main(["corpora", "list", "-v"]) == 0
    assert capsys.readouterr().out.splitlines()[0].split()[-1] == "path"
