"""``split="lines"`` (issue 61): each non-blank line of a text is its own document, as if each
were a file of its own, with offsets into the whole text; in ``hgner tag --split``, the API, the
spaCy component and the cluster alike; and the hint that a text tagged whole looks like one."""

from __future__ import annotations

import json

import pytest
from tag_support import run_hgner, tag_model  # noqa: F401  (fixture)

from hgner.core.errors import HgnerError
from hgner.tagging import splitting
from hgner.tagging.settings import TagSettings
from hgner.tagging.tagger import Tagger

NAMES = ["Angela Merkel", "Jim Smith", "Tokyo", "Paris", "United Nations", "London"]


def short_lines(count: int) -> list[str]:
    """``count`` short sentences, a few of them naming the same word as different things."""
    lines = []
    for i in range(count):
        name, place = NAMES[i % len(NAMES)], NAMES[(i * 5 + 2) % len(NAMES)]
        lines.append(f"{name} works for {place} ." if i % 3 else f"{place} said {name} flew to Paris on Monday .")
    return lines


def per_line(tagger: Tagger, lines: list[str], separator: str = "\n") -> list[tuple[int, int, str, str]]:
    """The entities of each line tagged alone, offsets moved into the lines joined by ``separator``."""
    found, position = [], 0
    for line in lines:
        found += [(e.start + position, e.end + position, e.label, e.text) for e in tagger.tag(line + separator)]
        position += len(line) + len(separator)
    return found


def test_lines_are_tagged_as_if_each_were_a_file(tag_model):
    lines = short_lines(150)
    text = "\n".join(lines) + "\n"
    expected = per_line(Tagger(TagSettings(tag_model)), lines)
    tagger = Tagger(TagSettings(tag_model, split="lines"))
    got = [(e.start, e.end, e.label, e.text) for e in tagger.tag(text)]
    assert got == expected and len(got) > 150
    assert all(text[a:b] == t for a, b, _, t in got)
    decoded = []  # each document the pipeline decodes: one line's sentences each
    decode = tagger.pipeline.decode_documents
    tagger.pipeline.decode_documents = lambda documents: decoded.extend(documents) or decode(documents)
    tagger.tag(text)
    assert [[token for sentence in document for token in sentence] for document in decoded] == \
        [line.split() for line in lines]
    assert [[(e.start, e.end) for e in entities] for entities in tagger.pipe([text, "", text])] == \
        [[(a, b) for a, b, _, _ in got], [], [(a, b) for a, b, _, _ in got]]


def test_blank_lines_and_crlf(tag_model):
    text = "\r\n  \nAngela Merkel works for United Nations .\r\n\n\nJim Smith flew to Tokyo .  \n   "
    tagger = Tagger(TagSettings(tag_model, split="lines"))
    assert list(splitting.lines(text)) == [(5, 45), (49, 76)]
    entities = tagger.tag(text)
    assert {e.text for e in entities} >= {"Angela Merkel", "Jim Smith"}
    assert all(text[e.start:e.end] == e.text for e in entities)
    assert tagger.tag("\n \n") == [] and tagger.tag("") == []


def test_cli_offsets_in_jsonl_conll_and_brat(tag_model, tmp_path):
    lines = short_lines(30)
    source = tmp_path / "lines.txt"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    expected = per_line(Tagger(TagSettings(tag_model)), lines)
    result = run_hgner(["tag", "--model", str(tag_model), "--split", "lines", "--format", "jsonl", str(source)])
    assert result.returncode == 0, result.stderr
    (record,) = map(json.loads, result.stdout.splitlines())
    assert [(e["start"], e["end"], e["label"], e["text"]) for e in record["entities"]] == expected
    conll = run_hgner(["tag", "--model", str(tag_model), "--split", "lines", "--format", "conll", str(source)])
    assert conll.stdout.count("\n\n") == len(lines) and "-DOCSTART-" not in conll.stdout
    assert sum(line.split("\t")[1].startswith("B-") for line in conll.stdout.splitlines() if line) == len(expected)
    brat = run_hgner(["tag", "--model", str(tag_model), "--split", "lines", "--format", "brat", "-o",
                      str(tmp_path / "brat"), str(source)])
    assert brat.returncode == 0, brat.stderr
    annotations = [line.split("\t") for line in (tmp_path / "brat" / "lines.ann").read_text().splitlines()
                   if line.startswith("T")]
    text = (tmp_path / "brat" / "lines.txt").read_text()
    assert [(int(a), int(b), label, shown) for _, spans, shown in annotations
            for label, a, b in [spans.split(" ")]] == expected
    assert all(text[int(spans.split(" ")[1]):int(spans.split(" ")[2])] == shown for _, spans, shown in annotations)


def test_a_bad_split_names_the_field(tag_model):
    with pytest.raises(HgnerError, match="split: expected one of none, lines, got 'words'"):
        TagSettings(tag_model, split="words")
    result = run_hgner(["tag", "--model", str(tag_model), "--split", "words", "x"])
    assert result.returncode == 2 and "--split" in result.stderr


def test_spacy_component_splits_a_doc_into_lines(tag_model):
    spacy = pytest.importorskip("spacy")
    from hgner.text.tokenizer import make_tokenizer

    lines = short_lines(40)
    text = "\n".join(lines)
    nlp = spacy.blank("en")
    nlp.tokenizer = make_tokenizer(nlp)
    nlp.add_pipe("hgner", config={"model": str(tag_model), "split": "lines"})
    doc = nlp(text)
    expected = per_line(Tagger(TagSettings(tag_model)), lines)
    assert [(e.start_char, e.end_char, e.label_, e.text) for e in doc.ents] == expected


def test_looks_like_lines():
    lines = short_lines(30)
    assert splitting.looks_like_lines("\n".join(lines))
    assert not splitting.looks_like_lines("\n".join(lines[:10]))  # too few lines to tell
    assert not splitting.looks_like_lines("\n\n".join(lines))  # paragraphs
    assert not splitting.looks_like_lines("\n".join(line.lower() for line in lines))  # wrapped prose goes on in lower case
    assert not splitting.looks_like_lines("\n".join(line * 20 for line in lines))  # long lines


def test_the_hint_once_per_run(tag_model, tmp_path):
    files = []
    for name in ("a.txt", "b.txt"):
        files.append(tmp_path / name)
        files[-1].write_text("\n".join(short_lines(30)) + "\n", encoding="utf-8")
    result = run_hgner(["tag", "--model", str(tag_model), *map(str, files)])
    assert result.returncode == 0 and result.stderr.count("hint") == 1, result.stderr
    assert "hgner tag: hint: a.txt has many short lines" in result.stderr and "--split lines" in result.stderr
    split = run_hgner(["tag", "--model", str(tag_model), "--split", "lines", *map(str, files)])
    assert split.returncode == 0 and "hint" not in split.stderr


def test_the_api_takes_split(tag_model):
    import hgner

    lines = short_lines(20)
    text = "\n".join(lines)
    tagger = hgner.load(str(tag_model), split="lines")
    assert [(e.start, e.end, e.label, e.text) for e in tagger.tag(text)] == per_line(hgner.load(str(tag_model)), lines)
    assert [len(entities) for entities in tagger.pipe([text, lines[0]], batch_size=3)] == \
        [len(tagger.tag(text)), len(tagger.tag(lines[0]))]
