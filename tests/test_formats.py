"""Output formats of ``hgner tag`` (the registry, brat, docbin, JSONL sources, HTML escaping,
--scheme), directory inputs with --glob, --min-confidence and --set."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from tag_support import SENTENCE, tag_model  # noqa: F401  (fixture)

from hgner.cli import main
from hgner.core import registry
from hgner.core.errors import HgnerError
from hgner.tagging.inputs import folder_files
from hgner.tagging.settings import TagSettings
from hgner.tagging import writers
from hgner.tagging.inputs import Input
from hgner.tagging.tagger import Entity, TaggedGroup, Tagger
from hgner.tagging.writers import (HTML_SECTION_END, HtmlWriter, JsonlWriter, OutputOptions, html_head, html_marked,
                                   html_section_head, html_tail, jsonl_record)
from hgner.text.sentences import TokenizedSentence

SECOND = "Jim Smith flew from Paris to\nLondon on Monday ."


@pytest.fixture()
def files(tmp_path, monkeypatch):
    """a.txt, empty.txt and sub/b.txt in a folder that is also the working directory."""
    monkeypatch.chdir(tmp_path)
    Path("a.txt").write_text(SENTENCE, encoding="utf-8")
    Path("empty.txt").write_text("", encoding="utf-8")
    Path("sub").mkdir()
    Path("sub/b.txt").write_text(SECOND, encoding="utf-8")
    Path("sub/notes.md").write_text("Reuters said so .", encoding="utf-8")
    return tmp_path


def tag(model, capsys, *arguments) -> tuple[int, str, str]:
    code = main(["tag", "--model", str(model), *arguments])
    out, err = capsys.readouterr()
    return code, out, err


def jsonl(model, capsys, *arguments) -> list[dict]:
    code, out, err = tag(model, capsys, "--format", "jsonl", *arguments)
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()]


def test_formats_come_from_the_registry():
    assert {"inline", "conll", "jsonl", "html", "brat", "docbin"} <= set(registry.names(registry.output_formats))
    with pytest.raises(SystemExit) as stop:  # argparse: the choices are the registered names
        main(["tag", "--format", "nope"])
    assert stop.value.code == 2


def test_jsonl_has_a_record_for_every_input_with_its_source(tag_model, files, capsys):
    records = jsonl(tag_model, capsys, "--text", "a.txt", "")  # --text: every argument is text
    assert [(r["source"], r["text"]) for r in records] == [("<text>", "a.txt"), ("<text>", "")]
    records = jsonl(tag_model, capsys, "a.txt", "empty.txt", "sub/b.txt")
    assert [(r["source"], r["text"]) for r in records] == [("a.txt", SENTENCE), ("empty.txt", ""), ("sub/b.txt", SECOND)]
    assert records[1]["entities"] == [] and records[0]["entities"] and records[2]["entities"]


def test_directories_are_read_recursively_with_glob(tag_model, files, capsys):
    assert [r["source"] for r in jsonl(tag_model, capsys, ".")] == ["a.txt", "empty.txt", "sub/b.txt"]
    assert [r["source"] for r in jsonl(tag_model, capsys, "sub", "--glob", "*.md")] == ["sub/notes.md"]
    code, _, err = tag(tag_model, capsys, "sub", "--glob", "*.rst")
    assert code == 2 and err.strip() == "hgner tag: error: sub: a directory with no files matching '*.rst' (see --glob)"
    (records,) = [jsonl(tag_model, capsys, "--text", "sub")]
    assert records[0]["text"] == "sub"  # only --text tags the word


@pytest.mark.parametrize("pattern", ["", "/tmp/*.txt", "../*.txt", "sub/../../*.txt", "*/" * 300 + "*.txt"])
def test_glob_patterns_stay_inside_the_folder(tag_model, files, capsys, pattern):
    with pytest.raises(SystemExit) as stop:  # argparse: the pattern is the argument's type
        main(["tag", "--model", str(tag_model), "sub", "--glob", pattern])
    out, err = capsys.readouterr()
    assert (stop.value.code, out) == (2, "") and err.count("\n") == 1
    assert f"argument --glob: glob pattern {pattern!r}: expected a pattern of file names inside the folder" in err
    with pytest.raises(HgnerError, match="not absolute, no '..'"):  # the Python API checks it too
        folder_files("sub", pattern)


def test_brat_beside_the_inputs(tag_model, files, capsys):
    code, out, err = tag(tag_model, capsys, "--format", "brat", "a.txt", "sub")
    assert (code, out) == (0, "") and err == "hgner tag: wrote 2 .ann files beside the input files\n"
    assert sorted(str(p) for p in Path(".").rglob("*.ann")) == ["a.ann", "sub/b.ann"]
    lines = Path("sub/b.ann").read_text(encoding="utf-8").splitlines()
    entities = [line.split("\t") for line in lines if line.startswith("T")]
    assert entities[0] == ["T1", "PER 0 9", "Jim Smith"]
    london = next(e for e in entities if e[2] == "London")
    start, end = map(int, london[1].split()[1:])
    assert SECOND[start:end] == "London"
    assert re.fullmatch(r"#1\tAnnotatorNotes T1\tconfidence 0\.\d{6}", lines[1])
    code, _, err = tag(tag_model, capsys, "--format", "brat", "Paris is nice")
    assert code == 2 and "give -o DIR" in err


def test_brat_into_a_directory_and_line_breaks(tag_model, files, capsys):
    # a line of wrapped prose (60+ characters, lowercase, no final stop) does not end the sentence
    text = "Reuters said on Monday that the minister and the ambassador met Angela\nMerkel and Jim Smith ."
    code, _, err = tag(tag_model, capsys, "--format", "brat", "-o", "out", text)
    assert code == 0, err
    assert sorted(str(p.relative_to("out")) for p in Path("out").rglob("*")) == ["text-1.ann", "text-1.txt"]
    assert Path("out/text-1.txt").read_text(encoding="utf-8") == text
    start = text.index("Angela")
    annotations = Path("out/text-1.ann").read_text(encoding="utf-8").splitlines()
    # a span over a line break becomes two fragments
    assert f"PER {start} {start + 6};{start + 7} {start + 13}\tAngela Merkel" in "\n".join(annotations)
    assert tag(tag_model, capsys, "--format", "brat", "-o", "out2", "sub", "a.txt")[0] == 0
    assert sorted(str(p.relative_to("out2")) for p in Path("out2").rglob("*")) == ["a.ann", "a.txt", "b.ann", "b.txt"]
    code, _, err = tag(tag_model, capsys, "--format", "brat", "-o", "sub", "sub")  # the copy would be the input
    assert code == 2 and err == "hgner tag: error: sub/b.txt is also an input (sub/b.txt); refusing to overwrite it\n"
    Path("notes.txt").write_text("Jim", encoding="utf-8")
    Path("notes.ann").write_text("Paris", encoding="utf-8")
    code, _, err = tag(tag_model, capsys, "--format", "brat", "--glob", "notes*", ".")
    assert code == 2 and err == "hgner tag: error: notes.ann is also an input (notes.ann); refusing to overwrite it\n"
    Path("x").mkdir()
    Path("x/a.txt").write_text("Paris", encoding="utf-8")
    code, _, err = tag(tag_model, capsys, "--format", "brat", "-o", "out3", "a.txt", "x/a.txt")
    assert code == 2 and err == "hgner tag: error: x/a.txt and a.txt would both be written to out3/a.ann\n"


def test_docbin_round_trip(tag_model, files, capsys):
    from spacy.tokens import DocBin
    from spacy.vocab import Vocab

    assert tag(tag_model, capsys, "--format", "docbin", "a.txt")[0] == 2  # binary: needs -o
    code, _, err = tag(tag_model, capsys, "--format", "docbin", "-o", "tagged.spacy", ".")
    assert code == 0, err
    docs = list(DocBin().from_disk("tagged.spacy").get_docs(Vocab()))
    records = jsonl(tag_model, capsys, ".")
    assert [d.text for d in docs] == [r["text"] for r in records]
    for doc, record in zip(docs, records):
        assert [(e.start_char, e.end_char, e.label_) for e in doc.ents] == [
            (e["start"], e["end"], e["label"]) for e in record["entities"]]
        assert doc.user_data["hgner"]["source"] == record["source"]
        assert list(doc.user_data["hgner"]["confidences"]) == [e["confidence"] for e in record["entities"]]
    # a short line ends its sentence (hgner.text.tokenizer's line rule)
    assert [s.text for s in docs[2].sents] == ["Jim Smith flew from Paris to\n", "London on Monday ."]


def test_html_page_escapes_everything_and_shows_confidences(tag_model, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = Path("<b>&report.txt")
    name.write_text("Jim Smith <script>alert(1)</script> flew to Paris .", encoding="utf-8")
    code, _, err = tag(tag_model, capsys, "--format", "html", "-o", "page.html", str(name))
    assert code == 0, err
    page = Path("page.html").read_text(encoding="utf-8")
    assert "<title>hgner: &lt;b&gt;&amp;report.txt</title>" in page
    assert "<h2>&lt;b&gt;&amp;report.txt</h2>" in page and "<script>" not in page
    assert re.search(r'title="PER, confidence 0\.\d{3}">Jim Smith <span class="label">PER</span></mark>', page)
    assert 'class="legend"' in page and "displaCy" not in page
    hostile = Entity(0, 3, "Jim", "<img src=x onerror=alert(1)>", None)
    other = html_section("doc", "Jim flew", [hostile], {})
    assert "<img" not in other and "&lt;img src=x onerror=alert(1)&gt;" in other and "confidence unknown" in other
    assert '<html lang="en">' in page  # the test model's language


def html_section(heading: str, text: str, entities: list[Entity], colours: dict[str, str]) -> str:
    """One document's HTML section marked at once (what HtmlWriter writes group by group)."""
    return html_section_head(heading) + html_marked(text, 0, len(text), entities, colours) + HTML_SECTION_END


