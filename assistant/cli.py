"""The `citeqa` command line."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from .errors import CiteqaError

app = typer.Typer(
    help="Ask questions about research-paper abstracts; every sentence cited and verified.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
errors = Console(stderr=True, soft_wrap=True)

F = TypeVar("F", bound=Callable)

K = Annotated[int | None, typer.Option("--k", "-k", min=1, max=50, help="How many passages.")]
Venue = Annotated[str | None, typer.Option(help="Only papers whose venue contains this.")]
Author = Annotated[str | None, typer.Option(help="Only papers with an author matching this.")]
Area = Annotated[str | None, typer.Option(help="Only papers whose area contains this.")]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]


def friendly_errors(command: F) -> F:
    """Show a `CiteqaError` as one sentence on stderr and exit 1, never a stack trace."""

    @wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except CiteqaError as exc:
            errors.print(f"[bold red]error:[/] {exc}", highlight=False, markup=True)
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


@app.command()
@friendly_errors
def ingest(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Seed .txt files, .jsonl corpora or folders (default: shipped seeds)."),
    ] = None,
    sync: Annotated[bool, typer.Option(help="Also remove indexed papers not in PATHS.")] = False,
    rebuild: Annotated[bool, typer.Option(help="Drop the index and build it anew.")] = False,
) -> None:
    """Parse abstracts and add them to the index (only new or changed papers are embedded)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    assistant = _assistant()
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=errors,
        transient=True,
    ) as progress:
        task = progress.add_task("embedding papers", total=None)

        def on_progress(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        report = assistant.ingest(paths, sync=sync, rebuild=rebuild, on_progress=on_progress)
    console.print(
        f"{report.added} added, {report.updated} updated, {report.removed} removed, "
        f"{report.unchanged} unchanged papers; {report.chunks_written} chunks written, "
        f"{report.chunks_removed} removed in {report.seconds:.1f} s "
        f"({assistant.index.location})"
    )


@app.command()
@friendly_errors
def search(
    question: Annotated[str, typer.Argument(help="What to look for.")],
    k: K = None,
    venue: Venue = None,
    author: Author = None,
    area: Area = None,
    as_json: AsJson = False,
) -> None:
    """Show the passages that best match QUESTION (hybrid dense + keyword retrieval)."""
    hits = _assistant().search(question, k, venue=venue, author=author, area=area)
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


@app.command()
@friendly_errors
def papers(as_json: AsJson = False) -> None:
    """List the indexed papers."""
    listed = sorted(_assistant().papers(), key=lambda paper: paper.display_title.casefold())
    if as_json:
        fields = {"paper_id", "title", "authors", "venue", "url", "abstract", "area"}
        _print_json([paper.model_dump(include=fields) for paper in listed])
        return
    table = Table("id", "title", "authors", "venue", show_lines=False)
    for paper in listed:
        authors = ", ".join(paper.authors[:3]) + (" et al." if len(paper.authors) > 3 else "")
        table.add_row(paper.paper_id, paper.display_title, authors, paper.venue or "")
    console.print(table)
    console.print(f"{len(listed)} papers")


Backend = Annotated[
    str | None,
    typer.Option("--backend", "-b", help="auto (default), local, openai or extractive."),
]


def _print_answer(answer) -> None:
    style = "bold yellow" if answer.refused else "bold"
    console.print(answer.answer, style=style, highlight=False, markup=False)
    if answer.note:
        console.print(f"note: {answer.note}", style="yellow", highlight=False, markup=False)
    if answer.citations:
        console.print("\nReferences", style="bold")
    for citation in answer.citations:
        authors = ", ".join(citation.authors[:3]) + (" et al." if len(citation.authors) > 3 else "")
        console.print(
            f"[{citation.n}] {citation.display_title}. {authors}. {citation.venue or 'venue unknown'}."
            f"{' ' + citation.url if citation.url else ''}",
            highlight=False,
            markup=False,
        )
        console.print(f'    "{citation.snippet}"', style="dim", highlight=False, markup=False)
    if answer.refused and answer.sources:
        console.print("\nClosest papers", style="bold")
        for title in dict.fromkeys(hit.display_title for hit in answer.sources):
            console.print(f"  - {title}", highlight=False, markup=False)


@app.command()
@friendly_errors
def ask(
    question: Annotated[str, typer.Argument(help="Your question about the papers.")],
    backend: Backend = None,
    k: K = None,
    venue: Venue = None,
    author: Author = None,
    area: Area = None,
    as_json: AsJson = False,
) -> None:
    """Answer QUESTION with cited sentences, each verified against its source."""
    assistant = _assistant()
    with errors.status("answering…"):
        answer = assistant.ask(
            question, backend=backend, k=k, venue=venue, author=author, area=area
        )
    if as_json:
        _print_json(answer.to_json())
    else:
        _print_answer(answer)


@app.command()
@friendly_errors
def chat(backend: Backend = None, k: K = None) -> None:
    """A multi-turn chat in the terminal (empty line or Ctrl-D quits, /clear forgets)."""
    from .errors import CiteqaError as AskError

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
        except AskError as exc:
            errors.print(f"error: {exc}", highlight=False, markup=False)
            continue
        _print_answer(answer)
        history += [
            {"role": "user", "content": question},
            {"role": "assistant", "content": answer.answer},
        ]


def main() -> None:
    app()
