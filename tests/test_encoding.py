"""UTF-16 inputs (issue 62): read as UTF-8 they were NUL-filled text that tagged as nothing,
silently; now a one-line error names the file (or standard input) and how to convert it."""

from __future__ import annotations

import pytest
from tag_support import SENTENCE, run_hgner, tag_model  # noqa: F401  (fixture)

from hgner.core.errors import HgnerError
from hgner.tagging.encoding import decode_input, utf16_kind

TEXT = "Angela Merkel works for United Nations in Tokyo .\nJim Smith flew to Paris .\n"


@pytest.mark.parametrize(("raw", "kind"), [
    (TEXT.encode("utf-16-le"), "UTF-16LE"),
    (TEXT.encode("utf-16-be"), "UTF-16BE"),
    (TEXT.encode("utf-16"), "UTF-16LE"),  # (with its byte-order mark, little-endian here)
    ("\ufeff東京".encode("utf-16-le"), "UTF-16LE"),  # no NUL bytes to tell: the mark tells
    (TEXT.encode("utf-8"), None),
    ("Café Zwölftonstraße 東京 ✓".encode(), None),
    (b"a\x00b", None),  # a stray NUL is not UTF-16
    (b"", None),
])
def test_utf16_kind(raw, kind):
    assert utf16_kind(raw) == kind


def test_decode_input_refuses_utf16_naming_the_input():
    with pytest.raises(HgnerError, match=r"^in.txt: looks like UTF-16LE text; hgner reads UTF-8: convert it first, "
                                         r"e.g. iconv -f UTF-16LE -t UTF-8$"):
        decode_input(TEXT.encode("utf-16-le"), "in.txt")
    assert decode_input(TEXT.encode("utf-8-sig"), "in.txt") == TEXT


def test_cli_refuses_utf16_files_and_standard_input(tag_model, tmp_path):
    source = tmp_path / "in.txt"
    source.write_bytes(TEXT.encode("utf-16-le"))
    result = run_hgner(["tag", "--model", str(tag_model), str(source)])
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (f"hgner tag: error: {source}: looks like UTF-16LE text; hgner reads UTF-8: convert it "
                             "first, e.g. iconv -f UTF-16LE -t UTF-8\n")
    piped = run_hgner(["tag", "--model", str(tag_model)], input=TEXT.encode("utf-16-le").decode("latin-1"),
                      encoding="latin-1")
    assert piped.returncode == 2 and "error: standard input: looks like UTF-16LE text" in piped.stderr
    records = tmp_path / "in.jsonl"
    records.write_bytes(('{"text": "%s"}\n' % SENTENCE).encode("utf-16"))
    assert "looks like UTF-16LE" in run_hgner(["tag", "--model", str(tag_model), str(records)]).stderr
