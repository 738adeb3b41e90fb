"""How a method works: its paper's statement of what it does, then the sentences that
follow it, which in an abstract describe how (or, when the best match lies elsewhere, that
sentence and the one after it)."""

from __future__ import annotations

from ..claims import Claim
from ..question import Question
from .candidates import Candidates

MOST = 3


def plan(question: Question, candidates: Candidates) -> list[Claim]:
    best = candidates.best_fit
    own = candidates.of(best.sentence.paper_id)
    stating = [c for c in own if c.contributes]
    anchor = stating[0] if stating and stating[0].fit >= 0.5 * best.fit else best
    chosen = [c for c in own if c.sentence.index >= anchor.sentence.index][:MOST]
    if best not in chosen:
        chosen = [*chosen[: MOST - 1], best]
    return [candidate.claim() for candidate in chosen]
