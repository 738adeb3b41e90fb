"""`extractive`: no language model. Quotes the retrieved sentences that answer the question,
each with its citation, so the answer is faithful by construction."""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np

from ..answer import REFUSAL
from ..relevance import RelevanceScorer, asks_quantity, asks_which_paper, has_number
from ..settings import AnswerSettings
from ..text import sentence_spans
from .base import GenerationRequest, Source

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
# Shares of the best score a sentence needs to be quoted: from the paper that answers
# best, from another paper, and from each paper listed for a "which papers" question
# (relative to that paper's best sentence).
_SAME_PAPER_SHARE = 0.6
_OTHER_PAPER_SHARE = 0.85
_LISTED_PAPER_SHARE = 0.5


def _quotable(text: str) -> bool:
    """Not a link or code-availability note, nor a piece the splitter cut off mid-sentence
    (after "i.i.d.", it starts in lower case)."""
    return (
        not text[0].islower()
        and any(char.isalpha() for char in text)
        and not _BOILERPLATE.search(text)
    )


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


def _preference(question: str, texts: list[str]) -> np.ndarray:
    """A bonus, for ordering only, for the sentences a reader wants quoted: the one stating
    the paper's contribution (first of all when asked which paper), and, for a question
    asking how much, one with a number."""
    contribution = _IDENTIFYING_BONUS if asks_which_paper(question) else _CONTRIBUTION_BONUS
    wants_number = asks_quantity(question)
    return np.array(
        [
            contribution * bool(_CONTRIBUTION.search(text))
            + _NUMBER_BONUS * (wants_number and has_number(text))
            for text in texts
        ]
    )


def _one_per_paper(
    order: np.ndarray, papers: list[str], scores: np.ndarray, floor: float
) -> list[int]:
    """For each paper whose best sentence reaches `floor`, its first sentence in `order`
    that is close enough to that best."""
    best: dict[str, float] = {}
    for paper, score in zip(papers, scores, strict=True):
        best[paper] = max(best.get(paper, 0.0), float(score))
    listed = {paper for paper, score in best.items() if score >= floor}
    chosen = []
    for i in order:
        if papers[i] in listed and scores[i] >= _LISTED_PAPER_SHARE * best[papers[i]]:
            listed.discard(papers[i])
            chosen.append(int(i))
    return chosen


def _around_best(order: np.ndarray, papers: list[str], scores: np.ndarray) -> list[int]:
    """The sentences in `order` close to the best one: from its paper, and from others
    that answer nearly as well."""
    best = int(np.argmax(scores))
    share = {papers[best]: _SAME_PAPER_SHARE}
    return [
        int(i)
        for i in order
        if scores[i] >= share.get(papers[i], _OTHER_PAPER_SHARE) * scores[best]
    ]


class ExtractiveBackend:
    """Composes an answer from the most relevant sentences of the retrieved passages."""

    name = "extractive"
    reads_prompt = False

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
        if scores.max() < self.settings.min_relevance:
            return []
        order = np.argsort(-(scores + _preference(question, texts)), kind="stable")
        papers = [source.paper_id for source, _ in candidates]
        if (asks_which_paper(question) or "").endswith("s"):
            chosen = _one_per_paper(order, papers, scores, self.settings.min_relevance)
        else:
            chosen = _around_best(order, papers, scores)
        return [candidates[i] for i in chosen[: self.settings.max_sentences]]

    def generate(self, request: GenerationRequest) -> Iterator[str]:
        chosen = self.select(request.question, request.sources)
        if not chosen:
            yield REFUSAL
            return
        for position, (source, text) in enumerate(chosen):
            yield ("" if position == 0 else " ") + f"{text} [{source.n}]"
