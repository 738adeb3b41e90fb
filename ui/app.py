"""The citeqa web UI: a Gradio chat whose citation chips open the supporting evidence.

Every piece of corpus text and model output placed in HTML here goes through `_esc`;
the chat is also sanitised by Gradio, but the sources panel is not. The chat's messages are
HTML (not Markdown); Gradio's bundled KaTeX then renders the `$...$` math they contain,
which is why chat text loses only its LaTeX text markup (`markdown_text`) while the
sources panel, which renders no math, shows plain text (`plain_text`).
"""

from __future__ import annotations

import html
import inspect
import ipaddress
import logging
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import gradio as gr

from assistant import (
    Assistant,
    CiteqaError,
    Paper,
    QuestionError,
    Settings,
    SettingsError,
    load_settings,
)
from assistant.answer import Answer, AnswerSentence, Citation, read_as
from assistant.answering.passages import is_instruction
from assistant.backends import BACKEND_NAMES
from assistant.display import markdown_text, plain_text
from assistant.retrieval import Hit
from assistant.settings import MAX_K, UISettings
from assistant.text import sentence_spans

log = logging.getLogger(__name__)

CSS_PATH = Path(__file__).with_name("style.css")
EVIDENCE_JS = Path(__file__).with_name("evidence.js").read_text(encoding="utf-8")
# Chats answered at once; the local model serialises its own generation.
CONCURRENCY = 8
ASK_API = "ask"
THEME = gr.themes.Soft(
    primary_hue="indigo",
    font=["system-ui", "Segoe UI", "Roboto", "Helvetica Neue", "Arial", "sans-serif"],
    font_mono=["ui-monospace", "SFMono-Regular", "Menlo", "Consolas", "monospace"],
)
PAPER_COLUMNS = ["Title", "Authors", "Venue", "Year", "Area", "Source"]
# Math the chat's KaTeX renders ("$$" before "$", so that display math is found first).
LATEX_DELIMITERS = [
    {"left": "$$", "right": "$$", "display": True},
    {"left": "$", "right": "$", "display": False},
    {"left": "\\(", "right": "\\)", "display": False},
    {"left": "\\[", "right": "\\]", "display": True},
]
INSTRUCTION_TITLE = "addresses a model or reader; never used as evidence"
STYLE = {"theme": THEME, "css_paths": CSS_PATH, "js": EVIDENCE_JS}


def _esc(text: str | None) -> str:
    return html.escape(text or "")


def _chat_text(text: str) -> str:
    """Corpus text or model output for the chat: escaped, LaTeX text markup removed, math
    kept for KaTeX."""
    return _esc(markdown_text(text))


def _link(title: str, url: str | None) -> str:
    """The escaped title, linked when `url` is http(s) (never `javascript:` and the like)."""
    if not url or not url.lower().startswith(("https://", "http://")):
        return _esc(title)
    return f'<a href="{_esc(url)}" target="_blank" rel="noopener noreferrer">{_esc(title)}</a>'


def _region(abstract: str, start: int, end: int, instructions: list[tuple[int, int]]) -> str:
    """`abstract[start:end]` for the chat, its parts that are `instructions` marked apart."""
    cuts = sorted(
        {start, end, *(cut for span in instructions for cut in span if start < cut < end)}
    )
    pieces = []
    for piece_start, piece_end in pairwise(cuts):
        text = _chat_text(abstract[piece_start:piece_end])
        if any(first <= piece_start and piece_end <= last for first, last in instructions):
            text = f'<span class="cq-instruction" title="{INSTRUCTION_TITLE}">{text}</span>'
        pieces.append(text)
    return "".join(pieces)


def render_abstract(abstract: str, start: int, end: int) -> str:
    """`abstract` for the chat with its span `start:end` marked, and its sentences that
    address a model or reader (never evidence) marked apart."""
    instructions = [
        span for span in sentence_spans(abstract) if is_instruction(abstract[slice(*span)])
    ]
    return (
        f"{_region(abstract, 0, start, instructions)}"
        f"<mark>{_region(abstract, start, end, instructions)}</mark>"
        f"{_region(abstract, end, len(abstract), instructions)}"
    )


