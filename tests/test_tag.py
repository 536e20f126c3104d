"""``hgner tag``: every format, inputs from arguments/files/stdin, streaming, offsets, bad input,
chunked decoding, confidences (the docs' examples run in tests/test_readme.py)."""

from __future__ import annotations

import io
import json
import select
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tag_support import COMMANDS, ENGLISH, SENTENCE, SPANISH, SPANISH_WARNING, run_hgner, subprocess_env, tag_model  # noqa: F401  (fixture)

from hgner.cli import main
from hgner.core.integrity import seal
from hgner.text import languages, tokenizer
from hgner.crf.modelfiles import SEALED_FILES
from hgner.tagging import tagger as tag
from hgner.tagging.settings import TagSettings
from hgner.tagging.tagger import Tagger, text_blocks
from hgner.training import skip as skip_training

MESSY = "Café owners\u00a0in  Tokyo say:\n\n  Angela Merkel works for United Nations in Tokyo .  Jim Smith flew from Paris to London on Monday .\n"


def one_line_error(stderr: str) -> str:
    assert "Traceback" not in stderr and stderr.count("\n") == 1, stderr
    return stderr


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: Path(c[-1]).name)
def test_jsonl_offsets_from_stdin(tag_model, command):
    result = run_hgner(["tag", "--model", str(tag_model), "--format", "jsonl"], command, input=MESSY)
    assert result.returncode == 0, result.stderr
    (line,) = result.stdout.splitlines()
    record = json.loads(line)
    assert record["text"] == MESSY
    assert {"Angela Merkel", "United Nations", "Jim Smith"} <= {e["text"] for e in record["entities"]}
    for entity in record["entities"]:
        assert set(entity) == {"start", "end", "text", "label", "confidence"}
        assert MESSY[entity["start"]:entity["end"]] == entity["text"]
        assert 0.0 < entity["confidence"] <= 1.0


def test_inline_and_conll(tag_model):
    inline = run_hgner(["tag", "--model", str(tag_model), SENTENCE])
    assert inline.returncode == 0, inline.stderr
    assert inline.stdout == "[Angela Merkel](PER) works for [United Nations](ORG) in [Tokyo](LOC) .\n"
    conll = run_hgner(["tag", "--model", str(tag_model), "--format", "conll", SENTENCE + " Jim Smith flew ."])
    blocks = conll.stdout.split("\n\n")
    assert blocks[0].splitlines()[:2] == ["Angela\tB-PER", "Merkel\tI-PER"]
    assert blocks[1].splitlines()[0] == "Jim\tB-PER" and blocks[2] == ""


def test_html(tag_model, tmp_path):
    out = tmp_path / "page.html"
    result = run_hgner(["tag", "--model", str(tag_model), "--format", "html", "-o", str(out), SENTENCE])
    assert result.returncode == 0 and result.stdout == ""
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "Angela Merkel" in page and ">PER<" in page


