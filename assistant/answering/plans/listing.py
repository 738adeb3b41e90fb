"""Which papers do something: one line per paper, its title and the sentence that says
what it does about the topic, after a count that is true by construction.

A retrieved paper is listed by a logistic model of how relevant its best sentence is next to
the best paper's, how much of the question's topic its abstract has (topic words weighted by
how rare they are among the retrieved papers: "bandit" tells more than "learning"), and its
retrieval rank; the papers of an author the question names are all listed. When fewer than
`FEWEST` papers are listed, the likeliest of the rest follow, counted apart as papers that
may be related: a list question's papers often share none of its words, and a line the
reader can dismiss costs less than a paper left out."""

from __future__ import annotations

import math

import numpy as np

from ...lexicon import QUESTION_WORDS, content_stems, content_stems_with_names, name_spellings
from ..claims import Claim
from ..passages import PaperText
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
# On the eighteen tuning sets' list questions, topping lists up to 4 papers with those at a
# listing chance of at least 0.15 and 0.4 of the least listed paper's raised key-fact
# recall from 46.2 to 51.6 of 82, and the lines from 199 (138 on a gold paper) to 261
# (156); without the share, 270 lines (156), the same recall.
FEWEST = 4
MAYBE_CHANCE = 0.15
MAYBE_SHARE = 0.4
_COUNT_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven"}


def plan(question: Question, candidates: Candidates, floor: float) -> list[Claim]:
    if question.authors and question.paper_ids:
        named = [p for p in candidates.papers if p.paper_id in question.paper_ids]
        return _lines(named, len(named), candidates)
    relevance = candidates.paper_relevance()
    signals = paper_signals(question, candidates)
    chance = {
        paper.paper_id: _listed_chance(signals[paper.paper_id])
        for paper in candidates.papers
        if relevance.get(paper.paper_id, 0.0) >= floor
    }
    listed = [p for p in candidates.papers if chance.get(p.paper_id, 0.0) >= LISTED_CHANCE]
    if not listed:
        return []
    least = max(MAYBE_CHANCE, MAYBE_SHARE * min(chance[p.paper_id] for p in listed))
    maybe = sorted(
        (p for p in candidates.papers if least <= chance.get(p.paper_id, 0.0) < LISTED_CHANCE),
        key=lambda p: -chance[p.paper_id],
    )
    return _lines(listed + maybe[: max(0, FEWEST - len(listed))], len(listed), candidates)


def _lines(papers: list[PaperText], confident: int, candidates: Candidates) -> list[Claim]:
    """One line per paper (its title and the sentence that answers best: relevance plus the
    answer model's chance, which reads each listed paper's closest sentences) after the
    count, which tells the first `confident` papers from those that may be related."""
    # Picking by fit rather than relevance alone: tuning lists 70.1 -> 71.4 key facts of
    # 112 (4 better, none worse).
    lines, sure = [], 0
    candidates.read_papers([p.paper_id for p in papers[:MOST]])
    for position, paper in enumerate(papers[:MOST]):
        own = candidates.of(paper.paper_id)
        if own:
            pick = max(own, key=lambda c: c.fit + CONTRIBUTION_BONUS * c.contributes)
            lines.append(pick.claim(heading=paper.paper.display_title))
            sure += position < confident
    return [framing(sure, len(lines) - sure), *lines] if lines else []


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
    spellings = name_spellings(question.asked)
    found = {
        p.paper_id: content_stems_with_names(p.paper.title_and_abstract, spellings)
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


def framing(count: int, maybe: int = 0) -> Claim:
    """'Two papers address this:', and with `maybe` papers the listing is less sure of,
    'Two papers address this, and two more may be related:', counted from the lines that
    follow."""
    parts = [f"{_count_word(count)} {_papers(count)} this"] if count else []
    if maybe:
        more = "more" if count else ("paper" if maybe == 1 else "papers")
        parts.append(f"{_count_word(maybe)} {more} may be related")
    text = ", and ".join(parts)
    return Claim(f"{text[0].upper()}{text[1:]}:", kind="framing")


def _count_word(count: int) -> str:
    return _COUNT_WORDS.get(count, str(count))


def _papers(count: int) -> str:
    return "paper addresses" if count == 1 else "papers address"
