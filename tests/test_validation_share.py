"""The fast reading of the capitalised-share table (``capitalised_share.json``: lowercase words mapped
to two percentages) agrees with its JSON schema, whichever reader takes it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hgner.errors import ModelError
from hgner.validation import check, check_share_table, read_share_table

VALUES = st.one_of(st.lists(st.one_of(st.integers(-2, 102), st.booleans(), st.floats(0, 100), st.text(max_size=2)),
                            max_size=3), st.integers(), st.text(max_size=3), st.none())
TABLES = st.one_of(st.dictionaries(st.text(max_size=4), VALUES, max_size=4), st.lists(st.integers(), max_size=2),
                   st.none())


def verdict(function, *arguments):
    try:
        function(*arguments)
    except ModelError:
        return False
    return True


@settings(max_examples=300, deadline=None)
@given(table=TABLES)
def test_fast_share_table_check_agrees_with_jsonschema(table):
    assert verdict(check_share_table, table, "capitalised_share", "t.json") == verdict(
        check, table, "capitalised_share", "t.json")


@settings(max_examples=200, deadline=None)
@given(table=TABLES)
def test_reading_a_share_table_file_agrees_with_jsonschema(table, tmp_path_factory):
    import json

    path = tmp_path_factory.mktemp("share") / "capitalised_share.json"
    path.write_text(json.dumps(table), encoding="utf-8")
    accepted = verdict(check, table, "capitalised_share", path)
    assert verdict(read_share_table, path, "capitalised_share") == accepted
    if accepted:
        assert read_share_table(path, "capitalised_share") == table