def render_evidence(citation: Citation, paper: Paper | None) -> str:
    """The popover of chip `[n]`: title, authors, venue and the abstract, its cited span marked."""
    if paper is None:  # removed from the index since the answer was made
        abstract = render_abstract(citation.snippet, 0, len(citation.snippet))
    else:
        abstract = render_abstract(paper.abstract, citation.start, citation.end)
    meta = " · ".join(part for part in (", ".join(citation.authors), citation.venue) if part)
    title = _link(markdown_text(citation.display_title), citation.url)
    return (
        '<span class="cq-pop" role="tooltip">'
        f'<span class="cq-pop-title">[{citation.n}] {title}'
        f'</span><span class="cq-pop-meta">{_esc(meta)}</span>'
        f'<span class="cq-abstract">{abstract}</span></span>'
    )


def render_chip(citation: Citation, paper: Paper | None) -> str:
    """A focusable chip `n`; hovering or clicking it shows its evidence."""
    return (
        f'<span class="cq-cite" tabindex="0" aria-label="source {citation.n}">'
        f'<sup class="cq-chip">{citation.n}</sup>{render_evidence(citation, paper)}</span>'
    )


def _note(answer: Answer) -> str:
    return f'<span class="cq-note">Note: {_esc(answer.note)}</span>' if answer.note else ""


def render_understood(answer: Answer) -> str:
    """'Read as: list question · by Yann LeCun · ICML 2024' and the notes on what the
    question was taken to ask ('' for a plain fact question that names nothing)."""
    read = read_as(answer.understood)
    lines = [f"Read as: {read}"] if read else []
    lines += answer.understood.get("notes") or []
    spans = "".join(f"<span>{_esc(line)}</span>" for line in lines)
    return f'<span class="cq-understood">{spans}</span>' if spans else ""


def _by_paper(hits: list[Hit]) -> list[list[Hit]]:
    """`hits` grouped by paper, in order of each paper's best hit."""
    groups: dict[str, list[Hit]] = {}
    for hit in hits:
        groups.setdefault(hit.paper_id, []).append(hit)
    return list(groups.values())


def render_refusal(answer: Answer) -> str:
    """A refusal, styled apart, with the closest papers retrieved."""
    items = "".join(
        f"<li>{_link(markdown_text(hit.display_title), hit.url)} "
        f"<span class='cq-venue'>{_esc(hit.venue)}</span></li>"
        for hit, *_ in _by_paper(answer.sources)
    )
    closest = f'<span class="cq-label">Closest papers</span><ul>{items}</ul>' if items else ""
    return (
        f'<div class="cq-refusal"><strong>{_esc(answer.answer)}</strong>'
        f"{closest}{render_understood(answer)}{_note(answer)}</div>"
    )


class _AnswerHTML:
    """The sentences of one answer as chat HTML, with the citations they point at."""

    def __init__(self, answer: Answer, papers: dict[str, Paper]) -> None:
        self.by_number = {citation.n: citation for citation in answer.citations}
        self.papers = papers

    def sentences(self, sentences: list[AnswerSentence]) -> str:
        """Each sentence (its kind as class) followed by its citation chips."""
        return " ".join(
            f'<span class="cq-{sentence.kind}">{_chat_text(sentence.text)}</span>'
            + "".join(
                render_chip(self.by_number[n], self.papers.get(self.by_number[n].paper_id))
                for n in sentence.citations
                if n in self.by_number
            )
            for sentence in sentences
        )

    def title(self, heading: str, sentences: list[AnswerSentence]) -> str:
        """The title of the paper a line is about, linked through that paper's citation."""
        cited = (self.by_number.get(n) for sentence in sentences for n in sentence.citations)
        paper = next((c for c in cited if c and plain_text(c.display_title) == heading), None)
        if paper is None:
            return _esc(heading)
        return _link(markdown_text(paper.display_title), paper.url)

    def line(self, heading: str, sentences: list[AnswerSentence]) -> str:
        title = self.title(heading, sentences)
        return (
            f'<li class="cq-line"><span class="cq-heading">{title}</span>: '
            f"{self.sentences(sentences)}</li>"
        )


def _by_heading(sentences: list[AnswerSentence]) -> list[tuple[str | None, list]]:
    """The sentences in blocks: those before the first heading, then one block per paper
    line (a heading, the sentences under it and those that continue it without one)."""
    blocks: list[tuple[str | None, list]] = [(None, [])]
    for sentence in sentences:
        if sentence.heading and sentence.heading != blocks[-1][0]:
            blocks.append((sentence.heading, []))
        blocks[-1][1].append(sentence)
    return blocks


