"""The web UI as scripts and people meet it: the `/ask` endpoint through gradio_client,
concurrent chats, and a real headless chromium (evidence chips, escaping, no requests
leaving 127.0.0.1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

import pytest
from conftest import REPO, free_port
from gradio_client import Client
from gradio_client.exceptions import AppError

from assistant import Assistant, Settings, SettingsError
from assistant.settings import LLMSettings, UISettings
from ui.app import PAPER_COLUMNS, Handlers, login, start

# Gradio's queue calls pandas APIs that pandas 3 deprecates; nothing citeqa can change.
pytestmark = pytest.mark.filterwarnings("ignore::Warning:gradio.queueing")

ARTIFACTS = REPO / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
ANSWERED = [
    "which papers study neural collapse?",
    "how can LLM training be made memory-efficient?",
    "what are credal deep ensembles?",
    "how is image super-resolution quantized to low bits?",
]
HOSTILE_PAPER = {
    "title": "Markup injection in tokenizer pipelines",
    "authors": ["Eve <img src=x onerror=alert(1)>", "Mallory"],
    "venue": "SafeML 2024",
    "url": "javascript:alert(1)",
    "abstract": (
        "We study markup injection in tokenizer pipelines. Abstracts scraped from the web "
        "contain snippets such as <script>window.__pwned=1</script> and <b>bold</b> tags. "
        "We show that escaping markup before rendering prevents injection in tokenizer "
        "pipelines."
    ),
}


def _settings(data_dir: Path) -> Settings:
    return Settings(data_dir=data_dir, llm=LLMSettings(backend="extractive"))


@pytest.fixture(scope="module")
def app_url(seeded_dir) -> Iterator[str]:
    """The real app, in-process, over the seeded index (extractive answers)."""
    demo, url = start(_settings(seeded_dir), port=free_port())
    yield url
    demo.close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS
        )
        yield browser
        browser.close()


@dataclass
class Tab:
    """A browser page and what it did: every URL requested, every dialog opened."""

    page: object
    requested: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)


@pytest.fixture
def tab(browser) -> Iterator[Tab]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    tab = Tab(context.new_page())
    tab.page.on("request", lambda request: tab.requested.append(request.url))
    tab.page.on("websocket", lambda socket: tab.requested.append(socket.url))
    tab.page.on("dialog", lambda dialog: (tab.dialogs.append(dialog.message), dialog.dismiss()))
    yield tab
    context.close()


def _ask_in_browser(page, url: str, question: str) -> None:
    page.goto(url)
    box = page.locator("#cq-question textarea")
    box.fill(question)
    box.press("Enter")
    page.locator(".cq-answer, .cq-refusal, .cq-error").first.wait_for(timeout=60_000)


def _open_evidence(page, index: int = 0):
    """Click citation chip `index`; returns its popover, once visible."""
    page.locator(".cq-answer .cq-chip").nth(index).click()
    popover = page.locator(".cq-cite:focus-within .cq-pop")
    popover.wait_for(state="visible")
    return popover


def _check_answer_json(answer: dict) -> None:
    assert not answer["refused"], answer
    numbers = {citation["n"] for citation in answer["citations"]}
    assert answer["sentences"]
    for sentence in answer["sentences"]:
        assert sentence["citations"], sentence
        assert set(sentence["citations"]) <= numbers


def test_ask_endpoint_returns_a_cited_answer(app_url):
    answer = Client(app_url, verbose=False).predict(
        ANSWERED[0], "extractive", 5, "", "", "", api_name="/ask"
    )
    _check_answer_json(answer)
    assert answer["question"] == ANSWERED[0]


def test_ask_endpoint_reports_errors_as_one_sentence(app_url):
    with pytest.raises(AppError, match="question is empty"):
        Client(app_url, verbose=False).predict("   ", api_name="/ask")


def test_four_simultaneous_chats_all_succeed(app_url):
    def ask(question: str) -> dict:
        client = Client(app_url, verbose=False)
        return client.predict(question, "extractive", 5, "", "", "", api_name="/ask")

    with ThreadPoolExecutor(max_workers=len(ANSWERED)) as pool:
        answers = list(pool.map(ask, ANSWERED))
    for question, answer in zip(ANSWERED, answers, strict=True):
        assert answer["question"] == question
        _check_answer_json(answer)


@pytest.mark.browser
@pytest.mark.slow
def test_browser_chat_shows_evidence_from_the_abstract(app_url, tab, assistant):
    page = tab.page
    _ask_in_browser(page, app_url, ANSWERED[0])
    assert page.locator(".cq-answer .cq-chip").count() >= 1
    popover = _open_evidence(page)
    title = popover.locator(".cq-pop-title a").inner_text()
    highlighted = popover.locator("mark").inner_text()
    paper = next(p for p in assistant.papers() if p.display_title == title)
    assert highlighted.strip() and highlighted in paper.abstract
    assert page.locator(".cq-sources li").count() >= 1
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ui-evidence.png"))
    foreign = [url for url in tab.requested if urlparse(url).hostname != "127.0.0.1"]
    assert tab.requested and not foreign


@pytest.mark.browser
@pytest.mark.slow
def test_browser_shows_errors_and_refusals_as_messages(app_url, tab):
    page = tab.page
    _ask_in_browser(page, app_url, "what is the capital of France?")
    refusal = page.locator(".cq-refusal")
    assert "do not answer" in refusal.inner_text()
    assert refusal.locator("li").count() >= 1  # the closest papers
    page.locator("#cq-question textarea").press("Enter")
    error = page.locator(".cq-error")
    error.wait_for(timeout=30_000)
    assert "question is empty" in error.inner_text()
    assert "Traceback" not in page.content()


@pytest.mark.browser
@pytest.mark.slow
def test_browser_shows_markup_in_abstracts_as_text(tmp_path, tab):
    page = tab.page
    corpus = tmp_path / "hostile.jsonl"
    corpus.write_text(json.dumps(HOSTILE_PAPER) + "\n")
    settings = _settings(tmp_path / "data")
    Assistant(settings).ingest([corpus])
    demo, url = start(settings, port=free_port())
    try:
        _ask_in_browser(page, url, "How does markup injection affect tokenizer pipelines?")
        popover = _open_evidence(page)
        text = popover.inner_text()
        assert "<script>window.__pwned=1</script>" in text
        assert "<b>bold</b>" in text
        assert "<img src=x onerror=alert(1)>" in text
        assert popover.locator("b, script, img").count() == 0
        assert page.locator('a[href^="javascript"]').count() == 0
        assert page.evaluate("typeof window.__pwned") == "undefined"
        assert tab.dialogs == []
    finally:
        demo.close()


def test_papers_tab_shows_year_and_source_file(assistant):
    rows = Handlers(assistant).papers_table()
    assert len(rows) == 76
    columns = {name: index for index, name in enumerate(PAPER_COLUMNS)}
    galore = next(row for row in rows if row[columns["Title"]].startswith("GaLore"))
    assert galore[columns["Year"]] == "2024"
    assert galore[columns["Source"]] == "002_dd853e16227fe37a.txt"


def test_non_loopback_host_without_login_is_refused(tmp_path):
    settings = Settings(data_dir=tmp_path, ui=UISettings(host="0.0.0.0"))
    with pytest.raises(SettingsError, match="without a login"):
        start(settings)
    env = {**os.environ, "CITEQA_DATA_DIR": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-m", "assistant", "ui", "--host", "0.0.0.0", "--port", "9"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 1
    assert "ui.username and ui.password" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_configured_login_is_required_on_any_host():
    ui = UISettings(host="0.0.0.0", username="ada", password="s3cret")
    assert login(ui, "0.0.0.0") == ("ada", "s3cret")
    assert login(UISettings(), "127.0.0.1") is None
