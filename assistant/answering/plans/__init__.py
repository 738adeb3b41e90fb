"""Extractive answers: composed from the papers' own sentences, by a plan per intent.

Every sentence is a quote with its exact span, so the answer is faithful by construction;
what a plan decides is which sentences answer, and in which order. Framing ("Two papers
address this:") is counted from the lines it introduces and marked as such."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...settings import AnswerSettings
from ..claims import Claim
from ..cross_encoder import CrossEncoder
from ..passages import PaperText
from ..question import Question
from ..relevance import RelevanceScorer
from . import comparison, listing, method, single, summary
from .candidates import Candidates
from .refusal import answerable

# The most papers a summary covers when the question names them by author or title.
SUMMARY_PAPERS = 4


@dataclass(frozen=True)
class Composition:
    """The composed sentences (empty: the papers do not answer) and the estimated
    probability that the question is answerable from these papers."""

    claims: list[Claim] = field(default_factory=list)
    confidence: float = 0.0


class Composer:
    """Composes extractive answers."""

    def __init__(
        self,
        relevance: RelevanceScorer,
        settings: AnswerSettings,
        answer_model: CrossEncoder | None = None,
    ) -> None:
        self.relevance = relevance
        self.settings = settings
        self.answer_model = answer_model

    def candidates(self, question: Question, papers: list[PaperText]) -> Candidates:
        """The sentences of `papers` an answer may quote, scored against `question`."""
        return Candidates(question, papers, self.relevance, self.answer_model)

    def compose(self, question: Question, papers: list[PaperText]) -> Composition:
        candidates = self.candidates(question, papers)
        if not candidates:
            return Composition()
        confidence = answerable(question, candidates)
        if confidence < self.settings.min_confidence and not asks_about_named_paper(question):
            return Composition(confidence=confidence)
        return Composition(self._plan(question, candidates), confidence)

    def _plan(self, question: Question, candidates: Candidates) -> list[Claim]:
        intent = question.intent
        if intent == "list":
            return listing.plan(question, candidates, self.settings.min_relevance)
        if intent == "summary":
            return summary.plan(question, candidates, _summary_targets(question, candidates))
        if intent == "comparison":
            return comparison.plan(question, candidates, _compared(question, candidates))
        if intent == "method":
            return method.plan(question, candidates)
        return single.plan(question, candidates)


def asks_about_named_paper(question: Question) -> bool:
    """A summary of a paper the question names (by title, method, author), a comparison of
    papers it names, the list of an author's papers, or any question but a how-many about
    the one paper its authors wrote together is answered by those papers' abstracts
    whatever the wording."""
    pinned = question.authors and question.paper_ids is not None and len(question.paper_ids) == 1
    # A figure asked of that paper still has to be in its abstract.
    if pinned and not question.wants_number:
        return True
    if question.intent == "summary":
        return bool(question.named_papers or question.paper_ids)
    if question.intent == "comparison":
        return len(question.named_papers) >= 2
    return question.intent == "list" and bool(question.authors)


def _summary_targets(question: Question, candidates: Candidates) -> list[str]:
    """The papers named by title, method, author or venue (few enough to summarise), else
    the most relevant one."""
    present = [paper.paper_id for paper in candidates.papers]
    named = [p for p in present if p in question.named_papers]
    allowed = question.paper_ids or frozenset()
    if not named and 0 < len(allowed) <= SUMMARY_PAPERS:
        named = [p for p in present if p in allowed]
    if named:
        return named[:SUMMARY_PAPERS]
    relevance = candidates.paper_relevance()
    return [max(relevance, key=relevance.get)]


def _compared(question: Question, candidates: Candidates) -> list[str]:
    """The papers named, when two or more are; else the two most relevant."""
    present = [paper.paper_id for paper in candidates.papers]
    named = [p for p in present if p in question.named_papers]
    if len(named) >= 2:
        return named
    relevance = candidates.paper_relevance()
    ranked = sorted(relevance, key=relevance.get, reverse=True)
    return list(dict.fromkeys([*named, *ranked]))[:2]