def render_answer(answer: Answer, papers: dict[str, Paper]) -> str:
    """The chat message of a verified answer: each sentence followed by its citation chips,
    the lines of a list or comparison each under its paper's title, then what the question
    was read as."""
    if answer.refused:
        return render_refusal(answer)
    html_of = _AnswerHTML(answer, papers)
    (_, lead), *lines = _by_heading(answer.sentences)
    body = f'<div class="cq-text">{html_of.sentences(lead)}</div>' if lead else ""
    if lines:
        items = "".join(html_of.line(heading, sentences) for heading, sentences in lines)
        body += f'<ul class="cq-lines">{items}</ul>'
    return f'<div class="cq-answer">{body}{render_understood(answer)}{_note(answer)}</div>'


def render_streaming(raw: str) -> str:
    """The text generated so far, shown until it is verified."""
    text = _esc(raw) if raw else "Searching the papers…"
    return f'<div class="cq-streaming">{text}<span class="cq-cursor"></span></div>'


def render_error(message: str) -> str:
    """A `CiteqaError` message as a short note in the chat."""
    return f'<div class="cq-error">⚠ {_esc(message[:1].upper() + message[1:])}</div>'


def render_sources(answer: Answer | None, show_passages: bool) -> str:
    """The side panel: the retrieved papers with their best score and chips if cited; with
    `show_passages`, every retrieved passage and its own score."""
    if answer is None or not answer.sources:
        return '<div class="cq-sources cq-empty">The sources of an answer appear here.</div>'
    cited: dict[str, list[int]] = {}
    for citation in answer.citations:
        cited.setdefault(citation.paper_id, []).append(citation.n)
    rows = "".join(
        _source_row(hits, cited.get(hits[0].paper_id, []), show_passages)
        for hits in _by_paper(answer.sources)
    )
    return f'<div class="cq-sources"><ol>{rows}</ol></div>'


def _source_row(hits: list[Hit], numbers: list[int], show_passages: bool) -> str:
    best = hits[0]
    chips = "".join(f'<sup class="cq-chip">{n}</sup>' for n in numbers)
    passages = "".join(
        f'<span class="cq-passage">{_esc(plain_text(hit.text))} <span class="cq-score">score '
        f"{hit.score:.4f}</span></span>"
        for hit in hits
        if show_passages
    )
    return (
        f"<li>{_link(plain_text(best.display_title), best.url)}{chips}"
        f'<span class="cq-pop-meta">{_esc(best.venue or "venue unknown")} · '
        f"score {best.score:.4f}</span>{passages}</li>"
    )


def _options(
    backend: str | None, k: float | None, venue: str | None, author: str | None, area: str | None
) -> dict:
    """Keyword arguments of `Assistant.ask`/`stream` from the settings panel; blanks mean
    the defaults."""
    return {
        "backend": backend or None,
        "k": int(k) if k else None,
        "venue": venue,
        "author": author,
        "area": area,
    }


def _error_text(exc: Exception) -> str:
    """What the user reads about `exc`, logged: a `CiteqaError` in one line, anything
    unexpected with its traceback."""
    if isinstance(exc, CiteqaError):
        log.warning("refused: %s", exc)
        return str(exc)
    log.exception("answering failed")
    return "something went wrong while answering; the server log has the details"


def _api_error(exc: Exception) -> gr.Error:
    """The error an API client receives (gradio_client raises it as `AppError`); Gradio
    itself prints nothing, as `_error_text` has logged it."""
    return gr.Error(_error_text(exc), print_exception=False)


def _blank_is_none(value: Any) -> Any:
    return None if isinstance(value, str) and not value.strip() else value


def _message(role: str, content: str) -> dict[str, str]:
    return {"role": role, "content": content}


