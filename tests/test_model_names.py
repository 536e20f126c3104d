"""A misspelt model name gets the closest one (issue 61), wherever a name is resolved."""

import pytest

import hgner
from hgner.cli import main
from hgner.core.errors import ModelError
from hgner.crf.modelfiles import model_directory


@pytest.mark.parametrize(("given", "meant"), [("en-conl03", "en-conll03"), ("en-3clas", "en-3class"),
                                              ("nl_conll02", "nl-conll02")])
def test_a_misspelt_model_name_suggests_the_closest(given, meant):
    with pytest.raises(ModelError, match=f"did you mean '{meant}'"):
        model_directory(given)


def test_a_name_like_no_model_suggests_nothing():
    with pytest.raises(ModelError) as error:
        model_directory("zzzzzz")
    assert "did you mean" not in str(error.value)


def test_the_suggestion_reaches_the_command_line_and_the_api(capsys):
    assert main(["models", "info", "en-conl03"]) == 2
    assert "did you mean 'en-conll03'" in capsys.readouterr().err
    with pytest.raises(ModelError, match="did you mean 'es-conll02'"):
        hgner.model_info("es-conl02")