def test_jsonl_and_html_written_in_pieces_as_at_once(monkeypatch):
    """A long text's record and section are written a piece at a time (issue 62: no copy of the
    text, no list of its entities), the same characters as at once."""
    monkeypatch.setattr(writers, "TEXT_CHUNK_CHARS", 4)
    text = 'Jim "Smith" <b>flew</b> to Paris \u00e9\t& Rome .\n'
    spans = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
    groups = [TaggedGroup([TokenizedSentence([text[a:b] for a, b in part], part)], [["O"] * len(part)], found)
              for part, found in ((spans[:7], [Entity(0, 3, "Jim", "PER", 0.5), Entity(27, 32, "Paris", "LOC", None)]),
                                  (spans[7:], [Entity(37, 41, "Rome", "LOC", 0.25)]))]
    entities = [e for g in groups for e in g.entities]
    document = Input("notes.txt", text=text, id=7)
    for writer, expected in ((JsonlWriter, json.dumps(jsonl_record("notes.txt", text, [e.to_json() for e in entities], 7),
                                                      ensure_ascii=False) + "\n"),
                             (HtmlWriter, html_head("text") + html_section("text", text, entities, colours := {})
                              + html_tail(colours))):
        out = io.StringIO()
        written = writer(out, OutputOptions())
        written.start(document, text)
        for group in groups:
            written.group(group)
        written.finish()
        written.close()
        assert out.getvalue() == expected