class Handlers:
    """The functions behind the UI's events. They share one `Assistant`, read-only;
    everything a session owns arrives as arguments (Gradio state) and leaves as results."""

    def __init__(self, assistant: Assistant) -> None:
        self.assistant = assistant

    def respond(
        self,
        question: str,
        chat: list[dict],
        history: list[dict[str, str]],
        backend: str,
        k: float,
        venue: str,
        author: str,
        area: str,
        show_passages: bool,
    ) -> Iterator[tuple]:
        """Stream the generated text into the chat, then replace it with the verified answer.

        Yields (question box, chat, history, answer, sources panel, markdown)."""
        unchanged = (gr.skip(),) * 4
        if question.strip():
            chat = [*chat, _message("user", _esc(question))]
        chat = [*chat, _message("assistant", render_streaming(""))]
        yield "", chat, *unchanged
        raw = ""
        try:
            options = _options(backend, k, venue, author, area)
            for piece in self.assistant.stream(question, history, **options):
                if isinstance(piece, Answer):
                    answer = piece  # the last piece
                else:
                    raw += piece
                    chat[-1] = _message("assistant", render_streaming(raw))
                    yield "", chat, *unchanged
        except Exception as exc:
            chat[-1] = _message("assistant", render_error(_error_text(exc)))
            yield "", chat, *unchanged
            return
        papers = {paper.paper_id: paper for paper in self.assistant.papers()}
        chat[-1] = _message("assistant", render_answer(answer, papers))
        turn = [_message("user", question), _message("assistant", answer.answer)]
        sources = render_sources(answer, show_passages)
        yield "", chat, [*history, *turn], answer, sources, answer.to_markdown()

    def status(self, backend: str) -> str:
        """The state of `backend` (model loaded, API reachable), or why it cannot be used."""
        try:
            return self.assistant.backend_status(backend)
        except CiteqaError as exc:
            return str(exc)

    def papers_table(self) -> list[list[str]]:
        """Title, authors, venue, year, area and source files of every indexed paper, by
        title."""
        papers = sorted(self.assistant.papers(), key=lambda paper: paper.display_title.casefold())
        return [
            [
                paper.display_title,
                ", ".join(paper.authors),
                paper.venue or "",
                str(paper.publication_year or ""),
                paper.area or "",
                ", ".join(paper.source_files),
            ]
            for paper in papers
        ]

    def ask(
        self,
        question: str,
        backend: str | None = None,
        k: int | None = None,
        venue: str | None = None,
        author: str | None = None,
        area: str | None = None,
    ) -> dict:
        """Answer `question` (one turn, no history); returns the JSON of `citeqa ask --json`.

        None or blank arguments mean the server's settings (backend, k) or no filter; `k`
        is a whole number from 1 to 50. Every argument is checked by `Assistant.ask`."""
        options = {"backend": backend, "venue": venue, "author": author, "area": area}
        try:
            answer = self.assistant.ask(
                question, k=k, **{name: _blank_is_none(value) for name, value in options.items()}
            )
        except Exception as exc:
            raise _api_error(exc) from None
        return answer.to_json()


ASK_ARGUMENTS = list(inspect.signature(Handlers.ask).parameters)[1:]


class _Blocks(gr.Blocks):
    """`gr.Blocks` whose `/ask` endpoint refuses a call with the wrong number of arguments
    in one sentence (Gradio's own check prints a traceback and tells the client nothing,
    and it ignores extra arguments)."""

    def validate_inputs(self, block_fn: Any, inputs: list[Any]) -> None:
        if block_fn.api_name == ASK_API and len(inputs) != len(ASK_ARGUMENTS):
            raise _api_error(
                QuestionError(
                    f"/{ASK_API} takes {len(ASK_ARGUMENTS)} arguments "
                    f"({', '.join(ASK_ARGUMENTS)}); got {len(inputs)}"
                )
            )
        super().validate_inputs(block_fn, inputs)


PRIVATE = {"api_visibility": "private"}  # UI events, not part of the public API


def _cleared() -> tuple:
    return [], [], None, render_sources(None, False), ""


def _settings_panel(settings: Settings) -> tuple[gr.Component, ...]:
    """Backend (and its state), top-k, filters and the passages toggle."""
    with gr.Accordion("Settings", open=True):
        backend = gr.Dropdown(list(BACKEND_NAMES), value=settings.llm.backend, label="Backend")
        status = gr.Textbox(label="Backend state", interactive=False)
        k = gr.Slider(1, MAX_K, value=settings.retrieval.k, step=1, label="Passages (top-k)")
        with gr.Accordion("Filters", open=False), gr.Row():
            venue = gr.Textbox(label="Venue", placeholder="e.g. NeurIPS")
            author = gr.Textbox(label="Author", placeholder="e.g. Dao")
            area = gr.Textbox(label="Area", placeholder="e.g. theory")
        show_passages = gr.Checkbox(label="Show the retrieved passages")
    return backend, status, k, venue, author, area, show_passages


