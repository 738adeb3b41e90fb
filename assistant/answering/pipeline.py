"""The answering chain: rewrite a follow-up, retrieve, generate, verify, compose."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from .answer import REFUSAL, Answer, AnswerSentence, Citation
from .backends import make_backend
from .backends.base import Backend, GenerationRequest, Source
from .embeddings import CachedEmbedder, make_scoring_embedder
from .errors import BackendError
from .grounding import Grounder, Grounding
from .prompts import load_prompt, render
from .relevance import RelevanceScorer
from .retrieval import Filters, Hit, HybridRetriever
from .settings import Settings
from .support import SupportScorer
from .text import count_tokens, sentence_spans

_FOLLOW_UP = re.compile(
    r"\b(it|its|they|them|their|this|that|these|those|he|she|his|her|the (paper|method|"
    r"model|approach|authors?))\b|^(and|what about|how about|also)\b",
    re.IGNORECASE,
)

Message = dict[str, str]


@dataclass
class _Draft:
    """What one backend produced for a question, before composing the `Answer`."""

    backend: str
    raw: str
    grounding: Grounding
    generate_ms: float


class Answerer:
    """Runs the chain for one `Assistant`; backends are created once and reused."""

    def __init__(self, settings: Settings, retriever: HybridRetriever) -> None:
        self.settings = settings
        self.retriever = retriever
        self._backends: dict[str, Backend] = {}
        self._backends_lock = threading.Lock()

    @cached_property
    def scoring_embedder(self) -> CachedEmbedder:
        return make_scoring_embedder(self.retriever.index.embedder)

    @cached_property
    def relevance(self) -> RelevanceScorer:
        return RelevanceScorer(self.scoring_embedder)

    @cached_property
    def grounder(self) -> Grounder:
        return Grounder(SupportScorer(self.scoring_embedder), self.settings.answer.max_new_words)

    def backend(self, name: str) -> Backend:
        with self._backends_lock:
            if name not in self._backends:
                self._backends[name] = make_backend(name, self.settings, self.relevance)
            return self._backends[name]

    # ---- the chain --------------------------------------------------------------------

    def stream(
        self,
        question: str,
        history: list[Message] | None,
        backend_name: str,
        k: int | None,
        filters: Filters,
        fallback: bool = True,
    ) -> Iterator[str | Answer]:
        """Yield the backend's text as it is generated, then the verified `Answer`."""
        started = time.perf_counter()
        standalone = self.standalone_question(question, history or [], backend_name)
        hits = self.retriever.search(standalone, k, filters)
        retrieve_ms = (time.perf_counter() - started) * 1000
        sources = _sources(hits)
        draft = None
        note = None
        if hits:
            try:
                draft = yield from self._draft(backend_name, standalone, sources, hits)
            except BackendError as exc:
                if not fallback or backend_name == "extractive":
                    raise
                note = f"The {backend_name} backend failed ({exc}); this answer quotes the papers."
            if (
                fallback
                and backend_name != "extractive"
                and not self._usable(draft, standalone, hits)
            ):
                note = note or (
                    f"The {backend_name} backend's answer could not be verified against the "
                    "papers; this answer quotes them instead."
                )
                generated = draft
                draft = yield from self._draft("extractive", standalone, sources, hits, quiet=True)
                if generated is not None:
                    draft.raw = generated.raw
                    draft.generate_ms += generated.generate_ms
                    grounding = generated.grounding
                    draft.grounding.dropped = len(grounding.sentences) + grounding.dropped
        answer = self._compose(question, standalone, hits, draft, note)
        answer.timings_ms = {
            "retrieve": retrieve_ms,
            "generate": draft.generate_ms if draft else 0.0,
            "total": (time.perf_counter() - started) * 1000,
        }
        yield answer

    def _draft(self, backend_name, question, sources, hits, quiet=False):
        backend = self.backend(backend_name)
        request = GenerationRequest(
            question=question,
            sources=sources,
            messages=_messages(question, self._focused(question, sources))
            if backend.reads_prompt
            else [],
            max_tokens=self.settings.llm.max_tokens,
            temperature=self.settings.llm.temperature,
        )
        started = time.perf_counter()
        pieces = []
        for piece in backend.generate(request):
            pieces.append(piece)
            if not quiet:
                yield piece
        generate_ms = (time.perf_counter() - started) * 1000
        raw = "".join(pieces)
        grounding = self.grounder.ground(raw, hits, self._abstracts(hits))
        return _Draft(backend_name, raw, grounding, generate_ms)

    def _usable(self, draft: _Draft | None, question: str, hits: list[Hit]) -> bool:
        """A draft is usable when every verified sentence addresses the question."""
        if draft is None or not draft.grounding.sentences:
            return False
        sentences = draft.grounding.sentences
        cited = [hits[sentence.evidence[0].hit] for sentence in sentences]
        scores = self.relevance.score(
            question,
            [sentence.text for sentence in sentences],
            [_context(hit) for hit in cited],
            [hit.text for hit in cited],
        )
        return float(scores.min()) >= self.settings.answer.min_relevance

    def _focused(self, question: str, sources: list[Source]) -> list[Source]:
        """The sources cut to their sentences most relevant to `question`, in their order,
        within `llm.source_tokens` each: a short prompt is what keeps a CPU model fast."""
        budget = self.settings.llm.source_tokens
        if not budget:
            return sources
        sentences = [
            (source, source.text[start:end])
            for source in sources
            for start, end in sentence_spans(source.text)
        ]
        if not sentences:
            return sources
        scores = self.relevance.score(
            question,
            [text for _, text in sentences],
            [source.context for source, _ in sentences],
            [source.text for source, _ in sentences],
        )
        kept: dict[int, list[int]] = {}  # each source's first pick is kept whatever its size
        used: dict[int, int] = {}
        for i in np.argsort(-scores, kind="stable"):
            source, text = sentences[i]
            tokens = count_tokens(text)
            if source.n not in used or used[source.n] + tokens <= budget:
                kept.setdefault(source.n, []).append(int(i))
                used[source.n] = used.get(source.n, 0) + tokens
        return [
            replace(source, text=" ".join(sentences[i][1] for i in sorted(kept[source.n])))
            for source in sources
        ]

    def _abstracts(self, hits: list[Hit]) -> dict[str, str]:
        papers = self.retriever.index.snapshot().papers
        return {
            hit.paper_id: papers[hit.paper_id].abstract for hit in hits if hit.paper_id in papers
        }

    # ---- follow-ups -------------------------------------------------------------------

    def standalone_question(self, question: str, history: list[Message], backend_name: str) -> str:
        """Rewrite a follow-up into a question that stands alone, using the history."""
        previous = [turn["content"] for turn in history if turn.get("role") == "user"]
        previous = previous[-self.settings.answer.max_history_turns :]
        if not previous or not _FOLLOW_UP.search(question):
            return question
        if backend_name == "openai":
            try:
                return self._rewrite_with_llm(question, history)
            except BackendError:
                pass
        return f"{previous[-1]} {question}"

    def _rewrite_with_llm(self, question: str, history: list[Message]) -> str:
        turns = history[-2 * self.settings.answer.max_history_turns :]
        transcript = "\n".join(f"{turn['role']}: {turn['content']}" for turn in turns)
        prompt = render("rewrite_followup", history=transcript, question=question)
        request = GenerationRequest(
            question=question,
            sources=[],
            messages=[{"role": "user", "content": prompt}],
            max_tokens=96,
            temperature=0.0,
        )
        rewritten = "".join(self.backend("openai").generate(request)).strip().strip('"')
        return rewritten.splitlines()[0] if rewritten else question

    # ---- composing ----------------------------------------------------------------------

    def _compose(
        self,
        question: str,
        standalone: str,
        hits: list[Hit],
        draft: _Draft | None,
        note: str | None,
    ) -> Answer:
        backend = draft.backend if draft else "none"
        common = {
            "question": question,
            "backend": backend,
            "raw_answer": draft.raw if draft else "",
            "standalone_question": standalone if standalone != question else None,
            "note": note,
            "sources": hits,
            "dropped_sentences": draft.grounding.dropped if draft else 0,
        }
        if draft is None or not draft.grounding.sentences:
            return Answer(
                answer=REFUSAL,
                refused=True,
                sentences=[AnswerSentence(text=REFUSAL, citations=[])],
                **common,
            )
        abstracts = self._abstracts(hits)
        numbers: dict[tuple[str, int, int], int] = {}
        citations: list[Citation] = []
        sentences: list[AnswerSentence] = []
        for grounded in draft.grounding.sentences:
            cited = []
            for evidence in grounded.evidence:
                hit = hits[evidence.hit]
                key = (hit.paper_id, evidence.start, evidence.end)
                if key not in numbers:
                    numbers[key] = len(numbers) + 1
                    citations.append(_citation(numbers[key], hit, evidence, abstracts))
                if numbers[key] not in cited:
                    cited.append(numbers[key])
            sentences.append(AnswerSentence(text=grounded.text, citations=cited))
        text = " ".join(s.text + "".join(f"[{n}]" for n in s.citations) for s in sentences)
        return Answer(
            answer=text, refused=False, sentences=sentences, citations=citations, **common
        )