def test_files_stream_one_document_each(tag_model, tmp_path):
    """A file's document is printed before the next input (here stdin, still open) is read."""
    first = tmp_path / "a.txt"
    first.write_text(SENTENCE, encoding="utf-8")
    process = subprocess.Popen([*COMMANDS[0], "tag", "--model", str(tag_model), "--format", "jsonl", str(first), "-"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=subprocess_env())
    ready, _, _ = select.select([process.stdout], [], [], 60)
    assert ready, "no output for the first document while the second was still open"
    assert json.loads(process.stdout.readline())["text"] == SENTENCE
    out, _ = process.communicate("Jim Smith flew .", timeout=60)
    assert json.loads(out)["entities"][0]["text"] == "Jim Smith"
    assert process.returncode == 0


def test_jobs_keep_the_output_and_its_order(tag_model, tmp_path):
    """Several worker processes give the same output as one, in input order; a bad file in the
    middle stops with its one-line error after the documents before it."""
    files = []
    for i in range(6):
        files.append(tmp_path / f"{i}.txt")
        files[-1].write_text(f"Document {i} . {SENTENCE}\nJim Smith flew to Paris .", encoding="utf-8")
    arguments = ["tag", "--model", str(tag_model), "--format", "jsonl", *map(str, files)]
    one, two = run_hgner(arguments), run_hgner([*arguments, "--jobs", "2"])
    assert one.returncode == two.returncode == 0
    assert two.stdout == one.stdout and len(one.stdout.splitlines()) == 6
    (tmp_path / "bad.txt").write_bytes(b"Paris \xff")
    broken = run_hgner([*arguments[:5], str(files[0]), str(tmp_path / "bad.txt"), str(files[1]), "-j", "2"])
    assert broken.returncode == 2 and len(broken.stdout.splitlines()) == 1
    assert "bad.txt:1: not UTF-8 (byte 0xff at column 7)" in one_line_error(broken.stderr)


def test_argument_reading_rules(tag_model, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("Paris").write_text("Jim Smith flew .", encoding="utf-8")
    assert main(["tag", "--model", str(tag_model), "--format", "conll", "Paris"]) == 0
    assert capsys.readouterr().out.startswith("Jim\tB-PER")  # an existing file is read
    assert main(["tag", "--model", str(tag_model), "--format", "conll", "--text", "Paris"]) == 0
    assert capsys.readouterr().out.startswith("Paris\t")  # --text forces text
    assert main(["tag", "--model", str(tag_model), "--format", "conll", "-o", "-", "Paris"]) == 0
    assert capsys.readouterr().out.startswith("Jim\tB-PER") and not Path("-").exists()  # -o -: standard output
    assert main(["tag", "--model", str(tag_model), "--format", "brat", "-o", "-", "Paris"]) == 2
    assert "-o -: the brat format writes files, not standard output" in capsys.readouterr().err
    assert main(["tag", "--model", str(tag_model), "--format", "docbin", "-o", "-", "Paris"]) == 2
    assert "the docbin format is binary: give -o FILE" in capsys.readouterr().err
    assert not Path("Paris.ann").exists() and not Path("-").exists()
    assert main(["tag", "--model", str(tag_model), "--files", "Tokyo"]) == 2
    assert "Tokyo: no such file" in capsys.readouterr().err
    assert main(["tag", "--model", str(tag_model), "--files", ""]) == 2
    assert "'': no such file" in capsys.readouterr().err
    assert main(["tag", "--model", str(tag_model), "notes/missing.txt"]) == 2  # looks like a path
    assert "notes/missing.txt: no such file (use --text" in capsys.readouterr().err


def test_brat_writes_every_file_or_replaces_none(tag_model, tmp_path, capsys, monkeypatch):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "one.txt").write_text("Jim Smith met Bob .", encoding="utf-8")
    (folder / "one.ann").write_text("earlier\n", encoding="utf-8")
    (folder / "two.txt").write_bytes(b"caf\xe9\n")  # read after one.txt is tagged
    assert main(["tag", "--model", str(tag_model), "--format", "brat", str(folder)]) == 2
    assert "two.txt:1: not UTF-8" in capsys.readouterr().err
    assert (folder / "one.ann").read_text() == "earlier\n" and sorted(p.name for p in folder.iterdir()) == [
        "one.ann", "one.txt", "two.txt"]
    copied = tmp_path / "out" / "text-1.txt"  # with -o DIR, the text read from standard input is copied there
    copied.parent.mkdir()
    copied.write_text("Jim Smith flew .", encoding="utf-8")
    with open(copied) as stdin:
        monkeypatch.setattr("sys.stdin", stdin)
        assert main(["tag", "--model", str(tag_model), "--format", "brat", "-o", str(copied.parent), "-"]) == 2
    assert "text-1.txt is also an input (standard input); refusing to overwrite it" in capsys.readouterr().err


def test_a_folder_gives_the_same_files_with_and_without_cluster(tmp_path):
    from hgner.distributed.inputs import find_inputs

    folder = tmp_path / "in"
    for name in ["a.txt", "b.md", ".hidden.txt", ".git/x.txt", "sub/c.txt", "sub/d.csv", "sub/.e.txt", "sub/.cache/f.txt",
                 "sub/deeper/g.txt"]:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("Jim Smith .", encoding="utf-8")
    from hgner.tagging.inputs import DEFAULT_GLOB, resolve_inputs

    for pattern, expected in [(DEFAULT_GLOB, ["a.txt", "sub/c.txt", "sub/deeper/g.txt"]), ("*.md", ["b.md"])]:
        plain = [i.path for i in resolve_inputs([str(folder)], pattern=pattern)]
        assert plain == find_inputs([str(folder)], pattern=pattern) == [str(folder / name) for name in expected]
    with pytest.raises(tag.HgnerError, match="a directory with no files matching '\\*.rst'"):
        resolve_inputs([str(folder)], pattern="*.rst")
    with pytest.raises(tag.HgnerError, match="a directory with no files matching '\\*.rst' or '\\*.jsonl'"):
        find_inputs([str(folder)], pattern="*.rst")


def test_empty_input_gives_empty_output(tag_model, capsys, monkeypatch):
    result = run_hgner(["tag", "--model", str(tag_model)], input="")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    for fmt in ("inline", "conll", "jsonl"):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"  \n\t \n")))
        assert main(["tag", "--model", str(tag_model), "--format", fmt]) == 0
        expected = '{"source": "<stdin>", "text": "  \\n\\t \\n", "entities": []}\n' if fmt == "jsonl" else ""
        assert capsys.readouterr() == (expected, "")