def test_html_page_is_in_the_models_language(capsys):
    code, out, err = tag("es-conll02", capsys, "--format", "html", "Juan Pérez vive en Zaragoza .")
    assert code == 0, err
    assert out.startswith('<!DOCTYPE html>\n<html lang="es">') and "Zaragoza <span" in out


def test_conll_scheme(tag_model, capsys):
    text = "Angela Merkel met Jim Smith in Tokyo ."
    tags = {}
    for scheme in ("IOB2", "BIOES", "IO"):
        code, out, err = tag(tag_model, capsys, "--format", "conll", "--scheme", scheme, text)
        assert code == 0, err
        tags[scheme] = [line.split("\t")[1] for line in out.splitlines() if line]
    assert tags["IOB2"][:2] == ["B-PER", "I-PER"] and tags["BIOES"][:2] == ["B-PER", "E-PER"]
    assert tags["IO"][:2] == ["I-PER", "I-PER"] and tags["BIOES"][-2] == "S-LOC"
    assert tag(tag_model, capsys, "--format", "conll", text)[1].splitlines()[1] == "Merkel\tI-PER"  # IOB2 by default
    code, _, err = tag(tag_model, capsys, "--format", "jsonl", "--scheme", "IO", text)
    assert code == 2 and "the jsonl format takes no --scheme" in err
    code, _, err = tag(tag_model, capsys, "--format", "conll", "--scheme", "IOB1", text)
    assert code == 2 and "takes one of IOB2, BIOES, IO" in err