def _context(hit: Hit) -> str:
    return " ".join((hit.display_title, *hit.authors, hit.venue or ""))


def _sources(hits: list[Hit]) -> list[Source]:
    return [
        Source(
            n=i + 1,
            paper_id=hit.paper_id,
            title=hit.display_title,
            venue=hit.venue,
            text=hit.text,
            authors=tuple(hit.authors),
        )
        for i, hit in enumerate(hits)
    ]


def _messages(question: str, sources: list[Source]) -> list[Message]:
    listing = "\n".join(
        render("source", n=s.n, title=s.title, venue=s.venue or "venue unknown", text=s.text)
        for s in sources
    )
    return [
        {"role": "system", "content": load_prompt("answer_system")},
        {"role": "user", "content": render("answer_user", sources=listing, question=question)},
    ]


def _citation(n: int, hit: Hit, evidence, abstracts: dict[str, str]) -> Citation:
    abstract = abstracts.get(hit.paper_id)
    snippet = abstract[evidence.start : evidence.end] if abstract else hit.text
    return Citation(
        n=n,
        paper_id=hit.paper_id,
        title=hit.title,
        display_title=hit.display_title,
        authors=hit.authors,
        venue=hit.venue,
        url=hit.url,
        snippet=snippet,
        start=evidence.start,
        end=evidence.end,
    )
