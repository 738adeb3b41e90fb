"""How a method works: its paper's statement of what it does, then the sentences that
follow it, which in an abstract describe how (or, when the best match lies elsewhere, that
sentence and the one after it)."""

from __future__ import annotations

from ..claims import Claim
from ..question import Question
from .candidates import Candidates

# On the tuning sets' 94 method questions (eval/questions*.jsonl but _test17), key facts
# found 75.5 with three sentences and 78.8 with four (8 better, none worse), at 2.6 and 2.9
# sentences an answer. One more for each further thing a question asks, as in `single`:
# 1 better, none worse on the sets but _test19.
MOST = 4


def plan(question: Question, candidates: Candidates) -> list[Claim]:
    best = candidates.best_fit
    own = candidates.of(best.sentence.paper_id)
    stating = [c for c in own if c.contributes]
    anchor = stating[0] if stating and stating[0].fit >= 0.5 * best.fit else best
    most = MOST + question.further_parts
    chosen = [c for c in own if c.sentence.index >= anchor.sentence.index][:most]
    needed = list(
        {id(c): c for c in [best, *candidates.answering_parts(best.sentence.paper_id)]}.values()
    )
    rest = [c for c in chosen if all(c is not n for n in needed)]
    chosen = [*needed, *rest][: max(most, len(needed))]
    return [candidate.claim() for candidate in sorted(chosen, key=lambda c: c.sentence.index)]