def test_min_confidence(tag_model, capsys):
    text = "Angela Merkel met Jim Smith of Siemens in Tokyo and Maria Lopez in Madrid ."
    (everything,) = jsonl(tag_model, capsys, text)
    confidences = sorted(e["confidence"] for e in everything["entities"])
    threshold = (confidences[0] + confidences[-1]) / 2
    assert confidences[0] < threshold <= confidences[-1]
    (kept,) = jsonl(tag_model, capsys, "--min-confidence", str(threshold), text)
    assert kept["entities"] == [e for e in everything["entities"] if e["confidence"] >= threshold]
    code, out, _ = tag(tag_model, capsys, "--format", "conll", "--min-confidence", str(threshold), text)
    dropped = {e["text"].split()[0] for e in everything["entities"]} - {e["text"].split()[0] for e in kept["entities"]}
    assert dropped and all(line.split("\t")[1] == "O" for line in out.splitlines() if line.split("\t")[0] in dropped)
    with pytest.raises(SystemExit) as stop:  # argparse: from 0 to 1
        main(["tag", "--min-confidence", "1.5", text])
    assert stop.value.code == 2 and "expected a number from 0 to 1, got '1.5'" in capsys.readouterr().err


def test_min_confidence_keeps_entities_without_confidence(tag_model):
    tagger = Tagger(TagSettings(tag_model, "crfsuite", min_confidence=0.99))
    with pytest.warns(UserWarning, match="gives no confidences") as caught:
        assert [e.text for e in tagger.tag(SENTENCE)] == ["Angela Merkel", "United Nations", "Tokyo"]
    assert len(caught) == 1


def test_set_decoder_settings(tag_model, capsys):
    code, _, err = tag(tag_model, capsys, "--set", "sweeps", SENTENCE)
    assert code == 2 and err == "hgner tag: error: --set 'sweeps': expected NAME=VALUE, e.g. --set damping=0.5\n"
    code, _, err = tag(tag_model, capsys, "--set", "threshhold=5", SENTENCE)
    assert code == 2 and err == "hgner tag: error: unknown viterbi setting 'threshhold'; expected one of: marginals\n"
    code, _, err = tag(tag_model, capsys, "--decoder", "gibbs", "--set", "schedule=constant", "--set", "schedule=linear",
                       SENTENCE)
    assert code == 2 and "schedule is already set to 'constant'" in err
    code, out, err = tag(tag_model, capsys, "--decoder", "gibbs", "--sweeps", "20", "--seed", "1",
                         "--set", "schedule=constant", SENTENCE)
    assert code == 0 and "[Angela Merkel](PER)" in out, err


def test_skip_graph_picks_a_decoder_for_skip_edges(tag_model, capsys):
    from hgner.decoders import decoder_class
    from hgner.tagging.settings import SKIP_DEFAULT_DECODER

    assert not decoder_class(SKIP_DEFAULT_DECODER).chain_only
    text = "Angela Merkel met Jim Smith . Later Smith met Merkel ."
    code, out, err = tag(tag_model, capsys, "--graph", "skip", text)
    if code == 2:  # the tiny model has no skip potential: the error names the model, not the decoder
        assert "has no skip potential" in err
    else:
        assert "[Jim Smith](PER)" in out
    assert err.startswith(f"hgner tag: warning: --graph skip: the default decoder viterbi decodes chains only; "
                          f"tagging with {SKIP_DEFAULT_DECODER} instead\n")
    code, _, err = tag(tag_model, capsys, "--graph", "skip", "--decoder", "viterbi", text)
    assert code == 2 and f"decoder 'viterbi' decodes chains only, not a skip graph; use --decoder {SKIP_DEFAULT_DECODER}" in err
