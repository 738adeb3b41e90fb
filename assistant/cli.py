"""The `citeqa` command line."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from typer.core import TyperGroup

from .answer import read_as, reference
from .corpus import Paper, short_authors, source_file
from .errors import CiteqaError
from .readers import FORMAT_NAMES

if TYPE_CHECKING:
    from .evaluation import EvalReport, Thresholds

console = Console(soft_wrap=True)
errors = Console(stderr=True, soft_wrap=True)


def _print_error(message: object) -> None:
    """`error: <message>` on stderr, as one line whatever the message holds."""
    line = " ".join(str(message).split())
    errors.print(f"[bold red]error:[/] {escape(line)}", highlight=False)


class _Commands(TyperGroup):
    """A wrong command line (an unknown option, a value out of range) also ends in one
    sentence on stderr and exit 1, like every other error."""

    def main(self, args=None, *rest, standalone_mode: bool = True, **kwargs):
        args = sys.argv[1:] if args is None else list(args)
        if not standalone_mode or not args:  # no arguments at all: typer shows the help
            return super().main(args, *rest, standalone_mode=standalone_mode, **kwargs)
        try:
            code = super().main(args, *rest, standalone_mode=False, **kwargs)
        except typer.TyperException as exc:
            _print_error(exc.format_message())
            sys.exit(1)
        except typer.Abort:
            errors.print("interrupted")
            sys.exit(130)
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(
    cls=_Commands,
    help="Ask questions about research-paper abstracts; every sentence cited and verified.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

F = TypeVar("F", bound=Callable)

K = Annotated[int | None, typer.Option("--k", "-k", min=1, max=50, help="How many passages.")]
Venue = Annotated[str | None, typer.Option(help="Only papers whose venue contains this.")]
Author = Annotated[str | None, typer.Option(help="Only papers with an author matching this.")]
Area = Annotated[str | None, typer.Option(help="Only papers whose area contains this.")]
Year = Annotated[int | None, typer.Option(help="Only papers of this year.")]
Source = Annotated[
    str | None, typer.Option(help="Only papers from a file whose name contains this.")
]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]


def friendly_errors(command: F) -> F:
    """Show a `CiteqaError` as one sentence on stderr and exit 1, never a stack trace."""

    @wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except CiteqaError as exc:
            _print_error(exc)
            raise typer.Exit(1) from None
        except KeyboardInterrupt:
            errors.print("interrupted")
            raise typer.Exit(130) from None

    return wrapper  # type: ignore[return-value]


def _assistant():
    from .assistant import Assistant

    return Assistant()


def _print_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def _progress():
    """A transient progress bar on stderr, when stderr is a terminal."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    return Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=errors,
        transient=True,
        disable=not errors.is_terminal,
    )


DUPLICATES_SHOWN = 10


def _print_ingest_report(report, location: str) -> None:
    console.print(
        f"{report.added} added, {report.updated} updated, {report.removed} removed, "
        f"{report.unchanged} unchanged papers; {report.chunks_written} chunks written, "
        f"{report.chunks_removed} removed in {report.seconds:.1f} s ({location})",
        highlight=False,
    )
    for name, count in report.skipped.items():
        entries = "entry" if count == 1 else "entries"
        console.print(
            f"{name}: {count} {entries} without an abstract skipped", highlight=False, markup=False
        )
    if report.duplicates:
        count = len(report.duplicates)
        console.print(
            f"{count} {'paper' if count == 1 else 'papers'} found more than once, merged "
            "(same DOI, arXiv id or title; the longer abstract kept):",
            highlight=False,
        )
    for duplicate in report.duplicates[:DUPLICATES_SHOWN]:
        console.print(f"  {duplicate.describe()}", highlight=False, markup=False)
    if len(report.duplicates) > DUPLICATES_SHOWN:
        console.print(f"  … and {len(report.duplicates) - DUPLICATES_SHOWN} more", highlight=False)


