"""Which papers do something: one line per paper, its title and the sentence that says
what it does about the topic, after a count that is true by construction.

A retrieved paper is listed by a logistic model of how relevant its best sentence is next to
the best paper's, how much of the question's topic its abstract has (topic words weighted by
how rare they are among the retrieved papers: "bandit" tells more than "learning"), and its
retrieval rank; the papers of an author the question names are all listed."""

from __future__ import annotations

import math

import numpy as np

from ...lexicon import QUESTION_WORDS, content_stems
from ..claims import Claim
from ..question import Question
from .candidates import Candidates

# Weights of `paper_signals`, fitted by `python -m bench.fit_listing eval/questions.jsonl
# ... eval/questions_test7.jsonl` on the retrieved papers of the answerable list questions
# (137 gold papers retrieved). With each set held out in turn, listing at 0.35 lists 108
# gold papers and 39 others; on the first eight sets, 102 and 33 against 92 and 38 for the
# previous rule (relevance share ≥ 0.65 and share + 0.5 × coverage ≥ 0.9).
LISTED_WEIGHTS = (1.98, 1.71, -2.37)
LISTED_BIAS = -1.86
LISTED_CHANCE = 0.35
CONTRIBUTION_BONUS = 0.1
MOST = 8
_COUNT_WORDS = {1: "One", 2: "Two", 3: "Three", 4: "Four", 5: "Five", 6: "Six", 7: "Seven"}


def plan(question: Question, candidates: Candidates, floor: float) -> list[Claim]:
    if question.authors and question.paper_ids:
        listed = [p for p in candidates.papers if p.paper_id in question.paper_ids]
    else:
        relevance = candidates.paper_relevance()
        signals = paper_signals(question, candidates)
        listed = [
            paper
            for paper in candidates.papers
            if relevance.get(paper.paper_id, 0.0) >= floor
            and _listed_chance(signals[paper.paper_id]) >= LISTED_CHANCE
        ]
    lines = []
    for paper in listed[:MOST]:
        own = candidates.of(paper.paper_id)
        if own:
            pick = max(own, key=lambda c: c.relevance + CONTRIBUTION_BONUS * c.contributes)
            lines.append(pick.claim(heading=paper.paper.display_title))
    return [framing(len(lines)), *lines] if lines else []


def paper_signals(question: Question, candidates: Candidates) -> dict[str, np.ndarray]:
    """What the listing decision weighs for each retrieved paper: its best sentence's
    relevance as a share of the best paper's, its topic coverage, and its rank / 10."""
    relevance = candidates.paper_relevance()
    best = max(relevance.values(), default=0.0) or 1.0
    coverage = _topic_coverage(question, candidates)
    return {
        p.paper_id: np.array(
            [relevance.get(p.paper_id, 0.0) / best, coverage[p.paper_id], p.rank / 10]
        )
        for p in candidates.papers
    }


def _listed_chance(signals: np.ndarray) -> float:
    """The fitted chance that a retrieved paper belongs in the list."""
    total = float(np.dot(LISTED_WEIGHTS, signals)) + LISTED_BIAS
    return 1.0 / (1.0 + math.exp(-total))


def _topic_coverage(question: Question, candidates: Candidates) -> dict[str, float]:
    """The rarity-weighted share of the question's topic words in each paper's title and
    abstract, over the topic words some retrieved paper has."""
    topic = content_stems(question.asked, QUESTION_WORDS)
    found = {p.paper_id: content_stems(p.paper.title_and_abstract) for p in candidates.papers}
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
