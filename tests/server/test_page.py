"""The page at / in a real browser (Debian's chromium driven by Playwright): tag a text, see the
highlighted entities and the compare view, and see a text and a label carrying <script> as text."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("fastapi", reason="hgner serve needs the serve extra (pip install 'hgner[serve]')")
sync_api = pytest.importorskip("playwright.sync_api", reason="the browser tests need Playwright (pip install playwright)")

from server_support import CHROMIUM_ARGS, chromium, running_server  # noqa: E402

TEXT = "Peter Blackburn met Angela Merkel in Paris . Blackburn left ."
SCRIPT = "<script>window.injected = 1</script>"


@pytest.fixture(scope="module")
def page():
    executable = chromium()
    if executable is None:
        pytest.skip("no browser: install Debian's chromium (apt-get install -y chromium)")
    with running_server() as (_, url), sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        tab = browser.new_page(bypass_csp=True)  # the page's escaping is tested, not its Content-Security-Policy
        errors: list[str] = []
        tab.on("pageerror", lambda error: errors.append(str(error)))
        tab.goto(url + "/")
        tab.wait_for_selector("#decoders input")
        yield tab
        browser.close()
        assert not errors, errors


def run(page, button: str, text: str) -> None:
    page.fill("#text", text)
    page.click(button)
    page.wait_for_function("document.querySelector('#status').textContent.match(/decoders? on|found|Error|no tokens/)")


def test_tag_highlights_the_entities(page):
    page.select_option("#graph", "chain")
    for other in ("exact", "gibbs", "herded"):
        page.uncheck(f"#decoder-{other}")
    run(page, "#tag", TEXT)
    for other in ("exact", "gibbs", "herded"):
        page.check(f"#decoder-{other}")
    assert page.locator(".column").get_attribute("data-decoder") == "viterbi"
    marks = page.locator(".column mark.entity")
    found = [(marks.nth(i).get_attribute("data-label"), marks.nth(i).locator(".token").all_inner_texts())
             for i in range(marks.count())]
    assert ("PER", ["Angela", "Merkel"]) in found and ("LOC", ["Paris"]) in found
    page.hover(".column .token >> nth=4")
    assert "Merkel" in page.inner_text("#details") and "I-PER" in page.inner_text("#details")


def test_ctrl_enter_compares(page):
    page.fill("#text", "Angela Merkel visited Paris .")
    page.focus("#text")
    page.keyboard.press("Control+Enter")
    page.wait_for_function("document.querySelector('#status').textContent.match(/decoders on|Error/)")
    assert page.locator(".column").count() == 4


def test_a_dropped_file_becomes_the_text(page):
    transfer = page.evaluate_handle("""() => { const transfer = new DataTransfer();
        transfer.items.add(new File(['Jim Smith flew to Tokyo .'], 'news.txt', {type: 'text/plain'}));
        return transfer; }""")
    page.dispatch_event("#text", "drop", {"dataTransfer": transfer})
    page.wait_for_function("document.querySelector('#text').value.startsWith('Jim Smith')")
    assert "news.txt" in page.inner_text("#status")


def test_compare_view_marks_differences_and_shows_marginals(page):
    page.select_option("#graph", "skip")
    run(page, "#compare", TEXT)
    columns = page.locator(".column")
    assert [columns.nth(i).get_attribute("data-decoder") for i in range(columns.count())] == \
        ["exact", "gibbs", "herded", "viterbi"]
    assert "certified optimum" in page.inner_text(".column >> nth=0")
    viterbi = page.locator('.column[data-decoder="viterbi"]')
    exact = page.locator('.column[data-decoder="exact"]')
    # the skip edge makes the second Blackburn a person, as the first; Viterbi on the chain may differ
    assert exact.locator("mark.entity").count() >= 3
    differing = page.locator("mark.differs").count()
    labels = lambda column: column.locator("mark.entity").evaluate_all(  # noqa: E731
        "marks => marks.map(m => m.textContent)")
    assert (differing > 0) == (labels(viterbi) != labels(exact))
    viterbi.locator(".text").focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert "Blackburn" in page.inner_text("#details .token-text")
    slider = page.locator("#confidence")
    exact_differing = exact.locator("mark.differs").count()
    slider.fill("1")
    assert page.locator('.column[data-decoder="viterbi"] mark.entity').count() == 0
    assert page.locator('.column[data-decoder="exact"] mark.entity').count() >= 3  # no confidences: kept
    assert exact.locator("mark.differs").count() == exact_differing  # hiding an entity is not a difference
    slider.fill("0")


def test_script_in_a_text_and_in_a_label_shows_as_text(page):
    run(page, "#compare", f"{SCRIPT} \N{ROCKET} Angela Merkel visited Paris .")  # offsets count code points
    assert SCRIPT in page.inner_text('.column[data-decoder="viterbi"] .text')
    marks = page.locator('.column[data-decoder="viterbi"] mark.entity .token')
    assert marks.all_inner_texts() == ["Angela", "Merkel", "Paris"]
    assert page.evaluate("window.injected") is None
    assert page.locator("#results script").count() == 0

    def hostile_labels(route) -> None:  # a model whose labels carry markup
        answer = route.fetch().json()
        for result in answer["results"]:
            for entity in result["entities"]:
                entity["label"] = SCRIPT
        route.fulfill(status=200, content_type="application/json", body=json.dumps(answer))

    page.route("**/v1/compare", hostile_labels)
    try:
        run(page, "#compare", "Angela Merkel visited Paris .")
    finally:
        page.unroute("**/v1/compare")
    label = page.locator(".column mark.entity .label").first
    assert label.inner_text() == SCRIPT
    assert page.evaluate("window.injected") is None
    assert page.locator("#results script").count() == 0


def test_a_field_out_of_range_and_a_blank_text_are_said_in_the_status(page):
    page.fill("#sweeps", "0")
    page.click("#compare")  # the browser refuses to submit: the status says which field
    assert page.inner_text("#status").startswith("Sweeps:")
    assert "error" in page.get_attribute("#status", "class")
    page.fill("#sweeps", "200")
    run(page, "#compare", "   ")
    assert page.inner_text("#status") == "The text has no tokens: type, paste or drop a text."


def test_a_long_text_scrolls_inside_each_column(page):
    run(page, "#compare", "Peter Blackburn , the Commission spokesman , said in Brussels . " * 60)
    column = page.locator('.column[data-decoder="exact"] .text')
    height, scrolled, viewport = column.evaluate(
        "node => [node.clientHeight, node.scrollHeight, window.innerHeight]")
    assert height <= 0.75 * viewport < scrolled  # not a page as long as every column's copy of the text
    assert page.evaluate("document.documentElement.scrollHeight") < 4 * viewport
    column.focus()
    page.keyboard.press("End")  # the last token is scrolled into view
    assert column.evaluate("node => node.scrollTop") > 0


def test_one_request_at_a_time_and_an_error_clears_the_results(page):
    run(page, "#compare", TEXT)
    assert page.locator(".column").count() == 4
    held = []
    page.route("**/v1/compare", lambda route: held.append(route))  # answered below, when the test says
    try:
        page.fill("#text", "Angela Merkel visited Paris .")
        page.click("#compare")
        page.wait_for_function("document.querySelector('#compare').disabled")
        assert page.is_disabled("#tag") and page.get_attribute("#results", "aria-busy") == "true"
        page.keyboard.press("Control+Enter")  # ignored while the request runs
        assert len(held) == 1
        held[0].abort("connectionrefused")  # the server is gone
        page.wait_for_function("document.querySelector('#status').textContent.startsWith('Error')")
    finally:
        page.unroute("**/v1/compare")
    assert page.inner_text("#status") == "Error: cannot reach the server (is hgner serve still running?)"
    assert page.locator(".column").count() == 0 and not page.is_disabled("#compare")  # no results of the old text
    page.route("**/v1/compare", lambda route: route.fulfill(status=200, content_type="text/html", body="<p>login</p>"))
    try:
        run(page, "#compare", TEXT)
    finally:
        page.unroute("**/v1/compare")
    assert page.inner_text("#status") == "Error: an answer from the server that is not JSON"


def test_the_page_waits_for_a_server_that_is_starting(page):
    context = page.context.browser.new_context(bypass_csp=True)
    tab = context.new_page()
    refused = []

    def not_ready_once(route) -> None:
        if refused:
            route.continue_()
        else:
            refused.append(route.request.url)
            route.fulfill(status=503, content_type="application/json",
                          body=json.dumps({"error": {"status": 503, "code": "not_ready", "message": "loading"}}))

    tab.route("**/v1/models", not_ready_once)
    tab.goto(page.url)
    tab.wait_for_selector("#decoders input", timeout=20_000)  # asked again a few seconds later
    assert refused and tab.locator("#model option").count() >= 1
    assert tab.inner_text("#status").startswith("Ready")
    context.close()


def test_first_view_is_the_default_and_a_huge_seed_is_refused(page):
    page.goto(page.url)
    page.wait_for_selector("#decoders input")
    page.wait_for_function("document.querySelector('#model').value !== ''")
    assert (page.input_value("#model"), page.input_value("#graph")) == ("en-conll03", "chain")
    page.evaluate("document.querySelector('#seed').removeAttribute('max')")  # the script's own check, too
    for seed in ("9007199254740993", "9007199254740992"):
        page.fill("#seed", seed)
        run(page, "#compare", TEXT)
        assert "Seed" in page.inner_text("#status") and "cannot send" in page.inner_text("#status")
    page.fill("#seed", "0")
