"""The house rules of issue 37, checked on the package itself: the command line alone parses
arguments and names flags, modules and functions stay small, ``hgner tag TEXT`` loads only the
tagging side and builds one decoder, and a tagging option is a field that every front end takes."""

from __future__ import annotations

import ast
import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tag_support import subprocess_env, tag_model  # noqa: F401  (fixture)

from hgner.commands.arguments import flag_names
from hgner.core.errors import HgnerError, named
from hgner.tagging.settings import TagSettings

PACKAGE = Path(__file__).resolve().parent.parent / "hgner"
TOOLS = PACKAGE.parent / "tools"
FRONT = ("cli.py", "commands", "server")  # the command line (and the server, which names its own options): may name flags
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]+")


def _library_modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if not relative.startswith(FRONT):
            yield relative, ast.parse(path.read_text(encoding="utf-8"))


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def test_no_library_module_imports_argparse():
    importers = [name for name, tree in _library_modules() for node in ast.walk(tree)
                 if isinstance(node, ast.Import) and any(a.name == "argparse" for a in node.names)
                 or isinstance(node, ast.ImportFrom) and node.module == "argparse"]
    assert importers == []


def test_no_library_message_names_a_flag():
    """Library messages name the settings' fields (hgner.core.errors.named); the CLI names them as flags."""
    naming = []
    for name, tree in _library_modules():
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                if FLAG.search(node.value):
                    naming.append(f"{name}:{node.lineno}: {node.value[:60]!r}")
    assert naming == []


def test_fields_are_named_as_flags_by_the_cli_alone():
    error = HgnerError(f"{named('min_confidence')}: bad, see {named('decoder_settings')}")
    assert str(error) == "min_confidence: bad, see decoder_settings"
    assert error.render(flag_names()) == "--min-confidence: bad, see --set"


FRONT_ENDS = {"__init__.py", "__main__.py", "api.py", "cli.py", "dask.py", "entry.py", "reseal.py", "spacy_component.py"}


def test_the_top_of_the_package_holds_only_front_ends_and_folders():
    """Issue 58: the layers are folders; the top of ``hgner/`` keeps the front ends, and every
    folder of modules says in its docstring what it holds."""
    assert {path.name for path in PACKAGE.glob("*.py")} == FRONT_ENDS
    folders = [path for path in PACKAGE.iterdir() if (path / "__init__.py").is_file()]
    undocumented = [path.name for path in folders
                    if not ast.get_docstring(ast.parse((path / "__init__.py").read_text(encoding="utf-8")))]
    assert len(folders) >= 13 and undocumented == []


def test_modules_and_functions_are_small():
    result = subprocess.run([sys.executable, str(TOOLS / "check_sizes.py"), str(PACKAGE)], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stdout


def test_tag_loads_only_the_tagging_side_and_builds_one_decoder(tag_model):
    code = ("import sys, json\n"
            "built = []\n"
            "from hgner.decoders import chain\n"
            "init = chain.Viterbi.__init__\n"
            "def counting(self, *args, **kwargs):\n"
            "    built.append(type(self).__name__)\n"
            "    init(self, *args, **kwargs)\n"
            "chain.Viterbi.__init__ = counting\n"
            "from hgner.cli import main\n"
            "code = main(['tag', '--model', sys.argv[1], 'Jim Smith flew to Paris.'])\n"
            "print(json.dumps({'code': code, 'built': built, 'modules': sorted(sys.modules)}))\n")
    result = subprocess.run([sys.executable, "-c", code, str(tag_model)], capture_output=True, text=True,
                            env=subprocess_env())
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.splitlines()[-1])
    assert report["code"] == 0 and report["built"] == ["Viterbi"]
    loaded = [m for m in report["modules"] if m.startswith(("hgner", "dask", "distributed"))]
    unwanted = [m for m in loaded if m.startswith(("dask", "distributed", "hgner.distributed", "hgner.evaluation",
                                                   "hgner.training", "hgner.data.corpus", "hgner.data.catalog",
                                                   "hgner.data.datahome", "hgner.data.reading", "hgner.data.ieer"))]
    assert unwanted == []


def test_a_tagging_option_is_a_field_every_front_end_takes():
    """The spaCy factory's settings follow TagSettings' fields, and ``hgner tag`` has a flag for
    each, named as the CLI names the field in messages."""
    from hgner.cli import build_parser
    from hgner.spacy_component import make_hgner

    fields = [f.name for f in dataclasses.fields(TagSettings)]
    factory = list(make_hgner.__signature__.parameters)  # type: ignore[attr-defined]
    assert factory[2:2 + len(fields)] == fields
    tag = build_parser("tag", full=False)._subparsers._group_actions[0].choices["tag"]
    flags = {flag for action in tag._actions for flag in action.option_strings}
    assert all(flag_names().get(field) in flags for field in fields)


@pytest.mark.parametrize("bad", [{"min_confidence": 2}, {"graph": "x"}, {"decoder": "nope"}, {"sweeps": 3,
                                                                                             "decoder_settings": {"sweeps": 2}}])
def test_tag_settings_are_checked_when_built(bad):
    with pytest.raises(HgnerError):
        TagSettings(**bad)


def test_labels_keeps_the_types_asked_for_in_every_front_end(tag_model, capsys):
    """``labels`` is one TagSettings field: the CLI's --labels, hgner.load's keyword, the spaCy config
    and the Dask job's record all take it without another line of code."""
    import spacy

    import hgner
    from hgner.cli import main
    from hgner.distributed.jobs import job_settings

    text = "Angela Merkel met Jim Smith in Tokyo ."
    every = {e.label for e in hgner.load(tag_model).tag(text)}
    kept = hgner.load(tag_model, labels=["PER"]).tag(text)
    assert len(every) > 1 and kept and {e.label for e in kept} == {"PER"}
    assert main(["tag", "--model", str(tag_model), "--labels", "PER", "--format", "jsonl", text]) == 0
    assert [e["text"] for e in json.loads(capsys.readouterr().out)["entities"]] == [e.text for e in kept]
    nlp = spacy.blank("en")
    nlp.add_pipe("hgner", config={"model": str(tag_model), "labels": ["PER"]})
    assert [e.text for e in nlp(text).ents] == [e.text for e in kept]
    assert job_settings(TagSettings(tag_model, labels=("PER",)))["labels"] == ("PER",)
    assert "labels" not in job_settings(TagSettings(tag_model))  # a job without it records what it did before
    assert main(["tag", "--model", str(tag_model), "--labels", "PER,XYZ", text]) == 2
    assert "--labels: model 'tag-model' has no entity type XYZ" in capsys.readouterr().err
