"""`extractive`: no language model. Quotes the retrieved sentences that answer the question,
each with its citation, so the answer is faithful by construction."""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np

from ..relevance import RelevanceScorer, asks_quantity, has_number
from ..settings import AnswerSettings
from ..text import sentence_spans
from .base import GenerationRequest, Source

_WHICH_PAPER = re.compile(
    r"\b(which|what)\s+(?:[\w$-]+\s+){0,4}?(papers?|works?|study|studies|methods?|approach(es)?)\b",
    re.IGNORECASE,
)
_CONTRIBUTION = re.compile(
    r"\b(we|this (paper|work)|our (work|method|approach))\b[^.]*?\b(propose|introduce|present|"
    r"develop|design|show|prove|find|establish|demonstrate)|\b(is|are) (a|an) (new|novel|simple|"
    r"general)\b",
    re.IGNORECASE,
)
_BOILERPLATE = re.compile(
    r"https?://|\b(code|data|models?|implementation) (is|are) (publicly )?(available|released)\b",
    re.IGNORECASE,
)
_CONTRIBUTION_BONUS = 0.1
# Asked which paper does something, a reader wants each paper's own statement of it.
_IDENTIFYING_BONUS = 1.0
_NUMBER_BONUS = 0.1
_SAME_PAPER_SHARE = 0.6
_LISTED_PAPER_SHARE = 0.5
_OTHER_PAPER_SHARE = 0.85


def _quotable(text: str) -> bool:
    """Not a link or code-availability note, nor a piece the splitter cut off mid-sentence
    (after "i.i.d.", it starts in lower case)."""
    return not text[0].islower() and any(char.isalpha() for char in text) and not _BOILERPLATE.search(text)


def _sentences(sources: list[Source]) -> list[tuple[Source, str]]:
    """The distinct quotable sentences of the passages."""
    seen: set[str] = set()
    found = []
    for source in sources:
        for start, end in sentence_spans(source.text):
            text = source.text[start:end]
            if text not in seen and _quotable(text):
                seen.add(text)
                found.append((source, text))
    return found


def _preference(question: str, texts: list[str], identify: bool) -> np.ndarray:
    """A bonus, for ordering only, for the sentences a reader wants quoted: the one stating
    the paper's contribution (first of all when asked which paper), and, for a question
    asking how much, one with a number."""
    contribution = _IDENTIFYING_BONUS if identify else _CONTRIBUTION_BONUS
    wants_number = asks_quantity(question)
    return np.array(
        [
            contribution * bool(_CONTRIBUTION.search(text))
            + _NUMBER_BONUS * (wants_number and has_number(text))
            for text in texts
        ]
    )


class ExtractiveBackend:
    """Composes an answer from the most relevant sentences of the retrieved passages."""

    name = "extractive"

    def __init__(self, relevance: RelevanceScorer, settings: AnswerSettings) -> None:
        self.relevance = relevance
        self.settings = settings

    def status(self) -> str:
        return "ready (quotes the papers; no language model)"

    def select(self, question: str, sources: list[Source]) -> list[tuple[Source, str]]:
        """The sentences that answer `question`, best first (empty when none does).

        A "which papers" question gets one sentence from each paper that answers it, its
        contribution when relevant; any other question the relevant sentences of the paper
        that answers it best, and those of other papers that answer it nearly as well."""
        candidates = _sentences(sources)
        if not candidates:
            return []
        texts = [text for _, text in candidates]
        scores = self.relevance.score(
            question, texts, [s.context for s, _ in candidates], [s.text for s, _ in candidates]
        )
        best = int(np.argmax(scores))
        if scores[best] < self.settings.min_relevance:
            return []
        which = _WHICH_PAPER.search(question)
        order = np.argsort(-(scores + _preference(question, texts, bool(which))), kind="stable")
        papers = [source.paper_id for source, _ in candidates]
        paper_best: dict[str, float] = {}
        for paper, score in zip(papers, scores, strict=True):
            paper_best[paper] = max(paper_best.get(paper, 0.0), float(score))
        if which and which.group(2).lower().endswith("s"):
            answering = {p for p, score in paper_best.items() if score >= self.settings.min_relevance}
            chosen = []
            for i in order:
                if papers[i] in answering and scores[i] >= _LISTED_PAPER_SHARE * paper_best[papers[i]]:
                    answering.discard(papers[i])
                    chosen.append(i)
        else:
            share = {papers[best]: _SAME_PAPER_SHARE}
            chosen = [
                i
                for i in order
                if scores[i] >= share.get(papers[i], _OTHER_PAPER_SHARE) * scores[best]
            ]
        return [candidates[i] for i in chosen[: self.settings.max_sentences]]

    def generate(self, request: GenerationRequest) -> Iterator[str]:
        chosen = self.select(request.question, request.sources)
        if not chosen:
            yield "The indexed papers do not answer this."
            return
        for position, (source, text) in enumerate(chosen):
            yield ("" if position == 0 else " ") + f"{text} [{source.n}]"
