"""`extractive`: no language model. Quotes the retrieved sentences that answer the question,
each with its citation, so the answer is faithful by construction."""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np

from ..relevance import RelevanceScorer
from ..settings import AnswerSettings
from ..text import sentence_spans
from .base import GenerationRequest, Source

_PLURAL_QUESTION = re.compile(
    r"\b(which|what)\s+(papers|works|studies|methods|approaches)\b", re.IGNORECASE
)
_QUANTITY_QUESTION = re.compile(
    r"\bhow (many|much|large|big|fast|long|often|far)\b|\bwhat (percentage|fraction|share|"
    r"proportion|number|speedup|factor|rate|accuracy)\b|\bby (how much|what)\b|\bto what\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(
    r"\d|\b(two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twice|half|"
    r"dozens?|hundreds?|thousands?|millions?|billions?)\b",
    re.IGNORECASE,
)
_CONTRIBUTION = re.compile(
    r"\b(we|this (paper|work)|our (work|method|approach))\b[^.]*?\b(propose|introduce|present|"
    r"develop|design|show|prove|find)|\b(is|are) (a|an) (new|novel|simple|general)\b",
    re.IGNORECASE,
)
_BOILERPLATE = re.compile(r"https?://|\b(code|data|models?) (is|are) (publicly )?available\b")
_PREFERENCE = 0.08
_MAX_PER_PAPER = 3
_RELATIVE_FLOOR = 0.7


def _sentences(sources: list[Source]) -> list[tuple[Source, str]]:
    """The distinct sentences of the passages, without links and code-availability notes."""
    seen: set[str] = set()
    found = []
    for source in sources:
        for start, end in sentence_spans(source.text):
            text = source.text[start:end]
            if text in seen or not any(char.isalpha() for char in text):
                continue
            seen.add(text)
            if not _BOILERPLATE.search(text):
                found.append((source, text))
    return found


def _preference(question: str, texts: list[str]) -> np.ndarray:
    """A small bonus, for ordering only, for the sentences a reader wants quoted: the one
    stating the paper's contribution, and, for a question asking how much, one with a number."""
    wants_number = bool(_QUANTITY_QUESTION.search(question))
    return np.array(
        [
            _PREFERENCE * bool(_CONTRIBUTION.search(text))
            + _PREFERENCE * (wants_number and bool(_NUMBER.search(text)))
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

        A "which papers" question gets one sentence from each paper that answers it; any
        other question up to three from a paper, all close to the best one."""
        candidates = _sentences(sources)
        if not candidates:
            return []
        texts = [text for _, text in candidates]
        scores = self.relevance.score(question, texts, [s.context for s, _ in candidates])
        best = float(scores.max())
        if best < self.settings.min_relevance:
            return []
        several_papers = bool(_PLURAL_QUESTION.search(question))
        floor = self.settings.min_relevance
        if not several_papers:
            floor = max(floor, _RELATIVE_FLOOR * best)
        per_paper_cap = 1 if several_papers else _MAX_PER_PAPER
        ranking = scores + _preference(question, texts)
        per_paper: dict[str, int] = {}
        chosen = []
        for i in np.argsort(-ranking, kind="stable"):
            source, text = candidates[i]
            if scores[i] < floor or per_paper.get(source.paper_id, 0) >= per_paper_cap:
                continue
            per_paper[source.paper_id] = per_paper.get(source.paper_id, 0) + 1
            chosen.append((source, text))
            if len(chosen) == self.settings.max_sentences:
                break
        return chosen

    def generate(self, request: GenerationRequest) -> Iterator[str]:
        chosen = self.select(request.question, request.sources)
        if not chosen:
            yield "The indexed papers do not answer this."
            return
        for position, (source, text) in enumerate(chosen):
            yield ("" if position == 0 else " ") + f"{text} [{source.n}]"
