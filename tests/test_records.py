"""JSONL and CSV files as records, one document each, outside ``--cluster`` too (issue 62): the
text field, the record's id kept, and a JSONL record with a key given twice refused with
``FILE:LINE`` (in cluster mode too)."""

from __future__ import annotations

import json

import pytest
from tag_support import run_hgner, tag_model  # noqa: F401  (fixture)

from hgner.core.errors import HgnerError
from hgner.tagging.inputs import resolve_inputs
from hgner.tagging.records import read_csv, read_jsonl


def test_jsonl_records_are_documents_with_their_ids(tag_model, tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text('{"id": 7, "text": "Angela Merkel works for United Nations ."}\n\n'
                      '{"body": "x", "text": "Jim Smith flew to Tokyo ."}\n', encoding="utf-8")
    result = run_hgner(["tag", "--model", str(tag_model), "--format", "jsonl", str(source)])
    assert result.returncode == 0, result.stderr
    first, second = map(json.loads, result.stdout.splitlines())
    assert first["id"] == 7 and first["source"] == f"{source}:1" and first["text"].startswith("Angela")
    assert "id" not in second and second["source"] == f"{source}:3"
    assert {e["text"] for e in first["entities"]} >= {"Angela Merkel"}
    inline = run_hgner(["tag", "--model", str(tag_model), str(source)])
    assert "{" not in inline.stdout and "[Jim Smith](PER)" in inline.stdout


def test_csv_records_with_a_text_field(tag_model, tmp_path):
    source = tmp_path / "in.csv"
    source.write_text('id,body\n1,"Angela Merkel\nworks for United Nations ."\n\n2,Jim Smith flew to Tokyo .\n',
                      encoding="utf-8")
    assert [(r.source, r.id) for r in read_csv(str(source), "body")] == [(f"{source}:2", "1"), (f"{source}:5", "2")]
    result = run_hgner(["tag", "--model", str(tag_model), "--format", "jsonl", "--text-field", "body", str(source)])
    assert result.returncode == 0, result.stderr
    records = list(map(json.loads, result.stdout.splitlines()))
    assert [r["id"] for r in records] == ["1", "2"] and records[1]["entities"][0]["text"] == "Jim Smith"
    missing = run_hgner(["tag", "--model", str(tag_model), str(source)])
    assert missing.returncode == 2 and f"{source}:1: expected a header row with a column 'text'" in missing.stderr
    assert "--text-field" in missing.stderr


@pytest.mark.parametrize(("content", "message"), [
    ('{"text": "a"}\n{"text": "b", "text": "c"}\n', ":2: not a JSON line (key 'text' appears twice in one object)"),
    ('{"text": "a", "meta": {"k": 1, "k": 2}}\n', ":1: not a JSON line (key 'k' appears twice in one object)"),
    ('{"text": 3}\n', ":1: expected an object with a text field 'text', got int"),
    ("not json\n", ":1: not a JSON line"),
])
def test_bad_jsonl_records_name_file_and_line(tmp_path, content, message):
    source = tmp_path / "bad.jsonl"
    source.write_text(content, encoding="utf-8")
    with pytest.raises(HgnerError, match=None) as error:
        list(read_jsonl(str(source)))
    assert str(error.value).startswith(f"{source}{message}")
    with pytest.raises(HgnerError):
        resolve_inputs([str(source)])


def test_bad_csv_rows(tmp_path):
    source = tmp_path / "bad.csv"
    source.write_text("text,text\na,b\n", encoding="utf-8")
    with pytest.raises(HgnerError, match="bad.csv:1: column 'text' repeated"):
        list(read_csv(str(source)))
    source.write_text("text,id\na,1,extra\n", encoding="utf-8")
    with pytest.raises(HgnerError, match="bad.csv:2: 3 fields, but the header row names 2"):
        list(read_csv(str(source)))


def test_cluster_refuses_a_repeated_key(tag_model, tmp_path):
    pytest.importorskip("distributed")
    source = tmp_path / "in.jsonl"
    source.write_text('{"text": "Jim Smith flew .", "text": "again"}\n', encoding="utf-8")
    result = run_hgner(["tag", "--model", str(tag_model), "--cluster", "local:1", "--out", str(tmp_path / "out"),
                        str(source)])
    assert result.returncode == 2 and f"{source}:1: not a JSON line (key 'text' appears twice in one object)" in result.stderr


def test_a_missing_record_file_is_an_error_not_text():
    with pytest.raises(HgnerError, match="missing.jsonl: no such file"):
        resolve_inputs(["missing.jsonl"])
    with pytest.raises(HgnerError, match="missing.csv: no such file"):
        resolve_inputs(["missing.csv"])


def test_a_folders_record_files_are_records(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.jsonl").write_text('{"id": "x", "body": "Jim Smith flew ."}\n', encoding="utf-8")
    (tmp_path / "in" / "b.txt").write_text("Jim Smith flew .", encoding="utf-8")
    inputs = resolve_inputs([str(tmp_path / "in")], pattern="*.*", text_field="body")
    assert [(i.source, i.id, i.read()) for i in inputs] == [
        (f"{tmp_path / 'in' / 'a.jsonl'}:1", "x", "Jim Smith flew ."),
        (str(tmp_path / "in" / "b.txt"), None, "Jim Smith flew .")]


def test_output_never_overwrites_a_record_file(tag_model, tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text('{"text": "Jim Smith flew ."}\n', encoding="utf-8")
    result = run_hgner(["tag", "--model", str(tag_model), "--format", "jsonl", "-o", str(source), str(source)])
    assert result.returncode == 2 and "is also an input" in result.stderr
    assert source.read_text() == '{"text": "Jim Smith flew ."}\n'
