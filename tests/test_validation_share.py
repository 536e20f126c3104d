"""The fast check of the word tables (``check_string_table``) agrees with ``jsonschema`` on the
capitalised-share table's schema (``"C U"`` keys, two percentages, mapped to lists of words)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hgner.core.errors import ModelError
from hgner.core.validation import check, check_string_table

KEYS = st.one_of(st.text(max_size=8), st.builds(lambda c, u: f"{c} {u}", st.integers(-2, 102), st.integers(-2, 102)),
                 st.sampled_from(["01 5", "5  5", "5 5\n", " 5 5", "100 100", "0 0"]))
VALUES = st.one_of(st.lists(st.one_of(st.text(max_size=3), st.integers()), max_size=3), st.text(max_size=3), st.none())


@settings(max_examples=300, deadline=None)
@given(table=st.one_of(st.dictionaries(KEYS, VALUES, max_size=4), st.lists(st.integers(), max_size=2), st.none()))
def test_fast_check_agrees_with_jsonschema_on_the_capitalised_share_schema(table):
    def verdict(function):
        try:
            function(table, "capitalised_share", "t.json")
        except ModelError:
            return False
        return True

    assert verdict(check_string_table) == verdict(check)
