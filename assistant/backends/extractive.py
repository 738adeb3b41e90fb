"""`extractive`: no language model. Quotes the retrieved sentences that answer the question,
each with its citation, so the answer is faithful by construction."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..relevance import RelevanceScorer
from ..settings import AnswerSettings
from ..text import sentence_spans
from .base import GenerationRequest, Source

_PLURAL_QUESTION = re.compile(r"\b(which|what)\s+(papers|works|studies|methods)\b", re.IGNORECASE)


def _sentences(sources: list[Source]) -> list[tuple[Source, str]]:
    seen: set[str] = set()
    found = []
    for source in sources:
        for start, end in sentence_spans(source.text):
            text = source.text[start:end]
            if text not in seen and any(char.isalpha() for char in text):
                seen.add(text)
                found.append((source, text))
    return found


class ExtractiveBackend:
    """Composes an answer from the most relevant sentences of the retrieved passages."""

    name = "extractive"

    def __init__(self, relevance: RelevanceScorer, settings: AnswerSettings) -> None:
        self.relevance = relevance
        self.settings = settings

    def status(self) -> str:
        return "ready (quotes the papers; no language model)"

    def select(self, question: str, sources: list[Source]) -> list[tuple[Source, str]]:
        """The sentences that answer `question`, best first (empty when none does)."""
        candidates = _sentences(sources)
        if not candidates:
            return []
        scores = self.relevance.score(
            question, [text for _, text in candidates], [s.context for s, _ in candidates]
        )
        order = sorted(range(len(candidates)), key=lambda i: -scores[i])
        best = float(scores[order[0]])
        if best < self.settings.min_relevance:
            return []
        several_papers = bool(_PLURAL_QUESTION.search(question))
        floor = self.settings.min_relevance if several_papers else max(
            self.settings.min_relevance, 0.7 * best
        )
        per_paper: dict[str, int] = {}
        chosen = []
        for i in order:
            source, text = candidates[i]
            if scores[i] < floor or len(chosen) == self.settings.max_sentences:
                break
            if per_paper.get(source.paper_id, 0) >= (1 if several_papers else 2):
                continue
            per_paper[source.paper_id] = per_paper.get(source.paper_id, 0) + 1
            chosen.append((source, text))
        return chosen

    def generate(self, request: GenerationRequest) -> Iterator[str]:
        chosen = self.select(request.question, request.sources)
        if not chosen:
            yield "The indexed papers do not answer this."
            return
        for position, (source, text) in enumerate(chosen):
            yield ("" if position == 0 else " ") + f"{text} [{source.n}]"
