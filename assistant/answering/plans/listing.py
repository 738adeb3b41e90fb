"""Which papers do something: one line per paper, its title and the sentence that says
what it does about the topic, after a count that is true by construction."""

from __future__ import annotations

from ..claims import Claim
from ..question import Question
from .candidates import Candidates

# A paper is listed when its best sentence reaches this share of the best paper's (and the
# refusal threshold, checked by the caller for the best paper).
LISTED_SHARE = 0.7
CONTRIBUTION_BONUS = 0.1
MOST = 8
_COUNT_WORDS = {1: "One", 2: "Two", 3: "Three", 4: "Four", 5: "Five", 6: "Six", 7: "Seven"}


def plan(question: Question, candidates: Candidates, floor: float) -> list[Claim]:
    relevance = candidates.paper_relevance()
    best = max(relevance.values())
    listed = [
        paper
        for paper in candidates.papers
        if relevance.get(paper.paper_id, 0.0) >= max(floor, LISTED_SHARE * best)
    ][:MOST]
    lines = []
    for paper in listed:
        own = candidates.of(paper.paper_id)
        pick = max(own, key=lambda c: c.relevance + CONTRIBUTION_BONUS * c.contributes)
        lines.append(pick.claim(heading=paper.paper.display_title))
    return [framing(len(lines)), *lines]


def framing(count: int) -> Claim:
    """'Two papers in the collection address this:', counted from the lines that follow."""
    number = _COUNT_WORDS.get(count, str(count))
    noun = "paper addresses" if count == 1 else "papers address"
    return Claim(f"{number} {noun} this:", kind="framing")
