"""Every ``hgner`` command the README and the docs show (docs/**/*.md and the generated pages)
parses with the CLI's own parser, so a missing required argument or a misspelt option fails here;
corpus names in them are catalogue names. Every Python example that shows what it prints runs and
prints that. (``tools/check_readme.py`` runs the commands; it is not part of the tests.)"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from hgner.cli import build_parser
from hgner.core.errors import HgnerError
from hgner.data import catalog

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("check_readme", ROOT / "tools" / "check_readme.py")
check_readme = sys.modules.setdefault("check_readme", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(check_readme)

DOCUMENTS = check_readme.documents()
COMMANDS = check_readme.all_commands()
EXAMPLES = [example for source, text in DOCUMENTS.items() for example in check_readme.python_examples(text, source)]
CORPUS_OPTIONS = ("--corpus", "--train", "--dev")


PLACEHOLDER_VALUES = {"CODE": "es"}  # placeholders the parser checks (--lang CODE), with a value that passes


def parse(argv: list[str]):
    """The parsed arguments (None for ``--help`` and ``--version``, which exit 0), or a test failure
    with argparse's message."""
    try:
        return build_parser().parse_args([PLACEHOLDER_VALUES.get(argument, argument) for argument in argv])
    except SystemExit as error:
        if error.code == 0:
            return None
        raise AssertionError(f"hgner {' '.join(argv)}: does not parse (exit {error.code})") from None


def check_command(text: str) -> int:
    """Parse every hgner invocation of a README command line; the number parsed."""
    argvs = check_readme.hgner_argvs(text)
    for argv in argvs:
        args = parse(argv)
        names = [v for o, v in zip(argv, argv[1:]) if o in CORPUS_OPTIONS] + list(getattr(args, "names", []) or [])
        for name in names:
            if not check_readme.PLACEHOLDER.search(name) and not (ROOT / name).is_file():  # (a file of the checkout)
                assert catalog.resolve(name) is not None, f"{name!r} is not a catalogue name or a file of the checkout"
    return len(argvs)


@pytest.mark.parametrize("command", COMMANDS, ids=[c.where() for c in COMMANDS])
def test_readme_commands_parse(command):
    check_command(command.text)


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"{e.source}:{e.line}" for e in EXAMPLES])
def test_python_examples_print_what_they_say(example):
    from tag_support import subprocess_env

    result = subprocess.run([sys.executable, "-c", example.code], capture_output=True, text=True, timeout=300,
                            env=subprocess_env(), cwd=ROOT)
    assert result.returncode == 0, result.stderr
    if example.inline:
        assert result.stdout.strip() == example.printed
    else:
        assert result.stdout == example.printed


def test_the_examples_found_include_each_documents_examples():
    assert {e.source for e in EXAMPLES} >= {"README.md", "docs/guide/python.md", "docs/guide/spacy.md",
                                            "docs/guide/scaling.md"}
    assert sum(e.source == "docs/guide/spacy.md" for e in EXAMPLES) == 2  # the component and the tokenizer


def test_the_readme_is_short_and_keeps_the_two_set_up_commands():
    readme = DOCUMENTS["README.md"]
    assert len(readme.splitlines()) <= 150
    texts = [c.text for c in COMMANDS if c.source == "README.md"]
    assert texts[:2] == ["pip install . && hgner evaluate --model en-conll03 --corpus conll2003:testb "
                         "--decoders viterbi,crfsuite,herded --sweeps 800", 'pip install ".[test]" && python -m pytest -q']


def test_the_commands_found_include_the_first_and_the_table_commands(capsys):
    texts = [c.text for c in COMMANDS]
    assert sum(check_readme.hgner_argvs(t) != [] for t in texts) >= 20
    # the Table 3, skip-chain and variants commands, each an inline span in running text
    assert any(t.startswith("hgner evaluate --model en-3class --corpus nltk:ieer --decoders viterbi,gibbs,herded") for t in texts)
    assert any("--graph skip --decoders viterbi,gibbs,herded,exact" in t and "--corpus" in t for t in texts)
    assert any("--decoders herded,herded-shared,dhg" in t and "--corpus" in t for t in texts)
    # console blocks: the command after "$ " and its output
    conll = next(c for c in COMMANDS if c.text.endswith("| hgner tag --format conll"))
    assert conll.output.splitlines()[0] == "EU\tB-ORG"


@pytest.mark.parametrize(
    ("line", "argvs"),
    [
        ('echo "a b" | hgner tag --format conll', [["tag", "--format", "conll"]]),
        ("pip install . && hgner evaluate --corpus x # comment", [["evaluate", "--corpus", "x"]]),
        ("HGNER_OFFLINE=1 hgner corpora list > out.txt", [["corpora", "list"]]),
        ("python -m pytest -q", []),
    ],
)
def test_shell_lines_are_split_into_hgner_invocations(line, argvs):
    assert check_readme.hgner_argvs(line) == argvs


@pytest.mark.parametrize(
    "broken",
    [
        "hgner evaluate --decoders viterbi,gibbs,herded --sweeps 100,400,800 --seeds 5",  # no --corpus
        "hgner evaluate --corpus conll2003:testb --sweeps x",
        "hgner train --train conll2003:train",  # no --out
        "hgner corpora fetch",
        "hgner evaluate --corpus conll2003:dev",
    ],
)
def test_a_broken_command_fails(broken):
    with pytest.raises((AssertionError, HgnerError)):
        check_command(broken)


def test_inline_spans_and_blocks_are_found():
    text = ("Run `hgner evaluate --corpus wikigold\n--decoders viterbi` or `hgner tag`.\n\n"
            "```bash\nhgner corpora list\n# a comment\n```\n\n```console\n$ hgner tag x\n[x](PER)\n```\n"
            "```python\nhgner = 1\n```\n")
    found = check_readme.readme_commands(text)
    assert [(c.text, c.line, c.output) for c in found] == [
        ("hgner evaluate --corpus wikigold --decoders viterbi", 1, None),
        ("hgner corpora list", 5, None),
        ("hgner tag x", 10, "[x](PER)\n"),
    ]
