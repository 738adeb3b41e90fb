"""How papers compare: for each compared paper, the sentences that say what the question
asks about it, under the paper's title."""

from __future__ import annotations

from ..claims import Claim
from ..question import Question
from .candidates import Candidates

# Another sentence of a paper is added when it fits at least this share of its first. On
# the comparisons of the tuning sets (eval/questions*.jsonl), key-fact recall by set
# averages 0.784 with three sentences a paper at 0.75, 0.769 at 0.8, 0.705 with two at
# 0.85 (the previous rule) and 0.732 with two at 0.7.
FURTHER_SHARE = 0.75
# Asked several things of each paper ("what does each quantize, and what does each
# report?"), sentences that fit at least 0.4 as well as the first. On the 79 comparisons of
# the tuning sets (eval/questions*.jsonl but _test17), up to four sentences a paper and 0.4
# found 67.0 key facts at 6.2 lines an answer, against 59.1 at 4.6 for three and 0.6 (which
# had found 51.3 against 48.7 for 0.75 on the 64 comparisons of the sets but _test14).
FURTHER_SHARE_ASKED_SEVERAL = 0.4
PER_PAPER = 4
CONTRIBUTION_BONUS = 0.1


def plan(question: Question, candidates: Candidates, targets: list[str]) -> list[Claim]:
    candidates.read_papers(targets)
    further = FURTHER_SHARE_ASKED_SEVERAL if question.parts else FURTHER_SHARE
    claims = []
    for paper_id in targets:
        own = sorted(
            candidates.of(paper_id),
            key=lambda c: c.fit + CONTRIBUTION_BONUS * c.contributes,
            reverse=True,
        )
        if not own:
            continue
        chosen = [
            own[0],
            *[c for c in own[1:PER_PAPER] if c.fit >= further * own[0].fit],
        ]
        heading = own[0].paper.paper.display_title
        ordered = sorted(chosen, key=lambda c: c.sentence.index)
        claims += [c.claim(heading=heading) for c in ordered]
    return claims
