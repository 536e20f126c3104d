"""The user guide reads in paragraphs of at most 150 words (issue 61), code blocks and tables aside,
and sends tuning history to the research log rather than telling it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["guide/data.md", "guide/tagging.md", "guide/python.md", "guide/decoders.md", "guide/skip-chain.md",
         "guide/training.md", "guide/scoring.md", "guide/models.md", "guide/spacy.md", "guide/scaling.md",
         "guide/adapting.md", "serve.md", "index.md"]
MOST_WORDS = 150
_FENCE = re.compile(r"^ *```.*?^ *```", re.M | re.S)
_ITEM = re.compile(r"^ *(?:[*+-]|\d+\.) ", re.M)  # a list item starts a paragraph of its own


def paragraphs(text: str) -> list[str]:
    """The prose paragraphs of a Markdown page: blocks between blank lines and list items, without code
    blocks, tables, headings and admonition titles."""
    found = []
    for block in re.split(r"\n\s*\n", _FENCE.sub("", text)):
        for part in _ITEM.split(block):
            lines = [line for line in part.splitlines()
                     if line.strip() and not line.lstrip().startswith(("|", "#", "!!!", "???", "<"))]
            if lines:
                found.append(" ".join(lines))
    return found


@pytest.mark.parametrize("page", PAGES)
def test_guide_paragraphs_are_short(page):
    long = [(len(p.split()), p[:80]) for p in paragraphs((ROOT / "docs" / page).read_text(encoding="utf-8"))
            if len(p.split()) > MOST_WORDS]
    assert not long, f"docs/{page}: paragraphs over {MOST_WORDS} words: {long}"


@pytest.mark.parametrize("page", PAGES)
def test_guide_pages_link_the_research_log_rather_than_name_files(page):
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    assert "TUNING" not in text and "`docs/development/research-log.md`" not in text


def test_paragraphs_leave_out_code_and_tables():
    text = "One two.\n\n```bash\nhgner tag x\n```\n\n| a | b |\n| --- | --- |\n\n* three four\n* five\n"
    assert paragraphs(text) == ["One two.", "three four", "five"]
