"""The report page in a real browser: headless Chromium through Selenium loads it without console
errors and shows every section, the failing graph and the layout picture drawn.

Chromium and its driver are the distribution's packages (Debian: ``chromium``, ``chromium-driver``;
``.ci/run`` installs them), driven at fixed paths so Selenium never looks for a driver on the network.
Without them the tests skip locally and fail under CI (``CI`` set): CI must really run them.
"""
from __future__ import annotations

import os

import attrs
import pytest

from zcspec.checks.campaign import Tally
from zcspec.checks.exhaustive import Failure, all_graphs
from zcspec.checks.report_page import SECTIONS, CorpusEntry, ProofRow, exhaustive_report, render_html
from zcspec.checks.scenario import Scenario
from zcspec.impl.compiler.options import CompileOptions
from zcspec.spec.registry import all_invariants

try:   # the test extra of pyproject.toml
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
except ImportError:
    webdriver = None

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


def _missing() -> str:
    if webdriver is None:
        return "selenium is not installed (pip install '.[test]')"
    absent = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]
    return f"{' and '.join(absent)} missing (apt-get install chromium chromium-driver)" if absent else ""


@pytest.fixture(scope="module")
def browser():
    if why := _missing():
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser test: {why}")
        pytest.skip(why)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1280,1024"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def _page_with_everything() -> str:
    """A page with content in every section: an exhaustive run's planted plan violation (graph and layout
    drawn), a crash, and proofs, corpus entries and notes added by hand."""
    graph = min(all_graphs(2, ops=("Relu",), max_inputs=1, max_extra_outputs=0), key=lambda g: len(g.nodes))
    culprit = f"tensor '{graph.nodes[1].outputs[0]}'"
    failures = [Failure(Scenario("plan", graph, CompileOptions()), "LAYOUT-NO-OVERLAP", culprit,
                        "overlaps <b>x</b> & y", {"steps": [1]}),
                Failure(Scenario("plan", graph, CompileOptions()), None, graph.name, "RuntimeError: boom")]
    report = exhaustive_report(Tally(keyed=False), failures, all_invariants(), 3, 0.5)
    return render_html(attrs.evolve(report, proofs=[ProofRow("case", "unknown", "PROOF-LAYOUT", "timeout")],
                                    corpus=[CorpusEntry("LAYOUT-NO-OVERLAP on a plan", True)], notes=["a note"]))


def _load(driver, tmp_path, html: str, name: str) -> list:
    """Load ``html`` from a file:// URL; the browser log entries that the load produced."""
    path = tmp_path / name
    path.write_text(html, encoding="utf-8")
    driver.get_log("browser")   # drop what an earlier page logged
    driver.get(path.as_uri())
    return driver.get_log("browser")


def test_the_page_loads_without_console_errors_and_shows_every_section(browser, tmp_path):
    log = _load(browser, tmp_path, _page_with_everything(), "report.html")
    assert [e for e in log if e["level"] == "SEVERE"] == []
    for id_ in SECTIONS:
        section = browser.find_element(By.ID, id_)
        assert section.is_displayed() and section.text.strip(), id_
    pictures = browser.find_elements(By.CSS_SELECTOR, "#violations svg")
    assert len(pictures) == 2 and all(p.is_displayed() and p.size["height"] > 50 for p in pictures)
    boxes = browser.find_elements(By.CSS_SELECTOR, "#violations svg.graph g.node")
    assert [b.text for b in boxes][:1] == ["in0: Data"] and len(boxes) == 3
    assert "overlaps <b>x</b> & y" in browser.find_element(By.ID, "violations").text   # shown as text, not markup
    assert "RuntimeError: boom" in browser.find_element(By.ID, "crashes").text
    assert "relu_1:0: zero_copy+" in browser.find_element(By.CSS_SELECTOR, "#violations pre").text   # its plan row


def test_an_empty_run_still_shows_every_section(browser, tmp_path):
    log = _load(browser, tmp_path, render_html(exhaustive_report(Tally(keyed=False), [], [], 0, 0.0)), "empty.html")
    assert [e for e in log if e["level"] == "SEVERE"] == []
    assert browser.find_element(By.ID, "violations").text.endswith("no violations")
    assert all(browser.find_element(By.ID, i).is_displayed() for i in SECTIONS)


def test_the_console_check_sees_an_error(browser, tmp_path):
    """The log check is not vacuous: a page that logs an error is caught (the real page has no script)."""
    html = _page_with_everything().replace("</body>", "<script>console.error('planted error')</script></body>")
    log = _load(browser, tmp_path, html, "planted.html")
    assert any(e["level"] == "SEVERE" and "planted error" in e["message"] for e in log)
