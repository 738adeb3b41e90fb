"""`Assistant`: the one object behind the CLI, the UI and the Python API."""

from __future__ import annotations

import numbers
import reprlib
from collections.abc import Iterable, Iterator
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from .answer import Answer
from .backends import EXTRACTIVE, resolve_name
from .corpus import Paper, merge_with_indexed, read_corpus, shipped_seeds_dir
from .errors import CorpusError, QuestionError
from .index import IngestReport, PaperIndex, ProgressCallback
from .retrieval import Filters, Hit, HybridRetriever, Mode
from .settings import MAX_K, Settings, load_settings

if TYPE_CHECKING:
    from .answering.pipeline import Answerer, Message


class Assistant:
    """Question answering over indexed abstracts.

    >>> from assistant import Assistant
    >>> hits = Assistant().search("which papers study neural collapse?", k=5)
    """

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or load_settings()

    @cached_property
    def index(self) -> PaperIndex:
        return PaperIndex(self.settings)

    @cached_property
    def retriever(self) -> HybridRetriever:
        return HybridRetriever(self.index, self.settings.retrieval)

    @cached_property
    def answerer(self) -> Answerer:
        from .answering.pipeline import Answerer

        return Answerer(self.settings, self.retriever)

    def ingest(
        self,
        paths: Iterable[Path | str] | None = None,
        *,
        sync: bool = False,
        rebuild: bool = False,
        on_progress: ProgressCallback | None = None,
        format_name: str | None = None,
    ) -> IngestReport:
        """Parse `paths` (default: the shipped seeds; format by extension, or `format_name`)
        and bring the index in line with them.

        Everything is parsed before the index is touched: a broken file raises
        `CorpusError` and leaves the index as it was. The same paper from several records
        (in these files, or indexed earlier from other files) is merged into one; the
        report lists those duplicates and the entries skipped for lacking an abstract."""
        files = [Path(p) for p in paths] if paths else [shipped_seeds_dir()]
        try:
            corpus = read_corpus(files, format_name)
        except OSError as exc:  # e.g. a path too long to look up, an unreadable folder
            raise CorpusError(
                exc.filename or files[0], f"cannot be read ({exc.strerror})"
            ) from None
        if not (sync or rebuild or self.index.is_empty()):
            corpus = merge_with_indexed(corpus, self.index.papers())
        report = self.index.ingest(
            corpus.papers,
            sync=sync,
            rebuild=rebuild,
            on_progress=on_progress,
            files=corpus.files,
        )
        report.skipped, report.duplicates = corpus.skipped, corpus.duplicates
        return report

    def ensure_index(self) -> None:
        """Ingest the shipped seeds if the index is empty, so a first question just works."""
        if self.index.is_empty():
            self.ingest()

    def search(
        self,
        question: str,
        k: int | None = None,
        *,
        venue: str | None = None,
        author: str | None = None,
        area: str | None = None,
        year: int | None = None,
        source: str | None = None,
        mode: Mode = "hybrid",
    ) -> list[Hit]:
        """The `k` best chunks for `question`, best first (hybrid dense + keyword by default)."""
        question = self.check_question(question)
        filters = checked_filters(venue, author, area, year, source)
        k = checked_k(k)
        self.ensure_index()
        return self.retriever.search(question, k, filters, mode)

    def ask(
        self,
        question: str,
        history: list[Message] | None = None,
        *,
        backend: str | None = None,
        k: int | None = None,
        venue: str | None = None,
        author: str | None = None,
        area: str | None = None,
        year: int | None = None,
        source: str | None = None,
        fallback: bool = True,
    ) -> Answer:
        """Answer `question` with verified, cited sentences (or a refusal).

        `history` is the chat so far as `{"role": "user"|"assistant", "content": str}`
        messages; a follow-up is rewritten into a standalone question first. `backend`
        is `auto` (default), `local`, `openai` or `extractive`. With `fallback`, an
        unusable or failing backend is replaced by the extractive answer, and
        `Answer.note` says so."""
        answer = None
        for piece in self.stream(
            question,
            history,
            backend=backend,
            k=k,
            venue=venue,
            author=author,
            area=area,
            year=year,
            source=source,
            fallback=fallback,
        ):
            if isinstance(piece, Answer):
                answer = piece
        assert answer is not None
        return answer

    def stream(
        self,
        question: str,
        history: list[Message] | None = None,
        *,
        backend: str | None = None,
        k: int | None = None,
        venue: str | None = None,
        author: str | None = None,
        area: str | None = None,
        year: int | None = None,
        source: str | None = None,
        fallback: bool = True,
    ) -> Iterator[str | Answer]:
        """Like `ask`, but yields the generated text in pieces as it arrives, then the
        final verified `Answer` (whose text may differ: unsupported sentences removed)."""
        question = self.check_question(question)
        name = resolve_name(backend, self.settings)
        filters = checked_filters(venue, author, area, year, source)
        k = checked_k(k)
        self.ensure_index()
        yield from self.answerer.stream(question, history, name, k, filters, fallback)

    def backend_status(self, backend: str | None = None) -> str:
        """A short state of a backend: model loaded, API reachable or not."""
        name = resolve_name(backend, self.settings)
        if name == EXTRACTIVE:
            return f"{name}: ready (quotes the papers; no language model)"
        return f"{name}: {self.answerer.backend(name).status()}"

    def papers(self, filters: Filters | None = None) -> list[Paper]:
        """Every indexed paper (that `filters` accepts)."""
        self.ensure_index()
        papers = self.index.snapshot().papers.values()
        return [paper for paper in papers if filters is None or filters.matches(paper)]

    def check_question(self, question: str) -> str:
        """The question stripped, or `QuestionError` if it is empty, too long or has no words."""
        if not isinstance(question, str):
            raise QuestionError("the question must be text")
        text = " ".join(question.split())
        if not text:
            raise QuestionError("the question is empty; type a question about the papers")
        limit = self.settings.max_question_chars
        if len(text) > limit:
            raise QuestionError(
                f"the question has {len(text):,} characters; the limit is {limit:,}"
            )
        if not any(char.isalnum() for char in text):
            raise QuestionError("the question has no words in it; ask about the papers")
        return text


def checked_k(k: object) -> int | None:
    """`k` passages, None meaning `retrieval.k`; `QuestionError` unless a whole number in range."""
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= k <= MAX_K:
        raise QuestionError(f"k must be a whole number from 1 to {MAX_K}; got {reprlib.repr(k)}")
    return int(k)


def checked_filters(
    venue: object, author: object, area: object, year: object = None, source: object = None
) -> Filters:
    """The filters, text stripped or None (blank: no filter) and the year a whole number or
    None; `QuestionError` otherwise."""
    texts = {"venue": venue, "author": author, "area": area, "source": source}
    for name, value in texts.items():
        if value is not None and not isinstance(value, str):
            raise QuestionError(f"the {name} filter must be text; got {reprlib.repr(value)}")
    if year is not None and (isinstance(year, bool) or not isinstance(year, numbers.Integral)):
        raise QuestionError(f"the year filter must be a whole number; got {reprlib.repr(year)}")
    return Filters(
        **{name: (value or "").strip() or None for name, value in texts.items()},
        year=None if year is None else int(year),
    )