def test_blank_text_is_not_tokenized_and_would_give_no_tokens(tag_model, monkeypatch):
    tagger = Tagger(TagSettings(tag_model))
    blank = "".join(chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace())
    assert tagger.tokenizer(blank) == [] and tagger.tag(blank) == [] and list(tagger.pipe([blank, ""])) == [[], []]
    monkeypatch.setattr(tagger, "sentences", lambda text: pytest.fail("blank text tokenized"))
    assert list(tagger.tag_text(blank)) == [] and list(tagger.tag_text("")) == []


def test_bad_files_exit_2_with_one_line(tag_model, tmp_path, capsys):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("Berlin.\nAngela Merkel in M\xfcnchen".encode("latin-1"))
    result = run_hgner(["tag", "--model", str(tag_model), str(bad)])
    assert result.returncode == 2
    assert f"{bad}:2: not UTF-8 (byte 0xfc at column 19)" in one_line_error(result.stderr)
    assert main(["tag", "--model", str(tag_model), "--files", str(tmp_path / "nope")]) == 2
    assert "no such file" in one_line_error(capsys.readouterr().err)
    assert main(["tag", "--model", str(tmp_path / "no-model"), SENTENCE]) == 2
    assert "not a model directory" in one_line_error(capsys.readouterr().err)


