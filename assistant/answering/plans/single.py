"""Facts, figures and yes/no questions: the sentence that answers first, then up to two
more that add to it, from the same paper (another paper only when it answers as well)."""

from __future__ import annotations

from ..claims import Claim
from ..question import Question
from .candidates import Candidate, Candidates

# For ordering only: a reader asked how much wants the sentence with the figure first.
NUMBER_BONUS = 0.1
CONTRIBUTION_BONUS = 0.05
# Asked what came before the paper (the gap it starts from, what held earlier work back),
# the reader wants the abstract's statement of the problem, ahead of its contribution. On
# the 59 such questions of the tuning sets (eval/questions*.jsonl but _test14), 0.15
# changed no answer; 0.5 answered two more fully and made none worse.
BACKGROUND_BONUS = 0.5
# Shares of the best sentence's relevance another sentence needs to be added: from the
# same paper, and from another paper. On the tuning sets (eval/questions*.jsonl but
# _test10), key-fact recall summed over 539 answerable questions was 398.9 with 0.75 for
# the same paper, 409.7 with 0.6 and 414.4 with 0.5, at 1.84, 2.16 and 2.40 sentences per
# fact, number, method or yes/no answer; 0.6 buys most of the recall for fewer sentences.
SAME_PAPER_SHARE = 0.6
OTHER_PAPER_SHARE = 0.95
# Asked several things ("what do they propose, and how does it ...?"), the reader needs more
# of the paper: on the 684 answerable tuning questions (eval/questions*.jsonl but _test14),
# key-fact recall summed to 516.7 with 0.6 and 519.5 with 0.4 (five better, none worse).
SAME_PAPER_SHARE_ASKED_SEVERAL = 0.4
# The most sentences an answer quotes, one more for each further thing the question asks
# ("what goes wrong without it, and which graphs does it cover?"): on the 909 answerable
# tuning questions (eval/questions*.jsonl but _test19), key-fact recall summed to 722.2 with
# three for every question, 731.0 with four for any that asks several things and 731.9
# with one more per further thing (128 and 134 more sentences; median still 3).
MOST = 3


def plan(question: Question, candidates: Candidates) -> list[Claim]:
    ranked = candidates.ranked(lambda c: _bonus(question, c, candidates))
    first = ranked[0]
    chosen = [first]
    same_share = SAME_PAPER_SHARE_ASKED_SEVERAL if question.parts else SAME_PAPER_SHARE
    for answering in candidates.answering_parts(first.sentence.paper_id):
        if not any(c is answering for c in chosen):
            chosen.append(answering)
    most = MOST + question.further_parts
    for candidate in ranked[1:]:
        if len(chosen) >= most:
            break
        if any(c is candidate for c in chosen):
            continue
        same = candidate.sentence.paper_id == first.sentence.paper_id
        share = same_share if same else OTHER_PAPER_SHARE
        if candidate.fit >= share * first.fit:
            chosen.append(candidate)
    # Asked which paper does something, or about a paper it does not name, the reader gets
    # the paper's title with the answer.
    unnamed = not question.named_papers and question.paper_ids is None
    heading = first.paper.paper.display_title if question.which_paper or unnamed else None
    return [chosen[0].claim(heading=heading), *(c.claim() for c in chosen[1:])]


def _bonus(question: Question, candidate: Candidate, candidates: Candidates) -> float:
    bonus = 0.0
    if question.asks_background and candidate.states_problem:
        contribution = candidates.first_contribution(candidate.sentence.paper_id)
        if contribution is None or candidate.sentence.index < contribution.sentence.index:
            bonus += BACKGROUND_BONUS
    if question.wants_number and question.gives_figure(candidate.sentence.text):
        bonus += NUMBER_BONUS
    if candidate.contributes:
        bonus += CONTRIBUTION_BONUS
    return bonus