def _chat_tab(demo: gr.Blocks, settings: Settings, handlers: Handlers) -> None:
    history = gr.State([])
    last_answer = gr.State(None)
    with gr.Row():
        with gr.Column(scale=3):
            chat = gr.Chatbot(
                label="Chat",
                height=560,
                render_markdown=False,
                latex_delimiters=LATEX_DELIMITERS,
                buttons=[],
                feedback_options=None,
                group_consecutive_messages=False,
                elem_id="cq-chat",
                placeholder="Ask about the papers, e.g. *which papers study neural collapse?*",
            )
            question = gr.Textbox(
                show_label=False,
                placeholder="Ask a question and press Enter",
                submit_btn="Ask",
                autofocus=True,
                elem_id="cq-question",
            )
            clear = gr.Button("Clear chat", size="sm", variant="secondary")
            with gr.Accordion("Copy the answer as Markdown", open=False):
                markdown = gr.Textbox(
                    show_label=False, lines=8, interactive=False, buttons=["copy"]
                )
        with gr.Column(scale=2):
            backend, status, k, venue, author, area, show_passages = _settings_panel(settings)
            gr.Markdown("### Sources")
            sources = gr.HTML(render_sources(None, False), js_on_load=None)

    question.submit(
        handlers.respond,
        [question, chat, history, backend, k, venue, author, area, show_passages],
        [question, chat, history, last_answer, sources, markdown],
        show_progress="hidden",
        **PRIVATE,
    ).then(handlers.status, backend, status, **PRIVATE)
    for event in (clear.click, chat.clear):
        event(_cleared, None, [chat, history, last_answer, sources, markdown], **PRIVATE)
    show_passages.change(render_sources, [last_answer, show_passages], sources, **PRIVATE)
    backend.change(handlers.status, backend, status, **PRIVATE)
    demo.load(handlers.status, backend, status, **PRIVATE)


def _papers_tab(demo: gr.Blocks, handlers: Handlers) -> None:
    papers = gr.Dataframe(
        headers=PAPER_COLUMNS,
        datatype="str",
        interactive=False,
        show_search="search",
        wrap=True,
        column_widths=["34%", "28%", "12%", "6%", "10%", "10%"],
        max_height=640,
    )
    demo.load(handlers.papers_table, None, papers, **PRIVATE)


def build_app(settings: Settings | None = None) -> gr.Blocks:
    """The UI over the index of `settings` (loaded now; the seeds are ingested if it is empty).

    Serve it with `start`, or `.launch(**STYLE)`: Gradio 6 takes theme, CSS and JS there."""
    settings = settings or load_settings()
    assistant = Assistant(settings)
    assistant.ensure_index()
    handlers = Handlers(assistant)
    with _Blocks(title="citeqa", analytics_enabled=False) as demo:
        gr.Markdown(
            "## citeqa\nAnswers from the indexed abstracts. Every sentence is cited: "
            "hover or click a number to read the evidence."
        )
        with gr.Tab("Chat"):
            _chat_tab(demo, settings, handlers)
        with gr.Tab("Papers"):
            _papers_tab(demo, handlers)
        gr.api(handlers.ask, api_name=ASK_API)
    demo.queue(default_concurrency_limit=CONCURRENCY)
    return demo


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def login(ui: UISettings, host: str) -> tuple[str, str] | None:
    """The (username, password) to require, if configured; a `SettingsError` when `host`
    is not loopback and no login is configured."""
    password = ui.password.get_secret_value() if ui.password else ""
    if ui.username and password:
        return ui.username, password
    if not _is_loopback(host):
        raise SettingsError(
            f"refusing to serve the UI on {host} without a login: set ui.username and "
            "ui.password (CITEQA_UI__USERNAME, CITEQA_UI__PASSWORD) or use 127.0.0.1"
        )
    return None


def start(
    settings: Settings | None = None, *, host: str | None = None, port: int | None = None
) -> tuple[gr.Blocks, str]:
    """Serve the UI from background threads; returns the app (`.close()` stops it) and URL.

    `host`/`port` override `settings.ui`. Never shared through Gradio's tunnel."""
    settings = settings or load_settings()
    host = host or settings.ui.host
    port = port or settings.ui.port
    auth = login(settings.ui, host)
    demo = build_app(settings)
    try:
        _, url, _ = demo.launch(
            server_name=host,
            server_port=port,
            auth=auth,
            share=False,
            prevent_thread_lock=True,
            quiet=True,
            ssr_mode=False,
            **STYLE,
        )
    except OSError:
        raise SettingsError(
            f"cannot serve the UI on {host}:{port}: the port is in use or not available; "
            "choose another with --port (or ui.port)"
        ) from None
    return demo, url


def launch(
    settings: Settings | None = None, *, host: str | None = None, port: int | None = None
) -> None:
    """Serve the UI until Ctrl-C, after printing its URL; errors are logged one per line."""
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    demo, url = start(settings, host=host, port=port)
    print(f"citeqa UI running at {url} (Ctrl-C stops it)", flush=True)
    demo.block_thread()