@app.command()
@friendly_errors
def ingest(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Files or folders: .bib, .ris, .json (CSL-JSON, OpenReview), .jsonl (citeqa, "
            "arXiv, OpenReview), seed .txt (default: the shipped seeds)."
        ),
    ] = None,
    format_name: Annotated[
        str | None,
        typer.Option(
            "--format",
            help=f"Read every file as this format ({', '.join(FORMAT_NAMES)}); "
            "default: by extension and content.",
        ),
    ] = None,
    sync: Annotated[bool, typer.Option(help="Also remove indexed papers not in PATHS.")] = False,
    rebuild: Annotated[bool, typer.Option(help="Drop the index and build it anew.")] = False,
) -> None:
    """Parse abstracts and add them to the index (only new or changed papers are embedded)."""
    assistant = _assistant()
    with _progress() as progress:
        task = progress.add_task("embedding papers", total=None)

        def on_progress(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        report = assistant.ingest(
            paths, sync=sync, rebuild=rebuild, on_progress=on_progress, format_name=format_name
        )
    _print_ingest_report(report, assistant.index.location)


@app.command()
@friendly_errors
def search(
    question: Annotated[str, typer.Argument(help="What to look for.")],
    k: K = None,
    venue: Venue = None,
    author: Author = None,
    area: Area = None,
    year: Year = None,
    source: Source = None,
    as_json: AsJson = False,
) -> None:
    """Show the passages that best match QUESTION (hybrid dense + keyword retrieval)."""
    hits = _assistant().search(
        question, k, venue=venue, author=author, area=area, year=year, source=source
    )
    if as_json:
        _print_json([hit.model_dump() for hit in hits])
        return
    if not hits:
        console.print("No matching passages.")
        return
    for rank, hit in enumerate(hits, start=1):
        console.print(
            f"[bold]{rank}. {hit.display_title}[/] [dim]({hit.venue or 'venue unknown'}; "
            f"score {hit.score:.4f})[/]",
            highlight=False,
        )
        console.print(f"   {hit.text}", highlight=False, markup=False)


def paper_json(paper: Paper) -> dict:
    """A paper as `papers --json` prints it."""
    fields = {"paper_id", "title", "authors", "venue", "url", "abstract", "area", "doi", "links"}
    return {
        **paper.model_dump(include=fields),
        "year": paper.publication_year,
        "source": source_file(paper.source),
        "also_in": paper.source_files[1:],
    }


@app.command()
@friendly_errors
def papers(
    venue: Venue = None,
    author: Author = None,
    area: Area = None,
    year: Year = None,
    source: Source = None,
    as_json: AsJson = False,
) -> None:
    """List the indexed papers (optionally only those the filters accept)."""
    from .assistant import checked_filters

    chosen = _assistant().papers(checked_filters(venue, author, area, year, source))
    listed = sorted(chosen, key=lambda paper: paper.display_title.casefold())
    if as_json:
        _print_json([paper_json(paper) for paper in listed])
        return
    table = Table("id", "title", "authors", "venue", "year", "source", show_lines=False)
    for paper in listed:
        table.add_row(
            paper.paper_id,
            paper.display_title,
            short_authors(paper.authors),
            paper.venue or "",
            str(paper.publication_year or ""),
            ", ".join(paper.source_files),
        )
    console.print(table)
    console.print(f"{len(listed)} papers")


Backend = Annotated[
    str | None,
    typer.Option("--backend", "-b", help="auto (default), local, openai or extractive."),
]


def _print_answer(answer, hint: bool = False) -> None:
    style = "bold yellow" if answer.refused else "bold"
    console.print(answer.answer, style=style, highlight=False, markup=False)
    understood = read_as(answer.understood)
    if understood:
        console.print(f"read as: {understood}", style="dim", highlight=False, markup=False)
    if answer.note:
        console.print(f"note: {answer.note}", style="yellow", highlight=False, markup=False)
    if answer.citations:
        console.print("\nReferences", style="bold")
    for citation in answer.citations:
        console.print(f"[{citation.n}] {reference(citation)}", highlight=False, markup=False)
        console.print(
            f'    "{citation.display_snippet}"', style="dim", highlight=False, markup=False
        )
    if answer.refused and answer.sources:
        console.print("\nClosest papers", style="bold")
        for title in dict.fromkeys(hit.display_title for hit in answer.sources):
            console.print(f"  - {title}", highlight=False, markup=False)
    if hint and answer.backend == "extractive":
        console.print(PLUG_IN_HINT, style="dim", highlight=False, markup=False)


PLUG_IN_HINT = (
    "\nThis answer quotes the papers. For written answers, set CITEQA_LLM__MODEL_PATH to a "
    "GGUF model, or CITEQA_LLM__BASE_URL to Ollama or any OpenAI-compatible API (README: "
    "Backends)."
)


@app.command()
@friendly_errors
def ask(
    question: Annotated[str, typer.Argument(help="Your question about the papers.")],
    backend: Backend = None,
    k: K = None,
    venue: Venue = None,
    author: Author = None,
    area: Area = None,
    year: Year = None,
    source: Source = None,
    as_json: AsJson = False,
) -> None:
    """Answer QUESTION with cited sentences, each verified against its source."""
    assistant = _assistant()
    filters = {"venue": venue, "author": author, "area": area, "year": year, "source": source}
    with errors.status("answering…"):
        answer = assistant.ask(question, backend=backend, k=k, **filters)
    if as_json:
        _print_json(answer.to_json())
    else:
        _print_answer(answer, hint=backend is None)


@app.command()
@friendly_errors
def chat(backend: Backend = None, k: K = None) -> None:
    """A multi-turn chat in the terminal (empty line or Ctrl-D quits, /clear forgets)."""
    assistant = _assistant()
    history: list[dict[str, str]] = []
    console.print("Ask about the papers. /clear forgets the conversation; Ctrl-D quits.")
    while True:
        try:
            question = console.input("[bold cyan]you>[/] ").strip()
        except EOFError:
            break
        if not question:
            break
        if question == "/clear":
            history.clear()
            continue
        try:
            with errors.status("answering…"):
                answer = assistant.ask(question, history, backend=backend, k=k)
        except CiteqaError as exc:
            errors.print(f"error: {exc}", highlight=False, markup=False)
            continue
        _print_answer(answer)
        history += [
            {"role": "user", "content": question},
            {"role": "assistant", "content": answer.answer},
        ]


@app.command("eval")
@friendly_errors
def eval_command(
    backends: Annotated[
        list[str] | None,
        typer.Option(
            "--backend",
            "-b",
            help="A backend to score; repeat for several (default: extractive, local).",
        ),
    ] = None,
    judge: Annotated[
        str,
        typer.Option(help="Who decides support: local (offline) or llm (the [judge] settings)."),
    ] = "local",
    question_set: Annotated[
        Path,
        typer.Option(
            "--set", help="Questions (JSONL); a judge_pairs.jsonl beside it rates the judge."
        ),
    ] = Path("eval/questions.jsonl"),
    name: Annotated[str, typer.Option(help="Write REPORTS/NAME.json, .md and .png.")] = "latest",
    baseline: Annotated[
        bool, typer.Option(help="Also score llama-index's CitationQueryEngine on the same LLM.")
    ] = True,
    gate: Annotated[
        bool, typer.Option("--gate", help="Exit 1 when a gated backend misses a threshold.")
    ] = False,
    thresholds: Annotated[Path, typer.Option(help="Minimum scores (TOML).")] = Path(
        "eval/thresholds.toml"
    ),
    reports: Annotated[Path, typer.Option(help="Folder for the reports.")] = Path("eval/reports"),
    answers: Annotated[
        Path | None,
        typer.Option(help="Labelled generated answers (JSONL) to measure the verifier on."),
    ] = None,
) -> None:
    """Score backends on a question set: retrieval, faithfulness, citations, correctness."""
    from .backends import resolve_name
    from .evaluation import (
        eval_assistant,
        evaluate,
        gate_failures,
        load_answer_set,
        load_judge_pairs,
        load_questions,
        load_thresholds,
        make_judge,
        write_reports,
    )
    from .settings import load_settings

    settings = load_settings()
    names = dict.fromkeys(resolve_name(b, settings) for b in backends or ["extractive", "local"])
    questions = load_questions(question_set)
    limits = load_thresholds(thresholds) if gate or thresholds.is_file() else None
    pairs_file = question_set.with_name("judge_pairs.jsonl")
    pairs = load_judge_pairs(pairs_file) if pairs_file.is_file() else []
    with eval_assistant(settings) as assistant:
        with errors.status("indexing the shipped seeds…"):
            assistant.ensure_index()
        with _progress() as progress:
            tasks: dict[str, int] = {}

            def on_progress(system: str, done: int, total: int) -> None:
                if system not in tasks:
                    tasks[system] = progress.add_task(system, total=total)
                progress.update(tasks[system], completed=done)

            report = evaluate(
                assistant,
                questions,
                list(names),
                judge=make_judge(judge, settings, assistant.answerer.scoring_embedder),
                baseline=baseline,
                judge_pairs=pairs,
                answer_set=load_answer_set(answers) if answers else (),
                on_progress=on_progress,
                questions_file=str(question_set),
                answers_file=str(answers or ""),
            )
    _print_report(report, limits)
    for path in write_reports(report, reports, name, limits):
        console.print(f"wrote {path}", highlight=False)
    failures = gate_failures(report, limits) if gate and limits else []
    for failure in failures:
        errors.print(f"[bold red]below threshold:[/] {failure}", highlight=False)
    if failures:
        raise typer.Exit(1)


def _print_report(report: EvalReport, thresholds: Thresholds | None) -> None:
    from .evaluation import overall_table, type_table, verifier_table

    console.print(_rich_table("all questions", overall_table(report, thresholds)))
    for system in report.systems:
        console.print(_rich_table(f"{system.name} by question type", type_table(system)))
    if report.verifier is not None:
        title = f"verifier on {report.verifier.answers_file}"
        console.print(_rich_table(title, verifier_table(report.verifier, thresholds)))


def _rich_table(title: str, table: tuple[list[str], list[list[str]]]) -> Table:
    header, rows = table
    shown = Table(*header, title=title, title_justify="left")
    for row in rows:
        shown.add_row(*row)
    return shown


@app.command()
@friendly_errors
def ui(
    host: Annotated[
        str | None, typer.Option(help="Address to serve on (default: ui.host, 127.0.0.1).")
    ] = None,
    port: Annotated[
        int | None, typer.Option(min=1, max=65535, help="Port (default: ui.port, 7860).")
    ] = None,
) -> None:
    """Start the web UI and print its URL. A host other than loopback needs a login
    (ui.username and ui.password)."""
    from ui import launch

    from .settings import load_settings

    launch(load_settings(), host=host, port=port)


@app.command("config")
@friendly_errors
def config_command() -> None:
    """Print the settings in effect (defaults, citeqa.toml, CITEQA_* variables) as JSON;
    secrets are shown as asterisks."""
    from .settings import load_settings

    sys.stdout.write(load_settings().model_dump_json(indent=2) + "\n")


def main() -> None:
    app()
