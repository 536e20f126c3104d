"""The annotation page at /annotate in a real browser (Debian's chromium driven by Playwright):
three sentences corrected with the keyboard only, still saved after a reload, each key's effect
in the page within 50 ms, and no accepted sentence lost when the server is killed mid-queue."""

from __future__ import annotations

import os
import signal

import pytest

pytest.importorskip("fastapi", reason="hgner serve needs the serve extra (pip install 'hgner[serve]')")
sync_api = pytest.importorskip("playwright.sync_api", reason="the browser tests need Playwright (pip install playwright)")

from server_support import CHROMIUM_ARGS, chromium, running_server  # noqa: E402
from test_annotate import SENTENCES, conll  # noqa: E402

from hgner.data.corpus import read_conll  # noqa: E402

KEY_MS = 50  # the target: a key's effect in the page within 50 ms
# from the key press (a capturing listener, first to run) to the first change of the page after it
TIMING = """() => {
  window.keyTimes = [];
  let pressed = null;
  window.addEventListener("keydown", () => { pressed = performance.now(); }, true);
  new MutationObserver(() => {
    if (pressed !== null) { window.keyTimes.push(performance.now() - pressed); pressed = null; }
  }).observe(document.querySelector("main"), {subtree: true, childList: true, attributes: true, characterData: true});
}"""

# from the key press to the sentence's change (the server's answer drawn)
SENTENCE_TIMING = """() => {
  let pressed = null;
  window.addEventListener("keydown", () => { pressed = performance.now(); }, true);
  new MutationObserver((changes, observer) => {
    document.body.dataset.sentenceMs = String(performance.now() - pressed);
    observer.disconnect();
  }).observe(document.querySelector("#sentence"), {subtree: true, childList: true});
}"""


@pytest.fixture(scope="module")
def browser():
    executable = chromium()
    if executable is None:
        pytest.skip("no browser: install Debian's chromium (apt-get install -y chromium)")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def open_page(browser, url: str):
    tab = browser.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.goto(url + "/annotate")
    tab.wait_for_selector("#sentence .token")
    tab.evaluate(TIMING)
    return tab, errors


def press(tab, *keys: str) -> None:
    for key in keys:
        tab.keyboard.press(key)


def settled(tab) -> None:
    """Every decision sent has its answer."""
    tab.locator("#sentence[aria-busy='false']").wait_for()


def entities(tab) -> list[tuple[str, list[str]]]:
    marks = tab.locator("#sentence mark.entity")
    return [(marks.nth(i).get_attribute("data-label"), marks.nth(i).locator(".token").all_inner_texts())
            for i in range(marks.count())]


def test_three_sentences_with_the_keyboard_only_survive_a_reload(browser, tmp_path):
    queue, saved = tmp_path / "queue.conll", tmp_path / "annotations.conll"
    queue.write_text(conll(SENTENCES))
    with running_server("--annotate", str(queue), "--annotations", str(saved)) as (_, url):
        tab, errors = open_page(browser, url)
        assert entities(tab) == [("PER", ["Peter", "Blackburn"]), ("LOC", ["Paris"])]
        assert "1 p PER" in tab.inner_text("#types").replace("\n", " ")
        press(tab, "End", "ArrowLeft", "o")  # Paris: one token of an entity, retyped
        assert entities(tab)[1] == ("ORG", ["Paris"])
        press(tab, "Enter")
        assert tab.inner_text("#progress").startswith("Sentence 2 of 4 · 1 accepted")
        press(tab, "Home", "Backspace")  # EU deleted, back (u), deleted, back (Ctrl+Z), deleted
        assert entities(tab) == [("MISC", ["German"])]
        press(tab, "u")
        assert entities(tab)[0] == ("ORG", ["EU"])
        press(tab, "Backspace", "Control+z", "x")
        assert entities(tab)[0] == ("ORG", ["EU"])
        assert tab.inner_text("#status").startswith('No type on key "x"')
        press(tab, "Backspace", "Enter")
        press(tab, "Home", "Shift+ArrowRight", "1", "End", "ArrowLeft", "3", "Enter")  # John Smith, IBM
        settled(tab)
        assert tab.inner_text("#progress").startswith("Sentence 4 of 4 · 3 accepted")
        timings = tab.evaluate("window.keyTimes")
        print(f"key to page change, ms: n={len(timings)} max={max(timings):.1f} "
              f"median={sorted(timings)[len(timings) // 2]:.1f}")
        assert len(timings) >= 15 and max(timings) < KEY_MS
        tab.reload()
        tab.wait_for_selector("#sentence .token")
        assert tab.inner_text("#sentence").startswith("Angela")
        assert tab.inner_text("#progress").startswith("Sentence 4 of 4 · 3 accepted · 0 skipped")
        tab.evaluate(SENTENCE_TIMING)
        press(tab, "u")  # no change to take back: the last accept, shown at once, then taken back by the server
        tab.locator("body[data-sentence-ms]").wait_for()
        undo_ms = float(tab.get_attribute("body", "data-sentence-ms"))
        print(f"u taking back an accept, ms: {undo_ms:.1f}")
        assert tab.inner_text("#sentence").startswith("John") and undo_ms < KEY_MS
        assert entities(tab) == [("PER", ["John", "Smith"]), ("ORG", ["IBM"])]  # as accepted
        settled(tab)
        assert tab.inner_text("#progress").startswith("Sentence 3 of 4 · 2 accepted")
        assert len(read_conll(saved).sentences) == 2
        press(tab, "Enter")
        settled(tab)
        assert not errors, errors
    kept = read_conll(saved).sentences
    assert [s.tags for s in kept] == [["B-PER", "I-PER", "O", "O", "B-ORG", "O"], ["O", "O", "B-MISC", "O", "O"],
                                      ["B-PER", "I-PER", "O", "O", "B-ORG", "O"]]


def test_a_killed_server_loses_no_sentence_the_page_accepted(browser, tmp_path):
    queue, saved = tmp_path / "queue.conll", tmp_path / "annotations.conll"
    queue.write_text(conll(SENTENCES))
    with running_server("--annotate", str(queue), "--annotations", str(saved)) as (process, url):
        tab, _ = open_page(browser, url)
        tab.click("#sentence .token >> text=went")  # the mouse too: click, shift+click, then a key
        tab.click("#sentence .token >> text=to", modifiers=["Shift"])
        press(tab, "m")
        assert entities(tab)[1] == ("MISC", ["went", "to"])
        press(tab, "Enter", "s", "Enter")  # faster than the answers: the page is ahead of the server
        settled(tab)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        press(tab, "Enter")  # the server is gone: the sentence comes back, with the error
        tab.locator("#status.error").wait_for()
        assert "cannot reach the server" in tab.inner_text("#status")
        assert tab.inner_text("#sentence").startswith("Angela")
        tab.close()
    kept = read_conll(saved).sentences
    assert [s.tokens[0] for s in kept] == ["Peter", "John"]
    assert kept[0].tags == ["B-PER", "I-PER", "B-MISC", "I-MISC", "B-LOC", "O"]
    with running_server("--annotate", str(queue), "--annotations", str(saved)) as (_, url):
        tab, errors = open_page(browser, url)  # the skipped sentence, then the one the dead server never got
        assert tab.inner_text("#sentence").startswith("EU")
        assert tab.inner_text("#progress").startswith("Sentence 3 of 4 · 0 accepted · 0 skipped · 2 annotated before")
        assert not errors, errors
