"""Every result figure of the README and the docs comes from committed JSON: the results pages are
rendered from docs/results/*.json and models/*/meta.json when the site is built
(docs/hooks/render.py), every committed result is rendered, and the hand-written pages (README.md,
docs/**/*.md but the research log, the lab notebook of past runs) hold no result tables or F1 figures of
their own."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("hgner_docs_render", ROOT / "docs" / "hooks" / "render.py")
render = sys.modules.setdefault("hgner_docs_render", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(render)

RESEARCH_LOG = ROOT / "docs" / "development" / "research-log.md"  # the lab's notebook: past runs' figures, as logged
HANDWRITTEN = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*.md") if p != RESEARCH_LOG)]
_FENCE = re.compile(r"^```.*?^```", re.M | re.S)
F1_LIKE = re.compile(r"(?<![\w.])\d{2}\.\d{2}(?![\w.])")  # 86.01, not 0.999 or 3.10


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return {uri: make() for uri, make in render.PAGES.items() if uri.startswith("results/")}


def test_every_committed_result_is_rendered(pages):
    text = "\n".join(pages.values())
    for path in sorted(render.RESULTS.glob("*.json")):
        assert path.name in render.LOADED and path.name in text, f"{path.name} is rendered on no results page"


@pytest.mark.parametrize("path", HANDWRITTEN, ids=[p.relative_to(ROOT).as_posix() for p in HANDWRITTEN])
def test_handwritten_pages_quote_no_results(path):
    prose = _FENCE.sub("", path.read_text(encoding="utf-8"))
    quoted = F1_LIKE.findall(prose)
    assert not quoted, f"{path.name} quotes {quoted}: render results from docs/results/*.json instead"


@pytest.mark.parametrize("name", ["table3-ieer", "table3-testb"])
def test_table3_page_shows_each_runs_f1(pages, name):
    report = render.load(name)
    viterbi = next(r for r in report["results"] if r["decoder"] == "viterbi")
    herded = [r for r in report["results"] if r["decoder"] == "herded"]
    assert f"| Viterbi | {viterbi['f1']:.2f} [{viterbi['decode_seconds']:.2f} s] |" in pages["results/table3.md"]
    for run in herded:
        assert f"{run['f1']:.2f} [{run['decode_seconds']:.2f} s]" in pages["results/table3.md"]


@pytest.mark.parametrize("name", ["skip-testb", "skip-ieer", "skip-start-testb", "skip-start-ieer"])
def test_skip_page_shows_exacts_f1_and_certificates(pages, name):
    report = render.load(name)
    (exact,) = [r for r in report["results"] if r["decoder"] == "exact"]
    certified = round(exact["certified_fraction"] * report["documents"])
    assert f"| exact | **{exact['f1']:.2f}** |" in pages["results/skip-chain.md"]
    assert f"({certified} of {report['documents']} certified)" in pages["results/skip-chain.md"]


def test_memory_page_shows_each_run(pages):
    for run in render.load("memory")["runs"]:
        assert f"| {run['command']} | {run['peak_rss_mb']:.0f} MB |" in pages["results/speed.md"]


@pytest.mark.parametrize("name", ["en-conll03", "en-3class", "es-conll02", "nl-conll02"])
def test_models_page_gives_meta_scores_and_the_size_hgner_models_prints(pages, name, capsys):
    from hgner.cli import main

    meta = json.loads((ROOT / "models" / name / "meta.json").read_text(encoding="utf-8"))
    section = pages["results/models.md"].split(f"## `{name}`\n", 1)[1].split("\n## ", 1)[0]
    scored = [(f"{corpus} ({kind})", figure) for kind in ("dev", "test") for corpus, figure in meta["scores"][kind].items()]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "**" in line]
    assert len(rows) == len(scored)
    for row, (corpus, figure) in zip(rows, scored):
        assert row.startswith(f"| {corpus} |") and f"**{figure['f1']:.2f}**" in row
    assert main(["models"]) == 0
    (listed,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith(f"{name} ")]
    size = re.search(r"; ([\d.]+ MB); trained on", section).group(1)
    assert f"  {size}  " in listed
