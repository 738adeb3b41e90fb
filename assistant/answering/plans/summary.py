"""What a paper is about: its problem, its contribution and its main result, each quoted
and cited. Several papers (the work of an author) get one line each."""

from __future__ import annotations

import re

from ...corpus import Paper
from ...lexicon import fold, has_quantity
from ..claims import Claim
from ..question import Question
from .candidates import Candidate, Candidates
from .listing import framing

_RESULT = re.compile(
    r"\b(?:experiments?|results?|empirical(?:ly)?|outperform\w*|achiev\w*|improv\w*|"
    r"state-of-the-art|surpass\w*|reduc\w*|speed-?up|accuracy|demonstrat\w*)",
    re.IGNORECASE,
)
# "We show that ...", "we prove": a finding, which weighs more than an experiment's wording.
_FINDING = re.compile(
    r"\b(?:we|our (?:analysis|results?|experiments?)) (?:\w+ )?(?:show|prove|find|reveal|"
    r"establish|demonstrate|observe)s?\b",
    re.IGNORECASE,
)
# On the summary and author questions of the tuning sets (eval/questions*.jsonl but _test9),
# key-fact recall summed over 101 questions: 74.2 without the finding's weight, 76.2 with 1,
# 77.5 with 2 (9 questions better, none worse).
FINDING_WEIGHT = 2
MOST_PAPERS = 4
# A summary asked several things ("what EDL does, what is wrong with it, and what they
# recommend") also quotes, in abstract order, up to this many sentences the answer model
# finds answering a part: on the tuning sets' 174 summary and author questions, key-fact
# recall summed 137.9 -> 138.9 (three better, none worse).
ASKED_MOST = 2
# How the method works is told in this many sentences after the contribution: on the same
# 174 questions, key facts found 138.9 with one and 145.1 with two (19 better, none worse).
HOW = 2


def plan(question: Question, candidates: Candidates, targets: list[str]) -> list[Claim]:
    """A summary of each paper in `targets` (ids, best first)."""
    if len(targets) == 1:
        own = candidates.of(targets[0])
        if not own:
            return []
        paper = own[0].paper.paper
        named = [] if _gives_title(question, paper) else [_which_paper(paper)]
        return [*named, *_summary(own, candidates.answering_parts(targets[0]))]
    lines = []
    for paper_id in targets[:MOST_PAPERS]:
        own = candidates.of(paper_id)
        if own:
            heading = own[0].paper.paper.display_title
            lines.append(_contribution(own).claim(heading=heading))
    return [framing(len(lines)), *lines]


def _gives_title(question: Question, paper: Paper) -> bool:
    """Whether the question quotes the title (an untitled paper has none to give)."""
    return _folded(paper.title or "") in _folded(question.standalone)


def _folded(text: str) -> str:
    return " ".join(re.findall(r"\w+", fold(text)))


def _which_paper(paper: Paper) -> Claim:
    """'The paper is “Title” (ICML 2024).': the paper a question named by its authors,
    venue or method, which the user may not know by title."""
    venue = f" ({paper.venue})" if paper.venue else ""
    return Claim(f"The paper is “{paper.title}”{venue}.", kind="framing")


def _summary(own: list[Candidate], asked: list[Candidate]) -> list[Claim]:
    """Problem, contribution, how, result: different sentences where the abstract has them
    (the sentences after the contribution are where abstracts say how; in the labelled sets,
    the most frequent home of a summary's key facts), and the sentences that answer what
    the question asks (`asked`) when those are others."""
    contribution = _contribution(own)
    rest = [c for c in own if c is not contribution]
    before = [c for c in rest if c.sentence.index < contribution.sentence.index]
    after = [c for c in rest if c.sentence.index > contribution.sentence.index]
    problem = next((c for c in before if c.states_problem), None)
    problem = problem or (before[0] if before else None)
    how = after[:HOW]
    result = max(after[HOW:], key=_result_weight, default=None)
    # the result has to say more of one than the sentences on how ('explore' after 'prove')
    if result is not None and _result_weight(result) < max([1, *map(_result_weight, how)]):
        result = None
    chosen = [c for c in (problem, contribution, *how, result) if c is not None]
    extra = [c for c in asked if all(c is not x for x in chosen)][:ASKED_MOST]
    chosen = sorted([*chosen, *extra], key=lambda c: c.sentence.index) if extra else chosen
    return [c.claim() for c in chosen]


def _contribution(own: list[Candidate]) -> Candidate:
    """The first sentence stating what the paper does, else its most relevant one."""
    return next((c for c in own if c.contributes), max(own, key=lambda c: c.fit))


def _result_weight(candidate: Candidate) -> float:
    text = candidate.sentence.text
    finding = FINDING_WEIGHT * bool(_FINDING.search(text))
    return len(_RESULT.findall(text)) + has_quantity(text) + finding + 0.1 * candidate.relevance