def test_tokenizer_mismatch_warns(tag_model, tmp_path, capsys):
    copy = Path(shutil.copytree(tag_model, tmp_path / "model"))
    meta = json.loads((copy / "meta.json").read_text())
    meta["tokenizer"] = "whitespace"
    (copy / "meta.json").write_text(json.dumps(meta))
    seal(copy, SEALED_FILES)  # resealed: the checks behind the seal are tested
    assert main(["tag", "--model", str(copy), SENTENCE]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "was trained on text tokenized by 'whitespace'" in err


def test_a_model_is_tagged_with_the_rules_it_records(tag_model, tmp_path, capsys):
    copy = Path(shutil.copytree(tag_model, tmp_path / "model"))
    meta = json.loads((copy / "meta.json").read_text())
    meta["tokenizer"] = {"name": "hgner.conll", "version": 1}
    (copy / "meta.json").write_text(json.dumps(meta))
    seal(copy, SEALED_FILES)  # resealed: the checks behind the seal are tested
    assert Tagger(TagSettings(copy)).tokenizer.version == 1 and Tagger(TagSettings(tag_model)).tokenizer.version == tokenizer.VERSION
    assert main(["tag", "--model", str(copy), SENTENCE]) == 0
    assert capsys.readouterr().err == ""


def test_chunked_decoding_equals_whole(tag_model, monkeypatch):
    """Small blocks and groups (as for a 5 MB text) keep the offsets right, and on this text the
    entities too (in general a group's document attributes see only its own sentences: hgner.tag)."""
    text = " ".join([MESSY] * 20)
    whole = [e for g in Tagger(TagSettings(tag_model)).tag_text(text) for e in g.entities]
    monkeypatch.setattr(tag, "BLOCK_CHARS", 150)
    monkeypatch.setattr(tag, "CHAIN_GROUP_TOKENS", 25)
    assert all(end - start <= 150 for start, end in text_blocks(text, 150))
    groups = list(Tagger(TagSettings(tag_model)).tag_text(text))
    assert len(groups) > 10
    assert [e for g in groups for e in g.entities] == whole
    assert all(text[e.start:e.end] == e.text for e in whole)


def test_spacy_vocabulary_stays_bounded_over_one_long_line(tag_model, monkeypatch):
    """One line of ever new words (issue 62: spaCy keeps every word it sees) is tokenized block by
    block; past ``max_words`` words the tokenizer starts a new vocabulary, with the same entities."""
    words = [f"w{i}" if i % 40 else "Angela Merkel works in Tokyo ." for i in range(3_000)]
    text = " ".join(words) + "\n"
    monkeypatch.setattr(tag, "BLOCK_CHARS", 500)
    unbounded = Tagger(TagSettings(tag_model), max_words=None)
    expected = [e for groups in unbounded.tag_texts([text]) for g in groups for e in g.entities]
    assert unbounded.tokenizer.words > 3_000
    bounded = Tagger(TagSettings(tag_model), max_words=1_000)
    sizes = []
    bound = bounded.tokenizer.bound_vocabulary

    def recorded() -> None:
        sizes.append(bounded.tokenizer.words)
        bound()

    monkeypatch.setattr(bounded.tokenizer, "bound_vocabulary", recorded)
    assert [e for groups in bounded.tag_texts([text]) for g in groups for e in g.entities] == expected
    assert len(expected) > 50
    assert len(sizes) > 20 and max(sizes) < 1_000 + 500  # (a block of 500 characters adds fewer than 500 words)
    assert sum(after < before for before, after in zip(sizes, sizes[1:])) >= 2  # started afresh, more than once


def test_confidence_null_without_marginals(tag_model):
    (group,) = Tagger(TagSettings(tag_model, decoder="crfsuite")).tag_text(SENTENCE)
    assert group.entities and all(e.confidence is None for e in group.entities)
    assert json.loads(json.dumps(group.entities[0].to_json()))["confidence"] is None


def test_confidence_is_min_token_marginal(tag_model):
    tagger = Tagger(TagSettings(tag_model))
    (group,) = tagger.tag_text(SENTENCE)
    result = tagger.pipeline.decode([s.tokens for s in group.sentences])
    person = group.entities[0]
    assert person.text == "Angela Merkel"
    assert person.confidence == pytest.approx(min(result.marginals[i, result.labels[i]] for i in (0, 1)))


def test_sampler_confidences(tag_model):
    (group,) = Tagger(TagSettings(tag_model, decoder="herded", sweeps=50)).tag_text(SENTENCE)
    assert group.entities and all(e.confidence is not None and 0 < e.confidence <= 1 for e in group.entities)
    (group,) = Tagger(TagSettings(tag_model, decoder="gibbs", sweeps=50, seed=1)).tag_text(SENTENCE)
    assert group.entities and all(e.confidence is None for e in group.entities)  # annealed: no marginals


def test_skip_graph_without_a_skip_potential_says_how_to_build_it(tag_model):
    result = run_hgner(["tag", "--model", str(tag_model), "--graph", "skip", "--decoder", "gibbs", SENTENCE])
    assert result.returncode == 2
    assert "has no skip potential" in one_line_error(result.stderr) and "a model trained with a development corpus (--dev" in result.stderr


def test_skip_graph_tags_with_a_skip_potential(tag_model, tmp_path):
    from tag_support import FIXTURE

    from hgner.crf import skip
    from hgner.crf.model import CrfModel
    from hgner.data.corpus import load_corpus

    directory = tmp_path / "with-skip"
    shutil.copytree(tag_model, directory)
    skip.save(skip_training.estimate(load_corpus(str(FIXTURE)), CrfModel.load(directory)), directory)
    result = run_hgner(["tag", "--model", str(directory), "--graph", "skip", "--decoder", "gibbs", "--seed", "0", SENTENCE])
    assert result.returncode == 0, result.stderr
    assert "[Angela Merkel](PER)" in result.stdout


def test_output_never_overwrites_an_input(tag_model, tmp_path):
    text = tmp_path / "a.txt"
    text.write_text(SENTENCE + "\n")
    link = tmp_path / "link.txt"
    link.symlink_to(text)
    for target in (text, link):
        result = run_hgner(["tag", "--model", str(tag_model), "-o", str(target), str(text)])
        assert result.returncode == 2 and "is also an input" in one_line_error(result.stderr)
    with open(text) as stdin:
        result = run_hgner(["tag", "--model", str(tag_model), "-o", str(text)], stdin=stdin)
    assert result.returncode == 2 and "standard input reads" in one_line_error(result.stderr)
    assert text.read_text() == SENTENCE + "\n"


def test_text_in_another_shipped_models_language_is_warned_about_once(tag_model, tmp_path, capsys):
    for number in range(3):
        (tmp_path / f"{number}.txt").write_text(SPANISH, encoding="utf-8")
    assert main(["tag", "--model", str(tag_model), "--format", "jsonl", str(tmp_path)]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "looks like" in line]
    assert warnings == [f"hgner tag: warning: {SPANISH_WARNING}"]
    assert len({word.lower() for word in ENGLISH.split() if word.isalpha()}) >= languages.MIN_TYPES  # judged
    assert main(["tag", "--model", str(tag_model), ENGLISH]) == 0
    assert "looks like" not in capsys.readouterr().err


def test_a_glob_with_a_partial_double_star_is_one_error(tmp_path, capsys):
    """Issue 40: --glob '**.txt' passed the check, then pathlib refused it: an internal error."""
    from hgner.cli import main

    (tmp_path / "a.txt").write_text("Jim Smith\n")
    with pytest.raises(SystemExit) as exit_:
        main(["tag", "--glob", "**.txt", str(tmp_path)])
    assert exit_.value.code == 2
    assert "'**' must be a whole part of the pattern" in capsys.readouterr().err


def test_a_subfolder_that_cannot_be_listed_is_reported(tmp_path, monkeypatch):
    """Issue 40: an unlistable subfolder was skipped without a word."""
    import os

    from hgner.core.errors import HgnerError
    from hgner.tagging.inputs import folder_files

    (tmp_path / "a.txt").write_text("Jim\n")
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "b.txt").write_text("Bob\n")
    real = os.scandir

    def scandir(path="."):
        if os.fspath(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(HgnerError, match="locked: cannot list the folder"):
        folder_files(tmp_path)


def test_a_folder_leaves_out_files_that_lie_in_the_excluded_tree_through_a_link(tmp_path):
    from hgner.tagging.inputs import folder_files

    out, inputs = tmp_path / "out", tmp_path / "in"
    (out / "deeper").mkdir(parents=True)
    (out / "part.txt").write_text("Jim\n")
    (out / "deeper" / "more.txt").write_text("Bob\n")
    (inputs / "news").mkdir(parents=True)
    (inputs / "a.txt").write_text("Ann\n")
    (inputs / "news" / "b.txt").write_text("Sue\n")
    (inputs / "linked.txt").symlink_to(out / "part.txt")  # a file that is a link into the excluded tree
    (inputs / "outside").symlink_to(out / "deeper")  # a folder that is one (a pattern through it follows it)
    assert folder_files(inputs, ("*.txt", "*/*.txt"), out) == [inputs / "a.txt", inputs / "news" / "b.txt"]
    assert folder_files(tmp_path / "in", "**/*.txt") == [inputs / "a.txt", inputs / "linked.txt", inputs / "news" / "b.txt"]
    (tmp_path / "via").symlink_to(inputs)  # the input folder named through a link: the same files
    assert [p.name for p in folder_files(tmp_path / "via", ("*.txt", "*/*.txt"), out)] == ["a.txt", "b.txt"]
